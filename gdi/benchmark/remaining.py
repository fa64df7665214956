"""How fast a grid's runs have gone and what is left of it: per system (each setting, each
peer), the runs not done, the frames they have left to train, the frames per second its runs
recorded, and the hours that makes one run at a time (``gdi benchmark status``'s last lines).

A run's pace is its frames over its wall time: for a gdi run, each metrics row's frames since
the row before over the seconds they took (its ``perf/fps`` is that ratio, start-up and
evaluations included), summed over the rows; for a peer run, the same over its ``curve.csv``
(``wall_s``, which a resumed run carries on; a resume's repeated frames and start-up count as
no progress). A system's pace is the median over its runs: measured on whatever machine each
ran on, so an estimate for this one only as far as the machines are alike.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from statistics import median

from gdi.benchmark.grid import Grid, load_grid
from gdi.benchmark.state import DONE, KEPT, grid_states, peer_states
from gdi.run_files import read_jsonl
from gdi.run_records import training_clock


@dataclass(frozen=True)
class Remaining:
    """One system's part of a grid that is not done."""

    system: str
    runs: int  # runs short of the target (new ones included)
    frames: int  # frames those runs have left to train
    pace: float | None  # frames per second of its runs (median over runs); None: none yet

    @property
    def hours(self) -> float | None:
        """Hours to train what is left one run at a time at ``pace`` (None without one)."""
        return None if not self.pace else self.frames / self.pace / 3600


def gdi_pace(folder: Path) -> float | None:
    """A gdi run's frames per second of training (``training_clock``: its metrics rows'
    frames over the seconds they took). None without a timed row yet; a damaged log is an
    error naming its line (``read_jsonl``)."""
    try:
        rows = read_jsonl(folder / "metrics.jsonl")
    except FileNotFoundError:  # no log yet
        return None
    frames, seconds = training_clock(rows)
    return float(frames[-1] / seconds[-1]) if seconds[-1] > 0 else None


def peer_pace(folder: Path) -> float | None:
    """A peer run's frames per second of wall time, over the rows of its ``curve.csv`` where
    both grew (a resume's repeated frames and its start-up count as no progress)."""
    path = folder / "curve.csv"
    if not path.is_file():
        return None
    with path.open(newline="") as f:
        try:
            points = [(float(r["wall_s"]), float(r["frames"])) for r in csv.DictReader(f)
                      if r.get("wall_s") and r.get("frames")]
        except ValueError as err:
            raise ValueError(f"{path}: a row's wall_s or frames is not a number ({err})") from None
    steps = [(w1 - w0, f1 - f0) for (w0, f0), (w1, f1) in pairwise(points) if w1 > w0 and f1 > f0]
    seconds = sum(s for s, _ in steps)
    return sum(f for _, f in steps) / seconds if seconds > 0 else None


def grid_remaining(grid: Grid | str | Path) -> list[Remaining]:
    """Each system's runs not done, their frames left and its pace, settings first (a closed
    setting has nothing left: its runs are never run). ``grid``: a grid or its file."""
    grid = grid if isinstance(grid, Grid) else load_grid(grid)
    left = []
    states = grid_states(grid)
    for setting in grid.settings:
        mine = [s for s in states if s.cell.setting is setting]
        paces = [p for s in mine if s.source is not None
                 and (p := gdi_pace(s.source)) is not None]
        todo = [] if setting.closed else [s for s in mine if s.state not in (DONE, KEPT)]
        left.append(Remaining(setting.name, len(todo),
                              sum(max(grid.target - s.frames, 0) for s in todo),
                              median(paces) if paces else None))
    peers = peer_states(grid)
    for peer in grid.peers:
        mine = [p for p in peers if p.peer == peer.name]
        paces = [p for run in mine if (p := peer_pace(run.folder)) is not None]
        todo = [run for run in mine if run.state != DONE]
        left.append(Remaining(peer.name, len(todo),
                              sum(max(grid.target - run.frames, 0) for run in todo),
                              median(paces) if paces else None))
    return left
