"""Cross-evaluation of an E ablation (issue 42, item 3): every run's final network played on one
common set of λ, so that two cells (the bandit E and a uniform P_Λ, say) are compared on their
networks, not on the λ each one's own P_Λ picks at test time.

    python -m benchmarks.cross_eval \\
        --cell "E=runs/e-grid/breakout__gdi-i3__*" \\
        --cell "uniform=runs/e-grid/breakout__gdi-i3-uniform__*" \\
        --fixed-lambda 1,1,0.5 --fixed-lambda 5,5,0.5 --fixed-lambda 25,25,0.5 --uniform \\
        --episodes 16 --out docs/figures/cross-eval-breakout.png

Each run's latest checkpoint plays ``--episodes`` episodes per policy through ``gdi evaluate``
(``--policy fixed --fixed-lambda λ`` and ``--policy uniform``: λ uniform over Λ as the first
run's E searches it), every run with the same evaluation seed (``--seed``), so the same
environment seeds: the comparison's noise is the networks'. The scores are filed in each run
(``eval_fixed/``, ``eval_uniform/``), so a second call reads them instead of playing again
(an interrupted cross-evaluation resumes). The table gives, per policy, each cell's mean over
its runs with a 95 % percentile bootstrap interval over runs, and the first cell minus the
second with both cells' runs resampled (scipy.stats.bootstrap); the figure shows the same.
Written beside ``--out``: the table as .md and every run's score as .csv.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.evaluation import markdown
from gdi.evaluation.aggregates import Interval
from gdi.evaluation.report_io import ReportFiles
from gdi.run_files import FIXED, eval_folder, eval_name, lambda_text, latest_checkpoint

UNIFORM = "uniform"
REPS = 5_000


@dataclass(frozen=True)
class Policy:
    """How λ is chosen in a cross-evaluation: one fixed λ, or uniform over Λ."""

    name: str  # "fixed" or "uniform"
    fixed_lambda: tuple[float, ...] | None = None

    @property
    def label(self) -> str:
        return (f"λ = ({lambda_text(self.fixed_lambda)})" if self.name == FIXED
                else "λ uniform over Λ")


def parse_cell(text: str) -> tuple[str, list[Path]]:
    """``LABEL=GLOB`` → the label and the run folders the glob names (sorted); ValueError in
    one line when the form is wrong or the glob finds no run."""
    label, sep, pattern = text.partition("=")
    if not sep or not label or not pattern:
        raise ValueError(f"--cell {text!r}: give LABEL=RUN_GLOB, e.g. "
                         f"'E=runs/grid/breakout__gdi-i3__*'")
    runs = sorted(Path(p) for p in glob.glob(pattern) if (Path(p) / "config.json").is_file())
    if not runs:
        raise ValueError(f"--cell {text!r}: {pattern!r} names no run folder (none with a "
                         f"config.json)")
    return label, runs


def parse_lambda(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--fixed-lambda {text!r}: give λ's numbers separated by commas, "
                         f"e.g. 3,3,0.5") from None


def run_score(run: Path, policy: Policy, episodes: int, seed: int) -> float:
    """The mean return of ``run``'s latest checkpoint under ``policy``: read from the run's
    score file when an earlier call wrote it with as many episodes, played (and filed) otherwise."""
    from gdi.agent import evaluate_checkpoint

    checkpoint = latest_checkpoint(run)
    path = (run / eval_folder(policy.name)
            / f"{eval_name(checkpoint.stem, policy.name, policy.fixed_lambda)}.json")
    if path.is_file():
        record = json.loads(path.read_text(encoding="utf-8"))
        if len(record["episodes"]) == episodes and record["seed"] == seed:
            return float(record["mean_return"])
    _, results = evaluate_checkpoint(run, checkpoint=str(checkpoint), episodes=episodes,
                                     envs=min(episodes, 16), seed=seed, policy=policy.name,
                                     fixed_lambda=policy.fixed_lambda)
    return float(np.mean([r["return"] for r in results]))


def mean_interval(scores: np.ndarray, reps: int, seed: int) -> Interval:
    """Mean over runs with a 95 % percentile bootstrap interval (a point for one run)."""
    from scipy.stats import bootstrap

    point = float(np.mean(scores))
    if len(scores) < 2:
        return Interval(point, point, point)
    ci = bootstrap((scores,), np.mean, n_resamples=reps, method="percentile",
                   random_state=seed).confidence_interval
    return Interval(point, float(ci.low), float(ci.high))


def difference_interval(a: np.ndarray, b: np.ndarray, reps: int, seed: int) -> Interval:
    """mean(a) − mean(b), both cells' runs resampled (independent samples)."""
    from scipy.stats import bootstrap

    point = float(np.mean(a) - np.mean(b))
    if len(a) < 2 or len(b) < 2:
        return Interval(point, point, point)
    ci = bootstrap((a, b), lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                   n_resamples=reps, method="percentile", random_state=seed,
                   vectorized=True).confidence_interval
    return Interval(point, float(ci.low), float(ci.high))


