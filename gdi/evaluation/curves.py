"""Learning curves of groups of runs: each seed's curve, and the mean over seeds with a
bootstrap confidence band on a shared frame grid (App. "Atari Games Learning Curves" plots
the evaluation return against training frames)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gdi.evaluation.aggregates import curve_band
from gdi.scores import RunEvals


class GroupCurve(NamedTuple):
    """Mean curve of a group of runs of one env on the frames all of them reached."""

    frames: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_runs: int


def shared_grid(runs: Sequence[RunEvals]) -> np.ndarray:
    """Every evaluation frame count of the runs inside the range all runs cover."""
    curves = [run.curve()[0] for run in runs]
    start = max(c[0] for c in curves)
    stop = min(c[-1] for c in curves)
    grid = np.unique(np.concatenate(curves))
    return grid[(grid >= start) & (grid <= stop)]


def _interpolate(run: RunEvals, grid: np.ndarray) -> np.ndarray:
    frames, returns = run.curve()
    # Several of a run's own files at one frame count (possible only in a folder written by
    # hand): the curve takes the last in report order, as the final score does.
    last = {int(f): r for f, r in zip(frames, returns, strict=True)}
    keys = np.array(sorted(last), dtype=float)
    return np.interp(grid, keys, [last[int(k)] for k in keys])


def group_curve(runs: Sequence[RunEvals], *, reps: int, seed: int) -> GroupCurve | None:
    """Mean over the runs (seeds) and its 95% CI (rliable), None when their frame ranges do
    not overlap. A single run gives its own curve with a zero-width band."""
    if not runs:
        raise ValueError("group_curve needs at least one run")
    grid = shared_grid(runs)
    if grid.size == 0:
        return None
    matrix = np.stack([_interpolate(run, grid) for run in runs])
    if len(runs) == 1:
        return GroupCurve(grid, matrix[0], matrix[0], matrix[0], 1)
    band = curve_band(matrix, reps=reps, seed=seed)
    return GroupCurve(grid, band.mean, band.low, band.high, len(runs))


#: The metrics row that holds the training return (the mean of the last 100 training
#: episodes' returns, π_λ with λ ~ P_Λ as it acts).
TRAINING_RETURN = "charts/episodic_return"


def training_return(run_dir: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """(frames, training return) from a run's metrics.jsonl, or None when it has none (a
    folder of evaluations only). A line that does not parse (a write cut short) is skipped:
    this is a picture beside the evaluations, not a score."""
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        return None
    frames, returns = [], []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        value = row.get(TRAINING_RETURN) if isinstance(row, dict) else None
        if isinstance(value, int | float) and "frames" in row:
            frames.append(int(row["frames"]))
            returns.append(float(value))
    if not frames:
        return None
    return np.array(frames, dtype=np.int64), np.array(returns, dtype=float)
