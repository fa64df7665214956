"""``gdi benchmark run|status|report|keep GRID``: a grid of runs (environments × seeds ×
settings, a TOML file; docs/benchmark-grids.md) as a resumable queue, where each run stands,
and the grid's report beside its peers' curves. The work lives in ``gdi.benchmark``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import tyro
from tyro.conf import Positional

from gdi.cli.exits import EXIT_FAILED
from gdi.cli.options import Count, check_count, subcommands
from gdi.cli.tables import keeps_words, shown_path
from gdi.evaluation.aggregates import REPS

if TYPE_CHECKING:
    from gdi.benchmark.remaining import Remaining


def benchmark_run(
    grid: Positional[Path],
    parallel: int | None = None,
    ray_address: str | None = None,
    cpus_per_run: float = 2.0,
    setting: tuple[str, ...] = (),
    env: tuple[str, ...] = (),
    seed: tuple[int, ...] = (),
    peer: tuple[str, ...] = (),
    peers_only: bool = False,
) -> int:
    """Run a benchmark grid (a TOML file: environments × seeds × settings; docs/benchmark-grids.md):
    every run that is not done, as `gdi train` into its folder: new runs start, checkpointed
    ones resume, finished ones are skipped, so running it again after a stop, a crash or a
    move to another machine (with the run folders, or with records that carry a checkpoint)
    goes on where the grid stands. A setting the grid marks `closed` is never run. With
    --peer, the peer's runs that are not done too, each with the command the grid gives it.
    Ctrl-C, SIGTERM or SIGHUP stop every run with a checkpoint.

    Exit codes: 0 every run done; 1 a run failed (its log is named); 2 bad input; 130/143/129
    stopped by a signal (run it again to continue).

    Args:
        grid: The grid's TOML file.
        parallel: Runs at a time on this machine (default: the grid's `parallel`, else 1).
        ray_address: Run each as a task on this Ray cluster instead (`local` starts one on
            this machine); the run folders must be on storage every node sees.
        cpus_per_run: With --ray-address, the CPUs Ray reserves for each run.
        setting: Only these settings' runs (default: every setting of the grid).
        env: Only these environments' runs, as the grid spells them (default: all).
        seed: Only these seeds' runs (default: all).
        peer: Also these peers' runs, each with its `command` in the grid (run in the grid
            file's folder; on this machine only): environment by environment and seed by
            seed, after the settings' runs of each.
        peers_only: With --peer, the peers' runs alone; the settings' wait. A peer's runs are
            needed whatever the settings become, so a grid whose settings may still change
            makes them first.
    """
    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.queue import run_grid

    if peers_only and setting:
        raise ValueError(f"--peers-only with --setting {' '.join(setting)}: --peers-only runs no "
                         "setting; allowed: one of the two")
    chosen = load_grid(grid).select(setting, env, seed)
    result = run_grid(chosen, parallel, ray_address, cpus_per_run, peer, peers_only, print)
    peers = tuple(peer)
    total = (0 if peers_only else len(chosen.open().cells())) + sum(
        len(chosen.envs) * len(p.seeds) for p in chosen.peers if p.name in peers)
    # The part of the grid named on the command line, as options to run it again.
    options = "".join(f" --{option} {' '.join(map(str, names))}" for option, names in
                      (("setting", setting), ("env", env), ("seed", seed), ("peer", peers))
                      if names) + (" --peers-only" if peers_only else "")
    part = " chosen" if setting or env or seed or peers_only else ""
    print(f"{grid}: {len(result.done_before) + len(result.finished)} of {total}{part} runs done"
          + (f", {len(result.failed)} failed" if result.failed else "")
          + (f", {len(result.stopped)} stopped with a checkpoint" if result.stopped else "")
          + (f", {len(result.elsewhere)} running in other processes" if result.elsewhere
             else ""))
    if result.signal is not None:
        print(f"stopped: continue with gdi benchmark run {grid}{options}")
        return 128 + int(result.signal)
    return EXIT_FAILED if result.failed else 0


def benchmark_status(grid: Positional[Path]) -> None:
    """Where each run of a grid stands (new, running, resumable, unstarted, done; kept or
    carried: records of a run whose folder is elsewhere; "(closed)": of a setting the grid no
    longer runs), read from the run folders and the kept records, and each peer's run (new,
    partial, carried, done, read from its curve; running: a queue's `--peer` is making it),
    and last what remains: per setting and peer, its runs not done, their frames and the
    hours they take one at a time at the pace its runs have kept.

    Args:
        grid: The grid's TOML file.
    """
    from rich.console import Console
    from rich.table import Table

    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.remaining import grid_remaining
    from gdi.benchmark.state import grid_states, peer_states

    chosen = load_grid(grid)
    states = grid_states(chosen)
    counts: dict[str, int] = {}
    rows = []
    for state in states:
        # A closed setting's runs that are not done stay as they are: the queue never runs them.
        shown = state.state + (" (closed)" if state.cell.setting.closed and state.pending
                               else "")
        counts[shown] = counts.get(shown, 0) + 1
        frames = f"{state.frames:,}" if state.frames or not state.kept_frames else \
            f"{state.kept_frames:,} kept"  # records of a run whose folder is not here
        rows.append([state.cell.setting.name, state.cell.env, str(state.cell.seed),
                     shown + (f" (PID {state.holder})" if state.holder else ""), frames,
                     shown_path(state.source or state.cell.folder)])
    peers = peer_states(chosen)
    for peer in peers:  # the peers' runs, from their curve files
        counts[f"{peer.peer} {peer.state}"] = counts.get(f"{peer.peer} {peer.state}", 0) + 1
        rows.append([peer.peer, peer.env, str(peer.seed), peer.state,
                     f"{peer.frames:,}", shown_path(peer.folder)])
    console = Console()

    def table(columns: tuple[str, ...]) -> Table:
        shown = Table(title=f"{grid}: target {chosen.target:,} frames")
        for column in columns:
            shown.add_column(column, overflow="fold")
        for row in rows:
            shown.add_row(*row[:len(columns)])
        return shown

    columns = ("setting", "env", "seed", "state", "frames", "folder")
    wide = table(columns)
    if keeps_words(console, wide, [text for row in rows for text in row]):
        console.print(wide)
    else:  # the folders do not fit beside the rest: where each setting's are, after the table
        console.print(table(columns[:-1]))
        for setting in chosen.settings:
            mine = [state for state in states if state.cell.setting is setting]
            places = [("run folders", [s.cell.folder for s in mine]),
                      ("records kept", [s.cell.records for s in mine if s.cell.records])]
            console.print(f"{setting.name}: " + "; ".join(
                f"{what} in {shown_path(Path(os.path.commonpath(folders)))}"
                for what, folders in places if folders), highlight=False)
        for name in dict.fromkeys(peer.peer for peer in peers):
            folders = [peer.folder for peer in peers if peer.peer == name]
            console.print(f"{name}: curves in "
                          f"{shown_path(Path(os.path.commonpath(folders)))}", highlight=False)
    console.print(", ".join(f"{n} {name}" for name, n in counts.items()))
    left = left_line(grid_remaining(chosen))
    if left:
        console.print(left, highlight=False)


def left_line(left: list[Remaining]) -> str | None:
    """What is left of a grid, one run at a time at each system's pace (None: nothing)."""
    def frames(n: int) -> str:
        return f"{n / 1e6:.1f}M" if n >= 1_000_000 else f"{n:,}"

    def duration(hours: float) -> str:
        return f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.0f} min"

    parts, hours = [], []
    for system in (s for s in left if s.runs):
        pace = (f"at {system.pace:,.0f} frames/s ≈ {duration(system.hours)}" if system.pace
                else "no pace recorded yet")
        parts.append(f"{system.system} {system.runs} run(s), {frames(system.frames)} frames, "
                     f"{pace}")
        hours.append(system.hours)
    if not parts:
        return None
    total = (f"; ≈ {duration(sum(hours))} one run at a time"
             if None not in hours and len(parts) > 1 else "")
    return (f"left: {'; '.join(parts)}{total} (paces: the median of each system's runs, on the "
            "machines they ran on)")


