"""The actor → learner contract: what a sequence holds, as the learner reads it. (How each step
is recorded once and sequences are cut from the steps: ``gdi.runtime.steps`` and the data
collector.)

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
class SequenceArrays:
    """What every form of a batch of N sequences holds besides its observations (time-major;
    ``initial_state`` batch-first ``[N, F, 2, H]``): ``SequenceBatch`` adds the stacked
    observations, ``gdi.runtime.steps.FrameBatch`` their frames."""

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


@dataclass
class SequenceBatch(SequenceArrays):
    """N sequences with their observations, as the learner reads them."""

    obs: np.ndarray

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
