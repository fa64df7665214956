"""The power of the E ablation, before its next runs: how large a difference between GDI-I³
(bandit E) and its control (P_Λ uniform over the same box) the test can detect, and how many
seeds it needs for the difference E could make.

From an existing grid (default ``benchmarks/results/e-ablation``, 3 seeds per cell) it takes,
per game, each run's normalized score (random policy → 0, the best evaluation seen in the
grid → 1, as ``benchmarks.minatar_report`` normalizes) for two metrics fixed before the runs:

- **AUC**: the mean normalized evaluation return over the frame budget (the area under the
  curve divided by the budget; trapezoids between evaluations): sample efficiency, the
  paper's claim.
- **final**: the mean normalized return of the last evaluations (``minatar_report``'s final
  score).

The spread is the pooled standard deviation over seeds of the two cells (each cell's own
seeds, its mean taken out). The minimum detectable effect (MDE) of a two-sided two-sample
t-test (equal variances) at α = 0.05 and 80 % power (``statsmodels``' ``TTestIndPower``) with n seeds
per cell is d(n) · σ; "seeds for δ" solves it for a difference δ. The aggregate over the G
games is the mean of the per-game differences (variance Σ σ_g² / G² per seed pair).

    .venv/bin/python -m benchmarks.e_power --root benchmarks/results/e-ablation \\
        --effects 0.06 0.10 --out docs/ablation-e/power.csv

Prints a Markdown table (and writes it as CSV with ``--out``).
"""

from __future__ import annotations

import argparse
import csv
import math
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from statsmodels.stats.power import TTestIndPower

from benchmarks.minatar_report import (
    Scale,
    best_observed,
    final_return,
    load_grid,
    random_returns,
)

CELLS = ("gdi-i3", "gdi-i3-uniform")
ALPHA, POWER = 0.05, 0.8
SEEDS_SHOWN = (3, 5, 10, 20)


def auc(frames: np.ndarray, scores: np.ndarray, budget: float) -> float:
    """Mean normalized score over [0, budget]: trapezoids between evaluations, the first
    evaluation's score held from frame 0 (a run is evaluated first after its first stretch)."""
    x = np.concatenate([[0.0], frames.astype(float)])
    y = np.concatenate([[scores[0]], scores])
    keep = x <= budget
    return float(np.trapezoid(y[keep], x[keep]) / budget)


def pooled_sd(groups: Sequence[Sequence[float]]) -> float:
    """Standard deviation pooled over groups, each group's own mean taken out."""
    dof = sum(len(g) - 1 for g in groups)
    squares = sum(float(np.sum((np.asarray(g) - np.mean(g)) ** 2)) for g in groups)
    return math.sqrt(squares / dof)


def detectable(sigma: float, seeds: int, other: int | None = None) -> float:
    """The smallest difference of means the test detects with ``POWER`` at ``ALPHA``, with
    ``seeds`` runs in one cell and ``other`` (default: as many) in the other."""
    ratio = 1.0 if other is None else other / seeds
    return TTestIndPower().solve_power(nobs1=seeds, ratio=ratio, alpha=ALPHA,
                                       power=POWER) * sigma


def seeds_for(sigma: float, effect: float) -> int:
    """Seeds per cell for the test to detect ``effect`` with ``POWER`` at ``ALPHA`` (at least
    2, a t-test's least; the solver finds no root below that)."""
    with warnings.catch_warnings():  # its root finder warns where no n below 2 exists
        warnings.simplefilter("ignore")
        n = TTestIndPower().solve_power(effect_size=effect / sigma, alpha=ALPHA, power=POWER)
    return 2 if not math.isfinite(n) or n < 2 else math.ceil(n)


def run_score(run, game: str, scale: Scale, metric: str) -> float:
    """One run's normalized AUC or final score."""
    if metric == "auc":
        frames, returns = run.curve()
        return auc(frames, scale(game, returns), float(run.config["frames"]))
    if metric == "final":
        return float(scale(game, final_return(run)))
    raise ValueError(f"metric: unknown value {metric!r}; allowed: auc, final")


def spreads(root: Path) -> dict[str, dict[str, float]]:
    """Per game, σ of each metric over seeds (pooled over the two cells)."""
    grid = load_grid(root)
    cache = Path("docs/ablation-e/grid/random_returns.json")
    scale = Scale(random_returns(grid, cache), best_observed(grid))
    out: dict[str, dict[str, float]] = {}
    for game in grid.games:
        values = {"auc": [], "final": []}
        for cell in CELLS:
            runs = grid.runs.get((game, cell), [])
            if len(runs) < 2:
                raise ValueError(f"{root}: {game} {cell} has {len(runs)} seeds; need 2 or more")
            for metric, groups in values.items():
                groups.append([run_score(r, game, scale, metric) for r in runs])
        out[game] = {metric: pooled_sd(groups) for metric, groups in values.items()}
    return out


def table(sigmas: dict[str, dict[str, float]], effects: Sequence[float]) -> list[list]:
    rows = []
    games = list(sigmas)
    for metric in ("auc", "final"):
        for game in [*games, "aggregate"]:
            if game == "aggregate":  # the mean of G per-game differences
                sigma = math.sqrt(sum(sigmas[g][metric] ** 2 for g in games)) / len(games)
            else:
                sigma = sigmas[game][metric]
            rows.append([metric, game, sigma, *[detectable(sigma, n) for n in SEEDS_SHOWN],
                         *[seeds_for(sigma, e) for e in effects]])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e_power",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("benchmarks/results/e-ablation"))
    parser.add_argument("--effects", type=float, nargs="+", default=[0.06, 0.10])
    parser.add_argument("--out", type=Path, help="CSV to write")
    args = parser.parse_args(argv)
    rows = table(spreads(args.root), args.effects)
    header = ["metric", "game", "sigma", *[f"mde_{n}_seeds" for n in SEEDS_SHOWN],
              *[f"seeds_for_{e:g}" for e in args.effects]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row)
              + " |")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
