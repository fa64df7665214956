"""benchmarks/time_to_score.py against hand-made run folders with known file times."""

import json
import os

import pytest

from benchmarks import time_to_score
from tests.tolerance import assert_close


def fake_run(root, name, evals, start=1_000.0):
    """A run folder whose config.json is written at ``start`` and each (frames, return, seconds
    after start) evaluation at its time."""
    run = root / name
    (run / "eval").mkdir(parents=True)
    (run / "config.json").write_text("{}")
    os.utime(run / "config.json", (start, start))
    for frames, mean_return, after in evals:
        path = run / "eval" / f"frames_{frames:012d}.json"
        path.write_text(json.dumps({"frames": frames, "mean_return": mean_return}))
        os.utime(path, (start + after, start + after))
    return run


def test_minutes_and_frames_to_the_target_and_the_last_three(tmp_path):
    run = fake_run(tmp_path, "a", [(100, 2.0, 60), (200, 11.0, 120), (300, 9.0, 180),
                                   (400, 12.5, 240)])
    times = time_to_score.run_times(run, target=10)
    assert times.frames == 400 and times.frames_to_target == 200
    assert_close((times.wall_minutes, times.minutes_to_target), (4.0, 2.0))
    assert times.final_return == 12.5
    assert_close(times.last3_return, (11.0 + 9.0 + 12.5) / 3)


def test_a_run_that_never_reaches_the_target(tmp_path):
    run = fake_run(tmp_path, "b", [(100, 2.0, 60), (200, 3.0, 90)])
    times = time_to_score.run_times(run, target=10)
    assert times.minutes_to_target is None and times.frames_to_target is None


def test_groups_are_printed_with_their_medians(tmp_path, capsys):
    fake_run(tmp_path, "before-1", [(100, 4.0, 60), (200, 10.0, 120)])
    fake_run(tmp_path, "before-2", [(100, 5.0, 60), (200, 8.0, 180)])
    assert time_to_score.main(["--group", f"before={tmp_path}/before-*", "--target", "10"]) == 0
    out = capsys.readouterr().out
    # 200 frames in 2 and 3 minutes: median 2.5 min; one of two runs reached 10, at 2.0 min.
    assert "| before | 2 | 9.00 [" in out and "| 2.5 |" in out and "1 of 2 | 2.0 |" in out


def test_a_copy_that_lost_its_files_times_has_no_clock(tmp_path, capsys):
    # cp without -p: every file stamped at the copy's time. Frames and returns still count; the
    # minutes and frames/s are "—", not a rate over zero seconds.
    run = fake_run(tmp_path, "copied-1", [(100, 4.0, 0.2), (200, 11.0, 0.4)])
    times = time_to_score.run_times(run, target=10)
    assert times.wall_minutes is None and times.minutes_to_target is None
    assert times.frames_to_target == 200 and times.final_return == 11.0
    assert time_to_score.main(["--group", f"copied={tmp_path}/copied-*", "--target", "10"]) == 0
    out = capsys.readouterr().out
    assert "| copied | copied-1 | 200 | — | — | 11.00 | 7.50 | — | 200 |" in out
    assert "| — | — | 1 of 1 | — |" in out


def test_medians_over_a_group_part_copied_say_how_many_runs_kept_their_clock(tmp_path, capsys):
    fake_run(tmp_path, "mixed-1", [(100, 4.0, 60), (200, 11.0, 120)])  # a run folder: 2 min
    fake_run(tmp_path, "mixed-2", [(100, 5.0, 0.2), (200, 6.0, 0.4)])  # a copy: no clock
    assert time_to_score.main(["--group", f"mixed={tmp_path}/mixed-*", "--target", "10"]) == 0
    out = capsys.readouterr().out
    # 200 frames in 2 minutes (the timed run alone: 1.7 frames/s); it reached 10 at 2.0 min.
    assert "| 2.0 (1 of 2 timed) | 2 | 1 of 2 | 2.0 |" in out


def test_a_group_without_runs_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="no run folders match"):
        time_to_score.main(["--group", f"x={tmp_path}/nothing-*"])
