"""Each environment step stored once: what an actor's window carries (``StepChunk``), and how
the stacks of frames are rebuilt from it (``rebuild_stacks``): on the learner's device, from a
batch that carries only frames (``FrameBatch``).

What the learner reads is the contract of ``gdi.runtime.storage.sequences``: sequences of ``length``
transitions that start every ``stride`` steps of an environment's stream, with stacked
observations (ALE: the last 4 frames). Shipped and stored that way, each step would be copied
into every sequence that overlaps it (``length / stride`` of them: 3 in the paper's ALE
setting) and each ALE frame into 4 stacks. Instead:

* an actor's window carries only the steps acted since its last window, for each of its
  environments, and of a stacked observation only its newest frame;
* the data collector keeps each actor's recent chunks and cuts sequences out of them by index
  (``gdi.runtime.storage.collector``): overlapping sequences share their steps;
* the collector assembles a learner's batch with its frames unstacked (``FrameBatch``: each
  sequence's frames, the ``stack − 1`` before its first step included, and their episode
  starts), and the learner rebuilds the stacks where it trains (``stacked_tensors``, on its
  device): a CUDA learner copies a quarter of the observation bytes to the GPU. Within an
  episode a stack slides by one frame per step, and at an episode's first step the frames
  before it are zero (what ale-py's vector environment does; ``StepRecorder.record`` checks it
  at every episode start). Whoever reads stacked observations on the host (the observation
  reservoir, tests) gets them rebuilt by the same function (``FrameBatch.stacked``).

Stream indices count an actor's steps from its first (index 0); a recorder that starts afresh
(a new or restarted actor, environments that could not be restored) starts a new stream at 0.
The frames before a stream's start are zero, so a stream of stacked observations starts with
an episode in every environment.
"""

from __future__ import annotations

import numpy as np
import torch

from gdi.runtime.storage.sequences import (
    FIELDS,
    OBS_FIELDS,
    SCHEMA,
    STEP_FIELDS,
    SequenceArrays,
    SequenceBatch,
    StepDims,
    StepField,
    check_names,
)


def chunk_name(field: str) -> str:
    """A step field's name in a chunk: ``obs`` is held as ``frames`` (each step's observation,
    or its newest frame when observations stack frames), the others as they are named."""
    return "frames" if field == "obs" else field


#: Per-step arrays of a chunk, ``[k, N, ...]``, in the order of ``SequenceBatch``'s fields.
STEP_ARRAYS = tuple(chunk_name(name) for name in (*OBS_FIELDS, *STEP_FIELDS))
#: The observation that follows the chunk's last step (``[N, ...]``): the bootstrap row of the
#: sequences the chunk completes, and its next chunk's first step.
NEXT_ARRAYS = tuple(f"next_{chunk_name(name)}" for name in OBS_FIELDS)


