"""The E ablation on the ALE (issue 42, item 5): the bandit E against P_Λ uniform over the same
box, on one Atari game at the ale-cpu scale, over each run's first ``--frames`` frames.

    .venv/bin/python -m benchmarks.e_ale --frames 1e6 \\
        --cell "E=runs/screen/breakout-head-e-lr5e-4-*" \\
        --cell "uniform=runs/confirm/breakout-head-uniform-*" \\
        --out docs/ablation-e/ale/breakout.png

An ALE run at this scale costs a quarter of an hour per million frames on two cores, so the cell
has a few seeds, and its runs evaluate only every 0.5M frames. The metrics were fixed before
the control's runs (docs/ablation-e-notes.md, "E on the ALE"), each over the first ``--frames``:

- **training AUC**: the mean over the ten tenths of [0, frames] of the mean return of the
  training episodes that ended in the tenth. What E is rewarded by and what the learner is fed;
  it counts the λ each cell samples, so it mixes better data with better behavior.
- **final**: the mean return of the run's evaluation at the cut (its ``eval_episodes``, 8 at
  ale-cpu, λ ~ the run's P_Λ frozen): the last one within 1 % of the cut on either side, since
  a run stopped at 1M by ``--stop-at`` is evaluated at its first checkpoint past it.

Each comparison is ``benchmarks.e_test``'s: the difference of means with a percentile
bootstrap over both cells' seeds, the two-sample t-test, the MDE at 80 % power from the runs'
own spread, and its verdict rule (p < 0.05 and the interval clear of 0). Frames to each
``--levels`` (mean of the last ``--window`` training episodes) are given per run, as the
learning-per-frame screens do.

What E learned, per run: the KL divergence to uniform of the λ sampled in each tenth, per
coordinate (``gdi.analysis.e_learning.sampled_kl_over_time``, per actor, then the mean over the
run's actors: one at the ale-cpu scale), and the mean of each coordinate per tenth; the
control's KL is the floor a P_Λ that never moved shows. ``gdi plot-meta RUN`` draws one run's
sampled λ and the return per λ region in full. The figure: training return per tenth, mean
sampled 1/τ₁ and KL of 1/τ₁ per tenth, each run thin and each cell's mean thick, with the KL
that truly uniform draws show at the runs' typical episodes per tenth (``uniform_kl_floor``).
Written beside it: the test as .csv and the whole table, with the notes, as .md.

The two cells must be each other's control: E first, then a control whose E is ``uniform``;
their runs' configs may differ only in the seed, the preset and E (``meta_controller``,
``meta_kwargs``: the box itself must match, and the λ ranges the runs' controllers sample);
anything else is an error naming the field. A run short of the cut, without an evaluation
within 1 % of it, or without episodes in a tenth is left out with a note.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.atari_learning import Curve, first_reached, read_gdi
from benchmarks.cross_eval import parse_cell
from benchmarks.e_test import HEADER, Comparison, compare, row_cells
from gdi.analysis.e_learning import (
    EpisodeLog,
    load_episode_log,
    sampled_kl_over_time,
    uniform_kl_floor,
)
from gdi.atomic import save_figure
from gdi.runtime.run_folder.run_dir import read_config

TENTHS = 10
#: An evaluation this far from the cut, either side, is the cut's (a run stopped by --stop-at is
#: evaluated at its first checkpoint past it: 1,000,320 frames for a cut of 1M on the ALE).
CUT_SLACK = 0.01
#: Config fields that may differ between the two cells (E and what names it) and between runs.
E_FIELDS = frozenset({"preset", "meta_controller", "meta_kwargs"})
RUN_FIELDS = frozenset({"seed", "name", "provenance", "run_dir"})
BOX_KEYS = ("ranges", "index_names", "transforms")
METRICS = ("training AUC", "final")
#: The control's E (``gdi-i3-uniform``): e_test's verdicts read "E > uniform", first cell first.
UNIFORM = "uniform"


@dataclass(frozen=True)
class CellRun:
    """One run of a cell, cut at the test's frames."""

    cell: str
    path: Path
    seed: int
    curve: Curve
    log: EpisodeLog
    """Its λ log within the cut (``budget`` = the cut: tenths are of the cut)."""
    auc: float
    final: float
    final_frames: float


