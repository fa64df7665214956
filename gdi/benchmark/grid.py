"""A benchmark grid, read from its TOML file: environments × seeds × settings, each cell one
``gdi train`` run in a folder of its own, and the peers whose curves the report puts beside
them. The file is the grid's whole definition; the run folders are its whole state.

    frames = 3_000_000            # each run's budget (gdi train --frames)
    stop_at = 1_000_000           # optional: stop there, the budget's schedules unchanged
    seeds = [0, 1]
    envs = ["minatar:breakout", "minatar:space_invaders"]
    out = "runs/my-grid"          # optional; relative paths are the grid file's
    parallel = 2                  # optional: runs at a time on this machine

    [defaults]                    # optional: keys every setting takes unless it says its own
    scale = "minatar"             # (any setting key but closed; a setting's own replaces it
                                  # whole: its set list is not merged with this one's)

    [settings.gdi]                # one table per setting; its name labels its runs
    preset = "gdi-i3"
    scale = "minatar"             # optional, as gdi train --scale
    learning = "policy-head"      # optional, as gdi train --learning
    set = ["eval_episodes=10"]    # optional, as gdi train --set
    folder = "{out}/{setting}/{env}-{seed}"   # optional: where each run lives
    records = "results/{setting}/{env}-{seed}"  # optional: where its records are kept
    carry = true                  # optional (needs records): an unfinished run's newest
                                  # checkpoint kept beside its records, to resume elsewhere
    closed = "superseded by ..."  # optional: its runs are reported as they ran, never run

    [peers.APPO]                  # optional: curves of another system (benchmarks/appo_peer.py)
    folder = "runs/appo/appo_ale_{rom}_seed{seed}"   # holds curve_episodes.csv
    seeds = [0, 1]                # optional: default the grid's
    command = ["python", "../appo_peer.py", "--env", "{spec}", "--seed", "{seed}",
               "--frames", "{frames}", "--records", "{folder}"]   # optional: how to run one

    [report]                      # optional
    window = 100                  # training episodes in the curve's trailing mean
    levels = { "minatar:breakout" = [10, 15] }   # frames to these scores, per environment

``records``: a folder per run that keeps its records (config, metrics, evaluations, the
episodes as ``meta.jsonl.gz``; no checkpoints, no TensorBoard events), written whenever the run
stops or ends, for a repository to hold the results while the run folders stay out of it. A
run whose folder is gone (another machine) counts as done from its records when they reach
the target.

``carry``: with ``records``, a run that stops short of the target also leaves its newest
checkpoint in ``<records>/carried/``, so that a machine that has the records alone (a clone of
the repository holding them) rebuilds the run folder from them and resumes where the run
stopped instead of starting again; the carried checkpoint is deleted once the run is done. For
runs longer than a machine lasts.

``defaults``: what the settings share, said once (a grid of ablations differs in one ``set``
each and would repeat the preset, scale, learning, folder, records and carry in every table).
A setting reads as its table laid over the defaults, key by key; the file stays the grid's
whole definition, so a setting's label and its runs are the same as if each table said all.

``closed``: why a setting is no longer run (a default superseded, an ablation ended). Its runs
stay in the grid's status and report as they ran; ``gdi benchmark run`` starts or resumes none
of them, and naming it with ``--setting`` is an error that gives the reason. A grid keeps its
history beside what replaced it without a plain ``run`` spending days on it.

``command`` (a peer's): the argv that makes one of its runs, or resumes it, until its
``curve.csv`` reaches the grid's target frames; ``gdi benchmark run --peer NAME`` runs those
that are not done, in the grid file's folder, beside the settings' runs. Placeholders:
``{spec}`` (the environment as the grid spells it, ``ale:BattleZone``), ``{env}``, ``{game}``,
``{rom}``, ``{seed}``, ``{frames}`` (the target: ``stop_at``, else ``frames``) and ``{folder}``
(the run's folder as an absolute path).

Relative paths (``out``, folder patterns) are taken from the grid file's folder, so that a grid
and its runs move together. Folder patterns may use ``{out}``, ``{setting}``, ``{env}`` (the spec with every run of
non-alphanumerics as ``-``: ``ale-Breakout``), ``{game}`` (``Breakout``, the spec's name
after the colon), ``{rom}`` (ale-py's ROM id, ``battle_zone``) and ``{seed}``.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

#: Keys each table of the file may hold, with what each must be.
TOP_KEYS = {"frames", "stop_at", "seeds", "envs", "out", "parallel", "defaults", "settings",
            "peers", "report"}
SETTING_KEYS = {"preset", "scale", "learning", "set", "folder", "records", "carry", "closed"}
#: A reason to close is the setting's own: closing every setting at once is deleting the grid.
DEFAULT_KEYS = SETTING_KEYS - {"closed"}
PEER_KEYS = {"folder", "seeds", "command"}
#: The placeholders of a peer's command.
COMMAND_PLACEHOLDERS = ("spec", "env", "game", "rom", "seed", "frames", "folder")
REPORT_KEYS = {"window", "levels"}
DEFAULT_FOLDER = "{out}/{setting}/{env}-{seed}"
DEFAULT_WINDOW = 100  # training episodes averaged, as gdi's progress line and appo_peer.py


@dataclass(frozen=True)
class Setting:
    """How a row of the grid trains: what ``gdi train`` is given besides env and seed."""

    name: str
    preset: str
    scale: str | None = None
    learning: str | None = None
    overrides: tuple[str, ...] = ()
    folder: str = DEFAULT_FOLDER
    records: str | None = None
    carry: bool = False  # an unfinished run's newest checkpoint kept beside its records
    closed: str | None = None  # why the setting is no longer run (its runs are still reported)

    def label(self, names: Mapping[str, Sequence[tuple[str, str]]]) -> str:
        """What ran, in one line: the preset, the scale and the learning reading by their real
        names, and every override (runs that differ in any of these are never one curve).
        ``names``: each environment's (scale, learning), as its runs ran or would run
        (``gdi.benchmark.report.setting_names``); one that differs between environments is
        listed with the environments of each: ``scale gym on gym:CartPole-v1, minatar on
        minatar:breakout``."""
        parts = [self.preset, _by_env("scale", names, 0), _by_env("learning", names, 1),
                 *self.overrides]
        return f"{self.name} ({', '.join(parts)})"


def _by_env(what: str, names: Mapping[str, Sequence[tuple[str, str]]], i: int) -> str:
    """``what`` and its value, or each value with the environments that have it."""
    envs_of: dict[str, list[str]] = {}
    for env, pairs in names.items():
        for pair in pairs:
            envs_of.setdefault(pair[i], []).append(env)
    if len(envs_of) == 1:
        return f"{what} {next(iter(envs_of))}"
    return f"{what} " + ", ".join(f"{value} on {' and '.join(envs)}"
                                  for value, envs in envs_of.items())


@dataclass(frozen=True)
class Cell:
    """One run of the grid."""

    setting: Setting
    env: str
    seed: int
    folder: Path
    records: Path | None = None

    @property
    def name(self) -> str:
        return f"{self.setting.name}/{self.env}/seed {self.seed}"


@dataclass(frozen=True)
class Peer:
    """Another system's runs, read as curves (``curve_episodes.csv`` in each folder)."""

    name: str
    folder: str
    seeds: tuple[int, ...]
    command: tuple[str, ...] = ()  # the argv of one run (placeholders filled per run)

    def folder_of(self, env: str, seed: int, out: Path, base: Path) -> Path:
        """The folder of this peer's run of ``env`` with ``seed`` (relative: to ``base``)."""
        return Path(os.path.normpath(base / _fill(self.folder, out=out, setting=self.name,
                                                  env=env, seed=seed)))

    def argv(self, env: str, seed: int, folder: Path, frames: int) -> list[str]:
        """The command of this peer's run of ``env`` with ``seed``, to ``frames`` frames."""
        game = env.split(":", 1)[-1]
        values = {"spec": env, "env": env_slug(env), "game": game, "rom": rom_id(game),
                  "seed": seed, "frames": frames, "folder": str(folder.absolute())}
        return [part.format(**values) for part in self.command]


