"""The training episodes' mean return per block of frames, for gdi runs and peer runs side by
side: how each one plays in its first frames, where a trailing mean of 100 episodes hides it
(an episode counts in the block in which it ended; the episodes per block say how long they
were).

    python -m benchmarks.return_by_frames --edges 0 1e5 2.5e5 5e5 7.5e5 1e6 \\
        --run "control=benchmarks/results/ale-games/DoubleDunk-head-ale-floor-0" \\
        --run "init-0.01=benchmarks/results/early-policy/DoubleDunk-init-0.01-0" \\
        --run "APPO=benchmarks/results/ale-cpu/appo_ale_double_dunk_seed0"

A run is a gdi run folder or its records (``meta.jsonl``) or a ``benchmarks/appo_peer.py``
experiment folder or its records (``curve_episodes.csv``). Prints a Markdown table, one row per
run: the mean return of the episodes that ended in each block [a, b) of frames, and how many.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np

from benchmarks.lever_screen import parse_run
from gdi.analysis.e_headroom import bin_means
from gdi.benchmark.curves import read_gdi_curve, read_peer_curve


def episodes(run: Path) -> tuple[np.ndarray, np.ndarray]:
    """Frames at which each training episode ended, and its return (a gdi run or a peer's)."""
    is_peer = (run / "curve_episodes.csv").is_file()
    curve = (read_peer_curve(run, "", "", 0) if is_peer
             else read_gdi_curve(run, "", "", 0, trained=0))
    return curve.frames, curve.returns


def block_means(frames: np.ndarray, returns: np.ndarray, edges: Sequence[float]
                ) -> list[tuple[float, int]]:
    """Per block [edges[i], edges[i + 1]): the mean return of the episodes that ended in it
    (NaN where none) and how many there were."""
    inside = (frames >= edges[0]) & (frames < edges[-1])  # bin_means puts the rest in end bins
    means, counts = bin_means(frames[inside], returns[inside], np.asarray(edges, dtype=float))
    return [(float(m), int(n)) for m, n in zip(means, counts, strict=True)]


def table(runs: Sequence[tuple[str, Path]], edges: Sequence[float]) -> str:
    head = " | ".join(f"{a / 1e6:g}-{b / 1e6:g}M" for a, b in pairwise(edges))
    lines = [f"| run | {head} |", "| --- |" + " ---: |" * (len(edges) - 1)]
    for name, run in runs:
        cells = ["—" if n == 0 else f"{mean:,.2f} ({n})"
                 for mean, n in block_means(*episodes(run), edges)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, type=parse_run,
                        metavar="NAME=FOLDER", help="a run to read (repeatable)")
    parser.add_argument("--edges", nargs="+", type=float, required=True,
                        help="the blocks' edges in frames, increasing (at least two)")
    args = parser.parse_args(argv)
    edges = args.edges
    if len(edges) < 2 or any(b <= a for a, b in pairwise(edges)):
        parser.error(f"--edges {' '.join(f'{e:g}' for e in edges)}: allowed: two or more "
                     "frame counts, each larger than the one before")
    print(table(args.run, edges))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
