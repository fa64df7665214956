"""benchmarks/cross_eval.py: every run's final network played on common λ with one evaluation
seed, scores filed in the runs (a second call plays nothing), each cell's mean and the cells'
difference with bootstrap intervals over both cells' runs."""

import csv
import json

import numpy as np
import pytest

from benchmarks import cross_eval
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    root = tmp_path_factory.mktemp("grid")
    for preset in ("gdi-i3", "gdi-i3-uniform"):
        for seed in (0, 1):
            train(tiny_config(preset=preset, frames=400, seed=seed),
                  root / f"cartpole__{preset}__{seed}", show_progress=False, tensorboard=False)
    return root


def test_cross_evaluation_table_from_the_runs_scores(grid, tmp_path, capsys):
    out = tmp_path / "cross.png"
    argv = ["--cell", f"E={grid}/cartpole__gdi-i3__*",
            "--cell", f"uniform={grid}/cartpole__gdi-i3-uniform__*",
            "--fixed-lambda", "1,1,0.5", "--uniform", "--episodes", "3", "--reps", "200",
            "--out", str(out)]
    assert cross_eval.main(argv) == 0
    assert out.stat().st_size > 0
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert len(rows) == 2 * 2 * 2  # cells × runs × policies
    # Every score is the mean of the episodes filed in the run, all played with seed 0.
    for row in rows:
        run = grid / row["run"].rsplit("/", 1)[-1]
        folder = "eval_fixed" if row["policy"].startswith("λ = (") else "eval_uniform"
        (record,) = [json.loads(p.read_text()) for p in (run / folder).iterdir()]
        assert record["seed"] == 0 and len(record["episodes"]) == 3
        assert float(row["mean_return"]) == pytest.approx(
            np.mean([e["return"] for e in record["episodes"]]))
    table = out.with_suffix(".md").read_text()
    assert table.splitlines()[0] == "| policy | E (2 runs) | uniform (2 runs) | E − uniform |"
    fixed = {r["cell"]: [float(x["mean_return"]) for x in rows
                         if x["cell"] == r["cell"] and x["policy"] == "λ = (1,1,0.5)"]
             for r in rows}
    line = next(x for x in table.splitlines() if x.startswith("| λ = (1,1,0.5) |"))
    difference = np.mean(fixed["E"]) - np.mean(fixed["uniform"])
    assert line.split(" | ")[-1].startswith(f"{difference:.2f} [")
    assert line.split(" | ")[1].startswith(f"{np.mean(fixed['E']):.2f} [")
    capsys.readouterr()

    # A second call reads the filed scores: nothing is played again.
    stamps = {p: p.stat().st_mtime_ns for p in grid.rglob("eval_*/*.json")}
    assert cross_eval.main(argv) == 0
    assert {p: p.stat().st_mtime_ns for p in grid.rglob("eval_*/*.json")} == stamps
    assert out.with_suffix(".md").read_text() == table


def test_difference_interval_resamples_both_cells():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 0.5, 1.0, 1.5])
    iv = cross_eval.difference_interval(a, b, reps=2000, seed=0)
    assert iv.point == pytest.approx(1.75)
    assert iv.low < 1.75 < iv.high
    # Wider than with b's mean held fixed: b's spread counts too.
    held = cross_eval.mean_interval(a - b.mean(), reps=2000, seed=0)
    assert iv.high - iv.low > held.high - held.low


@pytest.mark.parametrize(("argv", "message"), [
    (["--cell", "nolabel"], "give LABEL=RUN_GLOB"),
    (["--cell", "E=/nonexistent/*"], "names no run folder"),
])
def test_bad_cells_are_one_line(argv, message, tmp_path, capsys):
    assert cross_eval.main([*argv, "--uniform", "--out", str(tmp_path / "x.png")]) == 1
    assert message in capsys.readouterr().err
