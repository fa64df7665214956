"""``train``: the one function that knows how the roles connect (the paper's Algorithm 1).

    actors  ──windows──▶  data collector  ──batches──▶  learner (operator T)
       ▲  │                                                   │
       │  └──(λ, G) per episode──▶ E (one per actor)          │ push every push_every steps
       └────────── pull every pull_every steps ◀── parameter server

A backend (``gdi.runtime.backends``: inline, local or ray) places the actors and moves
windows and parameters; the driver loop (``gdi.runtime.driver``) is the same for all of them.
Each role has a folder of its own (docs/architecture.md follows one step through them).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from rich.console import Console

from gdi.atomic import StorageError
from gdi.config import PLACEMENT_FIELDS, Config, check_learner_device
from gdi.policy_space import get_policy_space
from gdi.runtime.backends.base import Backend, ParameterServer, backend_class
from gdi.runtime.callbacks import Callback, Callbacks
from gdi.runtime.components import (
    build_collector,
    build_network,
    env_shapes,
    flush_denormals,
    learner_device,
    learner_threads,
    resolve_run_env,
)
from gdi.runtime.driver import checkpoint, drive
from gdi.runtime.learning.learner import Learner
from gdi.runtime.learning.trainer import Trainer, final_evaluation_recorded
from gdi.runtime.progress import TrainingProgress
from gdi.runtime.run_folder.checkpoint import (
    latest_valid_checkpoint,
    list_checkpoints,
    load_checkpoint,
)
from gdi.runtime.run_folder.run_dir import (
    NewRunFolder,
    RunLock,
    check_wandb,
    default_run_name,
    drop_rows_after,
    frames_written,
    write_config,
)
from gdi.runtime.stop import INLINE_STOP_GRACE_S, StepHung, StopRequest
from gdi.runtime.storage.collector import ReplayCollector

#: What a resumed run may change: where, how and how long it runs, never what it learns. A
#: larger ``frames`` extends the budget (the annealed schedules follow the new budget, see
#: docs/paper-choices.md); another ``backend`` continues the run there (the checkpoint format
#: is the same for every backend).
RESUMABLE_FIELDS = ("frames", *PLACEMENT_FIELDS)


@dataclass(frozen=True)
class RunParts:
    """A run's parts, in the order experience flows through them (the diagram above)."""

    backend: Backend
    """The actors (each with its environments, its copy of θ and its own E), where they run
    and how their windows and θ move."""
    collector: ReplayCollector
    """Windows in, the learner's batches of sequences out."""
    learner: Learner
    """Operator T: θ and its optimizer, one update per batch."""

    @property
    def server(self) -> ParameterServer:
        """θ as the learner pushes it and the actors pull it: the backend's, read when asked
        (a Ray backend stopped while it reaches its cluster has none)."""
        return self.backend.server


def build_parts(config: Config, env_config, shapes, stop: StopRequest) -> RunParts:
    """Every part of a run, built from its config: the learner (θ drawn from torch's global
    generator, seeded before), the backend with its actors and parameter server, and the data
    collector. Nothing here writes to the run folder: a part that cannot be built (an
    environment gdi cannot act in, a Ray cluster it cannot reach) refuses the run before its
    folder exists. The trainer, which writes the folder, is built from these parts once it
    does."""
    learner = Learner(config, build_network(config, shapes), device=learner_device(config))
    backend = backend_class(config.backend)(config, env_config, shapes, learner, stop=stop)
    return RunParts(backend=backend, collector=build_collector(config, env_config),
                    learner=learner)


@dataclass(frozen=True)
class TrainResult:
    run_dir: Path | None  # None: stopped during start-up before a new run's folder was made
    frames: int
    interrupted: bool
    final_eval_return: float | None


