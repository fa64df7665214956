"""The pre-registered test of the E ablation (issue 42, item 1; docs/ablation-e-notes.md, "How many
seeds the test needs"): on a grid of GDI-I³ (bandit E) and its control (P_Λ uniform over the
same box), does E beat uniform, per game and over the games?

    .venv/bin/python -m benchmarks.e_test --root runs/e-positive-control \\
        --out docs/ablation-e/positive-control-test.csv

The metrics and the test were fixed before the runs (``benchmarks.e_power``): each run's
**AUC** (its mean normalized evaluation return over the frame budget) and **final** score (the
mean normalized return of its last evaluations), normalized per game from the random policy
(0) to the best evaluation seen in the grid (1), as ``benchmarks.minatar_report`` does. Per
game and metric, the row gives each cell's mean over its seeds, the difference E − uniform
with a 95 % percentile bootstrap interval that resamples both cells' seeds
(``scipy.stats.bootstrap``), the two-sided p of a two-sample t-test with equal variances
(``scipy.stats.ttest_ind``; the test the power was computed for), and the minimum detectable
effect (MDE) at 80 % power for the seeds run, from these runs' own pooled spread. The
aggregate row does the same on each seed's mean over the games (the seeds a cell has on every
game; the notes name any left out). "E > uniform" is said where the t-test's p is below 0.05
and the interval lies above 0, "uniform > E" where p < 0.05 and it lies below: both, because
a percentile bootstrap over a few seeds is narrower than the t-interval (at 8 seeds per cell
its error rate is about 0.09, not 0.05), and the MDE is the t-test's. A game where a cell has
fewer than two finished runs is left out of the table, with a note.
"""

from __future__ import annotations

import argparse
import csv
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap, ttest_ind

from benchmarks.e_power import ALPHA, CELLS, detectable, pooled_sd, run_score
from benchmarks.minatar_report import Grid, Scale, best_observed, load_grid, random_returns
from gdi.evaluation.aggregates import Interval

METRICS = ("auc", "final")
AGGREGATE = "aggregate"
REPS = 5_000
RANDOM_CACHE = Path("docs/ablation-e/grid/random_returns.json")


def cell_scores(grid: Grid, scale: Scale, cell: str, metric: str) -> dict[str, dict[int, float]]:
    """game -> seed -> the cell's run's score, and ``AGGREGATE`` -> seed -> the mean over
    games of the seeds the cell has on every game."""
    per_game = {game: {run.seed: run_score(run, game, scale, metric)
                       for run in grid.runs.get((game, cell), [])} for game in grid.games}
    complete = set.intersection(*(set(s) for s in per_game.values())) if per_game else set()
    per_game[AGGREGATE] = {seed: float(np.mean([per_game[g][seed] for g in grid.games]))
                           for seed in sorted(complete)}
    return per_game


@dataclass(frozen=True)
class Comparison:
    """E − uniform on one game (or the aggregate) and metric."""

    game: str
    metric: str
    seeds: tuple[int, int]
    """Runs in the first cell and in the second."""
    first: float
    second: float
    difference: Interval
    """Mean of the first cell minus mean of the second, with its 95 % bootstrap interval."""
    p: float
    """Two-sided p of the two-sample t-test (equal variances)."""
    sigma: float
    """Spread over seeds pooled over the two cells."""
    mde: float
    """The smallest difference the t-test detects with 80 % power at these seeds."""

    @property
    def verdict(self) -> str:
        if self.p < ALPHA and self.difference.low > 0:
            return "E > uniform"
        if self.p < ALPHA and self.difference.high < 0:
            return "uniform > E"
        return "no difference resolved"


