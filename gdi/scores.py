"""Evaluation score files of a run folder: the one format the runtime writes and reports read.

A run folder holds ``config.json`` (a JSON object with at least ``env``, ``preset``, ``seed``
and ``name``) and ``eval/*.json``, one file per evaluation::

    {"checkpoint": str, "frames": int, "env": str, "policy": str, "seed": int,
     "episodes": [{"return": float, "frames": int, "seed": int}, ...], "mean_return": float}

An episode may also carry ``"lambda"``: the behavior index λ it was played with (the runtime's
evaluations write it, so a failed episode can be traced to its λ).

``frames`` counts environment frames including action repeats at the time of the evaluation
(the paper's training scale, App. "Training Scale"). Periodic evaluation during training writes
``eval/frames_<frames:012d>.json`` (:func:`periodic_eval_name`); ``gdi evaluate`` writes
``eval/<checkpoint-name>.json``. The learning curve and the final score are the run's own
evaluations (periodic and final, :attr:`RunEvals.own`): the final score is the one with the most
frames (App. "Experiment Details": the undiscounted episode returns averaged over the
evaluation episodes); ``gdi evaluate`` files are :attr:`RunEvals.evaluated_later`, reported as
such, unless a run has no evaluation of its own.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.atomic import StorageError, atomic_write, why_not_writable
from gdi.run_files import EVAL_DIR

CONFIG_FILE = "config.json"
#: Episodes of one evaluation, each with an environment and seed of its own (the paper: 32);
#: ``Config.eval_episodes`` and ``gdi evaluate --episodes`` default to it.
PAPER_EVAL_EPISODES = 32
PERIODIC_PREFIX = "frames_"
CONFIG_KEYS = ("env", "preset", "seed", "name")


@dataclass(frozen=True)
class Episode:
    """One evaluation episode: undiscounted return, its length in frames, its env seed."""

    episode_return: float
    frames: int
    seed: int


@dataclass(frozen=True)
class EvalRecord:
    """One evaluation file."""

    path: Path
    checkpoint: str
    frames: int
    env: str
    policy: str
    seed: int
    episodes: tuple[Episode, ...]
    mean_return: float
    written_ns: int  # file modification time, orders ties between files of equal frames

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def periodic(self) -> bool:
        """Written by periodic evaluation during training (not by ``gdi evaluate``)."""
        return self.name.startswith(PERIODIC_PREFIX)

    def sort_key(self) -> tuple:
        """Frames first; at equal frames periodic files precede ``gdi evaluate`` ones, and
        later-written files come last."""
        return (self.frames, not self.periodic, self.written_ns, self.name)


@dataclass(frozen=True)
class RunEvals:
    """A run folder's config and its evaluation records, sorted by :meth:`EvalRecord.sort_key`."""

    run_dir: Path
    config: Mapping
    records: tuple[EvalRecord, ...]

    @property
    def env(self) -> str:
        return str(self.config["env"])

    @property
    def preset(self) -> str:
        return str(self.config["preset"])

    @property
    def seed(self) -> int:
        return int(self.config["seed"])

    @property
    def name(self) -> str:
        return str(self.config["name"])

    @property
    def own(self) -> tuple[EvalRecord, ...]:
        """The run's own evaluations (periodic, and the final one training wrote), or, for a
        run that has none (its files all from ``gdi evaluate``), every evaluation."""
        periodic = tuple(r for r in self.records if r.periodic)
        return periodic or self.records

    @property
    def evaluated_later(self) -> tuple[EvalRecord, ...]:
        """Evaluations made with ``gdi evaluate`` beside the run's own: reported as such,
        never its final score or a point of its curve (another policy, episode count or
        seed than training's evaluations would pass for the run's own)."""
        own = {id(r) for r in self.own}
        return tuple(r for r in self.records if id(r) not in own)

    @property
    def final(self) -> EvalRecord:
        """The run's own evaluation with the most frames (see :attr:`own`)."""
        return self.own[-1]

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        """Learning curve: (frames, mean return) of the run's own evaluations, by frames."""
        frames = np.array([r.frames for r in self.own], dtype=np.int64)
        returns = np.array([r.mean_return for r in self.own], dtype=float)
        return frames, returns


def periodic_eval_name(frames: int) -> str:
    """File stem periodic evaluation uses: ``frames_<frames:012d>``."""
    if frames < 0:
        raise ValueError(f"frames must be non-negative, got {frames}")
    return f"{PERIODIC_PREFIX}{frames:012d}"


def _episode_dict(episode: Episode | Mapping) -> dict:
    if isinstance(episode, Episode):
        return {
            "return": float(episode.episode_return),
            "frames": int(episode.frames),
            "seed": int(episode.seed),
        }
    missing = {"return", "frames", "seed"} - set(episode)
    if missing:
        raise ValueError(f"episode {dict(episode)} lacks {sorted(missing)}")
    row = {
        "return": float(episode["return"]),
        "frames": int(episode["frames"]),
        "seed": int(episode["seed"]),
    }
    if "lambda" in episode:  # the behavior index it was played with, to see which λ failed
        row["lambda"] = [float(x) for x in episode["lambda"]]
    return row


