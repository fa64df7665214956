"""``train``: the one function that knows how the roles connect (the paper's Algorithm 1).

    actors  ──sequences──▶  data collector  ──batches──▶  learner (operator T)
       ▲  │                                                   │
       │  └──(λ, G) per episode──▶ E (one per actor)          │ push every push_every steps
       └────────── pull every pull_every steps ◀── parameter server

The ``inline`` backend runs all of it in this process, deterministically for a seed; the
``local`` backend (``gdi.runtime.local``) runs each actor in its own process.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from gdi.config import Config
from gdi.envs import resolve_env
from gdi.policy_space import get_policy_space
from gdi.runtime.checkpoint import latest_checkpoint, load_checkpoint
from gdi.runtime.components import build_network, env_shapes, learner_threads
from gdi.runtime.inline import InlineBackend
from gdi.runtime.learner import Learner
from gdi.runtime.progress import TrainingProgress
from gdi.runtime.run_dir import create_run_dir, default_run_name, read_config, write_config
from gdi.runtime.stop import StopRequest
from gdi.runtime.trainer import Trainer


@dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    frames: int
    interrupted: bool
    final_eval_return: float | None


def _drop_rows_after(path: Path, frames: int) -> None:
    """Resuming redoes the frames after the checkpoint: drop the rows they wrote before."""
    if not path.is_file():
        return
    kept = [line for line in path.read_text().splitlines()
            if line.strip() and json.loads(line).get("frames", 0) <= frames]
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(line + "\n" for line in kept))
    tmp.replace(path)


def train(
    config: Config,
    run_dir: Path | str | None = None,
    resume: bool = False,
    stop_when: Callable[[int], bool] | None = None,
    show_progress: bool = True,
    tensorboard: bool = True,
) -> TrainResult:
    """Train ``config`` into a new run folder, or continue the run in ``run_dir`` (resume)."""
    payload = None
    if resume:
        if run_dir is None:
            raise ValueError("resume needs the run folder to continue")
        run_dir = Path(run_dir)
        saved, _ = read_config(run_dir)
        if saved != config:
            diff = {k: (v, config.to_dict()[k]) for k, v in saved.to_dict().items()
                    if config.to_dict()[k] != v}
            raise ValueError(
                f"the resumed run's config differs from the one given: {diff} "
                "(saved, given); resume with the saved config"
            )
        payload = load_checkpoint(latest_checkpoint(run_dir))
        if payload["config"].get("backend") != config.backend:
            raise ValueError("a checkpoint resumes on the backend that wrote it")
        for name in ("metrics.jsonl", "meta.jsonl"):
            _drop_rows_after(run_dir / name, payload["frames"])
    env_config = resolve_env(config.env, **config.env_overrides)
    if not resume:
        run_dir = create_run_dir(Path(run_dir) if run_dir else Path("runs") / default_run_name(config))
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

    stop = StopRequest(stop_when)
    previous_handlers = stop.install()
    progress = TrainingProgress(config.frames, trainer.frames, run_dir.name) if show_progress \
        else None
    try:
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


def report_progress(trainer: Trainer, progress: TrainingProgress | None) -> None:
    if progress is not None:
        progress.update(trainer.frames, trainer.recent_returns, trainer.policy_lag)
        for message in trainer.messages:
            progress.message(f"warning: {message}")
    trainer.messages.clear()