def tenth_masks(frames: np.ndarray, cut: float) -> list[np.ndarray]:
    """Which of ``frames`` lie in each tenth (a, b] of [0, cut], as ``sampled_kl_over_time``
    slices a budget."""
    edges = np.linspace(0.0, cut, TENTHS + 1)
    return [(frames > edges[k]) & (frames <= edges[k + 1]) for k in range(TENTHS)]


def tenth_means(frames: np.ndarray, values: np.ndarray, cut: float) -> np.ndarray:
    """``[TENTHS]``: the mean of ``values`` whose ``frames`` lie in each tenth; NaN where a
    tenth holds none."""
    return np.array([float(values[inside].mean()) if inside.any() else np.nan
                     for inside in tenth_masks(frames, cut)])


def tenth_counts(frames: np.ndarray, cut: float) -> np.ndarray:
    """``[TENTHS]``: how many of ``frames`` lie in each tenth."""
    return np.array([int(inside.sum()) for inside in tenth_masks(frames, cut)])


def training_auc(curve: Curve, cut: float) -> float:
    """The mean over the tenths of [0, cut] of the tenth's mean training return; a tenth without
    an episode is a ValueError (the run logged no episode there)."""
    means = tenth_means(curve.episode_frames, curve.episode_returns, cut)
    if np.isnan(means).any():
        empty = [k + 1 for k in np.flatnonzero(np.isnan(means))]
        raise ValueError(f"no training episode ended in tenth(s) {empty} of the first "
                         f"{cut:,.0f} frames")
    return float(means.mean())


def final_evaluation(curve: Curve, cut: float) -> tuple[float, float]:
    """(mean return, frames) of the run's evaluation at the cut: the last one within CUT_SLACK
    of it on either side. None there (an evaluation that was interrupted, a run evaluated on
    another schedule) is a ValueError: an earlier evaluation would score another point of
    training."""
    near = np.flatnonzero(np.abs(curve.eval_frames - cut) <= cut * CUT_SLACK)
    if not near.size:
        found = ", ".join(f"{f:,.0f}" for f in curve.eval_frames) or "none"
        raise ValueError(f"no evaluation within {CUT_SLACK:.0%} of {cut:,.0f} frames "
                         f"(evaluations at: {found})")
    last = int(near[-1])
    final = float(np.mean(curve.eval_returns[last]))
    if not np.isfinite(final):
        raise ValueError(f"its evaluation at {curve.eval_frames[last]:,.0f} frames holds no "
                         "episode")
    return final, float(curve.eval_frames[last])


def cut_log(log: EpisodeLog, cut: float) -> EpisodeLog:
    """The λ log's episodes within the cut, with the cut as its budget."""
    keep = log.frames <= cut
    return dataclasses.replace(log, frames=log.frames[keep], actors=log.actors[keep],
                               lambdas=log.lambdas[keep], returns=log.returns[keep],
                               budget=int(cut))


def load_cell(label: str, paths: Sequence[Path], cut: float) -> tuple[list[CellRun], list[str]]:
    """The cell's runs that reached the cut, and notes naming those left out and why (short of
    the cut, no evaluation at it, a tenth without episodes)."""
    runs, notes = [], []
    for path in paths:
        curve = read_gdi(path)
        reached = max(curve.episode_frames.max(initial=0), curve.eval_frames.max(initial=0))
        if reached < cut:
            notes.append(f"{label}: {path} has reached {reached:,.0f} frames of {cut:,.0f}; "
                         "left out")
            continue
        try:
            final, final_frames = final_evaluation(curve, cut)
            auc = training_auc(curve, cut)
        except ValueError as err:
            notes.append(f"{label}: {path}: {err}; left out")
            continue
        config, _ = read_config(path)
        runs.append(CellRun(label, path, config.seed, curve, cut_log(load_episode_log(path), cut),
                            auc, final, final_frames))
    return runs, notes


def differing_fields(first: dict, second: dict, allowed: frozenset[str]) -> list[str]:
    return sorted(k for k in set(first) | set(second)
                  if k not in allowed and first.get(k) != second.get(k))