def write_eval_file(
    run_dir: str | os.PathLike,
    name: str,
    *,
    checkpoint: str,
    frames: int,
    env: str,
    policy: str,
    seed: int,
    episodes: Iterable[Episode | Mapping],
    folder: str = EVAL_DIR,
) -> Path:
    """Write ``run_dir/<folder>/<name>.json`` atomically (temporary file + os.replace);
    ``folder`` is ``eval`` (what reports read) unless an evaluation must stay out of them.

    ``episodes`` are :class:`Episode` objects or mappings with ``return``, ``frames`` and
    ``seed`` (and optionally ``lambda``, kept as a list of floats); ``mean_return`` is their
    mean. Returns the written path; a file that cannot be written (a full disk, a read-only
    folder) is a one-line StorageError naming it.
    """
    stem = name.removesuffix(".json")
    if not stem or stem != Path(stem).name or stem.startswith("."):
        raise ValueError(f"eval file name must be a plain file name, got {name!r}")
    if frames < 0:
        raise ValueError(f"frames must be non-negative, got {frames}")
    episode_dicts = [_episode_dict(e) for e in episodes]
    if not episode_dicts:
        raise ValueError("an evaluation needs at least one episode")
    returns = [e["return"] for e in episode_dicts]
    if not all(math.isfinite(r) for r in returns):
        raise ValueError(f"episode returns must be finite, got {returns}")
    payload = {
        "checkpoint": str(checkpoint),
        "frames": int(frames),
        "env": str(env),
        "policy": str(policy),
        "seed": int(seed),
        "episodes": episode_dicts,
        "mean_return": float(np.mean(returns)),
    }
    eval_dir = Path(run_dir) / folder
    path = eval_dir / f"{stem}.json"

    def write(handle) -> None:
        json.dump(payload, handle, indent=1, allow_nan=False)
        handle.write("\n")

    try:
        eval_dir.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, write, binary=False)
    except OSError as err:  # a full disk, a read-only folder: one line, nothing half written
        raise StorageError(f"could not write the evaluation {path}: "
                           f"{why_not_writable(path, err)}") from None


def _load_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise FileNotFoundError(f"{path}: cannot be read ({err.strerror})") from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{path}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from None


def _field(path: Path, data: Mapping, key: str, kind: type | tuple[type, ...]):
    if key not in data:
        raise ValueError(f"{path}: missing field {key!r}")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ValueError(f"{path}: field {key!r} must be {names}, got {value!r}")
    return value


def read_eval_file(path: str | os.PathLike) -> EvalRecord:
    """Read and validate one evaluation file (ValueError naming the file and the field)."""
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    number = (int, float)
    checkpoint = _field(path, data, "checkpoint", str)
    frames = int(_field(path, data, "frames", int))
    env = _field(path, data, "env", str)
    policy = _field(path, data, "policy", str)
    seed = int(_field(path, data, "seed", int))
    raw_episodes = _field(path, data, "episodes", list)
    if not raw_episodes:
        raise ValueError(f"{path}: 'episodes' is empty")
    episodes = []
    for i, episode in enumerate(raw_episodes):
        if not isinstance(episode, dict):
            raise ValueError(f"{path}: episodes[{i}] must be an object, got {episode!r}")
        where = Path(f"{path}: episodes[{i}]")
        episodes.append(
            Episode(
                float(_field(where, episode, "return", number)),
                int(_field(where, episode, "frames", int)),
                int(_field(where, episode, "seed", int)),
            )
        )
    mean_return = float(_field(path, data, "mean_return", number))
    expected = float(np.mean([e.episode_return for e in episodes]))
    if not math.isclose(mean_return, expected, rel_tol=1e-5, abs_tol=1e-6):
        raise ValueError(
            f"{path}: mean_return {mean_return} is not the mean of the episode returns ({expected})"
        )
    return EvalRecord(
        path=path,
        checkpoint=checkpoint,
        frames=frames,
        env=env,
        policy=policy,
        seed=seed,
        episodes=tuple(episodes),
        mean_return=mean_return,
        written_ns=path.stat().st_mtime_ns,
    )


def read_config(run_dir: str | os.PathLike) -> dict:
    """``run_dir/config.json``, checked to be an object with env, preset and name (strings)
    and seed (an integer): a damaged file is a ValueError naming the file and the field. The
    fields are as the run wrote them (``gdi.upgrade.todays_config_fields`` reads those of an
    earlier gdi as today's)."""
    run_dir = Path(run_dir)
    if run_dir.is_file():
        raise FileNotFoundError(f"{run_dir} is a file, not a run folder; give the run's folder")
    if not run_dir.is_dir():
        raise FileNotFoundError(f"run folder not found: {run_dir}")
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir}: no {CONFIG_FILE}; is this a gdi run folder?")
    config = _load_json(path)
    if not isinstance(config, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(config).__name__}")
    missing = [k for k in CONFIG_KEYS if k not in config]
    if missing:
        raise ValueError(f"{path}: missing {', '.join(repr(k) for k in missing)}")
    for key in CONFIG_KEYS:
        value = config[key]
        wanted = int if key == "seed" else str
        if not isinstance(value, wanted) or isinstance(value, bool):
            raise ValueError(f"{path}: {key!r} must be {'an integer' if wanted is int else 'a string'}"
                             f", got {value!r}; the file is damaged: put back the run's value")
    return config


def load_run(run_dir: str | os.PathLike) -> RunEvals:
    """A run folder's config and evaluation records, sorted for curves and final score.

    Raises FileNotFoundError for a missing folder, config or evaluation data, and ValueError
    for a file that is not valid JSON or lacks a field, or an eval file of another env.
    """
    run_dir = Path(run_dir)
    config = read_config(run_dir)
    paths = sorted((run_dir / EVAL_DIR).glob("*.json"))
    if not paths:
        raise FileNotFoundError(
            f"{run_dir}: no evaluation data ({EVAL_DIR}/*.json); train with periodic "
            f"evaluation or run `gdi evaluate {run_dir}` first"
        )
    records = sorted((read_eval_file(p) for p in paths), key=EvalRecord.sort_key)
    for record in records:
        if record.env != config["env"]:
            raise ValueError(
                f"{record.path}: env {record.env!r} differs from the run's {config['env']!r}"
            )
    return RunEvals(run_dir, config, tuple(records))
