"""Where a run folder keeps its checkpoints and what they are called.

The runtime writes ``checkpoints/ckpt_<frames>.pt`` (``gdi.runtime.checkpoint``: atomic
writes, loading, pruning); reports and tools outside the runtime only need to find them, so the
naming lives here, below both, beside the evaluation score files of ``gdi.scores``. Standard
library only: every layer may import it.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["CHECKPOINT_DIR", "checkpoint_name", "latest_checkpoint", "list_checkpoints"]

CHECKPOINT_DIR = "checkpoints"
_CHECKPOINT_NAME = re.compile(r"^ckpt_(\d{12})\.pt$")


def checkpoint_name(frames: int) -> str:
    """``ckpt_<frames>.pt`` with the frames zero-padded to 12 digits, so that names sort as the
    frames do."""
    return f"ckpt_{frames:012d}.pt"


def list_checkpoints(run_dir: Path) -> list[Path]:
    """Checkpoints of a run, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _CHECKPOINT_NAME.match(p.name))


def latest_checkpoint(run_dir: Path) -> Path:
    """The newest checkpoint of a run; FileNotFoundError when it has none."""
    found = list_checkpoints(run_dir)
    if not found:
        raise FileNotFoundError(
            f"{run_dir} has no checkpoints (looked in {run_dir}/{CHECKPOINT_DIR})")
    return found[-1]
