"""``gdi upgrade FOLDER``: a run folder or bundle of gdi before 0.2 (pickle checkpoints,
``checkpoints/ckpt_<frames>.pt``) converted once into the data files of
:mod:`gdi.runtime.run_folder.checkpoint`. The one place where compatibility with the old format
lives.

Even here nothing is unpickled with Python's full unpickler: the old files are read with
PyTorch's ``weights_only=True`` loader, which rebuilds tensors, containers and numbers and
refuses any other global, widened by exactly the globals gdi's old checkpoints hold (NumPy
arrays, dtypes and scalars, and gdi's ``EpisodeRecord`` under each module it has lived in). A
file that needs anything else is refused with the global it asked for, and its folder is left
as it was. An inline actor's environments, pickled inside the old checkpoint as bytes, are the
one part that cannot be read without running that pickle: they are dropped, so an upgraded
inline run restarts its episodes on resume (everything else resumes exactly), and the
conversion says so. Each converted checkpoint is written beside its original, which is kept as
``ckpt_<frames>.pt.upgraded`` (never loaded again), so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from gdi.run_files import CHECKPOINT_SUFFIX, list_checkpoints, list_pickle_checkpoints
from gdi.runtime.acting.actor import EpisodeRecord
from gdi.runtime.run_folder.checkpoint import FORMAT_VERSION, load_checkpoint, write_data_file

__all__ = ["KEPT_SUFFIX", "MOVED_MODULES", "Upgrade", "upgrade_folder"]

#: What an old checkpoint is renamed to once converted.
KEPT_SUFFIX = ".upgraded"

#: Where the runtime's modules were before they moved into folders by role (issue 43), for the
#: classes that old checkpoints hold by their old module: old module → module now.
MOVED_MODULES = {
    "gdi.runtime.acting": "gdi.runtime.acting.step",
    "gdi.runtime.actor": "gdi.runtime.acting.actor",
    "gdi.runtime.evaluator": "gdi.runtime.acting.evaluator",
    "gdi.runtime.steps": "gdi.runtime.storage.steps",
    "gdi.runtime.sequences": "gdi.runtime.storage.sequences",
    "gdi.runtime.collector": "gdi.runtime.storage.collector",
    "gdi.runtime.reservoir": "gdi.runtime.storage.reservoir",
    "gdi.runtime.learner": "gdi.runtime.training.learner",
    "gdi.runtime.parameter_server": "gdi.runtime.training.parameter_server",
    "gdi.runtime.trainer": "gdi.runtime.training.trainer",
    "gdi.runtime.backend": "gdi.runtime.backends.base",
    "gdi.runtime.inline": "gdi.runtime.backends.inline",
    "gdi.runtime.local": "gdi.runtime.backends.local",
    "gdi.runtime.ray_backend": "gdi.runtime.backends.ray_backend",
    "gdi.runtime.run_dir": "gdi.runtime.run_folder.run_dir",
    "gdi.runtime.checkpoint": "gdi.runtime.run_folder.checkpoint",
    "gdi.runtime.meta_log": "gdi.runtime.run_folder.meta_log",
}


def _allowed_globals() -> list:
    """The globals of gdi's old checkpoints, each under every name it was pickled with."""
    reconstruct = np._core.multiarray._reconstruct
    scalar = np._core.multiarray.scalar
    allowed = [np.dtype, np.ndarray, reconstruct, scalar,
               (reconstruct, "numpy.core.multiarray._reconstruct"),
               (scalar, "numpy.core.multiarray.scalar"),
               *(getattr(np.dtypes, name) for name in dir(np.dtypes) if name.endswith("DType"))]
    record = "EpisodeRecord"
    allowed += [(EpisodeRecord, f"{old}.{record}") for old, new in MOVED_MODULES.items()
                if new == EpisodeRecord.__module__]
    allowed.append(EpisodeRecord)
    return allowed


@dataclass(frozen=True)
class Upgrade:
    """What :func:`upgrade_folder` did: the checkpoints written, and notes for the user."""

    converted: list[Path]
    notes: list[str]


def read_pickle_checkpoint(path: Path) -> dict:
    """An old checkpoint's tree, by PyTorch's restricted loader (see the module's docstring);
    ValueError in one line for a file it refuses."""
    try:
        with torch.serialization.safe_globals(_allowed_globals()):
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        text = " ".join(str(err).split())
        hint = text.split("Unsupported global: ")[-1].split(" ")[0] \
            if "Unsupported global" in text else text[:160]
        raise ValueError(f"{path} is not a checkpoint of gdi before 0.2 that can be converted "
                         f"safely ({hint}); it is left as it was") from None
    if not isinstance(payload, dict) or payload.get("format") != 1:
        raise ValueError(f"{path} is not a checkpoint of gdi before 0.2 (format 1)")
    return payload


def upgrade_folder(folder: str | Path) -> Upgrade:
    """Convert every pickle checkpoint of ``folder`` (a run folder or a bundle). Every old file
    is read before anything is written, so a refusal leaves the folder as it was."""
    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} is not a gdi run folder or bundle (no config.json)")
    old = list_pickle_checkpoints(folder)
    if not old:
        have = list_checkpoints(folder)
        raise ValueError(f"{folder} holds no pickle checkpoints (ckpt_<frames>.pt) to convert"
                         + (f"; its {len(have)} checkpoint(s) are in the current format already"
                            if have else ""))
    payloads = [read_pickle_checkpoint(path) for path in old]
    dropped_envs = False
    converted = []
    for path, payload in zip(old, payloads, strict=True):
        for actor in payload.get("actors") or []:
            if actor.get("env") is not None:
                actor["env"] = None
                dropped_envs = True
        payload["format"] = FORMAT_VERSION
        target = path.with_suffix(CHECKPOINT_SUFFIX)
        write_data_file(target, payload)
        load_checkpoint(target)  # it reads back before the original is set aside
        path.replace(path.with_name(path.name + KEPT_SUFFIX))
        converted.append(target)
    notes = [f"converted {len(converted)} checkpoint(s) of {folder} to the data format of gdi "
             f"0.2 (the originals kept as *.pt{KEPT_SUFFIX}, never loaded again)"]
    if dropped_envs:
        notes.append("the inline actors' environments were saved as pickles, which are not "
                     "read: on resume their episodes restart (everything else resumes exactly)")
    return Upgrade(converted, notes)
