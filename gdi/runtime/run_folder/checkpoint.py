"""Checkpoints written atomically, so that an interrupted write never costs the previous one.

A checkpoint is one ``torch.save`` file ``checkpoints/ckpt_<frames>.pt`` (the naming and the
listing are ``gdi.run_files``', re-exported here for the runtime's users): written to a
temporary file in the same folder, flushed to disk, then renamed over (``os.replace`` is atomic
on POSIX). A write that fails (full disk, read-only folder) leaves no partial file and raises a
one-line :class:`~gdi.atomic.StorageError`; the earlier checkpoints are untouched. Loading a
truncated or corrupt file raises a ValueError that names it; :func:`latest_valid_checkpoint`
(what ``--resume`` uses) falls back to the newest checkpoint that loads and says which files it
passed over. Nothing is ever deleted on the user's behalf except checkpoints older than the
``keep`` most recent.
"""

from __future__ import annotations

import pickle
import time
import types
from pathlib import Path

import torch

from gdi.atomic import StorageError, atomic_write, os_error_in
from gdi.run_files import CHECKPOINT_DIR, checkpoint_name, latest_checkpoint, list_checkpoints

__all__ = [
    "FORMAT_VERSION",
    "MOVED_MODULES",
    "SET_ASIDE_SUFFIX",
    "CheckpointSchedule",
    "checkpoint_controller_state",
    "checkpoint_controller_states",
    "checkpoint_name",
    "latest_checkpoint",
    "latest_valid_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "save_checkpoint",
]

FORMAT_VERSION = 1
#: Suffix given to a corrupt checkpoint that a resume passed over: it is kept for inspection,
#: but never loaded or counted among the ``keep`` most recent again (a corrupt file that still
#: sorted newest would otherwise outlive the valid checkpoints written after it).
SET_ASIDE_SUFFIX = ".corrupt"


class CheckpointSchedule:
    """When a run checkpoints: every ``checkpoint_every_s`` seconds or
    ``checkpoint_every_frames`` frames since the last checkpoint (or the start), whichever
    comes first."""

    def __init__(self, config) -> None:
        self.every_s = config.checkpoint_every_s
        self.every_frames = config.checkpoint_every_frames
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
    """Write ``checkpoints/ckpt_<frames>.pt`` atomically and prune to the ``keep`` newest.
    Raises StorageError (one line: the file, the reason, earlier checkpoints kept) when the
    file cannot be written; nothing is pruned then."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    path = folder / checkpoint_name(frames)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda handle: torch.save({"format": FORMAT_VERSION, **payload},
                                                     handle))
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


#: Where the runtime's modules were before they moved into folders by role (issue 43), for the
#: classes that checkpoints written before then hold by their old module (an ``EpisodeRecord``
#: between two metrics rows, an inline actor's state): old module → module now.
MOVED_MODULES = {
    "gdi.runtime.acting": "gdi.runtime.acting.step",
    "gdi.runtime.actor": "gdi.runtime.acting.actor",
    "gdi.runtime.evaluator": "gdi.runtime.acting.evaluator",
    "gdi.runtime.steps": "gdi.runtime.storage.steps",
    "gdi.runtime.sequences": "gdi.runtime.storage.sequences",
    "gdi.runtime.collector": "gdi.runtime.storage.collector",
    "gdi.runtime.reservoir": "gdi.runtime.storage.reservoir",
    "gdi.runtime.learner": "gdi.runtime.learning.learner",
    "gdi.runtime.parameter_server": "gdi.runtime.learning.parameter_server",
    "gdi.runtime.trainer": "gdi.runtime.learning.trainer",
    "gdi.runtime.backend": "gdi.runtime.backends.base",
    "gdi.runtime.inline": "gdi.runtime.backends.inline",
    "gdi.runtime.local": "gdi.runtime.backends.local",
    "gdi.runtime.ray_backend": "gdi.runtime.backends.ray_backend",
    "gdi.runtime.run_dir": "gdi.runtime.run_folder.run_dir",
    "gdi.runtime.checkpoint": "gdi.runtime.run_folder.checkpoint",
    "gdi.runtime.meta_log": "gdi.runtime.run_folder.meta_log",
}


class _MovedModulesUnpickler(pickle.Unpickler):
    """pickle's Unpickler, finding a class saved under a module that has since moved
    (:data:`MOVED_MODULES`) where it is now."""

    def find_class(self, module: str, name: str):
        # "gdi.runtime.acting" is both an old module and a package now: the package never
        # held a pickled class, so the old module is meant.
        return super().find_class(MOVED_MODULES.get(module, module), name)


#: What ``torch.load`` unpickles checkpoints with: pickle, but for moved modules.
CHECKPOINT_PICKLE = types.SimpleNamespace(
    Unpickler=_MovedModulesUnpickler, load=pickle.load, loads=pickle.loads,
    __name__="gdi_checkpoint_pickle")


def load_checkpoint(path: Path) -> dict:
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise ValueError(f"checkpoint {path} is a link to a missing file ({path.readlink()})")
    if path.is_dir():
        raise ValueError(f"checkpoint {path} is a folder, not a checkpoint file")
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False,
                             pickle_module=CHECKPOINT_PICKLE)
    except Exception as err:
        raise ValueError(f"checkpoint {path} is truncated or corrupt ({_one_line(err)})") \
            from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a gdi checkpoint of format {FORMAT_VERSION}")
    return payload


def checkpoint_controller_states(payload: dict, num_actors: int) -> list[dict | None]:
    """Every actor's E state from a checkpoint: ``controllers`` (every backend writes it),
    or, in checkpoints written before the common format, the inline backend's ``actors``."""
    if "controllers" in payload:
        states = list(payload["controllers"])
    elif "actors" in payload:
        states = [actor["controller"] for actor in payload["actors"]]
    else:
        states = [None] * num_actors
    if len(states) != num_actors:
        raise ValueError(f"the checkpoint holds the E of {len(states)} actors, the config has "
                         f"num_actors={num_actors}")
    return states


def latest_valid_checkpoint(run_dir: Path) -> tuple[Path, dict, list[str]]:
    """The newest checkpoint of ``run_dir`` that loads: ``(path, payload, warnings)``.

    Each newer checkpoint that does not load (truncated by a crash, corrupt) is renamed to
    ``<name>.corrupt`` and named in one warning. When none loads, a ValueError lists every
    checkpoint and why it failed (and renames nothing); with none at all, FileNotFoundError.
    """
    found = list_checkpoints(run_dir)
    if not found:
        raise FileNotFoundError(
            f"{run_dir} has no checkpoints (looked in {run_dir}/{CHECKPOINT_DIR})")
    failures: list[tuple[Path, str]] = []
    for path in reversed(found):
        try:
            payload = load_checkpoint(path)
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


def _one_line(err: Exception) -> str:
    """The first sentence of a loader's message, on one line (torch's run to a paragraph)."""
    text = " ".join(str(err).split()).split(". ")[0]
    return text if len(text) <= 160 else text[:157] + "..."


def checkpoint_controller_state(payload: dict) -> dict | None:
    """Actor 0's E state as saved by either backend."""
    if "actors" in payload:
        return payload["actors"][0]["controller"]
    if payload.get("controllers"):
        return payload["controllers"][0]
    return None
