"""What a run writes: its folder, ``config.json``, ``metrics.jsonl``, TensorBoard events and the
λ log ``meta.jsonl`` (one line per finished training episode: frames, actor, λ, return).

Run folders are named ``<env>__<preset>__<seed>__<time>`` and are never overwritten.
``config.json`` holds the full resolved config plus an allow-list of provenance (versions of
gdi, torch, ale-py, gymnasium, numpy and the git commit) — never environment variables.

One process writes a run folder at a time: training and resuming hold :class:`RunLock` on
``RUN/.lock`` for their whole life; a second writer is refused with the holder's PID.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import math
import os
import secrets
import subprocess
import time
from importlib import metadata
from pathlib import Path

from gdi.atomic import StorageError, atomic_write, why_not_writable, write_text
from gdi.config import Config
from gdi.upgrade import todays_config_fields

PROVENANCE_PACKAGES = ("gdi-rl", "torch", "ale-py", "gymnasium", "minatar", "numpy")


def default_run_name(config: Config) -> str:
    env = config.env.replace(":", "-").replace("/", "-")
    return f"{env}__{config.preset}__{config.seed}__{time.strftime('%Y%m%d-%H%M%S')}"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def provenance() -> dict:
    versions = {}
    for name in PROVENANCE_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"versions": versions, "git_commit": _git_commit()}


LOCK_FILE = ".lock"
#: What config.json holds beside the Config's fields.
RECORD_EXTRAS = ("name", "env_settings", "provenance")


def create_run_dir(path: Path) -> Path:
    """Create a new run folder (and its parents). A folder that holds anything is never
    reused (an empty one is: nothing in it can be lost); one that cannot be created (a
    read-only parent, a parent that is a file) is a ValueError of one line naming the folder
    and the reason."""
    return NewRunFolder(path).create()


class NewRunFolder:
    """The folder of a new run, and what this process made of it: the folders it created (the
    run folder and any missing parents) or, in an empty folder that was already there, the
    files it put in. A run that ends before it trains (a refused environment, a Ray cluster it
    cannot reach or place its actors on, a Ctrl-C during start-up) takes back exactly that
    (:meth:`remove`), so the same command can be run again; nothing that was there before is
    touched."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.reused = False  # an empty folder that existed: only its contents are ours
        self.created: list[Path] = []  # folders this process made, the run folder first

    def create(self) -> Path:
        path = self.path
        if path.exists():
            if not path.is_dir() or any(path.iterdir()):
                raise self._exists()
            self.reused = True
        missing = [] if self.reused else [path, *self._missing_parents()]
        try:
            path.mkdir(parents=True, exist_ok=self.reused)
            self.created = missing
            (path / "eval").mkdir()
        except FileExistsError:  # another process created it in between
            raise self._exists() from None
        except OSError as err:
            raise ValueError(f"cannot create run folder {path}: {why_not_writable(path, err)}") \
                from None
        return path

    def _missing_parents(self) -> list[Path]:
        missing = []
        for parent in self.path.parents:
            if parent.exists():
                break
            missing.append(parent)
        return missing

    def _exists(self) -> FileExistsError:
        path = self.path
        if (path / "config.json").is_file():
            return FileExistsError(
                f"run folder {path} already exists; pass --resume {path} to continue it, or "
                "choose another --run-dir (runs are never overwritten)")
        what = "a file" if path.exists() and not path.is_dir() else "a folder that is not empty"
        return FileExistsError(
            f"--run-dir {path} is {what} and not a gdi run folder; choose a new or empty "
            "folder (nothing there is overwritten)")

    def remove(self) -> None:
        """Take back what :meth:`create` made (call it holding the run's lock, so that no
        other gdi process writes there): the run folder with its contents, then each parent
        it created while it is empty; in a reused folder, only what is inside."""
        import shutil

        if self.reused:
            for child in self.path.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
            return
        if not self.created:
            return
        shutil.rmtree(self.created[0], ignore_errors=True)
        for parent in self.created[1:]:
            try:
                parent.rmdir()  # only while empty: another run may have been put there since
            except OSError:
                break


