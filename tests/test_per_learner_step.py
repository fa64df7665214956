"""benchmarks/per_learner_step.py: each episode placed at its learner step (linear between the
logged rows, from step 0 at frame 0), the frames per step, the cut at a step, and a level
counted only once a full window of episodes has ended. Hand-worked cases."""

import numpy as np

from benchmarks import per_learner_step
from benchmarks.atari_learning import Curve
from tests.test_atari_learning import write_gdi_run
from tests.test_lever_screen import add_learner_rows
from tests.tolerance import assert_close


def test_frames_per_step_is_the_median_over_rows_that_stepped():
    frames = np.array([0.0, 20_000, 40_000, 40_000, 70_000])
    steps = np.array([0.0, 10, 20, 20, 30])
    # Δframes / Δsteps: 2,000, 2,000, (no step: skipped), 3,000 → median 2,000.
    assert per_learner_step.frames_per_step(frames, steps) == 2_000


def test_a_level_counts_only_once_a_full_window_has_ended():
    curve = Curve(label="run", group="run", game="Breakout",
                  episode_minutes=np.array([1.0, 2.0, 3.0, 4.0]),
                  episode_frames=np.array([1e4, 2e4, 3e4, 4e4]),
                  episode_returns=np.array([10.0, 0.0, 4.0, 8.0]),
                  eval_minutes=np.zeros(0), eval_frames=np.zeros(0), eval_returns=[])
    # Trailing means over 2 episodes: 10 (one episode), 5, 2, 6. Level 5: the first full
    # window is the second episode's; level 6: the fourth; level 7: never.
    assert per_learner_step.first_full_window_reached(curve, 5.0, 2) == 2e4
    assert per_learner_step.first_full_window_reached(curve, 6.0, 2) == 4e4
    assert per_learner_step.first_full_window_reached(curve, 7.0, 2) is None


def test_a_run_cut_at_a_step_with_its_table_row(tmp_path, capsys):
    run = tmp_path / "breakout-0"
    # Training episodes end at 30k and 120k frames, returns 6 and 20; learner rows at 20k
    # (step 10) and 40k (step 20): the first episode ends at step 15, the second past the
    # last row (left out).
    write_gdi_run(run, seed=0, episode_returns=(6.0, 20.0))
    add_learner_rows(run, [{"frames": 20_000, "learner_steps": 10, "losses/entropy": 2.0},
                           {"frames": 40_000, "learner_steps": 20, "losses/entropy": 1.0}])
    out = tmp_path / "steps.png"
    assert per_learner_step.main(["--run", f"cpu={run}", "--steps", "20", "--levels", "5",
                                  "10", "--window", "1", "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("| cpu |")).split(" | ")
    # 2,000 frames per step; 20 steps at 40k frames; 5 reached at step 15 (30k frames), 10
    # never (the 20 is past the last row); entropy over the last third (steps > 13.3): 1.0.
    assert row[1:5] == ["2,000", "20 / 0.04M", "15 / 0.03M", "—"]
    assert row[5].rstrip(" |") == "1.00"
    stepped = per_learner_step.cut_at_step("cpu", per_learner_step.read_gdi(run), 20)
    assert_close(stepped.episode_steps, np.array([15.0]))
    # Cut at step 12, the episode of step 15 is out too.
    assert per_learner_step.cut_at_step("cpu", per_learner_step.read_gdi(run),
                                        12).episode_steps.size == 0


def test_bad_input_is_one_line(tmp_path, capsys):
    run = tmp_path / "breakout-0"
    write_gdi_run(run, seed=0)
    assert per_learner_step.main(["--run", f"cpu={run}", "--steps", "10",
                                  "--out", str(tmp_path / "x.png")]) == 1
    assert "fewer than two rows with learner steps" in capsys.readouterr().err
