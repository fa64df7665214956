"""The data collector (DC of the paper's Algorithms GDI-I³/H³): steps in, batches out.

Each sequence is trained on exactly ``replay`` times and then dropped ("we train each sample
twice", App. "Experiment Details"); none is ever evicted early. Sequences enter in arrival
order and a batch is ``batch_size`` distinct sequences drawn uniformly from those held, so the
two uses of one sequence land in different batches. Memory is bounded by ``capacity``: when it
is full the collector accepts nothing more, and actors wait (``free_slots`` tells them).

Each step is stored once (``gdi.runtime.storage.steps``): the collector keeps each actor's recent
``StepChunk``s, a sequence is a reference into them, and a batch is assembled from the
references. A chunk is freed once no held sequence and no sequence still to come refers to it.
Stacked observations are assembled as frames, each once, with the episode starts their stacks
are rebuilt from (a ``FrameBatch``): training hands that to the learner, which rebuilds the
stacks on its device (``sample(stacked=False)``), so that the host writes and a CUDA learner
copies a quarter of the observation bytes; every other reader gets the ``SequenceBatch`` the
learner reads, its stacks rebuilt here by the same code.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from gdi.runtime.storage.sequences import OBS_FIELDS, STEP_FIELDS, SequenceBatch
from gdi.runtime.storage.steps import FrameBatch, StepChunk

#: The chunk arrays behind each per-observation field of a SequenceBatch besides ``obs``: the
#: steps' own, then the next observation's.
_OBS_SOURCES = {name: f"next_{name}" for name in OBS_FIELDS[1:]}


@dataclass(frozen=True)
class StoredSequence:
    """One environment's sequence, by reference: ``pieces`` cover its steps and, before them,
    up to ``frame_stack − 1`` steps of frame history (``(chunk, first row, end row)`` each;
    history before the stream's start is zero frames); ``last`` is the chunk that completed
    it (its next observation and initial state)."""

    pieces: tuple[tuple[StepChunk, int, int], ...]
    history: int
    """Rows of ``pieces`` before the sequence's first step."""
    last: StepChunk
    env: int


class ReplayCollector:
    def __init__(
        self, batch_size: int, replay: int, capacity: int, min_size: int, seed: int,
        frame_stack: int = 1,
    ) -> None:
        if not 1 <= batch_size <= min_size <= capacity:
            raise ValueError(
                f"need 1 <= batch_size ({batch_size}) <= min_size ({min_size}) <= capacity "
                f"({capacity})"
            )
        if replay < 1:
            raise ValueError(f"replay must be >= 1, got {replay}")
        self.batch_size, self.replay = batch_size, replay
        self.capacity, self.min_size = capacity, min_size
        self.frame_stack = frame_stack
        self._rng = np.random.default_rng(seed)
        self._items: list[StoredSequence] = []
        self._uses_left: list[int] = []
        self._streams: dict[int, deque[StepChunk]] = {}  # actor id → its recent chunks
        self.added = 0
        self.trained = 0  # sequence-uses handed to the learner

    def __len__(self) -> int:
        return len(self._items)

    @property
    def free_slots(self) -> int:
        return self.capacity - len(self._items)

    # --- in ------------------------------------------------------------------------------------
    def add(self, data: StepChunk | SequenceBatch, actor: int | None = None) -> None:
        """An actor's chunk (``actor``: whose stream it continues), or whole sequences (a
        ``SequenceBatch``, stored as a chunk of their own)."""
        chunk = data if isinstance(data, StepChunk) else StepChunk.from_sequences(
            data, self.frame_stack)
        if chunk.num_envs > self.free_slots:
            raise ValueError(f"collector has {self.free_slots} free slots, cannot add "
                             f"{chunk.num_envs} sequences")
        if chunk.history_frames is not None or actor is None:
            pieces, history = ((chunk, 0, chunk.steps),), 0
        else:
            pieces, history = self._continue_stream(actor, chunk)
        for env in range(chunk.num_envs):
            self._items.append(StoredSequence(pieces, history, chunk, env))
            self._uses_left.append(self.replay)
        self.added += chunk.num_envs

    def _continue_stream(self, actor: int, chunk: StepChunk):
        tail = self._streams.get(actor)
        if chunk.start == 0:  # a new stream: a new or restarted actor
            tail = self._streams[actor] = deque()
        elif tail is None or tail[-1].end != chunk.start:
            held = "no steps" if tail is None else f"steps up to {tail[-1].end}"
            raise ValueError(f"actor {actor}'s window starts at step {chunk.start} of its "
                             f"stream, but the collector holds {held} of it")
        tail.append(chunk)
        first = chunk.sequence_start - (self.frame_stack - 1)  # the stack's history included
        pieces = tuple((c, max(first, c.start) - c.start, c.steps) for c in tail
                       if c.end > first)
        history = chunk.sequence_start - max(first, 0)
        # The next chunk's sequences start at least one step later: older chunks can go (the
        # held sequences keep what they refer to). The newest stays whatever the sequence's
        # length: the next window's start is checked against its end (with one-step sequences
        # and no frame stack, keep_from reaches it).
        keep_from = chunk.end + 1 - chunk.sequence_length - (self.frame_stack - 1)
        while len(tail) > 1 and tail[0].end <= keep_from:
            tail.popleft()
        return pieces, history

    def ready(self) -> bool:
        return len(self._items) >= self.min_size

    # --- out -----------------------------------------------------------------------------------
    def sample(self, out: SequenceBatch | FrameBatch | None = None, stacked: bool = True
               ) -> SequenceBatch | FrameBatch:
        """``batch_size`` distinct sequences; each loses one use and leaves after its last.
        ``stacked=False``: stacked observations left as frames (a ``FrameBatch``, for the
        learner to rebuild on its device; unstacked observations give a ``SequenceBatch``
        either way). ``out``: arrays of that form to assemble the batch into (a CUDA
        learner's pinned buffers)."""
        if len(self._items) < self.batch_size:
            raise ValueError(f"collector holds {len(self)} sequences < batch size {self.batch_size}")
        picked = np.sort(self._rng.choice(len(self._items), self.batch_size, replace=False))
        out = self._assembled([self._items[i] for i in picked], out, stacked)
        for i in picked[::-1]:  # from the back, so deletions keep earlier indices valid
            self._uses_left[i] -= 1
            if self._uses_left[i] == 0:
                del self._items[i]
                del self._uses_left[i]
        self.trained += self.batch_size
        return out

    def newest(self, count: int, stacked: bool = True) -> SequenceBatch | FrameBatch:
        """The ``count`` sequences added last, assembled (without using them up); ``stacked``
        as for ``sample``."""
        return self._assembled(self._items[len(self._items) - count:], stacked=stacked)

    def _assembled(self, items: list[StoredSequence],
                   out: SequenceBatch | FrameBatch | None = None, stacked: bool = True
                   ) -> SequenceBatch | FrameBatch:
        """The items' batch: its frames assembled unstacked (``FrameBatch``) when observations
        stack frames, then stacked by the learner's own code if ``stacked``."""
        as_frames = self.frame_stack > 1
        returned = FrameBatch if as_frames and not stacked else SequenceBatch
        if out is not None and not isinstance(out, returned):
            raise TypeError(f"this batch is a {returned.__name__}, cannot assemble it into a "
                            f"{type(out).__name__}")
        if out is None or (as_frames and stacked):  # stacked buffers: not the assembly's form
            batch = self._empty_batch(items[0].last, len(items))
        else:
            batch = out
        for column, item in enumerate(items):
            self._assemble(item, column, batch)
        if not (as_frames and stacked):
            return batch
        stacks = batch.stacked()
        return stacks if out is None else SequenceBatch.concatenate([stacks], out=out)

    def _empty_batch(self, chunk: StepChunk, size: int) -> SequenceBatch | FrameBatch:
        """A batch to assemble ``size`` sequences into: a ``FrameBatch`` when observations
        stack frames, else a ``SequenceBatch``."""
        length, history = chunk.sequence_length, self.frame_stack - 1
        arrays = {}
        if history:
            arrays["frames"] = np.empty((history + length + 1, size, *chunk.frames.shape[2:]),
                                        dtype=chunk.frames.dtype)
            arrays["history_resets"] = np.empty((history, size), dtype=chunk.resets.dtype)
        else:
            arrays["obs"] = np.empty((length + 1, size, *chunk.frames.shape[2:]),
                                     dtype=chunk.frames.dtype)
        for name in OBS_FIELDS[1:]:
            source = getattr(chunk, name)
            arrays[name] = np.empty((length + 1, size, *source.shape[2:]), dtype=source.dtype)
        for name in STEP_FIELDS:
            source = getattr(chunk, name)
            arrays[name] = np.empty((length, size, *source.shape[2:]), dtype=source.dtype)
        state = chunk.initial_state
        arrays["initial_state"] = np.empty((size, *state.shape[1:]), dtype=state.dtype)
        return FrameBatch(**arrays) if history else SequenceBatch(**arrays)

    @staticmethod
    def _rows(item: StoredSequence, name: str) -> np.ndarray:
        parts = [getattr(chunk, name)[a:b, item.env] for chunk, a, b in item.pieces]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _assemble(self, item: StoredSequence, column: int, out: SequenceBatch | FrameBatch
                  ) -> None:
        """Write ``item`` into column ``column`` of ``out``: a ``FrameBatch`` (observations
        that stack frames: each frame once, the stack's history before the sequence's first)
        or a ``SequenceBatch`` (an observation is its frame)."""
        last, env, skip = item.last, item.env, item.history
        for name in STEP_FIELDS:
            getattr(out, name)[:, column] = self._rows(item, name)[skip:]
        rows = {name: self._rows(item, name) for name in _OBS_SOURCES}
        for name, next_name in _OBS_SOURCES.items():
            target = getattr(out, name)[:, column]
            target[:-1] = rows[name][skip:]
            target[-1] = getattr(last, next_name)[env]
        out.initial_state[column] = last.initial_state[env]
        # The frames: the stack's history rows (none unstacked), the steps', the next one.
        frames = (out.frames if isinstance(out, FrameBatch) else out.obs)[:, column]
        before = self.frame_stack - 1 - skip  # history frames not in the pieces
        if before:
            if last.history_frames is not None:  # a chunk standing alone carries its history
                frames[:before] = last.history_frames[:, env]
            else:  # before the stream's start: zero
                frames[:before] = 0
            out.history_resets[:before, column] = False
        if skip:
            out.history_resets[before:, column] = rows["resets"][:skip]
        row = before
        for chunk, a, b in item.pieces:  # each piece straight into place: no joined copy
            frames[row : row + b - a] = chunk.frames[a:b, env]
            row += b - a
        frames[row] = last.next_frames[env]

    # --- checkpointing -------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Plain arrays and numbers: each chunk once, sequences and streams by chunk number."""
        numbers: dict[int, int] = {}
        chunks: list[dict] = []

        def number(chunk: StepChunk) -> int:
            if id(chunk) not in numbers:
                numbers[id(chunk)] = len(chunks)
                chunks.append(chunk.as_dict())
            return numbers[id(chunk)]

        items = [{"pieces": [(number(c), a, b) for c, a, b in item.pieces],
                  "history": item.history, "last": number(item.last), "env": item.env}
                 for item in self._items]
        streams = {actor: [number(c) for c in tail] for actor, tail in self._streams.items()}
        return {"chunks": chunks, "sequences": items, "streams": streams,
                "uses_left": list(self._uses_left), "rng": self._rng.bit_generator.state,
                "added": self.added, "trained": self.trained}

    def load_state_dict(self, state: dict) -> None:
        self._uses_left = list(state["uses_left"])
        self._rng.bit_generator.state = state["rng"]
        self.added, self.trained = state["added"], state["trained"]
        chunks = [StepChunk(**c) for c in state["chunks"]]
        self._items = [StoredSequence(tuple((chunks[n], a, b) for n, a, b in item["pieces"]),
                                      item["history"], chunks[item["last"]], item["env"])
                       for item in state["sequences"]]
        self._streams = {int(actor): deque(chunks[n] for n in tail)
                         for actor, tail in state["streams"].items()}
