"""Data collector: each sequence is trained exactly `replay` times, never evicted early."""

import numpy as np
import pytest

from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.sequences import SequenceBatch


def _window(ids: list[int], length: int = 3) -> SequenceBatch:
    """A batch of sequences whose rewards carry their id."""
    n = len(ids)
    return SequenceBatch(
        obs=np.zeros((length + 1, n, 2), np.uint8), resets=np.zeros((length + 1, n), bool),
        prev_actions=np.zeros((length + 1, n), np.int64),
        prev_rewards=np.zeros((length + 1, n), np.float32),
        actions=np.zeros((length, n), np.int64),
        rewards=np.tile(np.array(ids, np.float32), (length, 1)),
        dones=np.zeros((length, n), bool), behavior_log_probs=np.zeros((length, n), np.float32),
        lambdas=np.zeros((length, n, 3), np.float32), versions=np.zeros((length, n), np.int64),
        truncation_values=np.zeros((length, n, 1), np.float32),
        initial_state=np.zeros((n, 1, 2, 4), np.float32),
    )


@pytest.mark.parametrize("replay", [1, 2, 3])
def test_each_sequence_is_trained_exactly_replay_times(replay):
    collector = ReplayCollector(batch_size=4, replay=replay, capacity=40, min_size=8, seed=0)
    counts: dict[int, int] = {}
    next_id = 0
    for _ in range(30):
        collector.add(_window(list(range(next_id, next_id + 4))))
        next_id += 4
        while collector.ready():
            batch = collector.sample()
            ids = batch.rewards[0].astype(int).tolist()
            assert len(set(ids)) == len(ids)  # distinct sequences within a batch
            for i in ids:
                counts[i] = counts.get(i, 0) + 1
    assert max(counts.values()) == replay  # never more than replay
    held = set(collector.newest(len(collector)).rewards[0].astype(int).tolist())
    for i in range(next_id):  # every sequence not still held was used exactly `replay` times
        if i not in held:
            assert counts.get(i) == replay
    assert collector.trained == sum(counts.values())


def test_capacity_is_enforced_and_reported():
    collector = ReplayCollector(batch_size=2, replay=2, capacity=6, min_size=4, seed=0)
    collector.add(_window([0, 1, 2, 3]))
    assert collector.free_slots == 2
    with pytest.raises(ValueError, match="free slots"):
        collector.add(_window([4, 5, 6]))


def test_state_round_trip_gives_the_same_batches():
    a = ReplayCollector(batch_size=2, replay=2, capacity=20, min_size=4, seed=3)
    a.add(_window([0, 1, 2, 3, 4]))
    a.sample()
    b = ReplayCollector(batch_size=2, replay=2, capacity=20, min_size=4, seed=99)
    b.load_state_dict(a.state_dict())
    for _ in range(3):
        np.testing.assert_array_equal(a.sample().rewards, b.sample().rewards)


def test_bad_sizes_raise():
    with pytest.raises(ValueError, match="batch_size"):
        ReplayCollector(batch_size=8, replay=2, capacity=10, min_size=4, seed=0)
    with pytest.raises(ValueError, match="replay"):
        ReplayCollector(batch_size=2, replay=0, capacity=10, min_size=4, seed=0)


def test_a_batch_assembled_into_given_buffers_is_the_batch_it_would_allocate():
    # A CUDA learner's pinned buffers: the same sequences, in the same order, in its arrays.
    plain, into = (ReplayCollector(batch_size=3, replay=2, capacity=16, min_size=3, seed=5)
                   for _ in range(2))
    for collector in (plain, into):
        collector.add(_window([0, 1, 2, 3]))
        collector.add(_window([4, 5, 6, 7]))
    expected = plain.sample()
    buffers = SequenceBatch(**{name: np.full_like(array, 99)
                               for name, array in expected.as_dict().items()})
    got = into.sample(out=buffers)
    assert got is buffers
    for name, array in expected.as_dict().items():
        np.testing.assert_array_equal(getattr(got, name), array)
    assert len(into) == len(plain)