def compare(first: Sequence[float], second: Sequence[float], game: str, metric: str,
            reps: int = REPS, seed: int = 0) -> Comparison:
    """The difference of means with a percentile bootstrap over both samples, the t-test and
    the MDE; each sample needs two values or more."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"{game} {metric}: {len(a)} and {len(b)} runs; the test needs 2 or "
                         "more in each cell")
    point = float(a.mean() - b.mean())
    interval = bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                         n_resamples=reps, method="percentile", random_state=seed,
                         vectorized=True).confidence_interval
    sigma = pooled_sd([a, b])
    if sigma > 0:
        with warnings.catch_warnings():  # scipy warns of a cell whose seeds all agree
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(ttest_ind(a, b).pvalue)
    else:  # no spread in either cell: t is undefined, and the means differ or they do not
        p = 0.0 if point != 0 else 1.0
    return Comparison(game, metric, (len(a), len(b)), float(a.mean()), float(b.mean()),
                      Interval(point, float(interval.low), float(interval.high)), p, sigma,
                      detectable(sigma, len(a), len(b)) if sigma > 0 else 0.0)


def comparisons(grid: Grid, scale: Scale, cells: Sequence[str] = CELLS, reps: int = REPS,
                seed: int = 0) -> tuple[list[Comparison], list[str]]:
    """Every game and the aggregate, for both metrics, and notes on what was left out (a game
    where a cell has fewer than two finished runs; seeds missing a game in the aggregate)."""
    missing = [c for c in cells if not any(p == c for _, p in grid.runs)]
    if missing:
        raise ValueError(f"the grid has no finished runs of {', '.join(missing)}; its cells: "
                         f"{', '.join(grid.presets) or 'none'}")
    rows, notes = [], []
    for metric in METRICS:
        scores = [cell_scores(grid, scale, c, metric) for c in cells]
        for game in [*grid.games, AGGREGATE]:
            first, second = (list(s[game].values()) for s in scores)
            if len(first) < 2 or len(second) < 2:
                notes.append(f"{metric}, {game}: {len(first)} and {len(second)} runs; left out "
                             "(the test needs 2 or more per cell)")
                continue
            rows.append(compare(first, second, game, metric, reps, seed))
    for cell, by_game in zip(cells, scores, strict=True):  # the last metric's: same seeds
        used = set(by_game[AGGREGATE])
        every = set.union(*(set(s) for g, s in by_game.items() if g != AGGREGATE))
        if every - used:
            notes.append(f"{cell}: seeds {sorted(every - used)} lack a game; the aggregate "
                         f"takes seeds {sorted(used)}")
    return rows, notes


HEADER = ["metric", "game", "seeds", "E", "uniform", "E - uniform", "95% CI", "p (t-test)",
          "sigma", "MDE (80% power)", "verdict"]


def row_cells(c: Comparison) -> list[str]:
    return [c.metric, c.game, f"{c.seeds[0]} / {c.seeds[1]}", f"{c.first:.3f}",
            f"{c.second:.3f}", f"{c.difference.point:+.3f}",
            f"[{c.difference.low:+.3f}, {c.difference.high:+.3f}]", f"{c.p:.3f}",
            f"{c.sigma:.3f}", f"{c.mde:.3f}", c.verdict]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e_test",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the grid's folder")
    parser.add_argument("--cells", default=",".join(CELLS),
                        help="the two cells compared, first minus second (comma-separated)")
    parser.add_argument("--reps", type=int, default=REPS, help="bootstrap resamples")
    parser.add_argument("--random-cache", type=Path, default=RANDOM_CACHE,
                        help="the random policy's returns (JSON; measured once if missing)")
    parser.add_argument("--out", type=Path, help="CSV to write the table to")
    args = parser.parse_args(argv)
    cells = [c for c in args.cells.split(",") if c]
    try:
        if len(cells) != 2:
            raise ValueError(f"--cells takes two cells, got {args.cells!r}")
        grid = load_grid(args.root)
        scale = Scale(random_returns(grid, args.random_cache), best_observed(grid))
        rows, notes = comparisons(grid, scale, cells, args.reps)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{cells[0]} − {cells[1]} on {args.root}:")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for c in rows:
        print("| " + " | ".join(row_cells(c)) + " |")
    for note in notes:
        print(f"note: {note}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerows(row_cells(c) for c in rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
