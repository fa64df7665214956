"""The data collector (DC of the paper's Algorithms GDI-I³/H³): sequences in, batches out.

Each sequence is trained on exactly ``replay`` times and then dropped ("we train each sample
twice", App. "Experiment Details"); none is ever evicted early. Sequences enter in arrival
order and a batch is ``batch_size`` distinct sequences drawn uniformly from those held, so the
two uses of one sequence land in different batches. Memory is bounded by ``capacity``: when it
is full the collector accepts nothing more, and actors wait (``free_slots`` tells them).
"""

from __future__ import annotations

import numpy as np

from gdi.runtime.sequences import SequenceBatch


class ReplayCollector:
    def __init__(
        self, batch_size: int, replay: int, capacity: int, min_size: int, seed: int
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
        self._rng = np.random.default_rng(seed)
        self._items: list[SequenceBatch] = []  # each a batch of one sequence
        self._uses_left: list[int] = []
        self.added = 0
        self.trained = 0  # sequence-uses handed to the learner

    def __len__(self) -> int:
        return len(self._items)

    @property
    def free_slots(self) -> int:
        return self.capacity - len(self._items)

    def add(self, batch: SequenceBatch) -> None:
        if batch.size > self.free_slots:
            raise ValueError(
                f"collector has {self.free_slots} free slots, cannot add {batch.size} sequences"
            )
        for i in range(batch.size):
            self._items.append(batch.column(i))
            self._uses_left.append(self.replay)
        self.added += batch.size

    def ready(self) -> bool:
        return len(self._items) >= self.min_size

    def sample(self, out: SequenceBatch | None = None) -> SequenceBatch:
        """``batch_size`` distinct sequences; each loses one use and leaves after its last.
        ``out``: arrays to assemble the batch into (a CUDA learner's pinned buffers)."""
        if len(self._items) < self.batch_size:
            raise ValueError(f"collector holds {len(self)} sequences < batch size {self.batch_size}")
        picked = np.sort(self._rng.choice(len(self._items), self.batch_size, replace=False))
        batch = SequenceBatch.concatenate([self._items[i] for i in picked], out=out)
        for i in picked[::-1]:  # from the back, so deletions keep earlier indices valid
            self._uses_left[i] -= 1
            if self._uses_left[i] == 0:
                del self._items[i]
                del self._uses_left[i]
        self.trained += self.batch_size
        return batch

    def state_dict(self) -> dict:
        return {
            "items": [item.as_dict() for item in self._items],
            "uses_left": list(self._uses_left),
            "rng": self._rng.bit_generator.state,
            "added": self.added,
            "trained": self.trained,
        }

    def load_state_dict(self, state: dict) -> None:
        self._items = [SequenceBatch(**item) for item in state["items"]]
        self._uses_left = list(state["uses_left"])
        self._rng.bit_generator.state = state["rng"]
        self.added, self.trained = state["added"], state["trained"]
