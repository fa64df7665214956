"""benchmarks/e_test.py, the pre-registered test of E against uniform (issue 42, item 1): the
t-test, the bootstrap interval and the per-seed aggregate against hand computations, and the
command on a fabricated grid."""

import csv
import itertools
import json
import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from benchmarks import e_test
from benchmarks import minatar_report as report
from benchmarks.e_power import auc, detectable
from tests.test_minatar_grid import fake_run
from tests.tolerance import assert_close


def test_the_t_test_and_the_mde_follow_the_pooled_formula():
    a, b = [1.0, 2.0, 3.0], [0.0, 0.5, 1.0]
    # Variances 1 and 0.25 (n − 1 each), pooled over 4 degrees of freedom.
    pooled = (2 * 1.0 + 2 * 0.25) / 4
    t = (2.0 - 0.5) / math.sqrt(pooled * (1 / 3 + 1 / 3))
    c = e_test.compare(a, b, "breakout", "auc", reps=200)
    assert_close(c.difference.point, 1.5, terms=3)
    assert_close(c.p, 2 * student_t.sf(t, 4), terms=8)
    assert_close(c.sigma, math.sqrt(pooled), terms=4)
    assert_close(c.mde, detectable(math.sqrt(pooled), 3), terms=4)
    assert c.seeds == (3, 3) and c.difference.low <= 1.5 <= c.difference.high
    assert c.verdict == "no difference resolved"  # p = 0.081: the interval alone is not enough
    assert c.difference.low > 0  # (the percentile bootstrap's, over 3 seeds, excludes 0)
    # Unequal cells: the t-test and the MDE take both counts (3 and 5, not 3 and 3).
    b5 = [0.0, 0.5, 1.0, 0.25, 0.75]
    mean_b, var_b = 0.5, sum((x - 0.5) ** 2 for x in b5) / 4
    pooled = (2 * 1.0 + 4 * var_b) / 6
    t = (2.0 - mean_b) / math.sqrt(pooled * (1 / 3 + 1 / 5))
    c = e_test.compare(a, b5, "breakout", "auc", reps=200)
    assert c.seeds == (3, 5)
    assert_close(c.p, 2 * student_t.sf(t, 6), terms=8)
    assert_close(c.mde, detectable(math.sqrt(pooled), 3, 5), terms=4)
    assert detectable(1.0, 3, 5) < detectable(1.0, 3) and c.verdict == "E > uniform"


def test_the_interval_resamples_both_cells():
    # b has no spread; a's resampled means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so
    # the 2.5 % and 97.5 % points of the difference are 0 and 1 (5,000 resamples all but
    # surely hold both ends).
    c = e_test.compare([0.0, 1.0], [0.0, 0.0], "g", "final")
    assert (c.difference.point, c.difference.low, c.difference.high) == (0.5, 0.0, 1.0)
    assert c.verdict == "no difference resolved"
    # With the spread in the second cell the interval is the mirror image.
    c = e_test.compare([1.0, 1.0], [0.0, 1.0], "g", "final")
    assert (c.difference.low, c.difference.high) == (0.0, 1.0)
    # Cells of different sizes are resampled each on its own: a has no spread, b's resampled
    # means over 3 seeds of (0, 0, 3) run from 0 to 3, so the difference from 2 − 0 = 2 down
    # to 2 − 3 = −1, each end with probability 1/27 (> 2.5 %).
    c = e_test.compare([2.0, 2.0, 2.0, 2.0], [0.0, 0.0, 3.0], "g", "final")
    assert (c.difference.point, c.difference.low, c.difference.high) == (1.0, -1.0, 2.0)
    # Cells without spread: the difference is the difference, and certain.
    c = e_test.compare([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], "g", "final")
    assert (c.difference.low, c.difference.high, c.p, c.verdict) == (1.0, 1.0, 0.0,
                                                                      "E > uniform")
    assert e_test.compare([0.0, 0.0], [1.0, 1.0], "g", "auc").verdict == "uniform > E"
    with pytest.raises(ValueError, match="g auc: 1 and 2 runs; the test needs 2"):
        e_test.compare([1.0], [0.0, 1.0], "g", "auc")


