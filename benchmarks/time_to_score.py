"""Time to score: wall-clock minutes until a run's periodic evaluation first reaches a return,
its frames/s and final return, per run and per group of runs (before / after a change).

A run's clock is its training clock (``gdi.run_records.training_clock``): each
``metrics.jsonl`` row covers the frames since the row before at its ``perf/fps``, so the minutes
include the collector's fill and the periodic evaluations (each in the row after it; the final
one in none) but not a stop between a checkpoint and its resume, and they survive a copy
(``git``, ``cp`` without ``-p``) or a run carried over to another machine. An evaluation's time
is the clock at its frames. A run without ``perf/fps`` rows, or with an evaluation past its last
timed row, has no clock: its minutes and frames/s read "—" rather than a guess. Groups are
compared by their mean final return and mean of each run's last three evaluations (as
benchmarks/minatar_report.py), each with a 95 % percentile-bootstrap interval over runs
(rliable, as ``gdi report``), and by the median of the other columns.

    .venv/bin/python -m benchmarks.time_to_score --target 10 \\
        --group before=/tmp/seeds/before-* --group after=/tmp/seeds/after-*
"""

from __future__ import annotations

import argparse
import glob
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.evaluation.aggregates import aggregate_intervals
from gdi.run_records import training_clock


@dataclass(frozen=True)
class RunTimes:
    name: str
    frames: int
    wall_minutes: float | None  # None: no clock (see the module docstring)
    final_return: float
    last3_return: float  # mean of the last three evaluations: less noisy than the last alone
    minutes_to_target: float | None  # None: the target was never reached, or no clock
    frames_to_target: int | None

    @property
    def frames_per_s(self) -> float | None:
        """Frames over the run's training clock; None without one."""
        return None if self.wall_minutes is None else self.frames / (self.wall_minutes * 60)


def run_times(run_dir: Path, target: float) -> RunTimes:
    """One finished run's clock, read from its files (see the module docstring)."""
    config, metrics = run_dir / "config.json", run_dir / "metrics.jsonl"
    evals = sorted((run_dir / "eval").glob("*.json"))
    if not config.is_file() or not evals:
        raise SystemExit(f"{run_dir}: not a run folder with evaluations")
    records = sorted((json.loads(path.read_text()) for path in evals),
                     key=lambda record: record["frames"])
    rows = ([json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
            if metrics.is_file() else [])
    frames, seconds = training_clock(rows)
    clock = frames.size >= 2  # at least one timed row after frame 0

    def minutes_at(at_frames: int) -> float | None:
        # np.interp would clamp frames past the last row to its time: no clock there.
        if not clock or at_frames > frames[-1]:
            return None
        return float(np.interp(at_frames, frames, seconds)) / 60

    reached = next((rec for rec in records if rec["mean_return"] >= target), None)
    last = records[-1]
    return RunTimes(
        name=run_dir.name,
        frames=int(last["frames"]),
        wall_minutes=minutes_at(last["frames"]),
        final_return=float(last["mean_return"]),
        last3_return=float(np.mean([rec["mean_return"] for rec in records[-3:]])),
        minutes_to_target=None if reached is None else minutes_at(reached["frames"]),
        frames_to_target=None if reached is None else int(reached["frames"]),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", action="append", required=True, metavar="NAME=GLOB",
                        help="a group of run folders, e.g. before='runs/before-*' (repeatable)")
    parser.add_argument("--target", type=float, default=10.0,
                        help="the evaluation return to reach (default 10, MinAtar Breakout)")
    args = parser.parse_args(argv)

    groups: dict[str, list[RunTimes]] = {}
    for spec in args.group:
        name, sep, pattern = spec.partition("=")
        if not sep or not name:
            raise SystemExit(f"--group must be NAME=GLOB, got {spec!r}")
        folders = sorted(Path(p) for p in glob.glob(pattern) if Path(p).is_dir())
        if not folders:
            raise SystemExit(f"--group {name}: no run folders match {pattern!r}")
        groups[name] = [run_times(folder, args.target) for folder in folders]

    print(f"| group | run | frames | wall min | frames/s | final return | last 3 | "
          f"min to {args.target:g} | frames to {args.target:g} |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, runs in groups.items():
        for r in runs:
            to_frames = "never" if r.frames_to_target is None else f"{r.frames_to_target:,}"
            if r.wall_minutes is None:
                wall, rate, to_min = "—", "—", "never" if r.frames_to_target is None else "—"
            else:
                wall, rate = f"{r.wall_minutes:.1f}", f"{r.frames_per_s:,.0f}"
                to_min = ("never" if r.minutes_to_target is None
                          else f"{r.minutes_to_target:.1f}")
            print(f"| {name} | {r.name} | {r.frames:,} | {wall} | {rate} | "
                  f"{r.final_return:.2f} | {r.last3_return:.2f} | {to_min} | {to_frames} |")

    def mean_ci(field: str) -> dict[str, str]:
        scores = {name: np.array([[getattr(r, field)] for r in runs])
                  for name, runs in groups.items()}
        return {name: "{:.2f} [{:.2f}, {:.2f}]".format(*by["mean"])
                for name, by in aggregate_intervals(scores, ("mean",)).items()}

    finals, last3 = mean_ci("final_return"), mean_ci("last3_return")
    print()
    print(f"| group | runs | final return, mean [95 % CI] | last 3, mean [95 % CI] | median wall "
          f"min | median frames/s | reached {args.target:g} | median min to {args.target:g} "
          "(runs that reached it) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, runs in groups.items():
        reached = sum(r.frames_to_target is not None for r in runs)
        timed = [r for r in runs if r.wall_minutes is not None]
        # Medians over the runs with a clock; "—" where none has one.
        minutes = [r.minutes_to_target for r in timed if r.minutes_to_target is not None]
        median_to = f"{np.median(minutes):.1f}" if minutes else "–" if timed else "—"
        wall = f"{np.median([r.wall_minutes for r in timed]):.1f}" if timed else "—"
        if timed and len(timed) < len(runs):  # say over how many runs the medians are
            wall += f" ({len(timed)} of {len(runs)} timed)"
        rate = f"{np.median([r.frames_per_s for r in timed]):,.0f}" if timed else "—"
        print(f"| {name} | {len(runs)} | {finals[name]} | {last3[name]} | {wall} | {rate} | "
              f"{reached} of {len(runs)} | {median_to} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
