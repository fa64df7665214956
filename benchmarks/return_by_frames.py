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

With ``--metric KEY`` (repeatable), a row per run and key too: the mean of that learner
statistic over the rows logged in each block, and how many, to read beside the returns when a
run's return changes (did the entropy fall, the clipping grow?). A gdi run's statistics are its
``metrics.jsonl``'s (``losses/entropy``, ``stats/pg_clipped_frac``, ...), a peer's its
``learner.csv``'s (Sample Factory's names: ``train/entropy``, ``train/fraction_clipped``, ...;
benchmarks/peer_stats.py says how they differ): each key gives a row for the runs that logged
it, and a key no run logged is an error that lists what each run has::

    python -m benchmarks.return_by_frames --edges 0 1e6 2e6 3e6 \\
        --run "seed 1=benchmarks/results/atari10-scaled/DoubleDunk-1" \\
        --run "APPO, seed 1=benchmarks/results/ale-cpu/appo_ale_double_dunk_seed1" \\
        --metric losses/entropy train/entropy stats/pg_clipped_frac train/fraction_clipped
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np

from benchmarks.lever_screen import parse_run
from benchmarks.peer_stats import LEARNER_FILE, read_learner_csv
from gdi.analysis.e_headroom import bin_means
from gdi.benchmark.curves import read_gdi_curve, read_peer_curve


def is_peer_run(run: Path) -> bool:
    """A peer's run (``benchmarks/appo_peer.py``'s curve files), not a gdi run."""
    return (run / "curve_episodes.csv").is_file()


def episodes(run: Path) -> tuple[np.ndarray, np.ndarray]:
    """Frames at which each training episode ended, and its return (a gdi run or a peer's)."""
    curve = (read_peer_curve(run, "", "", 0) if is_peer_run(run)
             else read_gdi_curve(run, "", "", 0, trained=0))
    return curve.frames, curve.returns


def block_means(frames: np.ndarray, returns: np.ndarray, edges: Sequence[float]
                ) -> list[tuple[float, int]]:
    """Per block [edges[i], edges[i + 1]): the mean return of the episodes that ended in it
    (NaN where none) and how many there were."""
    inside = (frames >= edges[0]) & (frames < edges[-1])  # bin_means puts the rest in end bins
    means, counts = bin_means(frames[inside], returns[inside], np.asarray(edges, dtype=float))
    return [(float(m), int(n)) for m, n in zip(means, counts, strict=True)]


def statistics(run: Path) -> list[dict]:
    """The rows of learner statistics a run logged, each with its ``frames``: a gdi run's
    ``metrics.jsonl``, a peer run's ``learner.csv`` (Sample Factory's ``train/*``:
    benchmarks/peer_stats.py); none for a run without either."""
    if is_peer_run(run):
        path = run / LEARNER_FILE
        rows = read_learner_csv(str(path)) if path.is_file() else {}
        return [{"frames": step, **values} for step, values in sorted(rows.items())]
    path = run / "metrics.jsonl"
    return list(map(json.loads, path.read_text().splitlines())) if path.is_file() else []


def series(rows: list[dict], key: str) -> tuple[np.ndarray, np.ndarray]:
    """Frames and values of one statistic over the rows that logged it."""
    return (np.array([row["frames"] for row in rows if key in row], dtype=float),
            np.array([row[key] for row in rows if key in row], dtype=float))


def table(runs: Sequence[tuple[str, Path]], edges: Sequence[float],
          metrics: Sequence[str] = ()) -> str:
    """The Markdown table: per run, its returns' row, then a row per statistic it logged of
    ``metrics`` (a gdi run and a peer's name theirs differently: each key reads on the runs
    that have it). A key no run logged is an error naming what each run has."""
    logged = {name: statistics(run) if metrics else [] for name, run in runs}
    keys = {name: sorted({key for row in rows for key in row} - {"frames"})
            for name, rows in logged.items()}
    for key in metrics:
        if not any(key in have for have in keys.values()):
            none = "none (no metrics.jsonl or learner.csv)"
            have = "; ".join(f"{name}: {', '.join(known) or none}"
                             for name, known in keys.items())
            raise ValueError(f"--metric {key}: no run logged it; allowed, per run: {have}")
    head = " | ".join(f"{a / 1e6:g}-{b / 1e6:g}M" for a, b in pairwise(edges))
    lines = [f"| run | {head} |", "| --- |" + " ---: |" * (len(edges) - 1)]
    for name, run in runs:
        # (label, series, format): the returns with two decimals, then each statistic with
        # four significant digits (a learning rate of 3e-4 and a gradient norm of 38 alike)
        rows = [(name, episodes(run), ",.2f")] + [
            (f"{name}: {key}", series(logged[name], key), ",.4g") for key in metrics
            if key in keys[name]]
        for label, (frames, values), spec in rows:
            cells = ["—" if n == 0 else f"{mean:{spec}} ({n})"
                     for mean, n in block_means(frames, values, edges)]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, type=parse_run,
                        metavar="NAME=FOLDER", help="a run to read (repeatable)")
    parser.add_argument("--edges", nargs="+", type=float, required=True,
                        help="the blocks' edges in frames, increasing (at least two)")
    parser.add_argument("--metric", nargs="+", action="extend", default=[], metavar="KEY",
                        help="learner statistics of each run (a gdi run's metrics.jsonl, a "
                             "peer's learner.csv), a row each")
    args = parser.parse_args(argv)
    edges = args.edges
    if len(edges) < 2 or any(b <= a for a, b in pairwise(edges)):
        parser.error(f"--edges {' '.join(f'{e:g}' for e in edges)}: allowed: two or more "
                     "frame counts, each larger than the one before")
    try:
        print(table(args.run, edges, args.metric))
    except ValueError as err:
        parser.error(str(err))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