def _grid(tmp_path):
    root = tmp_path / "grid"
    # Evaluations at 1000..5000 frames; the random policy's return 0 on both games (given),
    # the best evaluation of each game in the grid: breakout 10, asterix 20.
    returns = {("breakout", "gdi-i3"): [[2, 4, 6, 8, 10], [1, 1, 4, 4, 4]],
               ("breakout", "gdi-i3-uniform"): [[1, 2, 3, 3, 3], [0, 0, 2, 2, 2]],
               ("asterix", "gdi-i3"): [[2, 2, 10, 10, 10], [2, 2, 6, 6, 6]],
               ("asterix", "gdi-i3-uniform"): [[2, 2, 4, 4, 4], [2, 2, 20, 20, 20]]}
    for (game, cell), per_seed in returns.items():
        for seed, values in enumerate(per_seed):
            fake_run(root, game, cell, seed, values)
    cache = tmp_path / "random.json"
    cache.write_text(json.dumps({json.dumps([f"minatar:{g}", {}, report.RANDOM_EPISODES,
                                             report.RANDOM_SEED], sort_keys=True): 0.0
                                 for g in ("breakout", "asterix")}))
    return root, cache, returns


def test_scores_and_the_aggregate_by_hand(tmp_path):
    root, cache, returns = _grid(tmp_path)
    grid = report.load_grid(root)
    scale = report.Scale(report.random_returns(grid, cache), report.best_observed(grid))
    best = {"breakout": 10.0, "asterix": 20.0}
    frames = [1000, 2000, 3000, 4000, 5000]
    for cell in e_test.CELLS:
        scores = e_test.cell_scores(grid, scale, cell, "final")
        aucs = e_test.cell_scores(grid, scale, cell, "auc")
        for seed in (0, 1):
            # final: the mean of the last three evaluations, over the game's best.
            by_game = {g: sum(returns[(g, cell)][seed][-3:]) / 3 / best[g] for g in best}
            for game, value in by_game.items():
                assert_close(scores[game][seed], value, terms=4)
            assert_close(scores[e_test.AGGREGATE][seed], sum(by_game.values()) / 2, terms=6)
            # AUC: trapezoids over [0, 5000], the first evaluation held from 0.
            values = returns[("breakout", cell)][seed]
            expected = (1000 * values[0]
                        + sum(500 * (x + y) for x, y in itertools.pairwise(values))) / 5000 / 10
            assert_close(aucs["breakout"][seed], expected, terms=8)
            assert_close(aucs["breakout"][seed],
                         auc(np.array(frames), np.array(values) / 10, 5000), terms=8)


def test_the_command_writes_every_game_and_the_aggregate(tmp_path, capsys):
    root, cache, _ = _grid(tmp_path)
    out = tmp_path / "test.csv"
    assert e_test.main(["--root", str(root), "--random-cache", str(cache), "--reps", "200",
                        "--out", str(out)]) == 0
    rows = list(csv.reader(out.open()))
    assert rows[0] == e_test.HEADER
    assert [(r[0], r[1]) for r in rows[1:]] == [
        (m, g) for m in ("auc", "final") for g in ("asterix", "breakout", "aggregate")]
    final_breakout = next(r for r in rows if r[:2] == ["final", "breakout"])
    # E: 8/10 and 4/10; uniform 3/10 and 2/10 → means 0.6 and 0.25.
    assert final_breakout[2:6] == ["2 / 2", "0.600", "0.250", "+0.350"]
    assert "| final | aggregate |" in capsys.readouterr().out
    # A game where a cell has one run is left out, with a note; so is its seed from the
    # aggregate.
    for path in sorted((root / "asterix__gdi-i3-uniform__1").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (root / "asterix__gdi-i3-uniform__1").rmdir()
    assert e_test.main(["--root", str(root), "--random-cache", str(cache), "--reps", "200"]) == 0
    printed = capsys.readouterr().out
    assert "| final | asterix |" not in printed and "| final | breakout |" in printed
    assert "note: final, asterix: 2 and 1 runs; left out" in printed
    assert "note: final, aggregate: 2 and 1 runs; left out" in printed
    assert "note: gdi-i3-uniform: seeds [1] lack a game; the aggregate takes seeds [0]" in printed
    # A grid without the control is refused, naming what it has.
    for run in root.glob("*uniform*"):
        for path in sorted(run.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        run.rmdir()
    assert e_test.main(["--root", str(root), "--random-cache", str(cache)]) == 2
    assert "no finished runs of gdi-i3-uniform; its cells: gdi-i3" in capsys.readouterr().err
