"""The paper's ablation study on MinAtar: a grid of ``gdi train`` runs, games × presets × seeds at
one frame budget (Sec. "Ablation Study"; App. "Ablation Study", Tab. "Summary of the ablation
groups": GDI-I³ the baseline group, w/o E = GDI-I⁰, GDI-I¹ for Λ, GDI-H³ for π_θ; every other
setting shared).

Each run is ``python -m gdi.cli train --backend inline`` in its own process with one torch
thread, into ``<root>/<game>__<preset>__<seed>``; ``--parallel N`` runs N at a time (one per
free core). Why inline: one process per run keeps a run on one core with no inter-process
traffic, and a seeded inline run is exactly reproducible and resumes exactly (the collector and
the environments are in its checkpoints). Measured on the 2-core development VM under load,
15 s of ``minatar:breakout`` GDI-I³ each, process start included: inline 1,239 frames per
CPU-second, ``local`` with one actor 356 (two processes, one of them often waiting on the
other); a ``local`` run would also need two cores to run at its own speed.

The grid is resumable: a run whose folder holds an evaluation at (or past) the frame budget is
done and skipped; a run with a checkpoint short of it continues with
``gdi train --resume``; a folder with no checkpoint (a run that died before its first one) is
moved aside to ``<name>.failed-<k>`` (never deleted) and started again. Ctrl-C or SIGTERM stops
every running training (each saves a checkpoint); the same command later continues the grid.
Logs go to ``<root>/logs/<run>.log``.

A finished run's ``meta.jsonl`` is compressed to ``meta.jsonl.gz`` so that a grid under
``benchmarks/results/`` can be committed: git keeps each finished run's config, evaluations,
metrics and λ log, not its checkpoints (``benchmarks/results/.gitignore``). A grid longer than
one session (or machine) continues from the committed runs: the runs that were not finished
start again.

Usage::

    .venv/bin/python -m benchmarks.minatar_ablation --games breakout,asterix \\
        --presets gdi-i3,gdi-i1,gdi-i0,gdi-h3 --seeds 0,1,2 --frames 2000000 \\
        --root runs/minatar-ablation --parallel 2 --observation-reservoir 1000
    .venv/bin/python -m benchmarks.minatar_ablation ... --dry-run     # print the commands only
    .venv/bin/python -m benchmarks.minatar_report --root runs/minatar-ablation

A cell (``--presets``) is a preset name, ``PRESET@λ`` for a fixed-λ preset with its λ moved
(``gdi-i0@3/3/1``) or ``PRESET+key=value`` for a preset with a setting of its E changed
(``gdi-i3+ucb_c=0.25``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gdi.runtime.run_folder.checkpoint import list_checkpoints

DEFAULT_GAMES = ("breakout", "asterix")
DEFAULT_PRESETS = ("gdi-i3", "gdi-i1", "gdi-i0", "gdi-h3")
RESERVOIR_PRESETS = ("gdi-i3", "gdi-i1")  # the paper's t-SNE compares GDI-I³ with GDI-I¹
Status = Literal["todo", "done", "resume", "restart"]


#: Marks a cell that fixes λ: ``gdi-i0@10/10/1`` is the preset gdi-i0 (E = identity) with its one
#: λ set to (1/τ₁, 1/τ₂, ε) = (10, 10, 1) (``--set meta_kwargs.value=[10,10,1]``).
AT = "@"
#: Marks a setting of a cell's E: ``gdi-i3+ucb_c=0.25`` is the preset gdi-i3 with
#: ``--set meta_kwargs.ucb_c=0.25`` (several: ``gdi-i3+ucb_c=0.25+num_bandits=3``).
PLUS = "+"


@dataclass(frozen=True)
class Cell:
    """A cell of the grid: a preset, the λ it fixes (``@``) and settings of its E (``+``)."""

    preset: str
    fixed_lambda: tuple[float, ...] | None = None
    meta_settings: tuple[tuple[str, Any], ...] = ()
    """(key of ``meta_kwargs``, value) pairs, sorted by key."""

    def __str__(self) -> str:
        text = self.preset
        if self.fixed_lambda is not None:
            text += AT + "/".join(f"{v:g}" for v in self.fixed_lambda)
        for key, value in self.meta_settings:
            text += f"{PLUS}{key}={_setting_text(value)}"
        return text


def _setting_text(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return json.dumps(value, separators=(",", ":"))


def parse_cell(cell: str) -> Cell:
    """``PRESET``, ``PRESET@v1/v2/...`` and ``PRESET[@λ]+key=value...`` → a Cell. A malformed λ
    or setting raises ValueError naming the cell."""
    head, *settings = cell.split(PLUS)
    preset, _, lam = head.partition(AT)
    values = None
    if lam:
        try:
            values = tuple(float(v) for v in lam.split("/"))
        except ValueError:
            raise ValueError(f"cell {cell!r}: the λ after {AT!r} must be numbers separated by "
                             "'/', e.g. gdi-i0@10/10/1") from None
    meta = {}
    for setting in settings:
        key, equals, raw = setting.partition("=")
        try:
            value = json.loads(raw) if key and equals else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            raise ValueError(f"cell {cell!r}: a setting of E after {PLUS!r} is KEY=VALUE with a "
                             f"number or JSON value, e.g. gdi-i3{PLUS}ucb_c=0.25; got {setting!r}")
        if key in meta:
            raise ValueError(f"cell {cell!r}: E setting {key!r} is given twice")
        meta[key] = value
    return Cell(preset, values, tuple(sorted(meta.items())))


def _canonical(value: Any) -> Any:
    """A config value as config.json stores it (tuples as lists), for comparisons."""
    return json.loads(json.dumps(value))


#: The arguments of E that a named search (``gdi train --search``) sets.
SEARCH_KEYS = ("transforms", "ranges", "accuracies")


def _resolved_for(config: dict, search: str | None):
    from gdi.presets import resolve_config

    return resolve_config(str(config["preset"]), config["env"], scale=config.get("scale"),
                          search=search)


def _box(config: dict) -> dict:
    """The part of a config's E that a named search sets (empty for an E over no box)."""
    meta = _canonical(config.get("meta_kwargs", {}))
    return {key: meta[key] for key in SEARCH_KEYS if key in meta} if "ranges" in meta else {}


