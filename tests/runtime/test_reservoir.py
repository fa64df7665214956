"""The observation reservoir behind `gdi analyze richness` (paper App. "t-SNE"): Algorithm R's
uniform inclusion, stage assignment, checkpoint round trip, and the trainer hook (off = no
work, on = observations.npz written and resumed exactly)."""

import numpy as np
import pytest

from gdi.run_files import OBSERVATIONS_FILE
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint
from gdi.runtime.storage.reservoir import StageReservoir
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config, train_until

BATCHES = (1, 7, 30, 62)  # single observations, and batches that overfill a slot


def stream(n: int, shape=(2,)) -> np.ndarray:
    """Observation i is filled with the value i, so kept observations name themselves."""
    return np.broadcast_to(np.arange(n, dtype=np.int64).reshape(n, *[1] * len(shape)),
                           (n, *shape)).copy()


def feed(reservoir: StageReservoir, observations: np.ndarray, progress: float = 0.0) -> None:
    start, i = 0, 0
    while start < len(observations):
        size = BATCHES[i % len(BATCHES)]
        reservoir.add(observations[start : start + size], progress, frames=start)
        start, i = start + size, i + 1


def reference_r(observations: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Algorithm R one observation at a time, drawing the same random numbers (one integer
    per observation past the k-th, batch by batch as ``feed`` offers them)."""
    rng = np.random.default_rng(seed)
    kept = list(observations[:k])
    seen, start, i = 0, 0, 0
    while start < len(observations):
        batch = observations[start : start + BATCHES[i % len(BATCHES)]]
        positions = [seen + m + 1 for m in range(len(batch)) if seen + m + 1 > k]
        draws = iter(rng.integers(0, np.array(positions, dtype=np.int64))) if positions else None
        for m, obs in enumerate(batch):
            t = seen + m + 1
            if t > k:
                j = int(next(draws))
                if j < k:
                    kept[j] = obs
        seen += len(batch)
        start, i = start + len(batch), i + 1
    return np.array(kept)


def test_vectorized_add_equals_one_at_a_time_algorithm_r():
    observations = stream(500)
    reservoir = StageReservoir(stages=1, per_stage=20, seed=11)
    feed(reservoir, observations)
    np.testing.assert_array_equal(reservoir.kept(0), reference_r(observations, 20, seed=11))
    assert reservoir.seen[0] == 500


def test_inclusion_probability_is_uniform():
    n, k, trials = 100, 10, 2000
    counts = np.zeros(n)
    for trial in range(trials):
        reservoir = StageReservoir(stages=1, per_stage=k, seed=trial)
        feed(reservoir, stream(n, shape=()))
        kept = reservoir.kept(0)
        assert len(np.unique(kept)) == k  # without replacement
        counts[kept] += 1
    expected = trials * k / n  # 200 per observation
    # Each count is Binomial(2000, 0.1): sd 13.4. Bounds of 6 sd per cell and a chi-square
    # (df 99, mean ≈ 0.9·99 since the total is fixed) far above its 99.99 % quantile.
    assert np.all(np.abs(counts - expected) < 6 * np.sqrt(trials * 0.1 * 0.9))
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 170.0
    # The first and the last tenth of the stream are equally represented.
    assert abs(counts[:10].sum() - counts[-10:].sum()) < 0.1 * expected * 10


@pytest.mark.parametrize(
    ("progress", "stage"),
    [(0.0, 0), (0.3333, 0), (1 / 3, 1), (0.5, 1), (0.6667, 2), (0.999, 2), (1.0, 2), (1.7, 2),
     (-0.2, 0)],
)
def test_stage_is_floor_of_progress_times_stages_clamped(progress, stage):
    assert StageReservoir(stages=3, per_stage=4, seed=0).stage_of(progress) == stage


def test_observations_go_to_their_stage_with_their_frames():
    reservoir = StageReservoir(stages=3, per_stage=4, seed=0)
    reservoir.add(stream(3), progress=0.1, frames=100)
    reservoir.add(stream(2) + 10, progress=0.9, frames=900)
    np.testing.assert_array_equal(reservoir.kept(0)[:, 0], [0, 1, 2])
    assert len(reservoir.kept(1)) == 0
    np.testing.assert_array_equal(reservoir.kept(2)[:, 0], [10, 11])
    np.testing.assert_array_equal(reservoir.kept_frames(2), [900, 900])
    np.testing.assert_array_equal(reservoir.seen, [3, 0, 2])


def test_state_round_trip_continues_identically(tmp_path):
    first = StageReservoir(stages=2, per_stage=8, seed=5)
    feed(first, stream(120), progress=0.2)
    second = StageReservoir(stages=2, per_stage=8, seed=999)
    second.load_state_dict(first.state_dict())
    more = stream(300) + 1000
    feed(first, more, progress=0.7)
    feed(second, more, progress=0.7)
    for stage in range(2):
        np.testing.assert_array_equal(first.kept(stage), second.kept(stage))
    path = first.save(tmp_path / OBSERVATIONS_FILE)
    with np.load(path) as saved:
        assert int(saved["stages"]) == 2 and int(saved["per_stage"]) == 8
        np.testing.assert_array_equal(saved["seen"], [120, 300])
        np.testing.assert_array_equal(saved["stage_1"], first.kept(1))
        np.testing.assert_array_equal(saved["frames_1"], first.kept_frames(1))
    assert not list(tmp_path.glob(".observations-*"))  # no temporary file left behind


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="stages"):
        StageReservoir(stages=0, per_stage=4, seed=0)
    reservoir = StageReservoir(stages=1, per_stage=4, seed=0)
    reservoir.add(np.zeros((2, 3)), 0.0)
    with pytest.raises(ValueError, match="shape"):
        reservoir.add(np.zeros((2, 4)), 0.0)
    with pytest.raises(ValueError, match="3 stages"):
        StageReservoir(stages=1, per_stage=4, seed=0).load_state_dict(
            StageReservoir(stages=3, per_stage=4, seed=0).state_dict())


def test_per_stage_zero_keeps_nothing():
    reservoir = StageReservoir(stages=3, per_stage=0, seed=0)
    reservoir.add(stream(10), 0.5)
    assert reservoir.obs_shape is None and reservoir.seen.sum() == 0


def test_off_by_default_no_reservoir_and_no_file(tmp_path):
    result = train(tiny_config(frames=200), tmp_path / "off", show_progress=False,
                   tensorboard=False)
    assert not (result.run_dir / OBSERVATIONS_FILE).exists()
    assert "reservoir" not in load_checkpoint(latest_checkpoint(result.run_dir))


def test_training_writes_observations_and_resumes_them_exactly(tmp_path):
    config = tiny_config(frames=1200, observation_reservoir=16)
    whole = train(config, tmp_path / "whole", show_progress=False, tensorboard=False)
    cut = train_until(config, tmp_path / "cut", 600)
    resumed = train(config, tmp_path / "cut", resume=True, show_progress=False,
                    tensorboard=False)
    assert cut.interrupted and resumed.frames == whole.frames
    with np.load(whole.run_dir / OBSERVATIONS_FILE) as a, \
            np.load(resumed.run_dir / OBSERVATIONS_FILE) as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])
        # CartPole observations are float32 [4]; with 4 envs × 4 new steps per window and
        # 1200 frames every stage has seen far more than it keeps.
        assert a["stage_0"].shape == (16, 4) and a["stage_0"].dtype == np.float32
        assert np.all(a["seen"] > 16)
        stage_of_frames = np.floor(a["frames_2"] / 1200 * 3)
        assert np.all(stage_of_frames >= 2)
