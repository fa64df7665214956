"""Writing files so that a reader never sees half of one: nothing a run made is lost to an
interrupted write (a temporary file in the same folder, flushed to disk, then renamed over the
target; ``os.replace`` is atomic on POSIX)."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


class StorageError(OSError):
    """A run's file could not be written (full disk, read-only or missing folder). The message
    is one line naming the file, the system's reason and what was kept; the CLI prints it as
    it is and exits with code 1."""


def os_error_in(err: BaseException) -> OSError | None:
    """The OSError that caused ``err``, if any: ``torch.save`` can report a failed write (a
    full disk) as its own RuntimeError with the OSError only in the exception's context."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, OSError):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


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


def why_not_writable(path: Path, err: OSError) -> str:
    """The reason a file or folder cannot be made at ``path``, said about the nearest existing
    ancestor (the folder the user has to fix)."""
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if err.errno == errno.ENOTDIR or (ancestor.exists() and not ancestor.is_dir()):
        return f"{ancestor} is a file, not a folder"
    if err.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to write in {ancestor}"
    if err.errno == errno.EROFS:
        return f"{ancestor} is on a read-only file system"
    if err.errno == errno.ENOENT and ancestor.is_dir():  # e.g. /proc: no new files there
        return f"{ancestor} takes no new files ({err.strerror})"
    return err.strerror or str(err)


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; a write that fails (a full disk, a
    read-only folder) is a one-line :class:`StorageError` naming the file."""
    path = Path(path)
    try:
        return atomic_write(path, lambda handle: handle.write(text), binary=False)
    except OSError as err:
        raise StorageError(f"could not write {path}: {why_not_writable(path, err)}") from None


#: Bytes a probe writes to tell a folder with room from a full one (a full disk still lets an
#: empty file be made).
PROBE_BYTES = 64 * 1024


def probe_writable(folder: str | os.PathLike, what: str) -> None:
    """A one-line :class:`StorageError` unless ``folder`` can be made and ``PROBE_BYTES``
    written there (a temporary file, removed): called before work whose result would
    otherwise be lost at the end (episodes played, a figure drawn). ``what`` names the result
    in the message, e.g. "the evaluation"."""
    folder = Path(folder)
    made = [p for p in (folder, *folder.parents) if not p.exists()]  # deepest first
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gdi-probe.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(b"\0" * PROBE_BYTES)
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as err:
        for path in made:  # take back the folders made for a result that cannot be written
            try:
                path.rmdir()
            except OSError:
                break
        raise StorageError(f"cannot write {what} in {folder}: {why_not_writable(folder / 'x', err)}"
                           "; nothing was done") from None


def save_figure(fig, path: str | os.PathLike, **savefig_kwargs) -> Path:
    """``fig.savefig`` atomically (the format from the suffix): no empty or half-written image
    is ever left at ``path``; a write that fails is a one-line :class:`StorageError`."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fmt = path.suffix.lstrip(".").lower() or "png"
        return atomic_write(path, lambda handle: fig.savefig(handle, format=fmt,
                                                             **savefig_kwargs))
    except Exception as err:  # a backend may wrap the OSError of a failed write
        err = os_error_in(err)
        if err is None:
            raise
        raise StorageError(f"could not write the figure {path}: {why_not_writable(path, err)}"
                           ) from None