def check_controls(cells: dict[str, list[Path]]) -> None:
    """ValueError unless every run of a cell shares its config but for the seed, and the two
    cells differ only in E over the same box."""
    configs = {label: [read_config(p)[0].to_dict() for p in paths]
               for label, paths in cells.items()}
    for label, group in configs.items():
        for path, config in zip(cells[label][1:], group[1:], strict=True):
            bad = differing_fields(group[0], config, RUN_FIELDS)
            if bad:
                raise ValueError(f"--cell {label}: {path} differs from {cells[label][0]} in "
                                 f"{', '.join(bad)}; a cell's runs may differ in the seed only")
    (a, first), (b, second) = ((label, group[0]) for label, group in configs.items())
    if second["meta_controller"] != UNIFORM or first["meta_controller"] == UNIFORM:
        raise ValueError(f"--cell {a} is E ({first['meta_controller']!r}) and --cell {b} its "
                         f"control ({second['meta_controller']!r}): give E first and the "
                         f"{UNIFORM!r} control second")
    bad = differing_fields(first, second, RUN_FIELDS | E_FIELDS)
    if bad:
        raise ValueError(f"cells {a} and {b} differ in {', '.join(bad)} "
                         f"({', '.join(f'{first.get(k)!r} / {second.get(k)!r}' for k in bad)}); "
                         "E's control may differ in E alone")
    for key in BOX_KEYS:
        if first["meta_kwargs"].get(key) != second["meta_kwargs"].get(key):
            raise ValueError(f"cells {a} and {b} search different boxes: meta_kwargs.{key} "
                             f"{first['meta_kwargs'].get(key)!r} / "
                             f"{second['meta_kwargs'].get(key)!r}")


def check_same_box(first: CellRun, second: CellRun) -> None:
    """ValueError unless the two runs' controllers sample the same λ ranges (what the configs'
    ``meta_kwargs`` resolve to, defaults included)."""
    a, b = first.log, second.log
    if a.index_names != b.index_names or not np.array_equal(a.ranges, b.ranges):
        raise ValueError(f"{first.path} and {second.path} sample different boxes: "
                         f"{dict(zip(a.index_names, a.ranges.tolist(), strict=True))} / "
                         f"{dict(zip(b.index_names, b.ranges.tolist(), strict=True))}")


def comparisons(first: Sequence[CellRun], second: Sequence[CellRun], game: str,
                reps: int, seed: int = 0) -> list[Comparison]:
    return [compare([getattr(r, attr) for r in first], [getattr(r, attr) for r in second],
                    game, metric, reps, seed)
            for metric, attr in zip(METRICS, ("auc", "final"), strict=True)]


def kl_per_tenth(log: EpisodeLog) -> np.ndarray:
    """``[TENTHS, dim]``: the KL to uniform of the λ sampled in each tenth, the mean over the
    run's actors (NaN where no actor had enough episodes in the tenth)."""
    tables = np.stack(list(sampled_kl_over_time(log, TENTHS).values()))  # [actors, T, dim]
    with warnings.catch_warnings():  # a tenth with no actor's estimate is NaN, said so
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(tables, axis=0)


def run_rows(runs: Sequence[CellRun], levels: Sequence[float], window: int) -> list[list[str]]:
    """Per run: cell, seed, AUC, final (frames), frames to each level within the cut, and per
    coordinate the mean sampled λ and its KL to uniform, first and last tenth."""
    rows = []
    for run in runs:
        reached = [first_reached(run.curve, level, window) for level in levels]
        reached = ["—" if r is None or r[1] > run.log.budget else f"{r[1] / 1e6:.2f}M"
                   for r in reached]
        kl = kl_per_tenth(run.log)
        described = []
        for i in range(len(run.log.index_names)):
            means = tenth_means(run.log.frames, run.log.lambdas[:, i], run.log.budget)
            described.append(f"{means[0]:.3g} → {means[-1]:.3g} (KL {kl[0, i]:.2f} → "
                             f"{kl[-1, i]:.2f})")
        rows.append([run.cell, str(run.seed), f"{run.auc:.2f}",
                     f"{run.final:.2f} ({run.final_frames / 1e6:.2f}M)", *reached, *described])
    return rows


