"""Where the time of a training run goes: the per-phase timers of ``gdi train``.

Every metrics row of a run holds ``perf/<phase>_share`` for the learner process (``learner``:
sampling a batch and the learner step; ``push``: publishing parameters; ``wait``: waiting for
actor messages, local backend; ``eval``) and ``perf/actor_<phase>_share`` for the actors
(``inference``: batched forward + π_λ + sampling; ``env``: vector-env step; ``record``: sequence
recording and episode bookkeeping; ``meta``: operator E; ``pull``: parameter sync; ``idle``:
waiting for the learner to ask for a window or to take it, local backend). On the inline
backend every share is of the one process's wall time; on the local backend the actor shares
are of an actor process's wall time, averaged over actors.

This script averages each share over a run's rows, weighted by the rows' wall time (frames of the
row ÷ its frames/s), and prints one markdown table row per run.

Usage::

    .venv/bin/python -m benchmarks.phases runs/<run> [runs/<run> ...]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

LEARNER_PHASES = ("learner", "push", "wait", "eval")
ACTOR_PHASES = ("inference", "env", "record", "meta", "pull", "idle")


def phase_shares(metrics_path: Path) -> dict[str, float]:
    """Wall-time-weighted mean of every perf/*_share over the rows of a metrics.jsonl, plus
    ``fps`` (frames over the summed row wall time)."""
    weighted: dict[str, float] = defaultdict(float)
    total_seconds = total_frames = 0.0
    previous_frames = 0
    for line in metrics_path.read_text().splitlines():
        row = json.loads(line)
        if "perf/fps" not in row:  # e.g. evaluation rows; perf/fps spans log row to log row
            continue
        frames = row["frames"]
        delta = frames - previous_frames
        previous_frames = frames
        if delta <= 0 or row["perf/fps"] <= 0:
            continue
        seconds = delta / row["perf/fps"]
        total_seconds += seconds
        total_frames += delta
        for key, value in row.items():
            if key.startswith("perf/") and key.endswith("_share"):
                weighted[key[len("perf/"):-len("_share")]] += value * seconds
    if total_seconds == 0:
        raise ValueError(f"{metrics_path} has no rows with perf/fps")
    shares = {phase: value / total_seconds for phase, value in weighted.items()}
    shares["fps"] = total_frames / total_seconds
    return shares


def table(run_dirs: Sequence[Path]) -> str:
    header = (["run", "frames/s"] + [f"learner: {p}" for p in LEARNER_PHASES]
              + [f"actor: {p}" for p in ACTOR_PHASES])
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for run in run_dirs:
        metrics = run / "metrics.jsonl"
        if not metrics.is_file():
            raise SystemExit(f"error: {run} is not a run folder (no metrics.jsonl)")
        shares = phase_shares(metrics)
        cells = [run.name, f"{shares['fps']:,.0f}"]
        for key in list(LEARNER_PHASES) + [f"actor_{p}" for p in ACTOR_PHASES]:
            cells.append(f"{shares[key]:.0%}" if key in shares else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders")
    print(table(parser.parse_args(argv).runs))


if __name__ == "__main__":
    main()
