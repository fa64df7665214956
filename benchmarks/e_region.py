"""Where E samples over a run, against its uniform control: the share of training episodes
whose inverse temperatures lie above a threshold (the E ablation's positive control, issue 42,
item 2: does E move P_Λ out of the box's bad region, the near-greedy policies?).

    .venv/bin/python -m benchmarks.e_region --root runs/e-positive-control --above 50 \\
        --out docs/ablation-e/positive-control/region.png

For each game of the grid and each inverse temperature of Λ, the share of episodes in each
tenth of the frame budget with that coordinate above ``--above``
(``gdi.analysis.e_learning.share_above_over_time``), per run (thin) and as the mean over the
cell's seeds (thick), for the bandit E and the uniform control; dotted, the share that λ
uniform in E's search coordinates puts there. Prints a table of the first and last tenths
(the mean over seeds and the seeds' range) and writes it beside the figure as .csv.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.minatar_report import episode_log, load_grid, preset_label
from gdi.analysis.e_learning import share_above_over_time

CELLS = ("gdi-i3", "gdi-i3-uniform")
WINDOWS = 10


def uniform_share_above(threshold: float, low: float, high: float, transform: str) -> float:
    """The share of λ drawn uniformly in E's coordinate x (``identity``: λ; ``log1p``:
    log(1 + λ)) over [low, high] that lies above ``threshold``."""
    if not high > low:
        raise ValueError(f"range [{low:g}, {high:g}] is empty; E samples no region of it")
    if transform == "log1p":
        low, high, threshold = math.log1p(low), math.log1p(high), math.log1p(threshold)
    elif transform != "identity":
        raise ValueError(f"transform: unknown value {transform!r}; allowed: identity, log1p")
    return float(min(1.0, max(0.0, (high - threshold) / (high - low))))


def shares(root: Path, threshold: float, cells: Sequence[str] = CELLS):
    """{(game, cell, coordinate name): [seeds, WINDOWS] shares}, and per (game, coordinate
    name) the uniform share of the first cell's box."""
    grid = load_grid(root)
    missing = [c for c in cells if not any(p == c for _, p in grid.runs)]
    if missing:
        raise ValueError(f"{root} has no finished runs of {', '.join(missing)}; its cells: "
                         f"{', '.join(grid.presets) or 'none'}")
    table, expected = {}, {}
    for game in grid.games:
        for cell in cells:
            runs = grid.runs.get((game, cell), [])
            logs = [episode_log(r.run_dir) for r in runs]
            for log, run in zip(logs, runs, strict=True):
                meta = run.config["meta_kwargs"]
                transforms = meta.get("transforms", ["identity"] * len(log.index_names))
                for i, name in enumerate(log.index_names):
                    low, high = log.ranges[i]
                    if not name.startswith("inv_tau") or not high > low:
                        continue  # ε, or a coordinate E does not search
                    table.setdefault((game, cell, name), []).append(
                        share_above_over_time(log, i, threshold, WINDOWS))
                    if cell == cells[0]:  # the dotted line: the bandit cell's box
                        expected.setdefault((game, name), uniform_share_above(
                            threshold, low, high, transforms[i]))
    return {k: np.array(v) for k, v in table.items()}, expected


def plot(table, expected, threshold: float, cells: Sequence[str], path: Path) -> Path:
    from matplotlib.figure import Figure

    from gdi.evaluation import plots

    games = list(dict.fromkeys(g for g, _, _ in table))
    names = list(dict.fromkeys(n for _, _, n in table))
    fig = Figure(figsize=(4.2 * len(names), 3.0 * len(games)), layout="constrained")
    axes = fig.subplots(len(games), len(names), squeeze=False)
    colors = {cells[0]: plots.RUN_COLORS[0], cells[1]: "#777777"}
    x = (np.arange(WINDOWS) + 0.5) / WINDOWS
    for r, game in enumerate(games):
        for c, name in enumerate(names):
            ax = axes[r, c]
            for cell in cells:
                runs = table.get((game, cell, name))
                if runs is None:
                    continue
                for run in runs:
                    ax.plot(x, run, color=colors[cell], linewidth=0.6, alpha=0.35)
                ax.plot(x, np.nanmean(runs, axis=0), color=colors[cell], linewidth=2,
                        label=f"{preset_label(cell)} ({len(runs)} seeds)")
            ax.axhline(expected[(game, name)], color="#333333", linestyle=":", linewidth=1,
                       label="λ uniform in E's coordinates")
            ax.set_ylim(0, 1)
            ax.set_title(f"{game}: share of episodes with {name} > {threshold:g}", fontsize=9)
            ax.set_xlabel("fraction of the frame budget", fontsize=8)
            ax.set_ylabel("share of episodes", fontsize=8)
            ax.tick_params(labelsize=7.5)
            if r == 0 and c == 0:
                ax.legend(fontsize=7.5, frameon=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=plots.DPI, bbox_inches="tight", facecolor="white")
    return path


def rows(table, expected) -> list[list[str]]:
    out = []
    for (game, cell, name), runs in table.items():
        first, last = runs[:, 0], runs[:, -1]
        out.append([game, cell, name, str(len(runs)), f"{expected[(game, name)]:.2f}",
                    f"{np.nanmean(first):.2f} [{np.nanmin(first):.2f}, {np.nanmax(first):.2f}]",
                    f"{np.nanmean(last):.2f} [{np.nanmin(last):.2f}, {np.nanmax(last):.2f}]"])
    return out


HEADER = ["game", "cell", "coordinate", "seeds", "uniform's share", "first tenth",
          "last tenth"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e_region",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the grid's folder")
    parser.add_argument("--above", type=float, required=True,
                        help="the inverse temperature above which λ counts as in the region")
    parser.add_argument("--cells", default=",".join(CELLS),
                        help="the bandit cell and its control (comma-separated)")
    parser.add_argument("--out", type=Path, required=True, help="the figure (.png)")
    args = parser.parse_args(argv)
    cells = [c for c in args.cells.split(",") if c]
    try:
        if len(cells) != 2:
            raise ValueError(f"--cells takes two cells, got {args.cells!r}")
        table, expected = shares(args.root, args.above, cells)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    plot(table, expected, args.above, cells, args.out)
    lines = rows(table, expected)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for line in lines:
        print("| " + " | ".join(line) + " |")
    with args.out.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(lines)
    print(f"wrote {args.out} and {args.out.with_suffix('.csv')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