class StepChunk:
    """The steps one actor acted for a window, for each of its N environments, and the N
    sequences they complete (the last ``sequence_length`` steps of each stream, ending with
    this chunk's last step).

    Attributes: ``start`` (stream index of the chunk's first step; 0: a new stream),
    ``sequence_length``, ``frame_stack`` (frames per observation; 1: an observation is its own
    frame); each ``STEP_ARRAYS`` array ``[k, N, ...]`` (``frames``: each step's observation,
    or its newest frame when stacked); each ``NEXT_ARRAYS`` array ``[N, ...]``;
    ``initial_state`` ``[N, F, 2, H]``, the recurrent state before the first step of the
    sequences the chunk completes (stream index ``end - sequence_length``); and
    ``history_frames`` ``[frame_stack − 1, N, *frame_shape]``, the frames before ``start`` for
    a chunk that stands alone (a sequence converted from the stacked form), None where they
    are in the stream's earlier chunks (or before its start, where they are zero).

    Built from keyword arguments with those names (what ``as_dict`` returns, the form
    checkpoints hold); other names are a TypeError naming them."""

    def __init__(self, *, start: int, sequence_length: int, frame_stack: int,
                 initial_state: np.ndarray, history_frames: np.ndarray | None = None,
                 **arrays: np.ndarray) -> None:
        check_names("a StepChunk", (*STEP_ARRAYS, *NEXT_ARRAYS), arrays)
        self.start, self.sequence_length, self.frame_stack = start, sequence_length, frame_stack
        self.__dict__.update(arrays)
        self.initial_state = initial_state
        self.history_frames = history_frames

    @property
    def steps(self) -> int:
        return self.frames.shape[0]

    @property
    def end(self) -> int:
        """Stream index after the chunk's last step."""
        return self.start + self.steps

    @property
    def num_envs(self) -> int:
        return self.frames.shape[1]

    @property
    def sequence_start(self) -> int:
        return self.end - self.sequence_length

    def nbytes(self) -> int:
        arrays = [getattr(self, name) for name in (*STEP_ARRAYS, *NEXT_ARRAYS, "initial_state")]
        if self.history_frames is not None:
            arrays.append(self.history_frames)
        return sum(a.nbytes for a in arrays)

    def as_dict(self) -> dict:
        return dict(vars(self))

    def replace(self, **changes) -> StepChunk:
        """A chunk with ``changes`` made to these arrays (a shallow copy otherwise)."""
        return StepChunk(**{**self.as_dict(), **changes})

    @classmethod
    def from_sequences(cls, batch, frame_stack: int) -> StepChunk:
        """The chunk that holds a ``SequenceBatch``'s N sequences, standing alone, for
        observations that stack ``frame_stack`` frames: each step's newest frame, and the older
        frames of the first stack as the history, so that ``rebuild_stacks`` gives the same
        observations back."""
        obs, length = batch.obs, batch.length
        # A copy of the newest frames: a view would keep the whole stacked array alive.
        frames = np.ascontiguousarray(obs[:, :, -1]) if frame_stack > 1 else obs
        history = np.moveaxis(obs[0, :, : frame_stack - 1], 1, 0) if frame_stack > 1 else None
        per_observation = {"frames": frames, **{name: getattr(batch, name)
                                                for name in OBS_FIELDS[1:]}}
        return cls(
            start=0, sequence_length=length, frame_stack=frame_stack,
            **{name: array[:length] for name, array in per_observation.items()},
            **{f"next_{name}": array[length] for name, array in per_observation.items()},
            **{name: getattr(batch, name) for name in STEP_FIELDS},
            initial_state=batch.initial_state,
            history_frames=None if history is None else np.ascontiguousarray(history),
        )


def rebuild_stacks(frames: torch.Tensor, resets: torch.Tensor, stack: int) -> torch.Tensor:
    """Stacked observations ``[L, B, stack, *frame_shape]`` of B environments from the frames
    of ``stack − 1 + L`` consecutive steps of each (``frames[i, b]``, the newest frame of step
    i) and their episode starts (``resets[i, b]``): observation t holds frames t … t + stack −
    1, oldest first, with the frames of an earlier episode than its newest zeroed.

    Torch ops only, on the tensors' device, so that a CUDA learner rebuilds the stacks it
    trains on from the frames it was sent, by the same code as a CPU learner. The frames are
    images (ALE's are uint8): multiplying them by a 0/1 mask keeps or zeroes them exactly
    (a float frame's NaN would survive it, as would the sign of a negative one's zero)."""
    rows = frames.shape[0]
    length = rows - (stack - 1)
    index = torch.arange(rows, device=frames.device)
    # The latest episode start at or before each step, per environment (-1: none in view).
    latest = torch.cummax(torch.where(resets, index[:, None], -1), dim=0).values
    # Frame c of observation t is step t + c; it is kept unless it is older than the episode
    # start of the observation's newest frame (step t + stack − 1).
    step = index[:length, None] + torch.arange(stack, device=frames.device)  # [L, stack]
    keep = step[:, None, :] >= latest[stack - 1:, :, None]  # [L, B, stack]
    keep = keep.reshape(*keep.shape, *(1,) * (frames.dim() - 2)).to(frames.dtype)
    windows = frames.unfold(0, stack, 1).movedim(-1, 2)  # [L, B, stack, *frame], a view
    # One pass that writes each stacked frame once: torch.where is several times slower on
    # the CPU for uint8, and zeroing after a copy is a second pass (docs/benchmarks.md, "Each
    # step stored once", has the times).
    out = _empty(windows.shape, frames.dtype, frames.device)
    return torch.mul(windows, keep, out=out)