def _cell_box(config: dict, run: GridRun) -> dict:
    """The box a run of this grid holds: its search's, with what its cell sets of E on top
    (``gdi-i3+accuracies=[...]`` changes the box's blocks)."""
    meta = {**_resolved_for(config, run.search).meta_kwargs, **dict(run.cell.meta_settings)}
    return _box({"meta_kwargs": meta})


def search_of(config: dict) -> str | None:
    """The named search (``gdi train --search``) whose box a run's E holds, or None where it
    holds its scale's own box (or searches none, or a box no name gives). ``config.json``
    keeps the box, not the name, so the name is read back from the box's coordinates and range
    (a cell may change its blocks, ``+accuracies``); where a name gives the scale's own box
    (``log1p-1000`` on ``gym:``) the two are one search."""
    from gdi.presets import SEARCHES

    box = _box(config)
    if not box:
        return None

    def holds(search: str | None) -> bool:  # a cell may change the blocks, not the box
        given = _box(_resolved_for(config, search).to_dict())
        return all(given.get(key) == box.get(key) for key in ("transforms", "ranges"))

    if holds(None):
        return None
    return next((name for name in SEARCHES if holds(name)), None)


def cell_of(config: dict) -> str:
    """The grid cell a run's config belongs to: its preset, with ``@λ`` when the run fixed λ at
    another value than its preset's and ``+key=value`` for each setting of its E that differs
    from the preset's on that environment and scale under the run's search (``search_of``), or
    from E's own default where the preset sets none (what the report groups seeds by). A grid
    holds one search, so E and its uniform control under ``--search log1p-1000`` are the cells
    ``gdi-i3`` and ``gdi-i3-uniform`` of that grid."""
    import inspect

    from gdi.meta import CONTROLLERS

    preset = str(config["preset"])
    meta = config.get("meta_kwargs", {})
    resolved = _resolved_for(config, search_of(config))
    signature = inspect.signature(CONTROLLERS[resolved.meta_controller])
    default = _canonical({**{name: p.default for name, p in signature.parameters.items()
                             if p.default is not inspect.Parameter.empty},
                          **resolved.meta_kwargs})
    lam = None
    if config.get("meta_controller") == "fixed":
        value = tuple(float(v) for v in meta.get("value", ()))
        if value != tuple(float(v) for v in default.get("value", ())):
            lam = value
    settings = tuple(sorted((key, value) for key, value in _canonical(meta).items()
                            if key != "value" and default.get(key, _MISSING) != value))
    return str(Cell(preset, lam, settings))


