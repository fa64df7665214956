"""What each λ earned: the training episodes' return against the λ E drew for them, per
coordinate of λ, over a window of frames, for one or more runs (their ``meta.jsonl``).

    python -m benchmarks.return_by_lambda --since 0.6e6 --until 1e6 \\
        --run "seed 0=runs/screen/breakout-head-e-inputnorm-0" \\
        --run "seed 1=runs/screen/breakout-head-e-inputnorm-1" \\
        --out docs/figures/breakout-return-by-lambda.png

Each coordinate's search range is cut into ``--blocks`` equal blocks (in log(1 + λ) where it
spans orders of magnitude); per run and block, the
mean return of the episodes recorded in (``--since``, ``--until``] frames and their share of
the window's episodes. Where return keeps rising into the last block and E samples it most, the
box is where E would search further than it may. Prints one table per coordinate (the blocks'
share and mean return, per run) and writes the figure: per coordinate, the mean return per
block (one line per run) over the share of episodes sampled there (bars, pooled over runs).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.lever_screen import parse_run


def window_by_block(run: Path, since: float, until: float, blocks: int):
    """The run's index names, and per coordinate: the block edges (in λ), the mean return per
    block (NaN where none) and the episodes per block, over episodes in (since, until]."""
    from gdi.analysis.e_headroom import bin_means
    from gdi.analysis.e_learning import load_episode_log, log_scaled_coordinates

    log = load_episode_log(run)
    inside = (log.frames > since) & (log.frames <= until)
    if not inside.any():
        raise ValueError(f"{run}: no training episode between {since:,.0f} and {until:,.0f} "
                         f"frames (its episodes span {log.frames.min(initial=0):,} to "
                         f"{log.frames.max(initial=0):,})")
    coordinates = []
    # Blocks even in log(1 + λ) where the range spans orders of magnitude (the Gymnasium
    # scale's 1/τ), as gdi.analysis.e_learning bins them; linear on ALE's and MinAtar's boxes.
    scaled = log_scaled_coordinates(log)
    for i, ((low, high), log_scale) in enumerate(zip(log.ranges, scaled, strict=True)):
        edges = (np.expm1(np.linspace(np.log1p(low), np.log1p(high), blocks + 1)) if log_scale
                 else np.linspace(low, high, blocks + 1))
        means, counts = bin_means(log.lambdas[inside, i], log.returns[inside], edges)
        coordinates.append((edges, means, counts))
    return log.index_names, coordinates


def table(name: str, labels: Sequence[str], per_run: list) -> str:
    edges = per_run[0][0]
    head = ["block of " + name, *(f"{label}: share / return" for label in labels)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for b in range(len(edges) - 1):
        cells = [f"[{edges[b]:.3g}, {edges[b + 1]:.3g})"]
        for _, means, counts in per_run:
            share = counts[b] / max(counts.sum(), 1)
            cells.append(f"{share:.2f} / " + ("—" if np.isnan(means[b]) else f"{means[b]:.1f}"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def figure(names: Sequence[str], labels: Sequence[str], runs: list, title: str,
           path: Path) -> None:
    from matplotlib.figure import Figure

    from gdi.atomic import save_figure
    from gdi.evaluation import plots

    fig = Figure(figsize=(4.2 * len(names), 3.6), layout="constrained")
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for i, (name, ax) in enumerate(zip(names, axes, strict=True)):
        edges = runs[0][i][0]
        centres = (edges[:-1] + edges[1:]) / 2
        share = ax.twinx()
        pooled = np.sum([run[i][2] for run in runs], axis=0)
        share.bar(centres, pooled / max(pooled.sum(), 1), width=np.diff(edges), color="#999999",
                  alpha=0.25)
        share.set_ylabel("share of episodes (pooled)", fontsize=8)
        share.set_ylim(bottom=0)
        for k, (label, run) in enumerate(zip(labels, runs, strict=True)):
            ax.plot(centres, run[i][1], "o-", color=plots.RUN_COLORS[k % len(plots.RUN_COLORS)],
                    markersize=3.5, linewidth=1.2, label=label)
        ax.set_xlabel(name, fontsize=9)
        ax.set_ylabel("mean episode return", fontsize=8)
        ax.set_zorder(share.get_zorder() + 1)
        ax.patch.set_visible(False)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7.5, frameon=False)
    fig.suptitle(title, fontsize=10)
    save_figure(fig, path, dpi=plots.DPI, bbox_inches="tight", facecolor="white")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, metavar="LABEL=RUN_FOLDER")
    parser.add_argument("--since", type=float, default=0.0, help="frames: episodes after it")
    parser.add_argument("--until", type=float, default=float("inf"),
                        help="frames: episodes up to it")
    parser.add_argument("--blocks", type=int, default=10, help="blocks per coordinate")
    parser.add_argument("--out", type=Path, required=True, help="the figure (PNG)")
    args = parser.parse_args(argv)
    if args.blocks < 1 or not args.since < args.until:
        print(f"error: need --blocks >= 1 and --since < --until, got {args.blocks}, "
              f"{args.since:g}, {args.until:g}", file=sys.stderr)
        return 1
    labels, runs, names = [], [], None
    try:
        for text in args.run:
            label, run = parse_run(text)
            run_names, coordinates = window_by_block(run, args.since, args.until, args.blocks)
            if names is not None and run_names != names:
                raise ValueError(f"{run}: λ's coordinates {run_names} are not the other runs' "
                                 f"{names}")
            names = run_names
            labels.append(label)
            runs.append(coordinates)
            if any(not np.array_equal(c[0], r[0]) for c, r in zip(coordinates, runs[0],
                                                                   strict=True)):
                raise ValueError(f"{run}: E searches another box than the first run's; "
                                 "compare runs of one box")
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    window = f"episodes in ({args.since / 1e6:g}M, {args.until / 1e6:g}M] frames"
    for i, name in enumerate(names):
        print(table(name, labels, [run[i] for run in runs]))
    print(window)
    figure(names, labels, runs, f"Episode return by the λ E drew, {window}", args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
