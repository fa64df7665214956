"""benchmarks/atari_learning.py: its trailing means, a gdi run's evaluations with their HNS,
and a report of Sample Factory episodes written end to end (its training clock is
gdi.run_records.training_clock, tested in tests/test_run_records.py)."""

import json

import numpy as np
import pytest

from benchmarks import atari_learning
from tests.tolerance import assert_close


def test_trailing_means_match_a_loop():
    values = np.random.default_rng(0).normal(size=37)
    for window in (1, 5, 100):
        loop = [np.mean(values[max(0, i + 1 - window):i + 1]) for i in range(values.size)]
        assert_close(atari_learning.trailing_mean(values, window), np.array(loop))


def write_appo(folder, rows):
    folder.mkdir(parents=True)
    lines = ["wall_s,frames,return,length_frames"] + [f"{w},{f},{r},400" for w, f, r in rows]
    (folder / "curve_episodes.csv").write_text("\n".join(lines) + "\n")


def test_an_appo_report_is_written_with_the_return_at_the_common_wall_time(tmp_path, capsys):
    rows = [(60.0 * m, 10_000 * m, float(m)) for m in range(1, 11)]  # return m at minute m
    write_appo(tmp_path / "appo_ale_breakout_seed0", rows)
    out = tmp_path / "fig.png"
    assert atari_learning.main(["--appo", str(tmp_path / "appo_ale_breakout_seed0"),
                                "--window", "3", "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    table = out.with_suffix(".md").read_text()
    assert "on Breakout (random 1.7, human 30.5)" in table
    # 10 minutes reached; the last 3 episodes returned 8, 9 and 10.
    assert "| 100,000 | 9.00 | nan |" in table and "10 minutes" in table
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "message"), [
    ("appo_breakout_seed0", "not an ALE experiment of appo_peer.py"),
    ("appo_ale_breakout_seed0", "has no curve_episodes.csv"),
])
def test_a_folder_that_is_not_an_appo_experiment_is_one_line(tmp_path, capsys, name, message):
    folder = tmp_path / name
    if name == "appo_breakout_seed0":
        write_appo(folder, [(60.0, 1000, 1.0)])
    else:
        folder.mkdir()
    assert atari_learning.main(["--appo", str(folder), "--out", str(tmp_path / "f.png")]) == 1
    assert message in capsys.readouterr().err


def write_gdi_run(run, seed, eval_returns=(8.0, 10.0), episode_returns=(1.0, 3.0),
                  episode_frames=(30_000, 120_000), env="ale:Breakout"):
    """A gdi run: 1,000 frames/s for 60 s, then an evaluation's 60 s at 500 frames/s, then
    1,000 again to 150,000 frames; training episodes ending at ``episode_frames``."""
    from gdi.presets import resolve_config
    from gdi.runtime.run_folder.run_dir import write_config
    from gdi.scores import periodic_eval_name, write_eval_file

    run.mkdir()
    scale = "ale-cpu" if env.startswith("ale:") else None
    write_config(run, resolve_config("gdi-i3", env, scale=scale, seed=seed), {})
    rows = [{"frames": 60_000, "perf/fps": 1000.0}, {"frames": 60_000, "eval/mean_return": 9},
            {"frames": 90_000, "perf/fps": 500.0}, {"frames": 150_000, "perf/fps": 1000.0}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "meta.jsonl").write_text("".join(
        json.dumps({"frames": f, "actor": 0, "lambda": [1.0, 1.0, 0.5], "return": r,
                    "length": 100}) + "\n"
        for f, r in zip(episode_frames, episode_returns, strict=True)))
    write_eval_file(run, periodic_eval_name(60_000), checkpoint="x", frames=60_000,
                    env=env, policy="π_λ", seed=0,
                    episodes=[{"return": r, "frames": 10, "seed": i}
                              for i, r in enumerate(eval_returns)])


def test_a_gdi_run_reports_each_evaluation_with_its_minutes_and_hns(tmp_path):
    run = tmp_path / "breakout-0"
    write_gdi_run(run, seed=0)
    curve = atari_learning.read_gdi(run)
    assert_close(curve.episode_minutes, np.array([0.5, 2.5]))  # 30 s; 60 + 60 + 30 s
    assert_close(curve.eval_minutes, np.array([1.0]))
    table = atari_learning.table([curve], window=100)
    hns = (9.0 - 1.7) / (30.5 - 1.7)  # the paper's random and human Breakout scores
    assert f"| 60,000 | 1 | 9.00 | 8 – 10 | {hns:.3f} |" in table


