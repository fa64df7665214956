"""``train``: the one function that knows how the roles connect (the paper's Algorithm 1).

    actors  ──sequences──▶  data collector  ──batches──▶  learner (operator T)
       ▲  │                                                   │
       │  └──(λ, G) per episode──▶ E (one per actor)          │ push every push_every steps
       └────────── pull every pull_every steps ◀── parameter server

The ``inline`` backend runs all of it in this process, deterministically for a seed; the
``local`` backend (``gdi.runtime.local``) runs each actor in its own process.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from gdi.config import Config
from gdi.envs import resolve_env
from gdi.policy_space import get_policy_space
from gdi.runtime.checkpoint import latest_valid_checkpoint
from gdi.runtime.components import build_network, env_shapes, learner_threads
from gdi.runtime.inline import InlineBackend
from gdi.runtime.learner import Learner
from gdi.runtime.progress import TrainingProgress
from gdi.runtime.run_dir import (
    RunLock,
    create_run_dir,
    default_run_name,
    drop_rows_after,
    read_config,
    write_config,
)
from gdi.runtime.stop import StopRequest
from gdi.runtime.trainer import Trainer


@dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    frames: int
    interrupted: bool
    final_eval_return: float | None


def train(
    config: Config,
    run_dir: Path | str | None = None,
    resume: bool = False,
    stop_when: Callable[[int], bool] | None = None,
    show_progress: bool = True,
    tensorboard: bool = True,
    stop: StopRequest | None = None,
) -> TrainResult:
    """Train ``config`` into a new run folder, or continue the run in ``run_dir`` (resume).
    ``stop``: a StopRequest the caller installed before start-up (the CLI does, so that a
    Ctrl-C during imports is not lost); default: one made from ``stop_when``."""
    with RunLock() as lock:  # this process alone writes the run folder, until it returns
        return _train(config, run_dir, resume, stop or StopRequest(stop_when), show_progress,
                      tensorboard, lock)


def _train(config: Config, run_dir: Path | str | None, resume: bool, stop: StopRequest,
           show_progress: bool, tensorboard: bool, lock: RunLock) -> TrainResult:
    payload, notes = None, []
    if resume:
        if run_dir is None:
            raise ValueError("resume needs the run folder to continue")
        run_dir = Path(run_dir)
        lock.acquire(run_dir)
        saved, _ = read_config(run_dir)
        if saved != config:
            diff = {k: (v, config.to_dict()[k]) for k, v in saved.to_dict().items()
                    if config.to_dict()[k] != v}
            raise ValueError(
                f"the resumed run's config differs from the one given: {diff} "
                "(saved, given); resume with the saved config"
            )
        _, payload, notes = latest_valid_checkpoint(run_dir)
        if payload["config"].get("backend") != config.backend:
            raise ValueError("a checkpoint resumes on the backend that wrote it")
        for name in ("metrics.jsonl", "meta.jsonl"):
            notes += drop_rows_after(run_dir / name, payload["frames"])
    env_config = resolve_env(config.env, **config.env_overrides)
    if not resume:
        run_dir = create_run_dir(Path(run_dir) if run_dir else Path("runs") / default_run_name(config))
        lock.acquire(run_dir)
        write_config(run_dir, config, env_config.as_dict())
    run_dir = Path(run_dir)

    torch.manual_seed(config.seed)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(learner_threads(config))
    shapes = env_shapes(env_config, config.seed)
    space = get_policy_space(config.policy_space)
    learner = Learner(config, build_network(config, shapes),
                      device=config.learner_device)
    if config.backend == "local":
        from gdi.runtime.local import LocalBackend

        backend = LocalBackend(config, env_config, shapes, learner)
    else:
        backend = InlineBackend(config, env_config, shapes, learner)
    trainer = Trainer(config, env_config, run_dir, learner, backend.server, space.index_names,
                      tensorboard=tensorboard)
    trainer.writer.write_hparams_text(config)
    if payload is not None:
        trainer.restore(payload)
    trainer.messages += notes  # checkpoints passed over, incomplete rows dropped

    previous_handlers = stop.install()
    progress = TrainingProgress(config.frames, trainer.frames, run_dir.name) if show_progress \
        else None
    try:
        if stop.requested:  # during start-up: nothing trained, so nothing new to checkpoint
            return _stopped_during_start_up(run_dir, trainer, progress, resume)
        backend.run(trainer, payload, stop, lambda: report_progress(trainer, progress))
        final_return = None
        if not stop.requested:
            trainer.periodic(force_log=True)
            final_return = trainer.evaluate()["mean_return"]
        trainer.save()
        if progress is not None:
            if stop.requested:
                progress.message(f"interrupted at {trainer.frames:,} frames; checkpoint saved. "
                                 f"Continue with: gdi train --resume {run_dir}")
            else:
                progress.message(f"done: {trainer.frames:,} frames, final evaluation mean return "
                                 f"{final_return:.2f}; run folder {run_dir}")
        return TrainResult(run_dir, trainer.frames, stop.requested, final_return)
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
        if progress is not None:
            progress.close()
        backend.close()
        trainer.close()
        torch.set_num_threads(previous_threads)


def _stopped_during_start_up(run_dir: Path, trainer: Trainer, progress, resume: bool):
    if progress is not None:
        report_progress(trainer, progress)
        progress.message(
            f"interrupted during start-up; nothing new to save. Continue with: gdi train "
            f"--resume {run_dir}" if resume else
            f"interrupted during start-up, before any training; {run_dir} holds only its "
            "config (no checkpoint): remove it or choose another --run-dir to start again"
        )
    return TrainResult(run_dir, trainer.frames, True, None)


def report_progress(trainer: Trainer, progress: TrainingProgress | None) -> None:
    if progress is not None:
        progress.update(trainer.frames, trainer.recent_returns, trainer.policy_lag)
        for message in trainer.messages:
            progress.message(f"warning: {message}")
    trainer.messages.clear()
