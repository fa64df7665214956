"""Checkpoints written atomically, so that an interrupted write never costs the previous one,
and in a format that holds data only, so that loading one never runs code.

A checkpoint is one data file (:mod:`gdi.data_file`: safetensors, the tensors as tensors and
the rest of the tree as JSON in its metadata) ``checkpoints/ckpt_<frames>.safetensors`` (the
naming and the listing are ``gdi.run_files``', re-exported here for the runtime's users):
written to a temporary file in the same folder, flushed to disk, then renamed over
(``os.replace`` is atomic on POSIX). A write that fails (full disk, read-only folder) leaves no
partial file and raises a one-line :class:`~gdi.atomic.StorageError`; the earlier checkpoints
are untouched. :func:`load_checkpoint` is the one loader of every command (``train --resume``,
``evaluate``, ``enjoy``, ``export``, ``analyze``, ``gdi.load_agent``): a file that is not in the
format (a pickle, a truncated file) is refused in one line that names it, before anything in
it is interpreted. :func:`latest_valid_checkpoint` (what ``--resume`` uses) falls back to the
newest checkpoint that loads and says which files it passed over. The pickle checkpoints of gdi
before 0.2 (``ckpt_<frames>.pt``) are never loaded here: ``gdi upgrade``
(:mod:`gdi.upgrade`) converts a trusted folder once. Nothing is ever deleted
on the user's behalf except checkpoints older than the ``keep`` most recent.
"""

from __future__ import annotations

import time
from pathlib import Path

from gdi import data_file
from gdi.atomic import StorageError, atomic_write, os_error_in
from gdi.run_files import (
    CHECKPOINT_DIR,
    PICKLE_SUFFIX,
    checkpoint_name,
    latest_checkpoint,
    list_checkpoints,
    no_checkpoints,
)
from gdi.runtime_config import OutputConfig

__all__ = [
    "FORMAT_VERSION",
    "SET_ASIDE_SUFFIX",
    "CheckpointSchedule",
    "PickleCheckpoint",
    "checkpoint_controller_state",
    "checkpoint_controller_states",
    "checkpoint_name",
    "latest_checkpoint",
    "latest_valid_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "save_checkpoint",
]

#: 2: data files (gdi 0.2); 1: the pickle checkpoints before, which gdi upgrade converts.
FORMAT_VERSION = 2
#: Suffix given to a corrupt checkpoint that a resume passed over: it is kept for inspection,
#: but never loaded or counted among the ``keep`` most recent again (a corrupt file that still
#: sorted newest would otherwise outlive the valid checkpoints written after it).
SET_ASIDE_SUFFIX = ".corrupt"


class CheckpointSchedule:
    """When a run checkpoints: every ``checkpoint_every_s`` seconds or
    ``checkpoint_every_frames`` frames since the last checkpoint (or the start), whichever
    comes first."""

    def __init__(self, output: OutputConfig) -> None:
        self.every_s = output.checkpoint_every_s
        self.every_frames = output.checkpoint_every_frames
        self._last_time = time.monotonic()
        self._last_frames = 0

    def due(self, frames: int) -> bool:
        return (time.monotonic() - self._last_time >= self.every_s
                or frames - self._last_frames >= self.every_frames)

    def saved(self, frames: int) -> None:
        """A checkpoint at ``frames`` was written (or restored): the next is due from here."""
        self._last_time = time.monotonic()
        self._last_frames = frames


