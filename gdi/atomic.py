"""Writing files so that a reader never sees half of one: nothing a run made is lost to an
interrupted write (a temporary file in the same folder, flushed to disk, then renamed over the
target; ``os.replace`` is atomic on POSIX)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def atomic_write(path: str | os.PathLike, write: Callable[[IO], None], binary: bool = True) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, then rename it to ``path``.
    On any error the temporary file is removed and ``path`` is left as it was."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) \
                as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