def _empty(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Uninitialized memory for a rebuilt batch. On the CPU numpy's: numpy asks the kernel for
    transparent huge pages for large arrays and torch's CPU allocator does not, and faulting a
    fresh batch of the paper's size in 4 KB pages makes writing it several times slower where
    huge pages are on ``madvise`` (docs/benchmarks.md, "Each step stored once")."""
    if device.type == "cpu":
        numpy_dtype = torch.empty((), dtype=dtype).numpy().dtype
        return torch.from_numpy(np.empty(shape, dtype=numpy_dtype))
    return torch.empty(shape, dtype=dtype, device=device)


#: ``FrameBatch``'s arrays: the frames and the episode starts of the steps before the
#: sequences' first observation, then every ``SequenceBatch`` field but ``obs``.
FRAME_FIELDS = ("frames", "history_resets", *FIELDS[1:])


class FrameBatch(SequenceArrays):
    """N sequences as a ``SequenceBatch`` holds them, but with their stacked observations left
    as frames, for the learner to rebuild on its device (``stacked_tensors``): for ALE's
    4-frame stacks a quarter of the observation bytes to assemble and to copy there.

    In place of ``obs``: ``frames`` ``[stack − 1 + length + 1, N, *frame_shape]``, the
    ``stack − 1`` frames before each sequence's first observation (zero before its stream's
    start), then the newest frame of each observation, the bootstrap observation's last; and
    ``history_resets`` ``[stack − 1, N]``, the episode starts of those first ``stack − 1``
    frames' steps (the observations' own are ``resets``)."""

    fields = FRAME_FIELDS

    @property
    def frame_stack(self) -> int:
        return self.history_resets.shape[0] + 1

    def stacked(self) -> SequenceBatch:
        """The ``SequenceBatch`` of these sequences, its stacks rebuilt here on the host by the
        learner's own code (``stacked_tensors``), for those that read stacked observations
        outside the learner."""
        tensors = stacked_tensors({name: torch.from_numpy(array)
                                   for name, array in self.as_dict().items()})
        return SequenceBatch(**{name: tensor.numpy() for name, tensor in tensors.items()})


def stacked_tensors(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A batch's tensors with ``SequenceBatch``'s fields, as the learner reads them: those of a
    ``FrameBatch`` (``FRAME_FIELDS``) get their ``obs`` rebuilt from the frames where the
    tensors are (the learner's device); those of a ``SequenceBatch`` are returned as they
    are. The one place where a batch's stacks are rebuilt."""
    if "frames" not in tensors:
        return tensors
    history = tensors["history_resets"]
    resets = torch.cat([history, tensors["resets"]])  # one per frame
    obs = rebuild_stacks(tensors["frames"], resets, history.shape[0] + 1)
    return {"obs": obs, **{name: tensors[name] for name in FIELDS[1:]}}