def benchmark_keep(grid: Positional[Path]) -> None:
    """Keep each stopped or finished run's records beside the grid (its setting's `records`)
    and, with the setting's `carry`, the newest checkpoint of each run short of the target, as
    the queue does whenever a run stops: for runs whose queue was killed before it could (a
    SIGKILL, a lost terminal), before the records move to another machine. Runs still running
    are named and left alone.

    Args:
        grid: The grid's TOML file.
    """
    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.queue import keep_cell
    from gdi.benchmark.state import DONE, RESUMABLE, RUNNING, grid_states

    kept = running = 0
    for state in grid_states(load_grid(grid)):
        if state.cell.records is None:
            continue
        if state.state == RUNNING:
            running += 1
            print(f"{state.cell.name}: running in process {state.holder}; left alone (stop "
                  "its queue or run first: it keeps its records when it stops)")
        elif state.state in (DONE, RESUMABLE):
            keep_cell(state.cell, state.state == DONE, print)
            kept += 1
    print(f"{grid}: records of {kept} run(s) kept" + (f", {running} running" if running else ""))


def benchmark_report(
    grid: Positional[Path],
    at: Count | None = None,
    out: Path | None = None,
    reps: int = REPS,
    page: Path | None = None,
) -> None:
    """Write a grid's report: per-environment curves of every setting and peer (mean and 95 %
    band over seeds), a table of score, normalized score (HNS), normalized area under the
    curve and frames to levels with 95 % CIs, and aggregates (IQM, median, probability of
    improvement against each peer; rliable).

    Args:
        grid: The grid's TOML file.
        at: Compare at this many frames (default: the grid's target); runs short of it are
            listed, not counted.
        out: Report folder (default: <grid out>/report).
        reps: Bootstrap resamples of each interval.
        page: A results page (Markdown) to put the figure, the table and the aggregates in,
            between its generated block's markers (appended when it has none); the rest of
            the page is kept.
    """
    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.report import write_grid_report, write_page_block

    check_count("--at", at)
    chosen = load_grid(grid)
    written = write_grid_report(chosen, at=at, out=out, reps=reps)
    print(f"report: {written.markdown}" + (f" (figure {written.figure.name})"
                                           if written.figure else ""))
    if page is not None:
        if page.suffix != ".md":
            raise ValueError(f"--page {page}: allowed: a Markdown file (.md)")
        write_page_block(page, written, chosen, chosen.target if at is None else at)
        print(f"page: {page} (its generated block)")


#: `gdi benchmark run|status|report|keep GRID`, as `gdi analyze`.
BENCHMARK_COMMANDS = {"run": benchmark_run, "status": benchmark_status,
                      "report": benchmark_report, "keep": benchmark_keep}


BenchmarkCommand = Union[subcommands(BENCHMARK_COMMANDS)]  # noqa: UP007 (a tuple of members)


def benchmark(command: tyro.conf.OmitArgPrefixes[BenchmarkCommand]) -> Any:
    """A grid of runs (environments × seeds × settings, a TOML file) as a resumable queue, and
    its report beside peers' curves: `gdi benchmark run GRID`, `gdi benchmark status GRID`,
    `gdi benchmark report GRID`, `gdi benchmark keep GRID` (docs/benchmark-grids.md)."""
    return command