def figure(cells: dict[str, list[CellRun]], path: Path) -> None:
    """Training return, mean sampled 1/τ₁ and its KL to uniform per tenth of the cut."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    any_run = next(iter(cells.values()))[0]
    cut = any_run.log.budget
    x = (np.arange(TENTHS) + 0.5) * cut / TENTHS / 1e6
    name = any_run.log.index_names[0]
    for colour, (label, runs) in zip(("C0", "C1"), cells.items(), strict=True):
        series = {
            "return": [tenth_means(r.curve.episode_frames, r.curve.episode_returns, cut)
                       for r in runs],
            "lambda": [tenth_means(r.log.frames, r.log.lambdas[:, 0], cut) for r in runs],
            "kl": [kl_per_tenth(r.log)[:, 0] for r in runs],
        }
        for ax, key in zip(axes, ("return", "lambda", "kl"), strict=True):
            for values in series[key]:
                ax.plot(x, values, color=colour, alpha=0.35, lw=0.8)
            ax.plot(x, np.nanmean(np.stack(series[key]), axis=0), color=colour, lw=2.2,
                    label=f"{label} ({len(runs)} runs)")
    # Episodes per actor and tenth: the KL is an actor's, averaged over actors.
    counts = [tenth_counts(r.log.frames[r.log.actors == actor], cut)
              for runs in cells.values() for r in runs for actor in np.unique(r.log.actors)]
    typical = int(np.median(np.concatenate(counts)))
    axes[2].axhline(uniform_kl_floor(typical), color="grey", ls=":",
                    label=f"uniform draws ({typical} per tenth)")
    axes[2].legend(fontsize=8)
    titles = ("training return (mean per tenth)", f"mean sampled {name}",
              f"KL to uniform of sampled {name} (nats)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("frames (M)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    game = any_run.curve.game
    fig.suptitle(f"E against uniform P_Λ on {game}: first {cut / 1e6:g}M frames "
                 "(thin: runs, thick: mean)", fontsize=11)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e_ale",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", action="append", required=True,
                        help="LABEL=GLOB of the cell's run folders; twice: E, then its control")
    parser.add_argument("--frames", type=float, required=True, help="the cut, in frames")
    parser.add_argument("--levels", type=float, nargs="*", default=[5.0, 10.0],
                        help="training-return levels for the frames-to-level columns")
    parser.add_argument("--window", type=int, default=100,
                        help="training episodes in the trailing mean for the levels")
    parser.add_argument("--reps", type=int, default=5_000, help="bootstrap resamples")
    parser.add_argument("--out", type=Path, required=True, help="the figure (PNG)")
    args = parser.parse_args(argv)
    notes: list[str] = []
    try:
        if len(args.cell) != 2:
            raise ValueError(f"--cell twice (E, then its control); got {len(args.cell)}")
        if not args.frames > 0 or args.frames != int(args.frames):
            raise ValueError(f"--frames must be a whole number of frames > 0, got {args.frames:g}")
        named = dict(parse_cell(text) for text in args.cell)
        if len(named) != 2:
            raise ValueError("the two --cell labels must differ")
        check_controls(named)
        cells = {}
        for label, paths in named.items():
            cells[label], skipped = load_cell(label, paths, args.frames)
            notes += skipped
        (first, a), (second, b) = cells.items()
        if not a or not b:
            raise ValueError(f"no run of --cell {first if not a else second} reached "
                             f"{args.frames:,.0f} frames with an evaluation there")
        check_same_box(a[0], b[0])
        games = {r.curve.game for r in [*a, *b]}
        if len(games) > 1:  # check_controls compares configs, so only a changed env gets here
            raise ValueError(f"the cells' runs play {', '.join(sorted(games))}; one game only")
        tests = comparisons(a, b, games.pop(), args.reps)
    except (ValueError, FileNotFoundError) as err:
        for note in notes:  # which runs were left out, and why, before what it led to
            print(f"note: {note}", file=sys.stderr)
        print(f"error: {err}", file=sys.stderr)
        return 2
    header = [*HEADER[:3], first, second, f"{first} - {second}", *HEADER[6:]]
    lines = [f"{first} − {second}, first {args.frames:,.0f} frames:",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row_cells(c)) + " |" for c in tests]
    names = a[0].log.index_names
    run_header = ["cell", "seed", "training AUC", "final (at)",
                  *[f"frames to {level:g} (last {args.window} ep.)" for level in args.levels],
                  *[f"{n}: mean first → last tenth (KL)" for n in names]]
    lines += ["", "| " + " | ".join(run_header) + " |", "|" + "---|" * len(run_header)]
    lines += ["| " + " | ".join(row) + " |"
              for row in run_rows([*a, *b], args.levels, args.window)]
    print("\n".join(lines))
    for note in notes:
        print(f"note: {note}")
    figure(cells, args.out)
    with args.out.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(row_cells(c) for c in tests)
    args.out.with_suffix(".md").write_text(
        "\n".join([*lines, *(f"note: {note}" for note in notes)]) + "\n")
    print(f"wrote {args.out} and its .csv, .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