class StepRecorder:
    """The actor's side: records each step of N lock-stepped environments once, and hands
    over a ``StepChunk`` when a window of sequences is complete (every ``stride`` steps, once
    the first ``length`` are recorded)."""

    def __init__(self, num_envs: int, length: int, stride: int, obs_shape: tuple[int, ...],
                 obs_dtype, frame_stack: int, index_dim: int,
                 state_shape: tuple[int, ...], schema: tuple[StepField, ...] = SCHEMA) -> None:
        if length < 1 or not 1 <= stride <= length:
            raise ValueError(f"need length >= 1 and 1 <= stride <= length, got {length}, {stride}")
        if frame_stack > 1 and (len(obs_shape) < 1 or obs_shape[0] != frame_stack):
            raise ValueError(f"observations of shape {obs_shape} do not stack {frame_stack} "
                             "frames along their first axis")
        self.num_envs, self.length, self.stride = num_envs, length, stride
        self.frame_stack = frame_stack
        n = num_envs
        frame_shape = obs_shape[1:] if frame_stack > 1 else obs_shape
        # The recurrent state is [F, 2, H]: one truncation value per family F.
        dims = StepDims(tuple(frame_shape), index_dim, families=state_shape[0])
        self.schema = schema
        # A chunk holds at most `length` steps (the first window of a stream).
        self._arrays = {
            chunk_name(field.name): np.zeros((length, n, *field.shape(dims)),
                                             dtype=field.numpy_dtype(obs_dtype))
            for field in schema
        }
        self._next_dtypes = {f"next_{chunk_name(field.name)}": field.numpy_dtype(obs_dtype)
                             for field in schema if field.per == "observation"}
        # Recurrent states of the last `length` steps: a sequence starts with one of them.
        self._states = np.zeros((length, n, *state_shape), dtype=np.float32)
        self.steps = 0  # stream index of the next step
        self.chunk_start = 0  # stream index of the first step not yet handed over

    def frame_of(self, obs: np.ndarray) -> np.ndarray:
        return obs[:, -1] if self.frame_stack > 1 else obs

    def record(self, state: np.ndarray, **step) -> None:
        """One step of every environment, one keyword per field of the schema
        (``gdi.runtime.storage.sequences.SCHEMA``): what the actor saw (``obs``
        ``[N, *obs_shape]`` and the network's other inputs), what it did and what came back (aligned as
        ``gdi.runtime.storage.sequences`` states), each ``[N, ...]`` or one value for all; and the
        recurrent ``state`` before it. ``truncation_values [N, F]``: V_f of the final
        observation where a time limit cut the episode at this step, 0 elsewhere (None: no
        episode was cut)."""
        check_names("a recorded step", tuple(field.name for field in self.schema), step)
        obs, resets = step["obs"], step["resets"]
        if self.frame_stack > 1 and self.steps == 0 and not np.all(resets):
            raise ValueError("a stream of stacked observations must start with an episode in "
                             "every environment (the frames before it are taken as zero)")
        if self.frame_stack > 1 and resets.any() and obs[resets, :-1].any():
            raise ValueError(
                "an episode's first observation stacks non-zero frames from before it; gdi "
                "stores one frame per step and rebuilds stacks with zeros before an episode "
                "start (ale-py's vector environment): this environment stacks otherwise")
        row = self.steps - self.chunk_start
        for name, value in step.items():
            if name == "obs":
                value = self.frame_of(value)
            elif value is None and name == "truncation_values":
                value = 0.0
            self._arrays[chunk_name(name)][row] = value
        self._states[self.steps % self.length] = state
        self.steps += 1

    def emit(self, **next_observation) -> StepChunk | None:
        """The chunk of steps since the last one, if a window of sequences ends at this step.
        ``next_observation``: the observation that followed the step just recorded, one
        keyword per per-observation field of the schema (``obs``, ``resets``, ...)."""
        if self.steps < self.length or (self.steps - self.length) % self.stride != 0:
            return None
        rows = self.steps - self.chunk_start
        following = {}
        for name, value in next_observation.items():
            key = f"next_{chunk_name(name)}"
            if key not in self._next_dtypes:
                raise TypeError(f"emit takes the schema's per-observation fields; got {name!r}")
            value = self.frame_of(value) if name == "obs" else value
            following[key] = np.array(value, dtype=self._next_dtypes[key])
        chunk = StepChunk(
            start=self.chunk_start, sequence_length=self.length, frame_stack=self.frame_stack,
            **{name: array[:rows].copy() for name, array in self._arrays.items()},
            **following,
            initial_state=self._states[(self.steps - self.length) % self.length].copy(),
        )
        self.chunk_start = self.steps
        return chunk

    def state_dict(self) -> dict:
        return {"steps": self.steps, "chunk_start": self.chunk_start,
                "states": self._states.copy(),
                **{name: array.copy() for name, array in self._arrays.items()}}

    def load_state_dict(self, state: dict) -> None:
        self.steps, self.chunk_start = int(state["steps"]), int(state["chunk_start"])
        self._states[...] = state["states"]
        for name, array in self._arrays.items():
            array[...] = state[name]
