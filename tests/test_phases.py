"""benchmarks/phases.py: the time-weighted mean of the per-phase shares, worked by hand."""

import json

import pytest

from benchmarks.phases import phase_shares, table
from tests.tolerance import assert_close


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_shares_are_weighted_by_each_rows_wall_time(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    write_rows(metrics, [
        # 1,000 frames at 100 f/s = 10 s; then 3,000 frames at 100 f/s = 30 s.
        {"frames": 1000, "perf/fps": 100.0, "perf/learner_share": 0.8,
         "perf/actor_env_share": 0.1},
        {"frames": 2000, "charts/episodic_return": 3.0},  # an episode-only row: no perf
        {"frames": 4000, "perf/fps": 100.0, "perf/learner_share": 0.4,
         "perf/actor_env_share": 0.3, "perf/actor_meta_share": 0.2},
    ])
    shares = phase_shares(metrics)
    # learner: (0.8·10 + 0.4·30) / 40 = 0.5; env: (0.1·10 + 0.3·30) / 40 = 0.25;
    # meta, absent from the first row: 0.2·30 / 40 = 0.15.
    assert_close(shares["learner"], 0.5)
    assert_close(shares["actor_env"], 0.25)
    assert_close(shares["actor_meta"], 0.15)
    assert_close(shares["fps"], 4000 / 40)


def test_a_run_without_timing_rows_is_a_clear_error(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    write_rows(metrics, [{"frames": 10, "charts/episodic_return": 1.0}])
    with pytest.raises(ValueError, match="no rows with perf/fps"):
        phase_shares(metrics)
    with pytest.raises(SystemExit, match="not a run folder"):
        table([tmp_path / "missing"])
