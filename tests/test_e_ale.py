"""benchmarks/e_ale.py: the E ablation's ALE cell (issue 42, item 5), by hand on fabricated run
folders: the metrics over the cut, the test, what E learned, and the refusals of cells that are
not each other's control."""

import csv
import json
import math

import numpy as np
import pytest
from matplotlib.image import imread
from scipy import stats

from benchmarks import e_ale
from gdi.presets import resolve_config
from gdi.runtime.run_folder.run_dir import write_config
from gdi.scores import periodic_eval_name, write_eval_file
from tests.tolerance import assert_close

CUT = 100_000
PER_TENTH = 20  # the KL needs 2 · 10 episodes in a tenth


def write_run(run, preset, seed, returns, lambdas, evals=((50_000, 3.0), (100_320, 6.0)),
              last_frames=150_000, **fields):
    """An ALE run at the ale-cpu scale: ``PER_TENTH`` training episodes in each tenth of the
    first ``CUT`` frames, the k-th tenth's with return ``returns[k]`` and λ ``lambdas(k, j)``
    for its j-th episode, one more episode at ``last_frames`` (past the cut, return 1,000),
    and evaluations (frames, mean return: two episodes at mean ± 1)."""
    run.mkdir(parents=True)
    config = resolve_config(preset, "ale:Breakout", scale="ale-cpu", learning="policy-head",
                            seed=seed, **fields)
    write_config(run, config, {})
    rows = [{"frames": f, "perf/fps": 1000.0} for f in range(10_000, last_frames + 1, 10_000)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    episodes = []
    for k, value in enumerate(returns):
        for j in range(PER_TENTH):
            frames = k * CUT // 10 + 1 + j * (CUT // 10 - 1) // PER_TENTH
            episodes.append({"frames": frames, "actor": 0, "lambda": list(lambdas(k, j)),
                             "return": value, "length": 100})
    episodes.append({"frames": last_frames, "actor": 0, "lambda": [1.0, 1.0, 0.5],
                     "return": 1000.0, "length": 100})
    (run / "meta.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    for frames, mean in evals:
        write_eval_file(run, periodic_eval_name(frames), checkpoint="x", frames=frames,
                        env="ale:Breakout", policy="π_λ", seed=0,
                        episodes=[{"return": mean - 1, "frames": 10, "seed": 0},
                                  {"return": mean + 1, "frames": 10, "seed": 1}])
    return run


def bandit_lambda(k, j):
    """E: 1/τ₁ = 10 in the first half of the cut, 45 after; every draw in one tenth of the box."""
    return (10.0 if k < 5 else 45.0, 20.0, 0.55)


def uniform_lambda(k, j):
    """The control: 1/τ₁ and 1/τ₂ two draws in each tenth of [0, 50], ε in each tenth of [0, 1]."""
    return (2.5 + 5 * (j % 10), 2.5 + 5 * (j % 10), 0.05 + 0.1 * (j % 10))


def grid(tmp_path):
    for seed in (0, 1):
        write_run(tmp_path / f"e-{seed}", "gdi-i3", seed, [k + seed for k in range(10)],
                  bandit_lambda, evals=((50_000, 3.0), (100_320, 6.0 + 2 * seed)))
        write_run(tmp_path / f"u-{seed}", "gdi-i3-uniform", seed, [2.0 + seed] * 10,
                  uniform_lambda, evals=((50_000, 3.0), (100_320, 4.0 + seed),
                                         (200_000, 50.0)))
    return ["--cell", f"E={tmp_path}/e-*", "--cell", f"uniform={tmp_path}/u-*",
            "--frames", str(CUT)]


def test_the_metrics_over_the_cut_by_hand(tmp_path):
    run = write_run(tmp_path / "r", "gdi-i3", 0, [float(k) for k in range(10)], bandit_lambda,
                    evals=((50_000, 3.0), (100_320, 6.0), (200_000, 50.0)))
    [cut], notes = e_ale.load_cell("E", [run], CUT)
    assert notes == []
    # The tenths' means are 0..9: their mean is 4.5; the episode at 150k (return 1,000) is past
    # the cut. The last evaluation within 1 % of the cut is the one at 100,320 frames.
    assert_close(cut.auc, 4.5, terms=10)
    assert (cut.final, cut.final_frames) == (6.0, 100_320)
    assert cut.log.budget == CUT and cut.log.frames.max() <= CUT
    assert_close(e_ale.tenth_means(cut.log.frames, cut.log.lambdas[:, 0], CUT),
                 [10.0] * 5 + [45.0] * 5, terms=1)


def test_tenths_are_half_open_on_the_left():
    # (0, 10k], (10k, 20k], ..., (90k, 100k]: an episode at a tenth's end is in that tenth, one
    # past the cut in none.
    frames = np.array([10_000, 10_001, 100_000, 100_001])
    means = e_ale.tenth_means(frames, np.array([1.0, 2.0, 3.0, 4.0]), CUT)
    assert means[[0, 1, 9]].tolist() == [1.0, 2.0, 3.0] and np.isnan(means[2:9]).all()
    assert e_ale.tenth_counts(frames, CUT).tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 0, 1]


def test_the_final_evaluation_is_the_one_within_one_percent_of_the_cut(tmp_path):
    # 100,900 frames is within 1 % of the cut; 101,100 is not, and an evaluation at half the
    # cut would score another point of training: the run is left out, said why.
    inside = write_run(tmp_path / "in", "gdi-i3", 0, [1.0] * 10, bandit_lambda,
                       evals=((99_000, 2.0), (100_900, 7.0)))
    late = write_run(tmp_path / "late", "gdi-i3", 1, [1.0] * 10, bandit_lambda,
                     evals=((50_000, 3.0), (101_100, 9.0)))
    runs, notes = e_ale.load_cell("E", [inside, late], CUT)
    assert [(r.final, r.final_frames) for r in runs] == [(7.0, 100_900)]
    assert notes == [f"E: {late}: no evaluation within 1% of 100,000 frames (evaluations at: "
                     "50,000, 101,100); left out"]


def test_a_run_short_of_the_cut_is_left_out_with_a_note(tmp_path):
    short = write_run(tmp_path / "s", "gdi-i3", 0, [1.0] * 5, bandit_lambda,
                      evals=((50_000, 3.0),), last_frames=50_000)
    runs, notes = e_ale.load_cell("E", [short], CUT)
    assert runs == [] and notes == [f"E: {short} has reached 50,000 frames of 100,000; left out"]


def test_the_command_tests_tabulates_and_plots(tmp_path, capsys):
    out = tmp_path / "figs" / "breakout.png"
    assert e_ale.main([*grid(tmp_path), "--levels", "5", "--window", "1",
                       "--reps", "2000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    with out.with_suffix(".csv").open() as handle:
        rows = {r["metric"]: r for r in csv.DictReader(handle)}
    # AUC: E's seeds 4.5 and 5.5, the control's 2 and 3: +2.5. Pooled variance 0.5, so
    # t = 2.5 / sqrt(0.5 · (1/2 + 1/2)) on 2 degrees of freedom.
    auc = rows["training AUC"]
    assert (auc["E"], auc["uniform"], auc["E - uniform"]) == ("5.000", "2.500", "+2.500")
    t = 2.5 / math.sqrt(0.5)
    assert auc["p (t-test)"] == f"{2 * stats.t.sf(t, 2):.3f}"  # the table's rounding
    # Final: E 6 and 8, the control 4 and 5 (its 50 at 200k is past the cut): +2.5.
    assert rows["final"]["E - uniform"] == "+2.500"
    assert rows["final"]["seeds"] == "2 / 2"
    table = out.with_suffix(".md").read_text()
    e_row = next(line for line in table.splitlines() if line.startswith("| E | 0 |"))
    u_row = next(line for line in table.splitlines() if line.startswith("| uniform | 1 |"))
    # E seed 0 first reaches 5 in the sixth tenth (its first episode there: 50,001 frames); its
    # 1/τ₁ moves from 10 to 45, every draw in one tenth of the box: KL log 10 = 2.30.
    assert "| 0.05M |" in e_row
    assert "10 → 45 (KL 2.30 → 2.30)" in e_row
    # The control's draws are spread evenly over the box: KL 0. Its returns reach 5 only with
    # the episode at 150k frames, past the cut: not within it.
    assert "| — |" in u_row and "25 → 25 (KL 0.00 → 0.00)" in u_row
    assert "training AUC" in printed and f"wrote {out}" in printed
    image = imread(out)
    assert image.shape[1] > image.shape[0] > 100 and np.ptp(image) > 0


def test_cells_that_are_not_each_others_control_are_refused(tmp_path, capsys):
    args = grid(tmp_path)
    write_run(tmp_path / "u-2", "gdi-i3-uniform", 2, [1.0] * 10, uniform_lambda,
              learning_rate=1e-3)
    assert e_ale.main([*args, "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "u-2 differs from" in err and "learning_rate" in err and "seed only" in err
    (tmp_path / "u-2" / "config.json").unlink()  # no longer a run folder: not in the cell
    write_run(tmp_path / "other", "gdi-i3-uniform", 0, [1.0] * 10, uniform_lambda,
              learning_rate=1e-3)
    assert e_ale.main(["--cell", f"E={tmp_path}/e-*", "--cell", f"uniform={tmp_path}/other",
                       "--frames", str(CUT), "--out", str(tmp_path / "x.png")]) == 2
    assert "differ in learning_rate (0.0005 / 0.001); E's control may differ in E alone" in \
        capsys.readouterr().err


def test_a_different_box_is_refused(tmp_path, capsys):
    args = grid(tmp_path)
    wide = tmp_path / "wide"
    write_run(wide, "gdi-i3-uniform", 0, [1.0] * 10, uniform_lambda)
    config = json.loads((wide / "config.json").read_text())
    config["meta_kwargs"]["ranges"][0] = [0.0, 100.0]
    (wide / "config.json").write_text(json.dumps(config))
    assert e_ale.main([args[0], args[1], "--cell", f"uniform={wide}", "--frames", str(CUT),
                       "--out", str(tmp_path / "x.png")]) == 2
    assert "search different boxes: meta_kwargs.ranges" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--cell", "E=x"], "--cell twice (E, then its control); got 1"),
    (["--cell", "E", "--cell", "u=y"], "give LABEL=RUN_GLOB"),
    (["--cell", "E=/nonexistent/*", "--cell", "u=y"], "names no run folder"),
])
def test_bad_cells_are_one_line(tmp_path, capsys, argv, message):
    assert e_ale.main([*argv, "--frames", "1e6", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_control_comes_second(tmp_path, capsys):
    args = grid(tmp_path)
    reversed_cells = [args[2], args[3], args[0], args[1], *args[4:]]
    assert e_ale.main([*reversed_cells, "--out", str(tmp_path / "x.png")]) == 2
    assert "give E first and the 'uniform' control second" in capsys.readouterr().err


def test_a_cell_with_no_run_at_the_cut_says_which_runs_were_left_out(tmp_path, capsys):
    args = grid(tmp_path)
    assert e_ale.main([*args[:4], "--frames", "200000", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "error: no run of --cell E reached 200,000 frames with an evaluation there"
    assert f"note: E: {tmp_path}/e-0 has reached 150,000 frames of 200,000; left out" in err


def test_a_cell_with_one_run_left_is_a_clear_error(tmp_path, capsys):
    args = grid(tmp_path)
    (tmp_path / "u-1" / "config.json").unlink()
    assert e_ale.main([*args, "--out", str(tmp_path / "x.png")]) == 2
    assert "2 and 1 runs; the test needs 2 or more in each cell" in capsys.readouterr().err