def test_time_to_a_level_is_the_first_episode_whose_trailing_mean_reaches_it():
    # Returns 0, 4, 2, 8 at minutes 1-4: trailing means over 2 episodes 0, 2, 3, 5.
    curve = atari_learning.Curve(
        label="run", group="run", game="Breakout",
        episode_minutes=np.array([1.0, 2.0, 3.0, 4.0]),
        episode_frames=np.array([1e5, 2e5, 3e5, 4e5]),
        episode_returns=np.array([0.0, 4.0, 2.0, 8.0]),
        eval_minutes=np.zeros(0), eval_frames=np.zeros(0), eval_returns=[])
    assert atari_learning.first_reached(curve, 3.0, window=2) == (3.0, 3e5)
    assert atari_learning.first_reached(curve, 4.0, window=1) == (2.0, 2e5)  # one episode
    assert atari_learning.first_reached(curve, 5.5, window=2) is None
    lines = atari_learning.time_to_levels([curve], window=2, levels=[2.0, 3.0, 6.0])
    assert "| run | 2 / 0.20M | 3 / 0.30M | — |" in lines
    # By default a quarter, half, three quarters and all of the human score: Breakout's
    # random 1.7 and human 30.5 give 8.9, 16.1, 23.3 and 30.5.
    assert_close(np.array(atari_learning.default_levels("Breakout")),
                 np.array([8.9, 16.1, 23.3, 30.5]), magnitude=30.5)


def test_runs_named_alike_but_their_seed_form_a_group():
    assert atari_learning.group_of("breakout-1") == "breakout"
    assert atari_learning.group_of("breakout-default-init-0") == "breakout-default-init"
    assert atari_learning.group_of("appo_ale_breakout_seed12") == "appo_ale_breakout"


def test_seeds_of_a_group_are_averaged_with_an_interval_around_the_mean(tmp_path):
    # Seed 0 evaluates to 9 (8, 10) and seed 1 to 15 (14, 16); their mean is 12. Training
    # returns by the common wall time (3 minutes, the last episodes' end at 150,000 frames):
    # (1 + 3) / 2 = 2 and (5 + 7) / 2 = 6.
    ends = (30_000, 150_000)
    write_gdi_run(tmp_path / "breakout-0", seed=0, episode_frames=ends)
    write_gdi_run(tmp_path / "breakout-1", seed=1, eval_returns=(14.0, 16.0),
                  episode_returns=(5.0, 7.0), episode_frames=ends)
    write_gdi_run(tmp_path / "control-0", seed=0, episode_frames=ends)  # a group of one
    curves = [atari_learning.read_gdi(tmp_path / name)
              for name in ("breakout-0", "breakout-1", "control-0")]
    text = atari_learning.table(curves, window=100, reps=200)
    assert "breakout, 2 seeds" in text and "control, " not in text
    row = next(line for line in text.splitlines() if line.startswith("| 60,000 | 1 | 12.00 ["))
    low, high = (float(x) for x in row.split("[")[1].split("]")[0].split(", "))
    # A bootstrap of two seeds resamples their values: the interval lies within their range.
    assert 9.0 <= low <= 12.0 <= high <= 15.0
    assert "| 9.00, 15.00 |" in row
    assert f"{(12.0 - 1.7) / (30.5 - 1.7):.3f} |" in row
    assert "training return at 3 minutes, mean over seeds 4.00 [95 % CI 2.00, 6.00]" in text


def test_diagnostics_plot_a_gdi_runs_learner_rows_and_need_one(tmp_path, capsys):
    run = tmp_path / "breakout-0"
    write_gdi_run(run, seed=0)
    with (run / "metrics.jsonl").open("a") as f:  # a learner row: what the panels read
        f.write(json.dumps({"frames": 160_000, "perf/fps": 1000.0, "losses/total": 1.0,
                            "stats/vs_mean": 2.0, "losses/grad_norm": 9.0,
                            "schedule/learning_rate": 4e-4}) + "\n")
    curve = atari_learning.read_gdi(run)
    assert [row["frames"] for row in curve.learner_rows] == [160_000]
    out = tmp_path / "diag.png"
    assert atari_learning.main(["--gdi", str(run), "--out", str(tmp_path / "f.png"),
                                "--diagnostics", str(out)]) == 0
    assert out.stat().st_size > 0
    write_appo(tmp_path / "appo_ale_breakout_seed0", [(60.0, 1000, 1.0)])
    assert atari_learning.main(["--appo", str(tmp_path / "appo_ale_breakout_seed0"), "--out",
                                str(tmp_path / "g.png"), "--diagnostics", str(out)]) == 1
    assert "--diagnostics needs a gdi run" in capsys.readouterr().err


def test_diagnostic_series_skips_the_rows_that_did_not_log_the_key():
    rows = [{"frames": 100, "losses/entropy": 1.5, "charts/episodic_return": -3.0},
            {"frames": 200, "losses/entropy": 1.2},
            {"frames": 300, "losses/entropy": 0.9, "charts/episodic_return": 2.0}]
    frames, values = atari_learning.diagnostic_series(rows, "charts/episodic_return")
    assert frames.tolist() == [100.0, 300.0] and values.tolist() == [-3.0, 2.0]
    frames, values = atari_learning.diagnostic_series(rows, "losses/entropy")
    assert frames.tolist() == [100.0, 200.0, 300.0] and values.tolist() == [1.5, 1.2, 0.9]
    frames, values = atari_learning.diagnostic_series(rows, "stats/vs_mean")
    assert frames.size == 0 and values.size == 0
