"""Where each run of a grid stands, read from its folder alone (the folders are the grid's
state: a grid copied to another machine with its folders goes on from there).

- ``new``: no folder yet; the queue starts the run.
- ``resumable``: a checkpoint short of the target; the queue resumes from it.
- ``done``: trained to the target (with the final evaluation when the target is the budget);
  a folder of records only (config, metrics, episodes, evaluations, no checkpoint) counts
  when its records reach the target.
- ``running``: a live process holds the folder's lock (another queue, a ``gdi train`` by
  hand, a queue killed without its runs): left to it.
- ``kept``: no run folder, but the setting's records folder holds the run at the target: done
  (the run folders stayed on another machine, the records came with the repository).
- ``carried``: no run folder, but the setting's records folder carries a checkpoint short of
  the target (the setting's ``carry``: the run stopped on another machine): the queue rebuilds
  the run folder from the records and resumes it.
- ``unstarted``: a folder with no checkpoint short of the target (a run stopped before its
  first checkpoint): nothing to resume, so the queue moves it aside, never deletes it, and
  starts the run again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gdi.benchmark.curves import peer_frames
from gdi.benchmark.grid import Cell, Grid, env_slug
from gdi.benchmark.records import CARRIED as CARRIED_FOLDER
from gdi.benchmark.records import carried_checkpoint
from gdi.run_files import EVAL_DIR, list_checkpoints
from gdi.runtime.run_folder.run_dir import flock_holder, lock_holder

NEW, RESUMABLE, DONE, RUNNING, UNSTARTED = "new", "resumable", "done", "running", "unstarted"
KEPT, CARRIED = "kept", "carried"
PARTIAL = "partial"  # a peer's run short of the target, with nothing to resume it from


@dataclass(frozen=True)
class CellState:
    cell: Cell
    state: str
    frames: int  # trained so far (0 for a new run)
    holder: str | None = None  # the PID of the process that is running it
    kept_frames: int = 0  # frames of the records kept apart (0: none)

    @property
    def pending(self) -> bool:
        return self.state not in (DONE, KEPT)

    @property
    def source(self) -> Path | None:
        """Where the run's records are read from: its folder, else its kept records."""
        if self.state in (KEPT, CARRIED) or (self.state == NEW and self.kept_frames):
            return self.cell.records
        return None if self.state == NEW else self.cell.folder


def checkpoint_frames(path: Path) -> int:
    """The frames in a checkpoint's name (``ckpt_<frames>.safetensors``)."""
    return int(path.name.split("_", 1)[1].split(".", 1)[0])


def logged_frames(folder: Path) -> int:
    """The frames of a run's last metrics row (0 when it logged none)."""
    path = folder / "metrics.jsonl"
    if not path.is_file():
        return 0
    frames = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if isinstance(row, dict) and isinstance(row.get("frames"), int):
            frames = max(frames, row["frames"])
    return frames


def final_evaluated(folder: Path, budget: int) -> bool:
    """Whether the run recorded its final evaluation (at or past ``budget`` frames)."""
    for path in (folder / EVAL_DIR).glob("frames_*.json"):
        try:
            if int(path.stem.split("_", 1)[1]) >= budget:
                return True
        except ValueError:
            continue
    return False


def reached(folder: Path, frames: int, grid: Grid) -> bool:
    """Whether a run at ``frames`` is done: at the target, and past its final evaluation when
    the target is the budget."""
    return frames >= grid.target and (grid.stop_at is not None or
                                      final_evaluated(folder, grid.frames))


def cell_state(cell: Cell, grid: Grid) -> CellState:
    folder = cell.folder
    if not folder.exists():
        records = cell.records
        if records is None or not (records / "config.json").is_file():
            return CellState(cell, NEW, 0)
        kept = logged_frames(records)
        if reached(records, kept, grid):
            return CellState(cell, KEPT, kept, kept_frames=kept)
        carried = carried_checkpoint(records)
        if carried is not None:
            return CellState(cell, CARRIED, checkpoint_frames(carried), kept_frames=kept)
        return CellState(cell, NEW, 0, kept_frames=kept)
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder} exists but is not a run folder (no config.json): move it "
                         f"away or change the folder pattern of setting {cell.setting.name!r}")
    checkpoints = list_checkpoints(folder)
    holder = lock_holder(folder)
    frames = checkpoint_frames(checkpoints[-1]) if checkpoints else logged_frames(folder)
    carried = carried_checkpoint(cell.records) if cell.records is not None else None
    if carried is not None and checkpoint_frames(carried) > frames and holder is None:
        # Another machine took the run further from the records: resuming this folder would
        # train over that work and, at its stop, replace the records with an older run.
        raise ValueError(f"{folder} stops at {frames:,} frames, but {cell.records} carries the "
                         f"run at {checkpoint_frames(carried):,} (another machine took it "
                         "further): move the folder away to resume from the records")
    if reached(folder, frames, grid):
        return CellState(cell, DONE, frames)
    if holder is not None:
        return CellState(cell, RUNNING, frames, holder)
    if checkpoints:
        return CellState(cell, RESUMABLE, frames)
    return CellState(cell, UNSTARTED, frames)


def grid_states(grid: Grid) -> list[CellState]:
    return [cell_state(cell, grid) for cell in grid.cells()]


@dataclass(frozen=True)
class PeerState:
    """Where a peer's run stands, read from its folder (``benchmarks/appo_peer.py``'s records:
    ``curve.csv``, and ``carried/`` while it is short of its budget)."""

    peer: str
    env: str
    seed: int
    folder: Path
    state: str  # new (no curve), done (at the target), carried or partial (short of it),
    # running (a queue's command is making it)
    frames: int


def peer_log(grid: Grid, peer: str, env: str, seed: int) -> Path:
    """Where ``gdi benchmark run --peer`` writes a peer run's output. The queue holds a lock
    on it for as long as the run's command lives (the command inherits it): a peer's run has
    no lock of its own that another queue could see."""
    return grid.out / "logs" / peer / f"{env_slug(env)}-{seed}.log"


def log_held(path: Path) -> bool:
    """Whether a live process holds the lock on a peer run's log."""
    return flock_holder(path) is not None


def peer_states(grid: Grid) -> list[PeerState]:
    """Every peer run of the grid, peer by peer, environment by environment, seed by seed."""
    states = []
    for peer in grid.peers:
        for env in grid.envs:
            for seed in peer.seeds:
                folder = grid.peer_folder(peer, env, seed)
                frames = peer_frames(folder)
                if frames >= grid.target:
                    state = DONE
                elif log_held(peer_log(grid, peer.name, env, seed)):
                    state = RUNNING
                elif not (folder / "curve.csv").is_file():
                    state = NEW
                else:
                    state = CARRIED if any((folder / CARRIED_FOLDER).glob("*/*.pth")) \
                        else PARTIAL
                states.append(PeerState(peer.name, env, seed, folder, state, frames))
    return states


def move_aside(folder: Path) -> Path:
    """Rename an unstarted run's folder to ``<name>.unstarted-<k>`` beside it (the first free
    k), so that the run can start again in its place and nothing is lost."""
    k = 1
    while (target := folder.with_name(f"{folder.name}.unstarted-{k}")).exists():
        k += 1
    folder.rename(target)
    return target