_MISSING = object()


@dataclass(frozen=True)
class GridRun:
    """One cell of the grid and the folder it trains into. ``preset`` is the cell: a preset
    name, ``PRESET@λ`` for a fixed-λ preset with its λ set, and ``+key=value`` for settings of
    its E (``parse_cell``)."""

    game: str
    preset: str
    seed: int
    frames: int
    root: Path
    search: str | None = None
    """E's named search for the grid's runs (``--search``; None: the scale's)."""
    learning: str | None = None
    """T's reading for the grid's runs (``--learning``; None: the scale's)."""

    @property
    def env(self) -> str:
        """``minatar:<game>``; a game given as a full spec (``gym:CartPole-v1``) is kept."""
        return self.game if ":" in self.game else f"minatar:{self.game}"

    @property
    def cell(self) -> Cell:
        return parse_cell(self.preset)

    @property
    def base_preset(self) -> str:
        return self.cell.preset

    @property
    def fixed_lambda(self) -> tuple[float, ...] | None:
        return self.cell.fixed_lambda

    @property
    def name(self) -> str:
        cell = self.preset.replace("/", "_")  # a λ's '/' would make a subfolder
        return f"{self.game.replace(':', '-')}__{cell}__{self.seed}"

    @property
    def run_dir(self) -> Path:
        return self.root / self.name


def grid_runs(games: Sequence[str], presets: Sequence[str], seeds: Sequence[int], frames: int,
              root: Path, search: str | None = None,
              learning: str | None = None) -> list[GridRun]:
    """Every (game, preset, seed), seed-major: a grid stopped half-way holds complete seeds
    (all games and presets of seed 0 first)."""
    if frames < 1:
        raise ValueError(f"--frames must be positive, got {frames}")
    return [GridRun(g, p, s, frames, Path(root), search, learning)
            for s in seeds for g in games for p in presets]


def _checkpoint_frames(run_dir: Path) -> int | None:
    found = list_checkpoints(run_dir)
    return int(found[-1].stem.split("_")[1]) if found else None