def frames_before_first_step(config: Config, frames_per_step: int) -> int:
    """The fewest frames after which the collector can hold ``min_replay`` sequences, the
    learner's first step: each window of an actor adds one sequence per environment, an
    actor's first window after ``burn_in + seq_len`` steps and each later one ``seq_stride``
    steps on; the fewest frames when one actor acts every window (others only add frames)."""
    windows = -(-config.min_replay // config.envs_per_actor)
    steps = config.sequence_length + (windows - 1) * config.seq_stride
    return steps * config.envs_per_actor * frames_per_step


def check_budget_reaches_training(config: Config, frames_per_step: int) -> None:
    """ValueError when a new run's budget ends before its first learner step."""
    needed = frames_before_first_step(config, frames_per_step)
    if config.frames < needed:
        raise ValueError(
            f"frames={config.frames:,} ends before the first learner step: the collector holds "
            f"min_replay={config.min_replay} sequences only after at least {needed:,} frames "
            f"({config.envs_per_actor} environments per actor, {config.sequence_length} steps "
            f"to an actor's first window and {config.seq_stride} to each next, "
            f"{frames_per_step} frames per step); allowed: --frames {needed:,} or more, or a "
            "smaller min_replay")


class ForeignCheckpoint(ValueError):
    """The checkpoint a resume would start from was saved with a config that differs from the
    run's in what it learns."""


def fixed_differences(saved: Config, config: Config) -> list[str]:
    """The fields outside RESUMABLE_FIELDS in which ``config`` differs from ``saved``."""
    return [f.name for f in dataclasses.fields(Config)
            if getattr(saved, f.name) != getattr(config, f.name)
            and f.name not in RESUMABLE_FIELDS]


def own_older_checkpoint(config: Config, run_dir: Path, newest: Path) -> str:
    """What to do when the newest checkpoint is foreign to ``config``: the newest older one
    saved with it (offered, not taken: the user placed the newest there), or that none is."""
    for path in reversed([p for p in list_checkpoints(run_dir) if p.name < newest.name]):
        try:
            saved = Config.from_dict(load_checkpoint(path)["config"])
        except (ValueError, KeyError, TypeError):
            continue
        if not fixed_differences(saved, config):
            return (f"the newest checkpoint, {newest.name}, is the one that differs; the older "
                    f"{path.name} has this config: move {newest} out of the folder to resume "
                    "from it")
    return f"no older checkpoint of {run_dir} has this config either"


def check_resumable(config: Config, payload: dict, run_dir: Path) -> list[str]:
    """Refuse to resume with a config that changes what the run learns, or a finished run with
    no more budget; returns notes on what the resumed run changes."""
    saved = Config.from_dict(payload["config"])
    fixed = fixed_differences(saved, config)
    if fixed:
        raise ForeignCheckpoint(
            f"resuming {run_dir} with a config that differs from its checkpoint's in "
            + ", ".join(f"{name} ({getattr(saved, name)!r} → {getattr(config, name)!r})"
                        for name in fixed)
            + f"; a resumed run may change only {', '.join(RESUMABLE_FIELDS)}"
        )
    frames = int(payload["frames"])
    notes = []
    if frames >= config.frames:
        if final_evaluation_recorded(run_dir, frames) or saved.frames != config.frames:
            raise ValueError(
                f"{run_dir} already finished at {frames:,} frames (budget {config.frames:,}); "
                "to train on, extend the budget: gdi train --resume RUN --frames N"
            )
        # A stop during the final evaluation saved the checkpoint and recorded nothing.
        notes.append(f"the budget of {config.frames:,} frames was spent but the final "
                     "evaluation was interrupted: playing it now")
    if saved.frames != config.frames:
        notes.append(f"budget {saved.frames:,} → {config.frames:,} frames: the learning-rate "
                     "and weight-decay anneals now end at the new budget")
    if saved.backend != config.backend:
        notes.append(f"continuing on the {config.backend} backend (written on {saved.backend})")
    return notes


def train(
    config: Config,
    run_dir: Path | str | None = None,
    resume: bool = False,
    stop_when: Callable[[int], bool] | None = None,
    show_progress: bool = True,
    tensorboard: bool = True,
    stop: StopRequest | None = None,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train ``config`` into a new run folder, or continue the run in ``run_dir`` (resume).
    ``stop``: a StopRequest the caller installed before start-up (the CLI does, so that a
    Ctrl-C during imports is not lost); default: one made from ``stop_when``. ``callbacks``
    (``gdi.runtime.callbacks.Callback``) hear of each episode's end, metrics row, evaluation
    and checkpoint, and may stop the run through ``stop``."""
    stop = stop or StopRequest(stop_when)
    heard = Callbacks(callbacks, request_stop=stop.request)  # a wrong one refused before start
    with RunLock() as lock:  # this process alone writes the run folder, until it returns
        return _train(config, run_dir, resume, stop, show_progress, tensorboard, lock, heard)


def _train(config: Config, run_dir: Path | str | None, resume: bool, stop: StopRequest,
           show_progress: bool, tensorboard: bool, lock: RunLock,
           callbacks: Callbacks) -> TrainResult:
    check_learner_device(config.learner_device)  # a resumed GPU run on a CPU-only machine
    check_learner_device(config.actor_device, what="actor_device")
    check_wandb(config)  # W&B asked for but not installed: said before any folder is made
    payload, notes = None, []
    say = StartUpLines(show_progress)
    env_config = resolve_run_env(config)
    if not resume:
        check_budget_reaches_training(config, env_config.frames_per_step)
    if resume:
        if run_dir is None:
            raise ValueError("resume needs the run folder to continue")
        run_dir = Path(run_dir)
        lock.acquire(run_dir)
        newest, payload, notes = latest_valid_checkpoint(run_dir)
        try:
            changes = check_resumable(config, payload, run_dir)
        except ForeignCheckpoint as err:
            raise ValueError(f"{err}; {own_older_checkpoint(config, run_dir, newest)}") \
                from None
        if changes:
            write_config(run_dir, config, env_config.as_dict())
        notes += changes
        rows = [run_dir / "metrics.jsonl", run_dir / "meta.jsonl"]
        reached = max(frames_written(path) for path in rows)
        if reached > payload["frames"]:
            notes.append(f"resuming from the checkpoint at {payload['frames']:,} frames; the "
                         f"run had reached {reached:,}, so {reached - payload['frames']:,} "
                         "frames are redone")
        for path in rows:
            notes += drop_rows_after(path, payload["frames"])
        say(f"resuming {run_dir} from {newest.relative_to(run_dir)} at "
            f"{int(payload['frames']):,} frames (budget {config.frames:,})")

    torch.manual_seed(config.seed)
    flush_denormals()
    previous_threads = torch.get_num_threads()
    # What a new run's folder holds if it ends before training (refused, cut off, stopped):
    # taken back on the way out, so the same command can simply be run again.
    folder: NewRunFolder | None = None
    backend = trainer = progress = None
    start_frames = 0
    previous_handlers: dict = {}

    def trained() -> bool:  # a window was taken: from here on, the run is worth keeping
        return trainer is not None and trainer.frames > start_frames

    try:
        torch.set_num_threads(learner_threads(config))
        # Everything that can refuse the run (an environment gdi cannot act in, a Ray cluster
        # it cannot reach) comes before a new run's folder is made.
        shapes = env_shapes(env_config, config.seed)
        space = get_policy_space(config.policy_space)
        parts = build_parts(config, env_config, shapes, stop)
        backend = parts.backend
        stop.reclaim()  # Ray puts a SIGTERM handler of its own in place when it connects
        if stop.requested:  # e.g. while reaching a Ray cluster: before any folder was made
            return _stopped_during_start_up(run_dir if resume else None, say, resume,
                                            payload["frames"] if payload else 0)
        if not resume:
            folder = NewRunFolder(Path(run_dir) if run_dir else
                                  Path("runs") / default_run_name(config))
            run_dir = folder.create()
            lock.acquire(run_dir)
            write_config(run_dir, config, env_config.as_dict())
        run_dir = Path(run_dir)
        trainer = Trainer(config, env_config, run_dir, parts.learner, parts.server,
                          parts.collector, space.index_names,
                          parallel_actors=backend.parallel_actors, tensorboard=tensorboard,
                          callbacks=callbacks)
        trainer.writer.write_hparams_text(config)
        trainer.should_stop = lambda: stop.requested
        if payload is not None:
            trainer.restore(payload)
        start_frames = trainer.frames
        trainer.warn(*notes)  # checkpoints passed over, rows dropped, what resume changes
        previous_handlers = stop.install()
        if config.backend == "inline":  # its environments step here: a hung one needs a watchdog
            stop.watchdog_s = INLINE_STOP_GRACE_S
        if stop.requested:  # during start-up: nothing trained, so nothing new to checkpoint
            return _stopped_during_start_up(run_dir, say, resume, trainer.frames)
        if resume and stop(trainer.frames):  # a predicate the checkpoint already meets
            if say.console is not None:  # (--stop-at at or below its frames): no actor started
                say.console.print(f"{run_dir} is at {trainer.frames:,} frames, already at or "
                                  f"past {stop.reason}: nothing to train", highlight=False,
                                  soft_wrap=True)
            return TrainResult(run_dir, trainer.frames, True, None)
        if trainer.frames < config.frames:  # else resumed to play the final evaluation only
            say(f"{run_dir}: starting {config.num_actors} actor(s) of "
                f"{config.envs_per_actor} environments ({config.backend} backend)")
            trainer.warn(*backend.start(trainer.controller_state, payload, stop=stop))
            if stop.requested:
                return _stopped_during_start_up(run_dir, say, resume, trainer.frames)
            say("waiting for the first window of experience (each actor builds its "
                f"environments and acts {config.burn_in + config.seq_len} steps; a stop "
                "before it keeps nothing)")
        elif show_progress:  # no progress line will come to carry the resume's notes: say them
            for message in trainer.take_messages():
                print(f"warning: {message}", file=sys.stderr)
        progress = TrainingProgress(config.frames, trainer.frames, run_dir.name) \
            if show_progress else None

        def report() -> None:
            if say.pending_first_window:
                if not trained():  # a line now and then instead of "0 frames, 0 f/s"
                    say.still_waiting(progress)
                    report_progress(trainer, progress, frames=False)
                    return
                say.first_window_arrived(progress)
            report_progress(trainer, progress)

        try:
            drive(trainer, backend, stop, report)
        except Exception as err:
            # An actor that kept failing, an evaluation that failed: when the learner is whole
            # (and the disk is not what failed), the run stays resumable from here.
            if trained() and trainer.learner_intact and \
                    not isinstance(err, StorageError | StepHung):
                path = checkpoint(trainer, backend)
                if progress is not None:
                    progress.message(f"checkpoint saved to {path}; once the cause is fixed, "
                                     f"continue with: gdi train --resume {run_dir}")
            raise
        if stop.requested and not trained():  # before the first window: still start-up
            if progress is not None:
                progress.close()
                progress = None
            return _stopped_during_start_up(run_dir, say, resume, trainer.frames)
        final_return = None
        if not stop.requested:
            trainer.periodic(force_log=True)
            final = trainer.final_evaluation()  # None when a stop request interrupted it
            final_return = None if final is None else final["mean_return"]
        if trained():  # else the checkpoint at these frames is already the newest
            checkpoint(trainer, backend)
        if progress is not None:
            if stop.requested:
                how = "interrupted" if stop.signal is not None else f"stopped ({stop.reason})"
                progress.message(f"{how} at {trainer.frames:,} frames; checkpoint saved. "
                                 f"Continue with: gdi train --resume {run_dir}")
            else:
                progress.message(f"done: {trainer.frames:,} frames, final evaluation mean return "
                                 f"{final_return:.2f}; run folder {run_dir}")
            if not stop.requested and trainer.learner.steps == 0:
                progress.message(
                    f"warning: no learner step was taken: the collector held "
                    f"{len(trainer.collector)} of min_replay={config.min_replay} sequences when "
                    f"the budget of {config.frames:,} frames ended; the network is still its "
                    "initialization")
        return TrainResult(run_dir, trainer.frames, stop.requested, final_return)
    finally:
        stop.restore(previous_handlers)
        if progress is not None:
            progress.close()
        if backend is not None:
            backend.close()
        if trainer is not None:
            trainer.close()
        torch.set_num_threads(previous_threads)
        flush_denormals(False)
        if folder is not None and not trained() and lock.path is not None:
            folder.remove()  # nothing trained: take back what this run made, and only that


class StartUpLines:
    """One line per stage of start-up once the run folder is made (with ``show_progress``),
    so that a long start (the ALE preset's five actors on a CPU, a Ray cluster) says what it
    is doing. Start-up ends with the first window: a stop before it keeps nothing."""

    def __init__(self, show: bool) -> None:
        self.console = Console(stderr=True) if show else None
        self.started = time.monotonic()
        self.pending_first_window = True
        self._last_wait_line = 0.0

    def __call__(self, stage: str) -> None:
        if self.console is not None:
            self.console.print(f"start-up: {stage}", highlight=False, soft_wrap=True)

    def still_waiting(self, progress, every_s: float = 30.0) -> None:
        now = time.monotonic()
        if progress is not None and now - self._last_wait_line >= every_s:
            if self._last_wait_line:
                progress.message(f"start-up: still waiting for the first window "
                                 f"({now - self.started:.0f} s)")
            self._last_wait_line = now

    def first_window_arrived(self, progress) -> None:
        self.pending_first_window = False
        if progress is not None:
            progress.message(f"start-up: first window after {time.monotonic() - self.started:.0f}"
                             " s; training")


def _stopped_during_start_up(run_dir: Path | None, say: StartUpLines, resume: bool,
                             frames: int) -> TrainResult:
    """A stop before the first window: nothing trained, no checkpoint written; a new run's
    folder is taken back (by ``_train`` on its way out)."""
    if say.console is not None:
        if resume:
            line = ("interrupted during start-up; nothing new to save. Continue with: gdi "
                    f"train --resume {run_dir}")
        elif run_dir is None:
            line = "interrupted during start-up, before any training; no run folder was made"
        else:
            line = (f"interrupted during start-up, before any training; {run_dir} was taken "
                    "back (nothing trained): run the same command again to start")
        say.console.print(line, highlight=False, soft_wrap=True)
    return TrainResult(Path(run_dir) if run_dir is not None else None, frames, True, None)


def report_progress(trainer: Trainer, progress: TrainingProgress | None,
                    frames: bool = True) -> None:
    """The progress line (``frames``) and the warnings since the last report."""
    messages = trainer.take_messages()
    if progress is not None:
        if frames:
            progress.update(trainer.frames, trainer.recent_returns, trainer.policy_lag)
        for message in messages:
            progress.message(f"warning: {message}")
