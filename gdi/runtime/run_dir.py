"""What a run writes: its folder, ``config.json``, ``metrics.jsonl``, TensorBoard events and the
λ log ``meta.jsonl`` (one line per finished training episode: frames, actor, λ, return).

Run folders are named ``<env>__<preset>__<seed>__<time>`` and are never overwritten.
``config.json`` holds the full resolved config plus an allow-list of provenance (versions of
gdi, torch, ale-py, gymnasium, numpy and the git commit) — never environment variables.
"""

from __future__ import annotations

import json
import math
import subprocess
import time
from importlib import metadata
from pathlib import Path

from gdi.config import Config

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


def create_run_dir(path: Path) -> Path:
    path = Path(path)
    if path.exists():
        raise FileExistsError(
            f"run folder {path} already exists; pass --resume {path} to continue it, or choose "
            "another --run-dir (runs are never overwritten)"
        )
    path.mkdir(parents=True)
    (path / "eval").mkdir()
    return path


def write_config(run_dir: Path, config: Config, env_settings: dict) -> None:
    record = {
        **config.to_dict(),
        "name": Path(run_dir).name,
        "env_settings": env_settings,
        "provenance": provenance(),
    }
    (Path(run_dir) / "config.json").write_text(json.dumps(record, indent=2, default=list) + "\n")


def read_config(run_dir: Path) -> tuple[Config, dict]:
    """The run's Config and the full record (with env settings and provenance)."""
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not a gdi run folder (no config.json)")
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err})") from None
    fields = {k: v for k, v in record.items() if k not in ("name", "env_settings", "provenance")}
    return Config.from_dict(fields), record


class MetricsWriter:
    """Rows of scalars to ``metrics.jsonl`` and TensorBoard, namespaced (``charts/``,
    ``losses/``, ``meta/``, ``perf/``, ``schedule/``)."""

    def __init__(self, run_dir: Path, tensorboard: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self._jsonl = open(self.run_dir / "metrics.jsonl", "a")
        self._meta = open(self.run_dir / "meta.jsonl", "a")
        self._tb = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(log_dir=str(self.run_dir / "tensorboard"))

    def write(self, frames: int, scalars: dict[str, float]) -> None:
        clean = {k: (float(v) if math.isfinite(float(v)) else None) for k, v in scalars.items()}
        self._jsonl.write(json.dumps({"frames": frames, **clean}) + "\n")
        self._jsonl.flush()
        if self._tb is not None:
            for key, value in clean.items():
                if value is not None:
                    self._tb.add_scalar(key, value, frames)
            self._tb.flush()

    def write_episode(self, frames: int, actor: int, lam: tuple[float, ...], ret: float,
                      length: int) -> None:
        self._meta.write(json.dumps(
            {"frames": frames, "actor": actor, "lambda": list(lam), "return": ret,
             "length": length}) + "\n")

    def flush(self) -> None:
        self._meta.flush()

    def write_hparams_text(self, config: Config) -> None:
        if self._tb is not None:
            rows = "\n".join(f"|{k}|{v}|" for k, v in config.to_dict().items())
            self._tb.add_text("config", "|field|value|\n|-|-|\n" + rows)

    def close(self) -> None:
        self._jsonl.close()
        self._meta.close()
        if self._tb is not None:
            self._tb.close()