def _eval_frames(run_dir: Path) -> int | None:
    frames = []
    for path in (run_dir / "eval").glob("*.json"):
        try:
            frames.append(int(json.loads(path.read_text())["frames"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a file being written, or not an eval file: not evidence of completion
    return max(frames) if frames else None


def run_status(run: GridRun) -> Status:
    """``todo`` (no folder), ``done`` (an evaluation at the budget: a finished run, whose
    checkpoints an archive need not keep), ``resume`` (a checkpoint short of it) or
    ``restart`` (a folder without checkpoint or config). A folder holding another grid's run
    (other preset, λ, E setting, search, T's reading, env, seed or budget) raises ValueError
    rather than being mixed into this grid."""
    path = run.run_dir
    if not path.exists():
        return "todo"
    config_path = path / "config.json"
    if not config_path.is_file():
        return "restart"
    config = json.loads(config_path.read_text())
    expected = {"preset": run.base_preset, "env": run.env, "seed": run.seed,
                "frames": run.frames}
    differs = {k: (config.get(k), v) for k, v in expected.items() if config.get(k) != v}
    if not differs:
        from gdi.presets import learning_for, scale_for

        saved = config.get("learning", "paper")  # saved before readings had names: the paper's
        wanted = learning_for(scale_for(config["env"], config.get("scale")), run.learning)
        if saved != wanted:
            differs["learning"] = (saved, wanted)
    if not differs and _box(config) != _cell_box(config, run):
        differs["search"] = (search_of(config), run.search)
    if not differs and cell_of(config) != str(run.cell):
        differs["cell"] = (cell_of(config), str(run.cell))
    if differs:
        raise ValueError(
            f"{path} holds a different run {differs} (found, wanted): choose another --root "
            "or the grid's original settings"
        )
    evaluated = _eval_frames(path)
    if evaluated is not None and evaluated >= run.frames:
        return "done"  # the final evaluation is written after training reached the budget
    if _checkpoint_frames(path) is None:
        return "restart"
    return "resume"


#: What a finished run keeps in a committed archive of the grid (``benchmarks/results/``): the
#: config, evaluations, metrics and λ log; its checkpoints, TensorBoard events and lock file
#: stay on the machine that trained it (``benchmarks/results/.gitignore``).
META_LOG = "meta.jsonl"


def compress_meta_log(run_dir: Path) -> Path | None:
    """Replace a finished run's ``meta.jsonl`` by ``meta.jsonl.gz`` (written to a temporary
    name first; gdi's readers take either). A 1M-frame bandit run's log shrinks about 5×, a
    fixed-λ run's about 30×. Returns the compressed file, None when there is nothing to do."""
    import gzip

    log = run_dir / META_LOG
    if not log.is_file():
        return None
    packed = log.with_name(META_LOG + ".gz")
    partial = packed.with_name(packed.name + ".partial")
    partial.write_bytes(gzip.compress(log.read_bytes(), mtime=0))
    partial.replace(packed)
    log.unlink()
    return packed


def train_command(run: GridRun, status: Status, *, backend: str = "inline",
                  reservoir: int = 0, reservoir_presets: Sequence[str] = RESERVOIR_PRESETS,
                  overrides: Sequence[str] = ()) -> list[str]:
    """The ``gdi train`` command of a run in the given status (``resume`` continues the saved
    config; the others start it), with the run's named search of E and reading of T
    (``gdi train --search``, ``--learning``: ``GridRun.search``, ``GridRun.learning``)."""
    base = [sys.executable, "-m", "gdi.cli", "train"]
    if status == "resume":
        return [*base, "--resume", str(run.run_dir), "--no-report"]
    if status == "done":
        raise ValueError(f"{run.name} is done; nothing to run")
    settings = ["torch_threads=1", "num_actors=1"]
    if reservoir > 0 and run.preset in reservoir_presets:
        settings.append(f"observation_reservoir={reservoir}")
    if run.fixed_lambda is not None:
        settings.append(f"meta_kwargs.value={list(run.fixed_lambda)}".replace(" ", ""))
    settings += [f"meta_kwargs.{key}={json.dumps(value, separators=(',', ':'))}"
                 for key, value in run.cell.meta_settings]
    named = ["--search", run.search] if run.search is not None else []
    if run.learning is not None:
        named += ["--learning", run.learning]
    return [*base, "--preset", run.base_preset, "--env", run.env, "--frames", str(run.frames),
            "--seed", str(run.seed), "--backend", backend, "--run-dir", str(run.run_dir),
            *named, "--no-report", "--set", *settings, *overrides]


def move_aside(run_dir: Path) -> Path:
    """Rename a broken run folder to ``<name>.failed-<k>`` (the first k free)."""
    k = 1
    while (target := run_dir.with_name(f"{run_dir.name}.failed-{k}")).exists():
        k += 1
    run_dir.rename(target)
    return target


@dataclass
class _Running:
    run: GridRun
    process: subprocess.Popen
    started: float
    log: object


def run_grid(jobs: list[tuple[GridRun, list[str]]], parallel: int, log_dir: Path,
             echo=print, on_finished=None) -> dict[str, int]:
    """Run the commands, ``parallel`` at a time; returns each run's exit code. SIGINT/SIGTERM
    forward SIGTERM to the running trainings (each checkpoints) and wait for them.
    ``on_finished(run)`` is called as each run exits with code 0."""
    if parallel < 1:
        raise ValueError(f"--parallel must be >= 1, got {parallel}")
    log_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    pending = list(jobs)
    running: list[_Running] = []
    codes: dict[str, int] = {}
    stopping = False

    def stop(signum, _frame):
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    total, started = len(jobs), 0
    try:
        while pending or running:
            while pending and len(running) < parallel and not stopping:
                run, command = pending.pop(0)
                log = open(log_dir / f"{run.name}.log", "a")  # closed when it ends
                log.write(f"$ {shlex.join(command)}\n")
                log.flush()
                process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                           env=env, start_new_session=True)
                started += 1
                echo(f"[{started}/{total}] started {run.name}")
                running.append(_Running(run, process, time.monotonic(), log))
            if stopping:
                for job in running:
                    if job.process.poll() is None:
                        job.process.send_signal(signal.SIGTERM)
                pending.clear()
            time.sleep(0.5)
            for job in list(running):
                code = job.process.poll()
                if code is None:
                    continue
                running.remove(job)
                job.log.close()
                codes[job.run.name] = code
                if code == 0 and on_finished is not None:
                    on_finished(job.run)
                minutes = (time.monotonic() - job.started) / 60
                outcome = "finished" if code == 0 else f"failed (exit {code}, see its log)"
                echo(f"{job.run.name}: {outcome} after {minutes:.1f} min")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return codes


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.minatar_ablation",
        description="Run the ablation grid (games × presets × seeds) on MinAtar.",
    )
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES),
                        help="MinAtar games, comma-separated (breakout, asterix, freeway, "
                             "seaquest, space_invaders), or full env specs (gym:CartPole-v1)")
    parser.add_argument("--presets", default=",".join(DEFAULT_PRESETS),
                        help="presets, comma-separated (`gdi presets`); PRESET@v1/v2/v3 fixes "
                             "the λ of a fixed-λ preset, e.g. gdi-i0@10/10/1")
    parser.add_argument("--seeds", default="0,1,2", help="seeds, comma-separated")
    parser.add_argument("--frames", type=int, default=2_000_000, help="frame budget per run")
    parser.add_argument("--root", type=Path, default=Path("runs/minatar-ablation"),
                        help="folder of the grid's run folders")
    parser.add_argument("--parallel", type=int, default=1,
                        help="runs at a time (one core each: at most the free cores)")
    parser.add_argument("--backend", choices=("inline", "local"), default="inline",
                        help="gdi train backend of every run (inline: one core per run)")
    parser.add_argument("--observation-reservoir", type=int, default=0,
                        help="states kept per training stage for `gdi analyze richness` in "
                             "the runs of --reservoir-presets (0: none)")
    parser.add_argument("--reservoir-presets", default=",".join(RESERVOIR_PRESETS),
                        help="presets whose runs keep observations")
    parser.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                        help="config overrides for every new run (gdi train --set)")
    parser.add_argument("--search", default=None,
                        help="E's inverse-temperature search for every new run (gdi train "
                             "--search: table, log1p-50, log1p-1000)")
    parser.add_argument("--learning", default=None,
                        help="T's reading for every new run (gdi train --learning: paper, "
                             "policy-head; default: the scale's)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each run's status and command, run nothing")
    args = parser.parse_args(argv)
    for name in ("games", "presets", "seeds", "reservoir_presets"):
        setattr(args, name, [s.strip() for s in getattr(args, name).split(",") if s.strip()])
    try:
        args.seeds = [int(s) for s in args.seeds]
    except ValueError:
        parser.error(f"--seeds takes integers, got {','.join(args.seeds)}")
    return args


