"""What happens around a run's training loop, from the command to the last line: the checks
before it starts (devices, W&B, a new run's budget, what a resume may change), opening a run
to resume, the lines start-up prints, and ``RunSession``: the settings of the learner's
process, the run folder a new run makes, starting the actors, the loop with what keeps the
run resumable when it fails, the run's end, and closing all of it however the run ends.
``gdi.runtime.wiring.train`` calls them in that order.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from rich.console import Console

from gdi.atomic import StorageError
from gdi.config import PLACEMENT_FIELDS, Config, check_learner_device
from gdi.runtime.backends.base import Backend
from gdi.runtime.components import flush_denormals, learner_threads
from gdi.runtime.driver import checkpoint, drive
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
from gdi.runtime.training.periodic_evaluation import final_evaluation_recorded
from gdi.runtime.training.trainer import Trainer

#: What a resumed run may change: where, how and how long it runs, never what it learns. A
#: larger ``frames`` extends the budget (the annealed schedules follow the new budget, see
#: docs/paper-choices.md); another ``backend`` continues the run there (the checkpoint format
#: is the same for every backend).
RESUMABLE_FIELDS = ("frames", *PLACEMENT_FIELDS)


@dataclass(frozen=True)
class TrainResult:
    """How a run ended: its folder, its frames, whether a stop ended it, and its final
    evaluation's mean return (None when it played none)."""

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

def check_can_run(config: Config) -> None:
    """What this machine must have before anything is built or written: the devices the
    config names (a resumed GPU run on a CPU-only machine) and W&B when it is asked for."""
    check_learner_device(config.learner_device)
    check_learner_device(config.actor_device, what="actor_device")
    check_wandb(config.wandb_project)


@dataclass(frozen=True)
class Resumed:
    """A run to continue: its folder, the checkpoint's payload, and notes for the user
    (checkpoints passed over, rows dropped, what the resumed run changes)."""

    run_dir: Path
    payload: dict
    notes: list[str]

    @property
    def frames(self) -> int:
        return int(self.payload["frames"])


def open_resumed_run(config: Config, run_dir: Path | str | None, lock: RunLock, env_config,
                     say: StartUpLines) -> Resumed:
    """Lock ``run_dir``, load its newest valid checkpoint, refuse a config that changes what
    the run learns (``check_resumable``), write the config again when it changed, and drop
    the metrics and E rows written after the checkpoint (those frames are trained again)."""
    if run_dir is None:
        raise ValueError("resume needs the run folder to continue")
    run_dir = Path(run_dir)
    lock.acquire(run_dir)
    newest, payload, notes = latest_valid_checkpoint(run_dir)
    try:
        changes = check_resumable(config, payload, run_dir)
    except ForeignCheckpoint as err:
        raise ValueError(f"{err}; {own_older_checkpoint(config, run_dir, newest)}") from None
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
    return Resumed(run_dir, payload, notes)


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

