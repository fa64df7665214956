"""A grid's results as pandas DataFrames, for a researcher's own tables and plots: where each
run stands (``grid_status``), every training episode with the curve the report draws
(``grid_curves``), each run's score, normalized score and normalized area at one frame count
(``grid_scores``, the report's ``runs.csv``) and the aggregates over games with their 95 %
intervals (``grid_aggregates``). Each is computed by the code that writes ``gdi benchmark
report``, so a number here is the number on the report's page.

    import gdi.benchmark as bench

    grid = bench.load_grid("benchmarks/grids/atari10.toml")
    bench.grid_status(grid)                 # one row per run, the settings' and the peers'
    bench.grid_curves(grid)                 # one row per training episode
    bench.grid_scores(grid, at=3_000_000)   # one row per run that reached 3M frames
    bench.grid_aggregates(grid, at=3_000_000).systems   # IQM and median HNS, per system
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from gdi.benchmark.grid import Grid, load_grid
from gdi.benchmark.report import (
    RUN_COLUMNS,
    checked_frames,
    collect,
    comparison_groups,
    grid_numbers,
    group_numbers,
    run_rows,
)
from gdi.benchmark.state import grid_states, peer_states
from gdi.evaluation.aggregates import REPS, Interval

#: ``grid_status``'s columns.
#: ``frames``: trained in the run folder (a peer's: its curve); ``kept_frames``: what the kept
#: records of a setting's run reach when its folder is not here (0: none).
STATUS_COLUMNS = ("system", "peer", "closed", "env", "seed", "state", "frames", "kept_frames",
                  "folder")
#: ``grid_curves``' columns: ``trailing`` is the mean return of the last ``window`` episodes
#: (fewer at a run's start), the curve the report draws and scores.
CURVE_COLUMNS = ("system", "env", "seed", "episode", "frames", "return", "trailing")
#: The aggregates of ``grid_aggregates(...).systems``, each a point with its 95 % interval
#: (columns NAME, NAME_low, NAME_high); NaN where the environments have no human scores.
AGGREGATES = ("iqm_hns", "median_hns", "iqm_auc", "median_auc")


class GridAggregates(NamedTuple):
    """The aggregates of a grid at one frame count, per comparison group (each setting
    against each peer, or all settings together in a grid without peers) on the environments
    where each system of the group has runs at those frames."""

    systems: pd.DataFrame  # group, envs, system, runs_per_game, then each of AGGREGATES
    improvements: pd.DataFrame  # group, envs, setting, peer, P(setting > peer) on score, auc


def _grid(grid: Grid | str | Path) -> Grid:
    return grid if isinstance(grid, Grid) else load_grid(grid)


def grid_status(grid: Grid | str | Path) -> pd.DataFrame:
    """Where each run stands, as ``gdi benchmark status`` shows it: one row per run of each
    setting (new, running, resumable, unstarted, done, kept or carried) and of each peer (new,
    partial, carried, running, done), with the frames it has trained, those its kept records
    reach and its folder (a setting's run folder, or the records it is read from)."""
    grid = _grid(grid)
    rows = [(s.cell.setting.name, False, s.cell.setting.closed is not None, s.cell.env,
             s.cell.seed, s.state, s.frames, s.kept_frames, str(s.source or s.cell.folder))
            for s in grid_states(grid)]
    rows += [(p.peer, True, False, p.env, p.seed, p.state, p.frames, 0, str(p.folder))
             for p in peer_states(grid)]
    return pd.DataFrame(rows, columns=STATUS_COLUMNS)


def grid_curves(grid: Grid | str | Path) -> pd.DataFrame:
    """Every training episode of every run with one (settings' and peers', short of the
    target or not), each run's by the frames at which they ended: its system, environment,
    seed, index in the run, those frames, its raw return and the trailing mean over the grid's
    ``window``."""
    grid = _grid(grid)
    _, runs = collect(grid, 0)  # at 0 frames, every run with an episode is in
    tables = []
    for (system, env), entry in runs.items():
        for curve in entry.curves:
            tables.append(pd.DataFrame({
                "system": system, "env": env, "seed": curve.seed,
                "episode": range(curve.returns.size), "frames": curve.frames.astype("int64"),
                "return": curve.returns, "trailing": curve.trailing(grid.window)}))
    if not tables:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    return pd.concat(tables, ignore_index=True)[list(CURVE_COLUMNS)]


def grid_scores(grid: Grid | str | Path, at: int | None = None) -> pd.DataFrame:
    """One row per run that reached ``at`` frames (default: the grid's target), the report's
    ``runs.csv``: its system, environment, seed, frames trained, score (the mean return of
    the last ``window`` episodes by ``at``), normalized score (HNS on the Atari-57, else the
    score) and normalized area under the curve over [0, at], and where it was read."""
    grid = _grid(grid)
    at = checked_frames(grid, at)
    _, runs = collect(grid, at)
    table = pd.DataFrame(run_rows(grid, runs, at), columns=RUN_COLUMNS)
    table["source"] = table["source"].astype(str)
    return table


def _interval_columns(name: str, value: Interval | None) -> dict[str, float]:
    point, low, high = value if value is not None else (float("nan"),) * 3
    return {name: point, f"{name}_low": low, f"{name}_high": high}


def grid_aggregates(grid: Grid | str | Path, at: int | None = None,
                    reps: int = REPS) -> GridAggregates:
    """The report's aggregates at ``at`` frames (default: the grid's target), with ``reps``
    bootstrap resamples: per comparison group and system, IQM and median over games of HNS and
    of the normalized area; per setting and peer, the probability that the setting's run beats
    the peer's on a game (rliable). A group with no environment in common has no rows."""
    grid = _grid(grid)
    numbers = grid_numbers(grid, checked_frames(grid, at))
    systems, improvements = [], []
    for group, envs in comparison_groups(numbers.systems, numbers.stats, list(grid.envs)):
        if not envs:
            continue
        key = {"group": " vs ".join(s.name for s in group), "envs": ", ".join(envs)}
        aggregates, better = group_numbers(group, numbers.stats, envs, reps)
        for row in aggregates:
            systems.append({**key, "system": row.system, "runs_per_game": row.runs_per_game,
                            **{k: v for name in AGGREGATES
                               for k, v in _interval_columns(name, getattr(row, name)).items()}})
        for row in better:
            improvements.append({**key, "setting": row.setting, "peer": row.peer,
                                 **_interval_columns("p_score", row.score),
                                 **_interval_columns("p_auc", row.auc)})
    system_columns = ["group", "envs", "system", "runs_per_game",
                      *(c for name in AGGREGATES for c in (name, f"{name}_low", f"{name}_high"))]
    better_columns = ["group", "envs", "setting", "peer", "p_score", "p_score_low",
                      "p_score_high", "p_auc", "p_auc_low", "p_auc_high"]
    return GridAggregates(pd.DataFrame(systems, columns=system_columns),
                          pd.DataFrame(improvements, columns=better_columns))
