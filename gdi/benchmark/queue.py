"""Running a grid: every run that is not done, as a ``gdi train`` process of its own (a new
run into its folder, or ``--resume`` from its checkpoint), ``parallel`` at a time on this
machine or each as a task on a Ray cluster (Ray places them by their CPUs).

A run's output goes to ``<out>/logs/<setting>/<folder name>.log`` (appended to, so a resumed
run's log keeps its earlier part). A stop of the queue (Ctrl-C, SIGTERM, SIGHUP) is passed to
the runs, which checkpoint and stop; running the queue again continues every one of them.
Whenever a run stops, its records are kept (the setting's ``records``) and, with the setting's
``carry``, its newest checkpoint beside them, from which another machine's queue rebuilds the
run folder and resumes.

A peer's runs (``--peer NAME``, on this machine) are its grid ``command``, run in the grid
file's folder, environment by environment and seed by seed beside the settings' runs; one is
done when its ``curve.csv`` reaches the target, and the command itself resumes and keeps it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from gdi.benchmark.curves import peer_frames
from gdi.benchmark.grid import Cell, Grid, Peer
from gdi.benchmark.records import (
    carried_checkpoint,
    carry_checkpoint,
    drop_carried,
    keep_records,
    restore_run,
)
from gdi.benchmark.state import (
    CARRIED,
    DONE,
    KEPT,
    NEW,
    RESUMABLE,
    RUNNING,
    UNSTARTED,
    CellState,
    grid_states,
    move_aside,
    peer_log,
    peer_states,
)
from gdi.config import PLACEMENT_FIELDS, Config, apply_overrides

#: Seconds between looks at the running processes.
POLL_S = 0.5
#: Exit codes of a run that was stopped by a signal (it checkpointed): 128 + the signal.
STOPPED_CODES = {130, 143, 129}


def cell_config(cell: Cell, grid: Grid) -> Config:
    """The config ``gdi train`` builds for ``cell`` (the same functions, the same order)."""
    from gdi.presets import resolve_config

    return apply_overrides(
        resolve_config(cell.setting.preset, cell.env, cell.setting.scale, None,
                       cell.setting.learning, frames=grid.frames, seed=cell.seed),
        cell.setting.overrides)


def check_folder_config(cell: Cell, grid: Grid, folder: Path) -> None:
    """Refuse a folder (the run's, or its kept records) whose run is not this cell's (another
    setting, env or seed): resuming it would file another run's curve under this cell.
    Placement fields and the budget may differ (a resume changes them)."""
    from gdi.runtime.run_folder.run_dir import read_config

    saved, _ = read_config(folder)
    wanted = cell_config(cell, grid)
    allowed = {"frames", *PLACEMENT_FIELDS}
    differ = [f.name for f in dataclasses.fields(Config) if f.name not in allowed
              and getattr(saved, f.name) != getattr(wanted, f.name)]
    if differ:
        shown = ", ".join(f"{name} ({getattr(saved, name)!r} there, {getattr(wanted, name)!r} "
                          "in the grid)" for name in differ[:4])
        raise ValueError(f"{folder} holds another run than {cell.name}: {shown}"
                         f"{f' and {len(differ) - 4} more' if len(differ) > 4 else ''}; move it "
                         "away or change the setting's folder pattern")


def train_argv(state: CellState, grid: Grid) -> list[str]:
    """The ``gdi train`` command of a run that is not done."""
    cell = state.cell
    base = [sys.executable, "-m", "gdi", "train"]
    stop = [] if grid.stop_at is None else ["--stop-at", str(grid.stop_at)]
    if state.state == RESUMABLE:
        return [*base, "--resume", str(cell.folder), "--frames", str(grid.frames), *stop,
                "--no-report"]
    setting = cell.setting
    argv = [*base, "--preset", setting.preset, "--env", cell.env, "--seed", str(cell.seed),
            "--frames", str(grid.frames), "--run-dir", str(cell.folder), *stop, "--no-report"]
    if setting.scale:
        argv += ["--scale", setting.scale]
    if setting.learning:
        argv += ["--learning", setting.learning]
    if setting.overrides:
        argv += ["--set", *setting.overrides]
    return argv


def log_path(cell: Cell, grid: Grid) -> Path:
    return grid.out / "logs" / cell.setting.name / f"{cell.folder.name}.log"


@dataclass(frozen=True)
class PeerRun:
    """One run of a peer that the queue makes with the peer's command."""

    peer: Peer
    env: str
    seed: int
    folder: Path
    frames: int = 0  # on its curve when the queue looked

    @property
    def name(self) -> str:
        return f"{self.peer.name}/{self.env}/seed {self.seed}"


@dataclass
class QueueResult:
    """What a pass of the queue did."""

    done_before: list[Cell | PeerRun] = field(default_factory=list)
    finished: list[Cell | PeerRun] = field(default_factory=list)
    failed: list[tuple[Cell | PeerRun, int]] = field(default_factory=list)
    stopped: list[Cell | PeerRun] = field(default_factory=list)
    moved: list[tuple[Path, Path]] = field(default_factory=list)
    elsewhere: list[tuple[Cell | PeerRun, str]] = field(default_factory=list)
    signal: int | None = None


def prepare(grid: Grid, say: Callable[[str], None]) -> tuple[list[CellState], QueueResult]:
    """The runs to start or resume, after checking every existing folder against the grid and
    moving unstarted ones aside."""
    result = QueueResult()
    todo = []
    for cell in grid.cells():  # a bad preset, scale or override is said before anything runs
        cell_config(cell, grid)
    for state in grid_states(grid):
        if state.source is not None:
            check_folder_config(state.cell, grid, state.source)
        if state.state in (DONE, KEPT):
            result.done_before.append(state.cell)
            records = state.cell.records
            if records is not None and carried_checkpoint(records) is not None:
                # Done since it was carried (its queue was killed before it could say so):
                # the records are enough.
                if state.state == DONE:
                    keep_records(state.cell.folder, records)
                drop_carried(records)
            continue
        if state.state == NEW and state.kept_frames:
            say(f"{state.cell.name}: its records in {state.cell.records} reach "
                f"{state.kept_frames:,} frames, but there is no run folder to resume: starting "
                "again (its records are replaced when it stops)")
        if state.state == RUNNING:
            result.elsewhere.append((state.cell, state.holder))
            say(f"{state.cell.name}: already running in process {state.holder}; left to it")
            continue
        if state.state == CARRIED:
            checkpoint = restore_run(state.cell.records, state.cell.folder)
            say(f"{state.cell.name}: rebuilt {state.cell.folder} from its records in "
                f"{state.cell.records} (checkpoint {checkpoint.name} carried there)")
            state = CellState(state.cell, RESUMABLE, state.frames)
        if state.state == UNSTARTED:
            moved = move_aside(state.cell.folder)
            result.moved.append((state.cell.folder, moved))
            say(f"{state.cell.name}: no checkpoint to resume in {state.cell.folder}; moved it "
                f"to {moved.name} and starting again")
            state = CellState(state.cell, NEW, 0)
        todo.append(state)
    return todo, result


class _Stop:
    """The signal that asked the queue to stop, if any; the handlers pass it to the runs."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.signal: int | None = None
        self.previous = {}

    def __enter__(self) -> _Stop:
        for sig in self.SIGNALS:
            self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.signal = signum

    def __exit__(self, *exc) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


@dataclass
class _Job:
    """A process the local queue starts: a gdi run or a peer's."""

    run: Cell | PeerRun
    argv: list[str]
    log: Path
    started: str  # what the queue says as it starts it
    finish: Callable[[int, bool], None]  # its exit code; whether the queue asked it to stop
    order: tuple = ()  # environment, seed, then settings before peers
    cwd: Path | None = None
    stop_with: int | None = None  # the signal that stops it (None: the one the queue got)
    lock_log: bool = False  # hold a lock on its log while it runs (a peer's: it has no other)


def _cell_job(state: CellState, grid: Grid, result: QueueResult,
              say: Callable[[str], None]) -> _Job:
    cell, log = state.cell, log_path(state.cell, grid)
    how = "resuming at" if state.state == RESUMABLE else "starting"
    return _Job(cell, train_argv(state, grid), log,
                f"{cell.name}: {how} {state.frames:,} frames -> {cell.folder} (log {log})",
                lambda code, told: _record(result, cell, code, grid, say, log),
                (grid.envs.index(cell.env), cell.seed, 0,
                 [s.name for s in grid.settings].index(cell.setting.name)))


def peer_runs(grid: Grid, names: Sequence[str], result: QueueResult,
              say: Callable[[str], None]) -> list[PeerRun]:
    """The named peers' runs that are not done; the done ones, and those another queue is
    making, go in ``result``."""
    todo = []
    by_name = {peer.name: peer for peer in grid.peers}
    for state in peer_states(grid):
        if state.peer in names:
            run = PeerRun(by_name[state.peer], state.env, state.seed, state.folder, state.frames)
            if state.state == RUNNING:
                _elsewhere(result, run, peer_log(grid, state.peer, run.env, run.seed), say)
            else:
                (result.done_before if state.state == DONE else todo).append(run)
    return todo


def _elsewhere(result: QueueResult, run: PeerRun, log: Path, say: Callable[[str], None]) -> None:
    result.elsewhere.append((run, "another process"))
    say(f"{run.name}: already running (another process holds its log {log}); left to it")


def _peer_job(run: PeerRun, grid: Grid, result: QueueResult,
              say: Callable[[str], None]) -> _Job:
    log = peer_log(grid, run.peer.name, run.env, run.seed)
    how = f"resuming at {run.frames:,} frames" if run.frames else "starting"
    return _Job(run, run.peer.argv(run.env, run.seed, run.folder, grid.target), log,
                f"{run.name}: {how} with its command -> {run.folder} (log {log})",
                lambda code, told: _record_peer(result, run, code, told, grid, say, log),
                (grid.envs.index(run.env), run.seed, 1,
                 [p.name for p in grid.peers].index(run.peer.name)),
                cwd=grid.path.parent,
                # SIGTERM, whatever stopped the queue: the conventional "checkpoint and stop"
                # (appo_peer.py keeps a checkpoint on SIGTERM and SIGINT, not on SIGHUP).
                stop_with=signal.SIGTERM, lock_log=True)


def run_grid(grid: Grid, parallel: int | None = None, ray_address: str | None = None,
             cpus_per_run: float = 2.0, peers: Sequence[str] = (), peers_only: bool = False,
             say: Callable[[str], None] = print) -> QueueResult:
    """Every run of ``grid`` that is not done (``gdi benchmark run``): ``parallel`` at a time
    on this machine (default: the grid's ``parallel``), or each as a Ray task of
    ``cpus_per_run`` CPUs on the cluster at ``ray_address``; with ``peers``, those peers' runs
    too (their grid ``command``, on this machine only; one name or several), and with
    ``peers_only`` those alone. A closed setting's runs are never run (``say`` names it). Bad
    input is refused before any run starts."""
    peers = grid.runnable_peers((peers,) if isinstance(peers, str) else peers)  # "APPO" is one
    if peers and ray_address is not None:
        raise ValueError(f"--peer {' '.join(peers)} with --ray-address: a peer's command runs "
                         "on this machine only; allowed: one of the two")
    if peers_only and not peers:
        raise ValueError("--peers-only without --peer: no run to make; allowed: --peers-only "
                         "with --peer NAME")
    for closed in (s for s in grid.settings if s.closed is not None and not peers_only):
        say(f"{closed.name}: closed ({closed.closed}): its runs are reported, not run")
    grid = replace(grid, settings=()) if peers_only else grid.open()
    if parallel is not None and parallel < 1:
        raise ValueError(f"--parallel {parallel}: allowed: at least 1")
    if cpus_per_run <= 0:
        raise ValueError(f"--cpus-per-run {cpus_per_run}: allowed: a positive number")
    if ray_address is not None:
        return run_ray(grid, ray_address, cpus_per_run, say)
    return run_local(grid, parallel or grid.parallel, say, peers)


def run_local(grid: Grid, parallel: int, say: Callable[[str], None],
              peers: Sequence[str] = ()) -> QueueResult:
    """Every run that is not done, ``parallel`` at a time, as processes of this machine; with
    ``peers``, those peers' runs too, each environment's and seed's after the settings'."""
    todo, result = prepare(grid, say)
    jobs = [_cell_job(state, grid, result, say) for state in todo]
    if peers:
        jobs += [_peer_job(run, grid, result, say)
                 for run in peer_runs(grid, peers, result, say)]
        jobs.sort(key=lambda job: job.order)
    running: dict[subprocess.Popen, tuple[_Job, object]] = {}
    with _Stop() as stop:
        while jobs or running:
            while jobs and len(running) < parallel and stop.signal is None:
                job = jobs.pop(0)
                job.log.parent.mkdir(parents=True, exist_ok=True)
                handle = job.log.open("a", encoding="utf-8")
                if job.lock_log:
                    try:  # held by the command too (its stdout), for as long as it lives
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:  # another queue began it since this one looked
                        handle.close()
                        _elsewhere(result, job.run, job.log, say)
                        continue
                say(job.started)
                try:
                    # A session of its own: a Ctrl-C at the terminal reaches the queue alone,
                    # which passes it on once, so that no run sees it twice.
                    process = subprocess.Popen(job.argv, stdout=handle,
                                               stderr=subprocess.STDOUT,
                                               start_new_session=True, cwd=job.cwd)
                except OSError as err:  # a program gone since the queue began: that run fails
                    handle.close()
                    say(f"could not start {job.argv[0]} ({err})")
                    job.finish(127, False)
                    continue
                running[process] = (job, handle)
            if stop.signal is not None:
                for process, (job, _) in running.items():
                    if process.poll() is None and not getattr(process, "told", False):
                        process.send_signal(job.stop_with or stop.signal)
                        process.told = True
                jobs.clear()
            time.sleep(POLL_S)
            for process in [p for p in running if p.poll() is not None]:
                job, handle = running.pop(process)
                handle.close()
                job.finish(process.returncode, getattr(process, "told", False))
        result.signal = stop.signal
    return result


def keep_cell(cell: Cell, done: bool, say: Callable[[str], None]) -> None:
    """Keep a stopped or finished run's records (its setting's ``records``) and, with the
    setting's ``carry``, its newest checkpoint while it is short of the target (deleted once
    it is done)."""
    if cell.records is None or not (cell.folder / "config.json").is_file():
        return
    keep_records(cell.folder, cell.records)
    if not cell.setting.carry:
        return
    if done:
        drop_carried(cell.records)
    elif (carried := carry_checkpoint(cell.folder, cell.records)) is not None:
        say(f"{cell.name}: carried {carried.name} beside its records in {cell.records} "
            "(with them, another machine resumes the run there)")


def _keep_or_say(cell: Cell, done: bool, say: Callable[[str], None]) -> None:
    """:func:`keep_cell`, a failure of which (a full disk) is said in one line: the queue goes
    on supervising its other runs, and the run's folder still holds everything."""
    try:
        keep_cell(cell, done, say)
    except OSError as err:
        say(f"{cell.name}: its records could not be kept in {cell.records} ({err}); its run "
            f"folder {cell.folder} holds them: gdi benchmark keep copies them later")


def _record(result: QueueResult, cell: Cell, code: int, grid: Grid,
            say: Callable[[str], None], log: Path) -> None:
    _keep_or_say(cell, code == 0, say)
    if code == 0:
        result.finished.append(cell)
        say(f"{cell.name}: done ({grid.target:,} frames)")
    elif code in STOPPED_CODES or -code in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        result.stopped.append(cell)
        say(f"{cell.name}: stopped with a checkpoint (exit {code})")
    else:
        result.failed.append((cell, code))
        say(f"{cell.name}: failed (exit {code}); see {log}")


def _record_peer(result: QueueResult, run: PeerRun, code: int, told: bool, grid: Grid,
                 say: Callable[[str], None], log: Path) -> None:
    """A peer's run ended: done when its curve reached the target, whatever its exit code (a
    peer may stop at its budget and at a signal alike)."""
    frames = peer_frames(run.folder)
    if frames >= grid.target:
        result.finished.append(run)
        say(f"{run.name}: done ({frames:,} frames)")
    elif told:
        result.stopped.append(run)
        say(f"{run.name}: stopped at {frames:,} frames (exit {code}); its command resumes it")
    else:
        result.failed.append((run, code))
        say(f"{run.name}: ended at {frames:,} of {grid.target:,} frames (exit {code}); see {log}")


def run_ray(grid: Grid, address: str, cpus_per_run: float,
            say: Callable[[str], None]) -> QueueResult:
    """Every run that is not done as a Ray task needing ``cpus_per_run`` CPUs, placed by Ray
    on the cluster at ``address`` (``local``: a cluster of this machine). The run folders must
    be on storage every node sees (a shared file system), at the same path."""
    import ray

    todo, result = prepare(grid, say)
    if not todo:
        return result
    ray.init(address=None if address == "local" else address, log_to_driver=False,
             include_dashboard=False)

    @ray.remote(num_cpus=cpus_per_run, max_retries=0)
    def train_cell(argv: list[str], log: str) -> int:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as handle:
            process = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT)
            try:
                return process.wait()
            except BaseException:  # the task cancelled: the run checkpoints and stops
                process.send_signal(signal.SIGTERM)
                return process.wait()

    tasks = {}
    for state in todo:
        log = log_path(state.cell, grid)
        say(f"{state.cell.name}: queued on Ray at {state.frames:,} frames -> {state.cell.folder}")
        tasks[train_cell.remote(train_argv(state, grid), str(log))] = (state.cell, log)
    try:
        with _Stop() as stop:
            pending = list(tasks)
            while pending:
                ready, pending = ray.wait(pending, timeout=POLL_S)
                for ref in ready:
                    cell, log = tasks[ref]
                    try:
                        code = ray.get(ref)
                    except (ray.exceptions.RayTaskError, ray.exceptions.WorkerCrashedError,
                            ray.exceptions.TaskCancelledError) as err:
                        say(f"{cell.name}: the Ray task ended without a code ({type(err).__name__})")
                        code = 1
                    _record(result, cell, code, grid, say, log)
                if stop.signal is not None and pending:
                    for ref in pending:
                        ray.cancel(ref)  # KeyboardInterrupt in the task: it stops its run
                    stop_signal = stop.signal
                    ray.wait(pending, num_returns=len(pending), timeout=60)
                    for ref in pending:  # stopped with a checkpoint: kept as a local stop is
                        cell, log = tasks[ref]
                        result.stopped.append(cell)
                        _keep_or_say(cell, False, say)
                    result.signal = stop_signal
                    break
    finally:
        ray.shutdown()
    return result
