"""Test helpers for the actor → learner data path.

``StackedSequenceBuilder`` is how sequences were cut before each step was stored once: every
window a copy of its ``length`` steps with their stacked observations. It is kept here as the
independent reference the stored-once path (``gdi.runtime.storage.steps`` + the data collector) must
reproduce element for element. ``numpy_rebuild_stacks`` is how the data collector rebuilt the
stacks of one environment before the learner rebuilt them on its device, kept as the second
reference of ``gdi.runtime.storage.steps.rebuild_stacks``. ``SequenceCutter`` puts the stored-once
path behind the same ``record`` / ``emit`` calls, so that the contract tests of
``gdi.runtime.storage.sequences`` run on what the learner really receives.
"""

from __future__ import annotations

import weakref

import numpy as np

from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.sequences import SequenceBatch
from gdi.runtime.storage.steps import StepRecorder


def numpy_rebuild_stacks(frames: np.ndarray, resets: np.ndarray, stack: int,
                         out: np.ndarray | None = None) -> np.ndarray:
    """Stacked observations ``[T, stack, *frame_shape]`` from the frames of ``stack − 1 + T``
    consecutive steps of one environment (``frames[i]``, the newest frame of step i) and their
    episode starts (``resets[i]``): observation t holds frames t … t + stack − 1, oldest
    first, with the frames of an earlier episode than its newest zeroed."""
    length = frames.shape[0] - (stack - 1)
    if out is None:
        out = np.empty((length, stack, *frames.shape[1:]), dtype=frames.dtype)
    index = np.arange(frames.shape[0])
    last_start = np.maximum.accumulate(np.where(resets, index, -1))  # latest reset ≤ i
    newest = last_start[stack - 1:]  # of each observation's newest frame
    for c in range(stack):
        out[:, c] = frames[c : c + length]
        earlier = index[c : c + length] < newest  # frame c is of an earlier episode
        if earlier.any():
            out[earlier, c] = 0
    return out


class StackedSequenceBuilder:
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
        versions: int,
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
        self._versions[slot] = versions
        self._truncation_values[slot] = 0.0 if truncation_values is None else truncation_values
        self.steps += 1

    def emit(
        self,
        obs: np.ndarray,
        resets: np.ndarray,
        prev_actions: np.ndarray,
        prev_rewards: np.ndarray,
    ) -> SequenceBatch | None:
        """The window of the last ``length`` transitions, if one ends at this step."""
        if self.steps < self.length or (self.steps - self.length) % self.stride != 0:
            return None
        order = (self.steps + np.arange(self.length)) % self.length  # oldest first

        def with_bootstrap(ring: np.ndarray, last: np.ndarray) -> np.ndarray:
            return np.concatenate([ring[order], np.asarray(last, dtype=ring.dtype)[None]], axis=0)

        return SequenceBatch(
            obs=with_bootstrap(self._obs, obs),
            resets=with_bootstrap(self._resets, resets),
            prev_actions=with_bootstrap(self._prev_actions, prev_actions),
            prev_rewards=with_bootstrap(self._prev_rewards, prev_rewards),
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


class SequenceCutter:
    """``StepRecorder`` → ``ReplayCollector`` → the window's ``SequenceBatch``, with
    ``StackedSequenceBuilder``'s constructor and calls (plus the frames stacked per
    observation, 1: none)."""

    def __init__(self, num_envs: int, length: int, stride: int, obs_shape: tuple[int, ...],
                 obs_dtype, index_dim: int, state_shape: tuple[int, ...],
                 frame_stack: int = 1) -> None:
        self.recorder = StepRecorder(num_envs, length, stride, obs_shape, obs_dtype, frame_stack,
                                     index_dim, state_shape)
        self.collector = ReplayCollector(1, 1, 1 << 20, 1, seed=0, frame_stack=frame_stack)
        self.chunks: list = []

    def record(self, state, truncation_values=None, **step) -> None:
        self.recorder.record(state, truncation_values=truncation_values, **step)

    def emit(self, **next_observation) -> SequenceBatch | None:
        chunk = self.recorder.emit(**next_observation)
        if chunk is None:
            return None
        self.chunks.append(chunk)
        self.collector.add(chunk, actor=0)
        return self.collector.newest(chunk.num_envs)

    def state_dict(self) -> dict:
        return {"recorder": self.recorder.state_dict(), "collector": self.collector.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.recorder.load_state_dict(state["recorder"])
        self.collector.load_state_dict(state["collector"])


_COLLECTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # actor → its stream


def actor_window(actor) -> SequenceBatch:
    """The sequences of ``actor``'s next window, as the learner receives them."""
    chunk = None
    while chunk is None:
        chunk, _ = actor.step()
    if actor not in _COLLECTORS:
        _COLLECTORS[actor] = ReplayCollector(1, 1, 1 << 30, 1, seed=0,
                                             frame_stack=actor.recorder.frame_stack)
    collector = _COLLECTORS[actor]
    collector.add(chunk, actor=actor.actor_id)
    return collector.newest(chunk.num_envs)
