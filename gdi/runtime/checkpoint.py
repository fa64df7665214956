"""Checkpoints written atomically, so that an interrupted write never costs the previous one.

A checkpoint is one ``torch.save`` file ``checkpoints/ckpt_<frames>.pt``: written to a
temporary file in the same folder, flushed to disk, then renamed over (``os.replace`` is atomic
on POSIX). Loading a truncated or corrupt file raises a ValueError that names it and the
intact checkpoint before it; nothing is ever deleted on the user's behalf except checkpoints
older than the ``keep`` most recent.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from gdi.atomic import atomic_write

_NAME = re.compile(r"^ckpt_(\d{12})\.pt$")
FORMAT_VERSION = 1


def checkpoint_name(frames: int) -> str:
    return f"ckpt_{frames:012d}.pt"


def list_checkpoints(run_dir: Path) -> list[Path]:
    """Checkpoints of a run, oldest first."""
    folder = Path(run_dir) / "checkpoints"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _NAME.match(p.name))


def save_checkpoint(run_dir: Path, frames: int, payload: dict, keep: int) -> Path:
    folder = Path(run_dir) / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    target = atomic_write(folder / checkpoint_name(frames),
                          lambda handle: torch.save({"format": FORMAT_VERSION, **payload}, handle))
    for old in list_checkpoints(run_dir)[:-keep]:
        old.unlink()
    return target


def load_checkpoint(path: Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:
        earlier = [p for p in list_checkpoints(path.parent.parent) if p.name < path.name]
        keep = f"; the previous checkpoint {earlier[-1]} is intact — move {path.name} away to " \
               "resume from it" if earlier else ""
        raise ValueError(f"checkpoint {path} is truncated or corrupt ({err}){keep}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a gdi checkpoint of format {FORMAT_VERSION}")
    return payload


def latest_checkpoint(run_dir: Path) -> Path:
    found = list_checkpoints(run_dir)
    if not found:
        raise FileNotFoundError(f"{run_dir} has no checkpoints (looked in {run_dir}/checkpoints)")
    return found[-1]


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