class RunSession:
    """One run from the learner process's settings to its last line: what it opened (the
    stop signals' handlers, the progress line, the actors, the trainer, a new run's folder),
    closed in ``close`` however the run ends."""

    def __init__(self, config: Config, stop: StopRequest, say: StartUpLines,
                 resumed: Resumed | None, lock: RunLock) -> None:
        self.config, self.stop, self.say, self.resumed, self.lock = (
            config, stop, say, resumed, lock)
        self.actors: Backend | None = None
        self.trainer: Trainer | None = None
        self.progress: TrainingProgress | None = None
        # What a new run's folder holds if it ends before training (refused, cut off,
        # stopped): taken back on the way out, so the same command can simply be run again.
        self.folder: NewRunFolder | None = None
        self.start_frames = 0
        self._handlers: dict = {}
        self._threads: int | None = None

    def trained(self) -> bool:
        """A window was taken: from here on, the run is worth keeping."""
        return self.trainer is not None and self.trainer.frames > self.start_frames

    def enter_learner_process(self) -> None:
        """Seed torch's generator (θ is drawn from it), flush denormal floats, and give the
        learner its threads (restored by ``close``)."""
        torch.manual_seed(self.config.seed)
        flush_denormals()
        self._threads = torch.get_num_threads()
        torch.set_num_threads(learner_threads(self.config))

    def new_run_folder(self, run_dir: Path | str | None, env_config) -> Path:
        """Make a new run's folder (``runs/<name>`` unless given), lock it, write its config."""
        config = self.config
        self.folder = NewRunFolder(Path(run_dir) if run_dir else
                                   Path("runs") / default_run_name(config))
        run_dir = self.folder.create()
        self.lock.acquire(run_dir)
        write_config(run_dir, config, env_config.as_dict())
        return Path(run_dir)

    def start(self, run_dir: Path, show_progress: bool) -> TrainResult | None:
        """Restore the checkpoint resumed from, take the stop signals over, and start the
        actors; a TrainResult when the run ends here (a stop during start-up, a predicate
        the checkpoint already meets)."""
        config, stop, say, trainer = self.config, self.stop, self.say, self.trainer
        payload = self.resumed.payload if self.resumed is not None else None
        if payload is not None:
            trainer.restore(payload)
        self.start_frames = trainer.frames
        if self.resumed is not None:  # checkpoints passed over, rows dropped, what changes
            trainer.warn(*self.resumed.notes)
        self._handlers = stop.install()
        if self.actors.acts_in_loop:  # a hung environment step would block the loop: a watchdog
            stop.watchdog_s = INLINE_STOP_GRACE_S
        if stop.requested:  # during start-up: nothing trained, so nothing new to checkpoint
            return self.stopped_during_start_up(run_dir)
        if self.resumed is not None and stop(trainer.frames):  # a predicate already met
            if say.console is not None:  # (--stop-at at or below its frames): no actor started
                say.console.print(f"{run_dir} is at {trainer.frames:,} frames, already at or "
                                  f"past {stop.reason}: nothing to train", highlight=False,
                                  soft_wrap=True)
            return TrainResult(run_dir, trainer.frames, True, None)
        if trainer.frames < config.frames:  # else resumed to play the final evaluation only
            say(f"{run_dir}: starting {config.num_actors} actor(s) of "
                f"{config.envs_per_actor} environments ({config.backend} backend)")
            trainer.warn(*self.actors.start(trainer.roster.controller_state, payload, stop=stop))
            if stop.requested:
                return self.stopped_during_start_up(run_dir)
            say("waiting for the first window of experience (each actor builds its "
                f"environments and acts {config.burn_in + config.seq_len} steps; a stop "
                "before it keeps nothing)")
        elif show_progress:  # no progress line will come to carry the resume's notes: say them
            for message in trainer.take_messages():
                print(f"warning: {message}", file=sys.stderr)
        self.progress = TrainingProgress(config.frames, trainer.frames, run_dir.name) \
            if show_progress else None
        return None

    def report(self) -> None:
        """The progress line, or a start-up line while the first window is awaited."""
        say, trainer, progress = self.say, self.trainer, self.progress
        if say.pending_first_window:
            if not self.trained():  # a line now and then instead of "0 frames, 0 f/s"
                say.still_waiting(progress)
                report_progress(trainer, progress, frames=False)
                return
            say.first_window_arrived(progress)
        report_progress(trainer, progress)

    def drive(self, run_dir: Path) -> None:
        """The training loop (``gdi.runtime.driver.drive``) until the budget is spent or a
        stop. When it fails (an actor that kept failing, an evaluation that failed) with the
        learner whole and the disk not what failed, a checkpoint keeps the run resumable."""
        try:
            drive(self.trainer, self.actors, self.stop, self.report,
                  sequences_per_window=self.config.envs_per_actor)
        except Exception as err:
            if self.trained() and self.trainer.updates.intact and \
                    not isinstance(err, StorageError | StepHung):
                path = checkpoint(self.trainer, self.actors)
                if self.progress is not None:
                    self.progress.message(f"checkpoint saved to {path}; once the cause is "
                                          "fixed, continue with: gdi train --resume "
                                          f"{run_dir}")
            raise

    def finish(self, run_dir: Path) -> TrainResult:
        """The run's end: its last metrics row and final evaluation unless stopped, a
        checkpoint when it trained, and its last line."""
        config, stop, trainer, progress = self.config, self.stop, self.trainer, self.progress
        if stop.requested and not self.trained():  # before the first window: still start-up
            if progress is not None:
                progress.close()
                self.progress = None
            return self.stopped_during_start_up(run_dir)
        final_return = None
        if not stop.requested:
            trainer.periodic(force_log=True)
            final = trainer.final_evaluation()  # None when a stop request interrupted it
            final_return = None if final is None else final["mean_return"]
        if self.trained():  # else the checkpoint at these frames is already the newest
            checkpoint(trainer, self.actors)
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

    def stopped_during_start_up(self, run_dir: Path | None) -> TrainResult:
        """A stop before the first window: nothing trained, no checkpoint written; a new
        run's folder is taken back (by ``close``). ``run_dir``: None before a new run's folder
        was made."""
        resume = self.resumed is not None
        if resume:
            run_dir = self.resumed.run_dir
        if self.say.console is not None:
            if resume:
                line = ("interrupted during start-up; nothing new to save. Continue with: gdi "
                        f"train --resume {run_dir}")
            elif run_dir is None:
                line = "interrupted during start-up, before any training; no run folder was made"
            else:
                line = (f"interrupted during start-up, before any training; {run_dir} was taken "
                        "back (nothing trained): run the same command again to start")
            self.say.console.print(line, highlight=False, soft_wrap=True)
        frames = self.trainer.frames if self.trainer is not None else (
            self.resumed.frames if resume else 0)
        return TrainResult(Path(run_dir) if run_dir is not None else None, frames, True, None)

    def close(self) -> None:
        """Whatever the run opened, closed in order, however it ended; a new run's folder
        taken back when nothing was trained."""
        self.stop.restore(self._handlers)
        if self.progress is not None:
            self.progress.close()
        if self.actors is not None:
            self.actors.close()
        if self.trainer is not None:
            self.trainer.close()
        if self._threads is not None:
            torch.set_num_threads(self._threads)
            flush_denormals(False)
        if self.folder is not None and not self.trained() and self.lock.path is not None:
            self.folder.remove()  # nothing trained: take back what this run made, and only that


def report_progress(trainer: Trainer, progress: TrainingProgress | None,
                    frames: bool = True) -> None:
    """The progress line (``frames``) and the warnings since the last report."""
    messages = trainer.take_messages()
    if progress is not None:
        if frames:
            progress.update(trainer.frames, trainer.episodes.recent_returns,
                            trainer.log.policy_lag)
        for message in messages:
            progress.message(f"warning: {message}")