def cross_table(cells: dict[str, dict[str, list[float]]], policies: Sequence[Policy],
                reps: int, seed: int) -> str:
    labels = list(cells)
    head = ["policy", *(f"{label} ({len(next(iter(cells[label].values())))} runs)"
                        for label in labels)]
    if len(labels) >= 2:
        head.append(f"{labels[0]} − {labels[1]}")
    rows = []
    for policy in policies:
        scores = [np.asarray(cells[label][policy.label]) for label in labels]
        row = [policy.label,
               *(markdown.fmt_interval(*mean_interval(s, reps, seed)) for s in scores)]
        if len(labels) >= 2:
            row.append(markdown.fmt_interval(*difference_interval(scores[0], scores[1], reps,
                                                                   seed)))
        rows.append(row)
    return markdown.table(head, rows)


def cross_figure(cells: dict[str, dict[str, list[float]]], policies: Sequence[Policy],
                 reps: int, seed: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gdi.atomic import save_figure

    fig, ax = plt.subplots(figsize=(max(5.0, 1.6 * len(policies) + 2), 3.8))
    width = 0.8 / len(cells)
    for i, (label, by_policy) in enumerate(cells.items()):
        x = np.arange(len(policies)) + (i - (len(cells) - 1) / 2) * width
        intervals = [mean_interval(np.asarray(by_policy[p.label]), reps, seed) for p in policies]
        points = np.array([iv.point for iv in intervals])
        errors = np.array([[iv.point - iv.low for iv in intervals],
                           [iv.high - iv.point for iv in intervals]])
        ax.errorbar(x, points, yerr=errors, fmt="o", capsize=4, color=f"C{i}",
                    label=f"{label} (mean, 95 % CI)")
        for xi, policy in zip(x, policies, strict=True):
            runs = by_policy[policy.label]
            ax.scatter(np.full(len(runs), xi + width / 4), runs, s=10, color=f"C{i}", alpha=0.4)
    ax.set_xticks(np.arange(len(policies)), [p.label for p in policies], fontsize=9)
    ax.set_ylabel("evaluation return")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=9, frameon=False)
    ax.set_title("Each run's final network, played on common λ")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", action="append", required=True, metavar="LABEL=RUN_GLOB",
                        help="a cell's runs (give two to compare; the first minus the second)")
    parser.add_argument("--fixed-lambda", action="append", default=[], metavar="λ",
                        help="a λ every run plays, its numbers separated by commas")
    parser.add_argument("--uniform", action="store_true",
                        help="also play λ uniform over Λ as the runs' E searches it")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0,
                        help="the evaluation seed, the same for every run")
    parser.add_argument("--reps", type=int, default=REPS, help="bootstrap resamples")
    parser.add_argument("--out", type=Path, required=True, help="the figure (.png)")
    args = parser.parse_args(argv)
    try:
        cells_runs = dict(parse_cell(text) for text in args.cell)
        policies = [Policy(FIXED, parse_lambda(text)) for text in args.fixed_lambda]
    except ValueError as err:
        print(f"cross_eval: {err}", file=sys.stderr)
        return 1
    if args.uniform:
        policies.append(Policy(UNIFORM))
    if not policies:
        print("cross_eval: give at least one --fixed-lambda or --uniform", file=sys.stderr)
        return 1
    cells: dict[str, dict[str, list[float]]] = {}
    rows = []
    try:
        for label, runs in cells_runs.items():
            cells[label] = {}
            for policy in policies:
                scores = []
                for run in runs:
                    score = run_score(run, policy, args.episodes, args.seed)
                    scores.append(score)
                    rows.append([label, str(run), policy.label, score])
                    print(f"{label}: {run.name}: {policy.label}: {score:.2f}", flush=True)
                cells[label][policy.label] = scores
    except (ValueError, FileNotFoundError) as err:
        print(f"cross_eval: {err}", file=sys.stderr)
        return 1
    table = cross_table(cells, policies, args.reps, args.seed)
    print(table)
    files = ReportFiles(args.out.parent)
    files.text(args.out.with_suffix(".md").name, table)
    files.csv(args.out.with_suffix(".csv").name, ["cell", "run", "policy", "mean_return"], rows)
    cross_figure(cells, policies, args.reps, args.seed, args.out)
    print(f"wrote {args.out} and its .md, .csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