class RunLock:
    """Held by the one process that writes a run folder (training or resuming): an exclusive
    ``fcntl.flock`` on ``RUN/.lock``, with the holder's PID written inside for the refusal
    message. The kernel drops the lock when the holder exits, however it exits (kill -9
    included), so a lock is never stale; the file itself stays (removing it would let two
    processes lock two different files). Actor processes are spawned, so they do not inherit
    the lock. Use as a context manager; :meth:`acquire` takes the folder once it exists."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self.path: Path | None = None

    def acquire(self, run_dir: Path) -> None:
        if self._fd is not None:
            raise RuntimeError(f"this RunLock already holds {self.path}")
        if not Path(run_dir).is_dir():
            raise FileNotFoundError(f"{run_dir} is not a gdi run folder (no such folder)")
        path = Path(run_dir) / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise ValueError(
                f"cannot lock run folder {run_dir} for writing ({err.strerror}); training and "
                "resuming need a writable run folder"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise ValueError(
                f"run folder {run_dir} is being written by another gdi process (PID {holder}); "
                "wait for it to end or stop it first — one process writes a run at a time"
            ) from None
        self._fd, self.path = fd, path  # held: a new run's folder is this process's to take back
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as err:  # a full disk: the lock is held, but no run can be written
            raise StorageError(f"cannot write {path}: {why_not_writable(path, err)}; nothing "
                               "was trained") from None

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_holder(run_dir: Path) -> str | None:
    """The PID (as written) of the live process that holds ``run_dir``'s RunLock, or None when
    no process does (the lock is tried and let go at once)."""
    return flock_holder(Path(run_dir) / LOCK_FILE)


def flock_holder(path: Path) -> str | None:
    """The start of ``path`` (a lock file's PID) when a live process holds an exclusive flock on
    it, else None (no such file, or no holder: the lock is tried and let go at once)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def write_config(run_dir: Path, config: Config, env_settings: dict) -> None:
    record = {
        **config.to_dict(),
        "name": Path(run_dir).name,
        "env_settings": env_settings,
        "provenance": provenance(),
    }
    write_text(Path(run_dir) / "config.json", json.dumps(record, indent=2, default=list) + "\n")


def read_config(run_dir: Path) -> tuple[Config, dict]:
    """The run's Config and the full record (with env settings and provenance).

    Every Config field must be in the file: a missing one is an error naming it, never filled
    from today's defaults (a run resumed with another batch size or network is another run),
    except what an earlier gdi did not write (``gdi.upgrade.todays_config_fields``: the
    fields added since, the labels derived).
    A file that is not JSON, not an object, or holds a bad value is a ValueError naming the
    file and the problem."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not a gdi run folder (no config.json)")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is not valid JSON ({err})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path} must hold a JSON object of config fields, "
                         f"not a {type(record).__name__}")
    fields = {k: v for k, v in record.items() if k not in RECORD_EXTRAS}
    fields = todays_config_fields(fields)
    missing = [f.name for f in dataclasses.fields(Config) if f.name not in fields]
    if missing:
        raise ValueError(
            f"{path} lacks the field(s) {', '.join(missing)}; a run's config is never filled in "
            "from today's defaults — put back the value(s) the run was trained with"
        )
    try:
        config = Config.from_dict(fields)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from None
    return config, record


def frames_written(path: Path) -> int:
    """The most frames any row of ``path`` (metrics.jsonl, meta.jsonl) records; 0 if none.
    Lines that are not JSON rows (a write cut short) are passed over."""
    path = Path(path)
    reached = 0
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("frames"), int):
                reached = max(reached, row["frames"])
    return reached


def drop_rows_after(path: Path, frames: int) -> list[str]:
    """Resuming redoes the frames after the checkpoint: drop the rows of ``path`` (a JSON-lines
    file: metrics.jsonl, meta.jsonl) they wrote before. An incomplete last line (what a crash
    mid-write leaves) is dropped too; returns one warning naming the file for it. Any other
    line that is not a JSON object is a ValueError naming the file and line."""
    path = Path(path)
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    kept, warnings = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
        except ValueError as err:
            if number == len(lines):
                warnings.append(f"{path}: dropped its incomplete last line {number} (a write cut "
                                f"short by a crash): {line[:60]!r}")
                continue
            raise ValueError(f"{path} line {number} is not a JSON row ({err}); fix or remove "
                             "that line to resume") from None
        if row.get("frames", 0) <= frames:
            kept.append(line)
    if len(kept) == len(lines):
        return warnings  # nothing to drop: the file stays as it is
    try:
        atomic_write(path, lambda handle: handle.write("".join(line + "\n" for line in kept)),
                     binary=False)
    except OSError as err:
        raise StorageError(
            f"could not rewrite {path} without the rows after the checkpoint at {frames:,} "
            f"frames: {why_not_writable(path, err)}; nothing was changed: once there is room, "
            "resume again") from None
    return warnings


#: The file in a run folder that keeps its Weights & Biases run id, so a resume continues it.
WANDB_ID_FILE = "wandb_run_id"


def check_wandb(wandb_project: str) -> None:
    """A one-line ValueError, before any run folder is made, when ``wandb_project`` is set and
    Weights & Biases is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("wandb") if wandb_project else None
    # A folder named wandb/ (W&B's own output folder) in the working directory is found as a
    # namespace package, with no origin: that is not the package.
    if wandb_project and (spec is None or spec.origin is None):
        raise ValueError(f"wandb_project={wandb_project!r} needs Weights & Biases, "
                         "which is not installed: pip install 'gdi-rl[wandb]' (or leave "
                         "wandb_project empty)")


class WandbRun:
    """The run's W&B mirror: the config once, then every metrics row, with ``frames`` as the
    x axis of every chart (a resume redoes the frames after its checkpoint; W&B's own step
    only grows). Its files go in ``RUN/wandb/``; its id in ``RUN/wandb_run_id``."""

    def __init__(self, run_dir: Path, project: str, config: dict | None) -> None:
        import wandb

        id_file = run_dir / WANDB_ID_FILE
        if id_file.is_file():
            run_id = id_file.read_text().strip()
        else:
            run_id = secrets.token_hex(6)  # W&B ids: lowercase letters and digits
            write_text(id_file, run_id + "\n")
        try:
            self._run = wandb.init(
                project=project, id=run_id, resume="allow", name=run_dir.name,
                dir=str(run_dir), config=config,
                settings=wandb.Settings(console="off", x_disable_stats=True),
            )
        except Exception as err:  # no API key, no network, a bad project name
            reason = " ".join(str(err).split())[:200] or type(err).__name__
            raise ValueError(f"Weights & Biases could not start the run ({reason}); log in "
                             "(wandb login), set WANDB_MODE=offline, or leave wandb_project "
                             "empty") from None
        self._run.define_metric("frames")
        self._run.define_metric("*", step_metric="frames")

    def log(self, frames: int, scalars: dict[str, float | None]) -> None:
        self._run.log({"frames": frames, **{k: v for k, v in scalars.items() if v is not None}})

    def finish(self) -> None:
        self._run.finish()


class MetricsWriter:
    """Rows of scalars to ``metrics.jsonl`` and TensorBoard, namespaced (``charts/``,
    ``losses/``, ``meta/``, ``perf/``, ``schedule/``), and the λ log ``meta.jsonl``.

    A write that fails (a full disk, a folder made read-only) is a one-line
    :class:`~gdi.atomic.StorageError` naming the file: the run stops there, and its newest
    checkpoint stays what a resume continues from (the rows after it are dropped then)."""

    def __init__(self, run_dir: Path, tensorboard: bool = True, wandb_project: str = "",
                 config: dict | None = None) -> None:
        self.run_dir = Path(run_dir)
        self._jsonl = self._open("metrics.jsonl")
        self._meta = self._open("meta.jsonl")
        self._tb = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(log_dir=str(self.run_dir / "tensorboard"))
        self._wandb = WandbRun(self.run_dir, wandb_project, config) if wandb_project else None

    def _open(self, name: str):
        try:
            return open(self.run_dir / name, "a")
        except OSError as err:
            raise self._failed(self.run_dir / name, err) from None

    def _failed(self, path: Path, err: OSError) -> StorageError:
        return StorageError(
            f"could not write {path}: {why_not_writable(path, err)}; the run stopped at its "
            "newest checkpoint: once there is room, continue with: gdi train --resume "
            f"{self.run_dir}")

    def _append(self, handle, line: str) -> None:
        try:
            handle.write(line)
            handle.flush()
        except OSError as err:
            raise self._failed(Path(handle.name), err) from None

    def write(self, frames: int, scalars: dict[str, float]) -> None:
        clean = {k: (float(v) if math.isfinite(float(v)) else None) for k, v in scalars.items()}
        self._append(self._jsonl, json.dumps({"frames": frames, **clean}) + "\n")
        if self._tb is not None:
            try:
                for key, value in clean.items():
                    if value is not None:
                        self._tb.add_scalar(key, value, frames)
                self._tb.flush()
            except OSError as err:
                raise self._failed(self.run_dir / "tensorboard", err) from None
        if self._wandb is not None:
            self._wandb.log(frames, clean)

    def write_episode(self, frames: int, actor: int, lam: tuple[float, ...], ret: float,
                      length: int) -> None:
        line = json.dumps({"frames": frames, "actor": actor, "lambda": list(lam),
                           "return": ret, "length": length}) + "\n"
        try:
            self._meta.write(line)  # flushed with each metrics row (``flush``)
        except OSError as err:
            raise self._failed(self.run_dir / "meta.jsonl", err) from None

    def flush(self) -> None:
        try:
            self._meta.flush()
        except OSError as err:
            raise self._failed(self.run_dir / "meta.jsonl", err) from None

    def write_hparams_text(self, config: dict) -> None:
        """The run's config (``Config.to_dict``) as a table in TensorBoard's text tab."""
        if self._tb is not None:
            rows = "\n".join(f"|{k}|{v}|" for k, v in config.items())
            self._tb.add_text("config", "|field|value|\n|-|-|\n" + rows)

    def close(self) -> None:
        """Close the files; a write that fails now (the disk still full) was reported when it
        first failed, and what it held is redone by a resume, so it is not raised again."""
        for handle in (self._jsonl, self._meta):
            try:
                handle.close()
            except OSError:
                pass
        if self._tb is not None:
            try:
                self._tb.close()
            except OSError:
                pass
        if self._wandb is not None:
            self._wandb.finish()