def save_checkpoint(run_dir: Path, frames: int, payload: dict, keep: int) -> Path:
    """Write ``checkpoints/ckpt_<frames>.safetensors`` atomically and prune to the ``keep`` newest.
    Raises StorageError (one line: the file, the reason, earlier checkpoints kept) when the
    file cannot be written; nothing is pruned then."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    path = folder / checkpoint_name(frames)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_data_file(path, {"format": FORMAT_VERSION, **payload})
    except Exception as err:
        cause = os_error_in(err)
        if cause is None:
            raise
        reason = cause.strerror or str(cause)
        raise StorageError(
            f"could not write checkpoint {path}: {reason}; earlier checkpoints are kept"
        ) from None
    for old in list_checkpoints(run_dir)[:-keep]:
        old.unlink()
    return path


class PickleCheckpoint(ValueError):
    """A checkpoint in a pickle format: never loaded, and never passed over as if it were
    corrupt (it is what the user put there; ``gdi upgrade`` converts a trusted one)."""


def write_data_file(path: Path, tree: dict) -> None:
    """``tree`` as a data file at ``path``, atomically (the checkpoints' and bundles' writer)."""
    data = data_file.dumps(tree)  # a TypeError naming what is not data, before any write
    atomic_write(path, lambda handle: handle.write(data))


def load_checkpoint(path: Path) -> dict:
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise ValueError(f"checkpoint {path} is a link to a missing file ({path.readlink()})")
    if path.is_dir():
        raise ValueError(f"checkpoint {path} is a folder, not a checkpoint file")
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"checkpoint {path} cannot be read ({err.strerror or err})") from None
    if not data_file.is_data_file(data):
        if data[:2] == b"PK" or path.suffix == PICKLE_SUFFIX:
            raise PickleCheckpoint(
                f"{path} is a pickle checkpoint (the format of gdi before 0.2, or torch.save), "
                "not loaded: unpickling can run code; if you trust it, convert its run folder "
                "once with gdi upgrade RUN")
        raise ValueError(f"checkpoint {path} is truncated or corrupt (not a gdi data file)")
    try:
        payload = data_file.loads(data)
    except data_file.NotADataFile as err:
        raise ValueError(f"checkpoint {path} is truncated or corrupt ({err})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a gdi checkpoint of format {FORMAT_VERSION}")
    return payload


def checkpoint_controller_states(payload: dict, num_actors: int) -> list[dict | None]:
    """Every actor's E state from a checkpoint (``controllers``: every backend writes it)."""
    states = list(payload["controllers"])
    if len(states) != num_actors:
        raise ValueError(f"the checkpoint holds the E of {len(states)} actors, the config has "
                         f"num_actors={num_actors}")
    return states


def latest_valid_checkpoint(run_dir: Path) -> tuple[Path, dict, list[str]]:
    """The newest checkpoint of ``run_dir`` that loads: ``(path, payload, warnings)``.

    Each newer checkpoint that does not load (truncated by a crash, corrupt) is renamed to
    ``<name>.corrupt`` and named in one warning. When none loads, a ValueError lists every
    checkpoint and why it failed (and renames nothing); with none at all, FileNotFoundError. A
    pickle checkpoint (PickleCheckpoint) is refused, not passed over: it is no crash's leftover.
    """
    found = list_checkpoints(run_dir)
    if not found:
        raise no_checkpoints(run_dir)
    failures: list[tuple[Path, str]] = []
    for path in reversed(found):
        try:
            payload = load_checkpoint(path)
        except PickleCheckpoint:
            raise
        except ValueError as err:
            failures.append((path, str(err)))
            continue
        warnings = []
        for bad, why in failures:
            aside = bad.with_name(bad.name + SET_ASIDE_SUFFIX)
            bad.replace(aside)
            warnings.append(f"{why}; resuming from the earlier {path.name} instead "
                            f"(the bad file is kept as {aside.name})")
        return path, payload, warnings
    listing = "; ".join(why for _, why in failures)
    raise ValueError(
        f"no checkpoint of {run_dir} can be loaded, so the run cannot be resumed "
        f"({len(failures)} found: {listing})"
    )


def checkpoint_controller_state(payload: dict) -> dict | None:
    """Actor 0's E state as saved by either backend."""
    if "actors" in payload:
        return payload["actors"][0]["controller"]
    if payload.get("controllers"):
        return payload["controllers"][0]
    return None