@dataclass(frozen=True)
class Grid:
    """The whole grid: where it lives, its budget and its cells."""

    path: Path
    out: Path
    frames: int
    stop_at: int | None
    seeds: tuple[int, ...]
    envs: tuple[str, ...]
    settings: tuple[Setting, ...]
    peers: tuple[Peer, ...] = ()
    parallel: int = 1
    window: int = DEFAULT_WINDOW
    levels: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def target(self) -> int:
        """The frames each run trains to: ``stop_at`` if set, else the budget."""
        return self.stop_at if self.stop_at is not None else self.frames

    def cells(self) -> list[Cell]:
        """Every run, setting by setting, environment by environment, seed by seed."""
        base = self.path.parent

        def place(pattern: str | None, setting: Setting, env: str, seed: int) -> Path | None:
            if pattern is None:
                return None
            filled = base / _fill(pattern, out=self.out, setting=setting.name, env=env, seed=seed)
            return Path(os.path.normpath(filled))  # "grids/../results/x" as "results/x"

        return [Cell(s, env, seed, place(s.folder, s, env, seed), place(s.records, s, env, seed))
                for s in self.settings for env in self.envs for seed in self.seeds]

    def select(self, settings: Sequence[str] = (), envs: Sequence[str] = (),
               seeds: Sequence[int] = ()) -> Grid:
        """The grid cut down to the named settings, environments and seeds (each part whole
        where none is named): the runs ``gdi benchmark run --setting S --env E --seed N``
        runs, in the grid's order. A name the grid does not have is an error naming what it
        has."""
        every_seed = sorted({*self.seeds, *(n for p in self.peers for n in p.seeds)})
        for option, chosen, allowed in (("--setting", settings, [s.name for s in self.settings]),
                                        ("--env", envs, list(self.envs)),
                                        ("--seed", seeds, every_seed)):  # a peer's own too
            for name in chosen:
                if name not in allowed:
                    raise ValueError(f"{option} {name}: not in the grid {self.path.name}; "
                                     f"allowed: {', '.join(str(a) for a in allowed)}")
        for setting in self.settings:
            if setting.name in settings and setting.closed is not None:
                runnable = [s.name for s in self.settings if s.closed is None]
                raise ValueError(f"--setting {setting.name}: closed in {self.path.name} "
                                 f"({setting.closed}); its runs are reported, not run. "
                                 f"Allowed: {', '.join(runnable) or 'none (every setting is closed)'}"
                                 "; or delete its closed key to run it again")
        return replace(
            self,
            settings=tuple(s for s in self.settings if not settings or s.name in settings),
            envs=tuple(e for e in self.envs if not envs or e in envs),
            seeds=tuple(n for n in self.seeds if not seeds or n in seeds),
            peers=tuple(replace(p, seeds=tuple(n for n in p.seeds if not seeds or n in seeds))
                        for p in self.peers))

    def open(self) -> Grid:
        """The grid without its closed settings: the runs ``gdi benchmark run`` may start."""
        return replace(self, settings=tuple(s for s in self.settings if s.closed is None))

    def runnable_peers(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` checked as peers of this grid with a command (``--peer``)."""
        for name in names:
            peer = next((p for p in self.peers if p.name == name), None)
            with_command = ", ".join(p.name for p in self.peers if p.command) or "none"
            if peer is None:
                raise ValueError(f"--peer {name}: not a peer of the grid {self.path.name}; "
                                 f"allowed: {with_command}")
            if not peer.command:
                raise ValueError(f"--peer {name}: [peers.{name}] in {self.path.name} has no "
                                 f"command, so its runs are made by hand; allowed: "
                                 f"{with_command}")
            # Said before any run starts, not hours later when its first run's turn comes.
            program = peer.command[0]
            where = self.path.parent.absolute() / program  # an absolute program stays itself
            if not ((where.is_file() and os.access(where, os.X_OK)) if "/" in program
                    else shutil.which(program)):
                raise ValueError(f"--peer {name}: its command's program {program!r} is not an "
                                 f"executable (looked up from {self.path.parent.absolute()}); "
                                 "make it, or change [peers."
                                 f"{name}] command in {self.path.name}")
        return tuple(names)

    def peer_folder(self, peer: Peer, env: str, seed: int) -> Path:
        return peer.folder_of(env, seed, self.out, self.path.parent)


def env_slug(env: str) -> str:
    """``ale:Breakout`` -> ``ale-Breakout``: a spec as a folder name."""
    return re.sub(r"[^A-Za-z0-9]+", "-", env).strip("-")


def rom_id(game: str) -> str:
    """ale-py's ROM id of a game spelled in CamelCase (``BattleZone`` -> ``battle_zone``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", game).lower()


def _fill(pattern: str, *, out: Path, setting: str, env: str, seed: int) -> str:
    game = env.split(":", 1)[-1]
    values = {"out": str(out), "setting": setting, "env": env_slug(env), "game": game,
              "rom": rom_id(game), "seed": seed}
    try:
        return pattern.format(**values)
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(f"folder pattern {pattern!r} does not fill ({err}); allowed "
                         f"placeholders: {', '.join('{' + k + '}' for k in values)}") from None


def _command(value, where: str) -> tuple[str, ...]:
    """A peer's command, checked: a list of strings whose placeholders are all known."""
    if not isinstance(value, list) or not value or \
            not all(isinstance(part, str) and part for part in value):
        raise ValueError(f"{where}: {value!r}: allowed: a list of non-empty strings, the "
                         "command's argv (e.g. [\"python\", \"run.py\", \"--seed\", \"{seed}\"])")
    allowed = ", ".join("{" + name + "}" for name in COMMAND_PLACEHOLDERS)
    for part in value:
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(part) if name is not None}
        except ValueError as err:
            raise ValueError(f"{where}: {part!r} does not parse ({err}); placeholders: "
                             f"{allowed}") from None
        for name in sorted(names - set(COMMAND_PLACEHOLDERS)):
            raise ValueError(f"{where}: {part!r} has the placeholder {{{name}}}; allowed: "
                             f"{allowed}")
    return tuple(value)


def _unknown_keys(table: Mapping, allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                         f"{', '.join(sorted(allowed))}")


def _count(value, name: str, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) \
            or value < minimum:
        raise ValueError(f"{where}: {name} = {value!r}; allowed: a whole number ≥ {minimum}")
    return int(value)


def _seeds(value, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or \
            not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
        raise ValueError(f"{where}: seeds = {value!r}; allowed: a non-empty list of "
                         "non-negative integers")
    if len(set(value)) != len(value):
        raise ValueError(f"{where}: seeds = {value!r} repeats a seed")
    return tuple(value)


def _strings(value, name: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: {name} = {value!r}; allowed: a list of strings")
    return tuple(value)


def _setting(name: str, table, where: str, defaults: Mapping | None = None) -> Setting:
    """The setting ``name`` from its table laid over the grid's ``defaults``, checked."""
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [settings.{name}] must be a table")
    _unknown_keys(table, SETTING_KEYS, f"{where} [settings.{name}]")
    own = f"[settings.{name}]"
    if defaults:  # a bad value may be the defaults', so the message names both places
        own += " (with [defaults])"
        table = {**defaults, **table}
    if not isinstance(table.get("preset"), str):
        raise ValueError(f"{where}: {own} needs preset = \"NAME\" "
                         "(`gdi presets` lists them)")
    for key in ("scale", "learning", "folder", "records", "closed"):
        if key in table and not isinstance(table[key], str):
            raise ValueError(f"{where}: {own} {key} = {table[key]!r}; allowed: a string")
    if "closed" in table and not table["closed"].strip():
        raise ValueError(f"{where}: {own} closed = \"\"; allowed: the reason it is closed, in "
                         "words")
    carry = table.get("carry", False)
    if not isinstance(carry, bool):
        raise ValueError(f"{where}: {own} carry = {carry!r}; allowed: true or false")
    if carry and "records" not in table:
        raise ValueError(f"{where}: {own} carry = true needs records = \"PATTERN\" "
                         "(the checkpoint is carried beside the run's records)")
    return Setting(name, table["preset"], table.get("scale"), table.get("learning"),
                   _strings(table.get("set", []), "set", f"{where} {own}"),
                   table.get("folder", DEFAULT_FOLDER), table.get("records"), carry,
                   table.get("closed"))


def _levels(table, envs: Sequence[str], where: str) -> dict[str, tuple[float, ...]]:
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [report] levels must be a table env = [scores]")
    levels = {}
    for env, values in table.items():
        if env not in envs:
            raise ValueError(f"{where}: [report] levels names {env!r}, not one of the grid's "
                             f"envs ({', '.join(envs)})")
        if not isinstance(values, list) or not values or \
                not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            raise ValueError(f"{where}: [report] levels {env!r} = {values!r}; allowed: a "
                             "non-empty list of scores")
        levels[env] = tuple(float(v) for v in values)
    return levels


def parse_grid(data: Mapping, path: Path) -> Grid:
    """A grid from the parsed TOML ``data`` of the file at ``path``; every mistake is a
    ValueError naming the key, its value and what is allowed."""
    where = str(path)
    _unknown_keys(data, TOP_KEYS, where)
    for key in ("frames", "seeds", "envs", "settings"):
        if key not in data:
            raise ValueError(f"{where}: missing {key} (a grid needs frames, seeds, envs and at "
                             "least one [settings.NAME] table)")
    frames = _count(data["frames"], "frames", where)
    stop_at = None if "stop_at" not in data else _count(data["stop_at"], "stop_at", where)
    if stop_at is not None and stop_at > frames:
        raise ValueError(f"{where}: stop_at = {stop_at:,} is past frames = {frames:,}; allowed: "
                         "at most the budget")
    envs = _strings(data["envs"], "envs", where)
    if not envs or len(set(envs)) != len(envs):
        raise ValueError(f"{where}: envs = {list(envs)!r}; allowed: distinct environment specs")
    settings_table = data["settings"]
    if not isinstance(settings_table, dict) or not settings_table:
        raise ValueError(f"{where}: [settings] needs at least one [settings.NAME] table")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ValueError(f"{where}: defaults must be a table [defaults] of setting keys")
    _unknown_keys(defaults, DEFAULT_KEYS, f"{where} [defaults]")
    settings = tuple(_setting(name, table, where, defaults)
                     for name, table in settings_table.items())
    seeds = _seeds(data["seeds"], where)
    peers = []
    for name, table in (data.get("peers") or {}).items():
        if not isinstance(table, dict) or not isinstance(table.get("folder"), str):
            raise ValueError(f"{where}: [peers.{name}] needs folder = \"PATTERN\" (a folder of "
                             "curve_episodes.csv per env and seed)")
        _unknown_keys(table, PEER_KEYS, f"{where} [peers.{name}]")
        if name in settings_table:
            raise ValueError(f"{where}: {name!r} names both a setting and a peer")
        peers.append(Peer(name, table["folder"],
                          _seeds(table["seeds"], f"{where} [peers.{name}]")
                          if "seeds" in table else seeds,
                          _command(table["command"], f"{where} [peers.{name}] command")
                          if "command" in table else ()))
    report = data.get("report") or {}
    _unknown_keys(report, REPORT_KEYS, f"{where} [report]")
    base = path.parent
    out = Path(data.get("out", f"runs/{path.stem}"))
    grid = Grid(
        path=path, out=Path(os.path.normpath((base / out).absolute())), frames=frames,
        stop_at=stop_at,
        seeds=seeds, envs=envs, settings=settings,
        peers=tuple(peers),
        parallel=_count(data.get("parallel", 1), "parallel", where),
        window=_count(report.get("window", DEFAULT_WINDOW), "[report] window", where),
        levels=_levels(report.get("levels", {}), envs, where),
    )
    folders = [cell.folder for cell in grid.cells()]
    kept = [cell.records for cell in grid.cells() if cell.records is not None]
    if len(set(folders)) != len(folders) or len(set(kept)) != len(kept) or set(kept) & set(folders):
        raise ValueError(f"{where}: two runs share a folder; a setting's folder and records "
                         "patterns must hold {env} (or {game}) and {seed}, and differ")
    return grid


def load_grid(path: str | Path) -> Grid:
    """The grid in the TOML file ``path`` (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no grid file {path}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{path} is not valid TOML: {err}") from None
    return parse_grid(data, path)
