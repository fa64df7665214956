"""The actor → learner contract: what a stored sequence holds, and how an actor cuts one.

Each environment's steps form one continuous stream across episodes (environments auto-reset
in the same step, see ``gdi.envs``). The stream is cut into windows of ``length = burn_in +
seq_len`` transitions that start every ``stride`` steps (R2D2 overlaps windows by half), plus
one more observation to bootstrap from. Because the stream is continuous:

* no episode tail is ever dropped: the last steps of an episode are followed by the next
  episode's steps, and every transition after the actor's first ``burn_in`` steps falls in the
  learning part of some window (``stride <= seq_len``);
* no transition crosses an episode end: the transition that ends an episode has done = 1, so
  its discount γ·(1 − done) is 0 and the next episode's first observation (which follows it in
  the window) is never bootstrapped from; ``resets[t]`` marks that first observation so the
  network zeroes its recurrent state there;
* an episode cut by a time limit (truncated, not terminated) is not a terminal state: the actor
  stores the value V_f of its final observation per parameter family in
  ``truncation_values[t]`` (0 at every other step), and the learner adds γ·V_f there to the
  shaped reward, which is bootstrapping from the final observation (Pardo et al. 2018,
  "Time Limits in Reinforcement Learning").

Alignment, stated once: ``obs[t]`` is the observation the actor acted on at step t;
``actions[t]``, ``behavior_log_probs[t]``, ``lambdas[t]`` were chosen at ``obs[t]``;
``rewards[t]`` and ``dones[t]`` came back from that action; ``prev_actions[t]`` and
``prev_rewards[t]`` are the network inputs that accompany ``obs[t]`` (the action and compressed
reward of step t − 1, zero at an episode start). ``initial_state`` is the recurrent state the
actor held *before* processing ``obs[0]``. Index ``length`` of the per-observation arrays is the
bootstrap observation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Arrays with one entry per observation: ``[length + 1, N, ...]``.
OBS_FIELDS = ("obs", "resets", "prev_actions", "prev_rewards")
#: Arrays with one entry per transition: ``[length, N, ...]``.
STEP_FIELDS = (
    "actions", "rewards", "dones", "behavior_log_probs", "lambdas", "versions",
    "truncation_values",
)
FIELDS = (*OBS_FIELDS, *STEP_FIELDS, "initial_state")


@dataclass
class SequenceBatch:
    """N sequences, time-major; ``initial_state`` is batch-first ``[N, F, 2, H]``."""

    obs: np.ndarray
    resets: np.ndarray
    prev_actions: np.ndarray
    prev_rewards: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    behavior_log_probs: np.ndarray
    lambdas: np.ndarray
    versions: np.ndarray
    truncation_values: np.ndarray  # [length, N, F]
    initial_state: np.ndarray

    @property
    def size(self) -> int:
        return self.initial_state.shape[0]

    @property
    def length(self) -> int:
        return self.actions.shape[0]

    def column(self, i: int) -> SequenceBatch:
        """Sequence ``i`` as a batch of one (views, no copy)."""
        sliced = {name: getattr(self, name)[:, i : i + 1] for name in OBS_FIELDS + STEP_FIELDS}
        return SequenceBatch(**sliced, initial_state=self.initial_state[i : i + 1])

    @staticmethod
    def concatenate(batches: list[SequenceBatch], out: SequenceBatch | None = None
                    ) -> SequenceBatch:
        """Join batches of sequences along the batch axis, into ``out``'s arrays if given
        (which must have the joined shapes and dtypes) and then return ``out``."""
        joined = {name: np.concatenate([getattr(b, name) for b in batches], axis=1,
                                       out=None if out is None else getattr(out, name))
                  for name in OBS_FIELDS + STEP_FIELDS}
        state = np.concatenate([b.initial_state for b in batches], axis=0,
                               out=None if out is None else out.initial_state)
        return out if out is not None else SequenceBatch(**joined, initial_state=state)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in FIELDS}


class SequenceBuilder:
    """Cuts the step streams of N lock-stepped environments into overlapping sequences.

    Call ``record`` once per actor step with what the actor saw and did, then ``emit`` with the
    observation that followed; ``emit`` returns a ``SequenceBatch`` of N sequences when a
    window is complete, else None.
    """

    def __init__(
        self,
        num_envs: int,
        length: int,
        stride: int,
        obs_shape: tuple[int, ...],
        obs_dtype: np.dtype,
        index_dim: int,
        state_shape: tuple[int, ...],
    ) -> None:
        if length < 1 or not 1 <= stride <= length:
            raise ValueError(f"need length >= 1 and 1 <= stride <= length, got {length}, {stride}")
        self.num_envs, self.length, self.stride = num_envs, length, stride
        n = num_envs
        self._obs = np.zeros((length, n, *obs_shape), dtype=obs_dtype)
        self._resets = np.zeros((length, n), dtype=bool)
        self._prev_actions = np.zeros((length, n), dtype=np.int64)
        self._prev_rewards = np.zeros((length, n), dtype=np.float32)
        self._states = np.zeros((length, n, *state_shape), dtype=np.float32)
        self._actions = np.zeros((length, n), dtype=np.int64)
        self._rewards = np.zeros((length, n), dtype=np.float32)
        self._dones = np.zeros((length, n), dtype=bool)
        self._log_probs = np.zeros((length, n), dtype=np.float32)
        self._lambdas = np.zeros((length, n, index_dim), dtype=np.float32)
        self._versions = np.zeros((length, n), dtype=np.int64)
        families = state_shape[0]  # the recurrent state is [F, 2, H]
        self._truncation_values = np.zeros((length, n, families), dtype=np.float32)
        self.steps = 0  # transitions recorded so far

    def record(
        self,
        obs: np.ndarray,
        resets: np.ndarray,
        prev_actions: np.ndarray,
        prev_rewards: np.ndarray,
        state: np.ndarray,
        actions: np.ndarray,
        behavior_log_probs: np.ndarray,
        lambdas: np.ndarray,
        version: int,
        rewards: np.ndarray,
        dones: np.ndarray,
        truncation_values: np.ndarray | None = None,
    ) -> None:
        """``truncation_values [N, F]``: V_f of the final observation where a time limit cut
        the episode at this step, 0 elsewhere; None when no episode was cut."""
        slot = self.steps % self.length
        self._obs[slot] = obs
        self._resets[slot] = resets
        self._prev_actions[slot] = prev_actions
        self._prev_rewards[slot] = prev_rewards
        self._states[slot] = state
        self._actions[slot] = actions
        self._rewards[slot] = rewards
        self._dones[slot] = dones
        self._log_probs[slot] = behavior_log_probs
        self._lambdas[slot] = lambdas
        self._versions[slot] = version
        self._truncation_values[slot] = 0.0 if truncation_values is None else truncation_values
        self.steps += 1

    def emit(
        self,
        next_obs: np.ndarray,
        next_resets: np.ndarray,
        next_prev_actions: np.ndarray,
        next_prev_rewards: np.ndarray,
    ) -> SequenceBatch | None:
        """The window of the last ``length`` transitions, if one ends at this step."""
        if self.steps < self.length or (self.steps - self.length) % self.stride != 0:
            return None
        order = (self.steps + np.arange(self.length)) % self.length  # oldest first

        def with_bootstrap(ring: np.ndarray, last: np.ndarray) -> np.ndarray:
            return np.concatenate([ring[order], np.asarray(last, dtype=ring.dtype)[None]], axis=0)

        return SequenceBatch(
            obs=with_bootstrap(self._obs, next_obs),
            resets=with_bootstrap(self._resets, next_resets),
            prev_actions=with_bootstrap(self._prev_actions, next_prev_actions),
            prev_rewards=with_bootstrap(self._prev_rewards, next_prev_rewards),
            actions=self._actions[order],
            rewards=self._rewards[order],
            dones=self._dones[order],
            behavior_log_probs=self._log_probs[order],
            lambdas=self._lambdas[order],
            versions=self._versions[order],
            truncation_values=self._truncation_values[order],
            initial_state=self._states[order[0]].copy(),
        )

    def state_dict(self) -> dict:
        return {"steps": self.steps, **{k: v.copy() for k, v in vars(self).items()
                                        if k.startswith("_") and isinstance(v, np.ndarray)}}

    def load_state_dict(self, state: dict) -> None:
        self.steps = int(state["steps"])
        for key, value in state.items():
            if key != "steps":
                getattr(self, key)[...] = value