def plan(args: argparse.Namespace) -> list[tuple[GridRun, Status, list[str] | None]]:
    """Each run of the grid with its status and the command that would run it (None: done)."""
    from gdi.presets import learning_for, resolve_config

    learning_for("minatar", args.learning)  # an unknown learning fails here, as a bad cell does
    for text in args.presets:  # an unknown name or a bad λ fails here, not in 24 subprocesses
        cell = parse_cell(text)
        config = resolve_config(cell.preset, "minatar:breakout")
        meta = {**config.meta_kwargs, **dict(cell.meta_settings)}
        if cell.fixed_lambda is not None:
            names = config.meta_kwargs.get("index_names", ())
            if config.meta_controller != "fixed":
                raise ValueError(f"cell {text!r}: only a preset with a fixed λ (E = identity, e.g. "
                                 f"gdi-i0) takes {AT}λ; {cell.preset} has E "
                                 f"{config.meta_controller!r}")
            if len(cell.fixed_lambda) != len(names):
                raise ValueError(f"cell {text!r}: λ has {len(cell.fixed_lambda)} values, "
                                 f"{cell.preset}'s Λ has {len(names)} ({'/'.join(names)})")
            meta["value"] = cell.fixed_lambda
        try:  # λ in the space's bounds; E's settings known to E and valid
            resolve_config(cell.preset, "minatar:breakout", meta_kwargs=meta)
        except ValueError as err:
            raise ValueError(f"cell {text!r}: {err}") from None
    rows = []
    for run in grid_runs(args.games, args.presets, args.seeds, args.frames, args.root,
                         args.search, args.learning):
        status = run_status(run)
        command = None if status == "done" else train_command(
            run, status, backend=args.backend, reservoir=args.observation_reservoir,
            reservoir_presets=args.reservoir_presets, overrides=args.set,
        )
        rows.append((run, status, command))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        rows = plan(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    counts = {s: sum(1 for _, status, _ in rows if status == s)
              for s in ("done", "resume", "restart", "todo")}
    print(f"grid {args.root}: {len(rows)} runs — {counts['done']} done, {counts['resume']} to "
          f"resume, {counts['restart']} to restart, {counts['todo']} to start")
    if args.dry_run:
        for run, status, command in rows:
            shown = shlex.join(command) if command else "(skipped)"
            print(f"{status:>7}  {run.name}: {shown}")
        return 0
    jobs = []
    for run, status, command in rows:
        if status == "restart":
            print(f"{run.run_dir} has no checkpoint; moved aside to {move_aside(run.run_dir)}")
        if command is not None:
            jobs.append((run, command))

    def archive(run: GridRun) -> None:
        if run_status(run) == "done":
            compress_meta_log(run.run_dir)

    for run, status, _ in rows:  # runs finished by an earlier invocation
        if status == "done":
            archive(run)
    codes = run_grid(jobs, args.parallel, args.root / "logs", on_finished=archive)
    failed = sorted(name for name, code in codes.items() if code != 0)
    remaining = [run for run, _, _ in rows if run_status(run) != "done"]
    if failed:
        print(f"failed: {', '.join(failed)} (logs in {args.root / 'logs'})")
    if remaining:
        print(f"{len(remaining)} run(s) not done; run the same command again to continue")
        return 1
    print(f"grid done; report: .venv/bin/python -m benchmarks.minatar_report --root {args.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
