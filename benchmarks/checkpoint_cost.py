"""Time a run's checkpoints: milliseconds per checkpoint write, and its size (not a test).

Trains a short run of a preset (default: gdi-i3 on minatar:breakout, the local backend as
``make train`` runs it) with a checkpoint every ``--every`` frames, and times each
``save_checkpoint`` call the trainer makes: the learner's network and optimizer, every actor's
E, the trainer's counters and RNG, written atomically (temporary file, flush, rename). What a
checkpoint interval costs is this time against the frames the interval trains
(docs/benchmarks.md, "Checkpoints").

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/checkpoint_cost.py [--env ENV]
[--preset P] [--backend B] [--frames N] [--every N]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gdi.runtime.training.checkpointing
from gdi.presets import resolve_config
from gdi.runtime.wiring import train


def timed_checkpoints(config, run_dir: Path) -> list[tuple[float, int]]:
    """(seconds, bytes) of every checkpoint the trainer writes while training ``config``."""
    save = gdi.runtime.training.checkpointing.save_checkpoint
    timings: list[tuple[float, int]] = []

    def timed_save(*args, **kwargs):
        start = time.perf_counter()
        path = save(*args, **kwargs)
        timings.append((time.perf_counter() - start, path.stat().st_size))
        return path

    gdi.runtime.training.checkpointing.save_checkpoint = timed_save
    try:
        train(config, run_dir, show_progress=False, tensorboard=False)
    finally:
        gdi.runtime.training.checkpointing.save_checkpoint = save
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="minatar:breakout")
    parser.add_argument("--preset", default="gdi-i3")
    parser.add_argument("--backend", default="local")
    parser.add_argument("--frames", type=int, default=40_000)
    parser.add_argument("--every", type=int, default=4_000)
    args = parser.parse_args()
    config = resolve_config(args.preset, args.env, frames=args.frames, backend=args.backend)
    config = config.replace(checkpoint_every_frames=args.every, eval_every=0)
    with tempfile.TemporaryDirectory() as folder:
        timings = timed_checkpoints(config, Path(folder) / "run")
    ms = sorted(seconds * 1e3 for seconds, _ in timings)
    size = max(size for _, size in timings)
    print(f"{args.preset} on {args.env}, {args.backend} backend: {len(ms)} checkpoints of "
          f"{size / 1e6:.2f} MB; ms per write: min {ms[0]:.1f}, median {ms[len(ms) // 2]:.1f}, "
          f"max {ms[-1]:.1f}")


if __name__ == "__main__":
    main()
