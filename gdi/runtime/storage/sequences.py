"""The actor → learner contract: what a sequence holds, as the learner reads it. (How each step
is recorded once and sequences are cut from the steps: ``gdi.runtime.storage.steps`` and the data
collector.)

The arrays of a recorded step are stated once, in ``SCHEMA`` (name, one per observation or per
transition, dtype, trailing shape): the actor's recorder, the chunks it ships, the collector's
batches and the learner's tensors are built from it, so a new per-step field is one entry
there plus the code that records it and the code that reads it.

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
from typing import Any, Literal

import numpy as np

__all__ = ["FIELDS", "OBS_FIELDS", "SCHEMA", "STEP_FIELDS", "SequenceArrays", "SequenceBatch",
           "StepDims", "StepField", "check_names"]


@dataclass(frozen=True)
class StepDims:
    """The sizes a recorded step's arrays take their trailing shapes from."""

    frame_shape: tuple[int, ...]
    """One observation's shape, or of its newest frame where observations stack frames."""
    index_dim: int
    """The number of λ's coordinates (the policy space's)."""
    families: int
    """Parameter families F (GDI-H³: 2)."""


@dataclass(frozen=True)
class StepField:
    """One array of a recorded step, stated once: every form the step takes between the actor
    and the loss (the recorder's buffers, a window's ``StepChunk``, the collector's batches,
    the learner's tensors) is built from these."""

    name: str
    per: Literal["observation", "transition"]
    """observation: one per observation (the network's inputs at ``obs[t]``; a sequence holds
    ``length + 1``, the bootstrap observation's last); transition: one per step taken
    (``length``)."""
    dtype: Any
    """Its numpy dtype; None: the observations' own."""
    trailing: Literal["", "frame", "index", "families"] = ""
    """Its shape past ``[time, environments]``: none, a frame's, λ's ``[index_dim]`` or one
    per parameter family ``[F]``."""

    def shape(self, dims: StepDims) -> tuple[int, ...]:
        return {"": (), "frame": dims.frame_shape, "index": (dims.index_dim,),
                "families": (dims.families,)}[self.trailing]

    def numpy_dtype(self, obs_dtype) -> np.dtype:
        return np.dtype(obs_dtype if self.dtype is None else self.dtype)


#: The recorded step (alignment in the module docstring). ``obs`` comes first: where
#: observations stack frames, a chunk and a ``FrameBatch`` hold its newest frame as ``frames``.
SCHEMA: tuple[StepField, ...] = (
    StepField("obs", "observation", None, "frame"),
    StepField("resets", "observation", np.bool_),
    StepField("prev_actions", "observation", np.int64),
    StepField("prev_rewards", "observation", np.float32),
    StepField("actions", "transition", np.int64),
    StepField("rewards", "transition", np.float32),
    StepField("dones", "transition", np.bool_),
    StepField("behavior_log_probs", "transition", np.float32),
    StepField("lambdas", "transition", np.float32, "index"),
    StepField("versions", "transition", np.int64),
    StepField("truncation_values", "transition", np.float32, "families"),
)

#: Arrays with one entry per observation: ``[length + 1, N, ...]``.
OBS_FIELDS = tuple(f.name for f in SCHEMA if f.per == "observation")
#: Arrays with one entry per transition: ``[length, N, ...]``.
STEP_FIELDS = tuple(f.name for f in SCHEMA if f.per == "transition")
FIELDS = (*OBS_FIELDS, *STEP_FIELDS, "initial_state")


def check_names(what: str, expected: tuple[str, ...], given) -> None:
    """TypeError unless ``given`` (names) are ``expected``, naming the missing and the unknown
    ones: one message for every form built from the schema."""
    missing = [name for name in expected if name not in given]
    extra = [name for name in given if name not in expected]
    if missing or extra:
        raise TypeError(f"{what} holds {', '.join(expected)}; missing: "
                        f"{', '.join(missing) or 'none'}, unknown: {', '.join(extra) or 'none'}")


class SequenceArrays:
    """What every form of a batch of N sequences holds (time-major; ``initial_state``
    batch-first ``[N, F, 2, H]``), one attribute per array: ``SequenceBatch`` the schema's
    fields with stacked observations, ``gdi.runtime.storage.steps.FrameBatch`` their frames. A form
    names its arrays in ``fields``; building one with other arrays is a TypeError naming them."""

    fields: tuple[str, ...] = ()

    def __init__(self, **arrays: np.ndarray) -> None:
        check_names(f"a {type(self).__name__}", self.fields, arrays)
        self.__dict__.update(arrays)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{name}={getattr(self, name).shape}" for name in self.fields)
        return f"{type(self).__name__}({shapes})"

    @property
    def size(self) -> int:
        return self.initial_state.shape[0]

    @property
    def length(self) -> int:
        return self.actions.shape[0]

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.fields}

    def replace(self, **changes: np.ndarray):
        """The same form with ``changes`` made to these arrays (a shallow copy otherwise)."""
        return type(self)(**{**self.as_dict(), **changes})


class SequenceBatch(SequenceArrays):
    """N sequences with their observations, as the learner reads them."""

    fields = FIELDS

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
