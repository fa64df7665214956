"""benchmarks/time_to_score.py against hand-made run folders with known training clocks."""

import json
import os

import pytest

from benchmarks import time_to_score
from tests.tolerance import assert_close


def fake_run(root, name, evals, clock=True):
    """A run folder with one evaluation per (frames, return, seconds of training) and a metrics
    row at each evaluation's frames whose ``perf/fps`` (with ``clock``) makes the training clock
    read those seconds there."""
    run = root / name
    (run / "eval").mkdir(parents=True)
    (run / "config.json").write_text("{}")
    rows, last_frames, last_seconds = [], 0, 0.0
    for frames, mean_return, seconds in evals:
        (run / "eval" / f"frames_{frames:012d}.json").write_text(
            json.dumps({"frames": frames, "mean_return": mean_return}))
        fps = (frames - last_frames) / (seconds - last_seconds)
        rows.append({"frames": frames, **({"perf/fps": fps} if clock else {})})
        # As a run writes them: the evaluation's own row after the timed one, without perf/fps.
        rows.append({"frames": frames, "eval/mean_return": mean_return})
        last_frames, last_seconds = frames, seconds
    (run / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
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


def test_the_clock_is_the_training_clock_not_the_files_times(tmp_path):
    # A run stopped for a day between a checkpoint and its resume (or carried to another
    # machine): its files' times span the day, its training clock only the training. An
    # evaluation between two rows is timed by interpolation.
    run = fake_run(tmp_path, "resumed", [(100, 4.0, 60), (300, 11.0, 180)])
    with (run / "metrics.jsonl").open("a") as handle:
        handle.write(json.dumps({"frames": 400, "perf/fps": 100 / 60}) + "\n")
    (run / "eval" / "frames_000000000200.json").write_text(
        json.dumps({"frames": 200, "mean_return": 10.5}))
    os.utime(run / "config.json", (0, 0))
    times = time_to_score.run_times(run, target=10)
    # 200 frames lie halfway between the rows at 100 (1 min) and 300 (3 min).
    assert times.frames_to_target == 200 and times.frames == 300
    assert_close((times.minutes_to_target, times.wall_minutes), (2.0, 3.0))


def test_an_evaluation_past_the_last_timed_row_has_no_clock(tmp_path):
    # Its time would be a guess (np.interp clamps it to the last row's), not a measurement.
    run = fake_run(tmp_path, "cut", [(100, 4.0, 60), (200, 11.0, 120)])
    (run / "eval" / "frames_000000000300.json").write_text(
        json.dumps({"frames": 300, "mean_return": 12.0}))
    times = time_to_score.run_times(run, target=10)
    assert times.frames == 300 and times.wall_minutes is None
    assert_close(times.minutes_to_target, 2.0)


def test_a_run_without_perf_rows_has_no_clock(tmp_path, capsys):
    # Frames and returns still count; the minutes and frames/s are "—", not a rate over zero
    # seconds.
    run = fake_run(tmp_path, "untimed-1", [(100, 4.0, 0.2), (200, 11.0, 0.4)], clock=False)
    times = time_to_score.run_times(run, target=10)
    assert times.wall_minutes is None and times.minutes_to_target is None
    assert times.frames_to_target == 200 and times.final_return == 11.0
    assert time_to_score.main(["--group", f"untimed={tmp_path}/untimed-*", "--target", "10"]) == 0
    out = capsys.readouterr().out
    assert "| untimed | untimed-1 | 200 | — | — | 11.00 | 7.50 | — | 200 |" in out
    assert "| — | — | 1 of 1 | — |" in out


def test_medians_over_a_group_part_untimed_say_how_many_runs_have_a_clock(tmp_path, capsys):
    fake_run(tmp_path, "mixed-1", [(100, 4.0, 60), (200, 11.0, 120)])  # timed: 2 min
    fake_run(tmp_path, "mixed-2", [(100, 5.0, 0.2), (200, 6.0, 0.4)], clock=False)
    assert time_to_score.main(["--group", f"mixed={tmp_path}/mixed-*", "--target", "10"]) == 0
    out = capsys.readouterr().out
    # 200 frames in 2 minutes (the timed run alone: 1.7 frames/s); it reached 10 at 2.0 min.
    assert "| 2.0 (1 of 2 timed) | 2 | 1 of 2 | 2.0 |" in out


def test_a_group_without_runs_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="no run folders match"):
        time_to_score.main(["--group", f"x={tmp_path}/nothing-*"])
