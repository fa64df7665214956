"""``gdi.read_run``: what a run folder (or a bundle of ``gdi export``) recorded, as pandas
DataFrames for a researcher's own tables and plots, without parsing its files by hand.

    run = gdi.read_run("runs/<run>")
    run.metrics        # one row per metrics.jsonl row: training statistics every log_every
    run.episodes       # one row per training episode: frames, actor, λ by name, return, length
    run.evaluations    # one row per evaluation episode (eval/*.json, eval_<policy>/*.json)
    run.config         # config.json as a dict

The files are read by the functions the reports read them with (``gdi.scores`` for the
evaluations, ``gdi.run_files.read_jsonl`` for the JSON-lines logs): a number here is the
number a report shows. A file a run has not written yet is an empty table with its columns.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gdi.run_files import EVALUATION_POLICIES, eval_folder, read_jsonl
from gdi.scores import EvalRecord, read_config, read_eval_file

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EPISODE_COLUMNS", "EVALUATION_COLUMNS", "RunRecords", "read_run", "training_clock"]

#: ``RunRecords.episodes``' columns; ``lambda`` is replaced by one column per coordinate of λ,
#: named as the run's policy space names them (GDI-I³: inv_tau1, inv_tau2, eps).
EPISODE_COLUMNS = ("frames", "actor", "lambda", "return", "length")
#: ``RunRecords.evaluations``' columns: the file's frames and name (``frames_<N>`` for the
#: evaluations training wrote, the checkpoint's for ``gdi evaluate``'s), the policy that chose
#: λ (population, greedy, uniform, fixed: ``gdi evaluate --policy``), whether training wrote
#: it, and each episode's index, raw return, length in frames and environment seed. A
#: bundle's evaluations made after export live outside it (``evaluations/<bundle>``): read
#: that folder with ``read_run`` for them.
EVALUATION_COLUMNS = ("frames", "name", "policy", "periodic", "episode", "return", "length",
                      "seed")


@dataclass(frozen=True)
class RunRecords:
    """A run folder's records (``gdi.read_run``)."""

    path: Path
    config: dict[str, Any]
    metrics: pd.DataFrame
    episodes: pd.DataFrame
    evaluations: pd.DataFrame
    notes: tuple[str, ...] = ()  # lines left out of a log (a write cut short by a crash)


def _lambda_names(config: dict[str, Any], width: int | None) -> list[str]:
    """The names of λ's coordinates in the run's policy space (``width`` of them, when the log
    has rows; None: as many as the space has); ``lambda_<i>`` for a space this install does
    not have (a run of a user's own, not registered here) or one of another width."""
    from gdi.policy_space import get_policy_space  # loads torch: the registry's spaces

    try:
        names = list(get_policy_space(str(config.get("policy_space"))).index_names)
    except (KeyError, ValueError):
        names = []
    if width is None:
        return names
    return names if len(names) == width else [f"lambda_{i}" for i in range(width)]


def _episodes(path: Path, config: dict[str, Any], notes: list[str]) -> pd.DataFrame:
    import pandas as pd

    try:
        rows = read_jsonl(path / "meta.jsonl", notes)
    except FileNotFoundError:  # a bundle, or a run that has not written its log yet
        rows = []
    names = _lambda_names(config, max((len(row.get("lambda", ())) for row in rows),
                                      default=None))
    table = pd.DataFrame(
        [{**{k: row.get(k) for k in EPISODE_COLUMNS if k != "lambda"},
          **dict(zip(names, row.get("lambda", ()), strict=False))} for row in rows],
        columns=[*EPISODE_COLUMNS[:2], *names, *EPISODE_COLUMNS[3:]])
    return table


def _evaluations(path: Path, config: dict[str, Any]) -> pd.DataFrame:
    """Every evaluation file's episodes, policy by policy (``eval/`` for the population, what
    training writes and reports read; ``eval_<policy>/`` for ``gdi evaluate --policy``), each
    policy's files in the reports' order (frames, then training's before ``gdi evaluate``'s)."""
    import pandas as pd

    rows = []
    for policy in EVALUATION_POLICIES:
        records = sorted((read_eval_file(file) for file in
                          sorted((path / eval_folder(policy)).glob("*.json"))),
                         key=EvalRecord.sort_key)
        for record in records:
            if record.env != config["env"]:
                raise ValueError(f"{record.path}: env {record.env!r} differs from the run's "
                                 f"{config['env']!r}")
            rows += [(record.frames, record.name, policy, record.periodic, i, e.episode_return,
                      e.frames, e.seed) for i, e in enumerate(record.episodes)]
    return pd.DataFrame(rows, columns=EVALUATION_COLUMNS)


def training_clock(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Frames and cumulative seconds of training at each metrics row with ``perf/fps``, from
    (0, 0): a row covers its frames since the row before at its ``perf/fps`` (start-up and
    evaluations included), so its interval is their quotient. Rows are taken by frames; one
    whose frames do not pass the row before adds nothing."""
    frames, seconds, last, clock = [0.0], [0.0], 0, 0.0
    for row in sorted((r for r in rows if isinstance(r.get("perf/fps"), int | float)
                       and r["perf/fps"] > 0 and isinstance(r.get("frames"), int | float)),
                      key=lambda r: r["frames"]):
        if row["frames"] <= last:
            continue
        clock += (row["frames"] - last) / row["perf/fps"]
        last = row["frames"]
        frames.append(float(row["frames"]))
        seconds.append(clock)
    return np.asarray(frames), np.asarray(seconds)


def read_run(path: str | os.PathLike) -> RunRecords:
    """The records of the run folder (or bundle) ``path``: its config, its metrics rows (sorted
    by frames, a column per statistic, named as TensorBoard shows it:
    ``charts/episodic_return``, ``losses/entropy``, ``perf/fps``, ...), its training episodes
    and its evaluation episodes. A folder without ``config.json`` is refused, naming it."""
    import pandas as pd

    path = Path(path)
    config = read_config(path)
    notes: list[str] = []
    try:
        rows = read_jsonl(path / "metrics.jsonl", notes)
    except FileNotFoundError:  # a bundle keeps no training rows
        rows = []
    metrics = pd.DataFrame(rows, columns=None if rows else ["frames"])
    if rows:
        metrics = metrics.sort_values("frames", kind="stable", ignore_index=True)
    episodes = _episodes(path, config, notes)
    return RunRecords(path, config, metrics, episodes, _evaluations(path, config), tuple(notes))
