"""The learner side of a run, which the driver loop (``gdi.runtime.driver.drive``) calls, the
same for every backend: each window into its parts, operator T while the data collector is
ready, and a metrics row, an evaluation and a checkpoint when due. Each of those jobs is a
part of its own (``episodes``, ``roster``, ``updates``, ``log``, ``evaluation``,
``checkpoints``: one module each in this folder), built by ``gdi.runtime.wiring.build_trainer``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gdi.runtime.acting.actor import Window
from gdi.runtime.backends.base import ActorTurns
from gdi.runtime.progress import Warnings
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.reservoir import StageReservoir
from gdi.runtime.training.checkpointing import Checkpointing
from gdi.runtime.training.episodes import EpisodeRecorder
from gdi.runtime.training.learner import Learner
from gdi.runtime.training.log import TrainingLog
from gdi.runtime.training.periodic_evaluation import TrainingEvaluation
from gdi.runtime.training.roster import ActorRoster
from gdi.runtime.training.updates import LearnerUpdates
from gdi.runtime_config import ReplayConfig


@dataclass(eq=False)
class Trainer:
    """The learner side of one run: its parts, and the frames trained so far. ``warnings``:
    what the user is told with the next progress report."""

    budget: int
    """The run's frames (``frames``): training's progress is frames over it."""
    replay: ReplayConfig
    """The sequences' shape and the collector's sizes (what the driver asks actors for)."""
    collector: ReplayCollector
    learner: Learner
    updates: LearnerUpdates
    episodes: EpisodeRecorder
    roster: ActorRoster
    reservoir: StageReservoir | None
    """Visited states per training stage for ``gdi analyze richness`` (None when off)."""
    log: TrainingLog
    evaluation: TrainingEvaluation
    checkpoints: Checkpointing
    warnings: Warnings
    writer: MetricsWriter
    frames: int = 0

    # --- a window in ---------------------------------------------------------------------------
    def take_window(self, window: Window) -> None:
        """Everything an actor's window brings: frames, its E's state, its phase times, the
        episodes that ended, and its steps into the data collector (which continues that
        actor's stream into sequences), their new states into the reservoir."""
        self.frames += window.frames
        self.roster.reported(window.actor_id, window.controller_state)
        self.log.add_actor_times(window.phase_seconds)
        self.episodes.record(window.episodes, self.frames)
        self.collector.add(window.steps, window.actor_id)
        if self.reservoir is not None:
            self.reservoir.add_new_states(self.collector.newest(window.steps.num_envs),
                                          self.replay.burn_in, self.replay.seq_stride,
                                          self.progress, self.frames)

    # --- operator T ----------------------------------------------------------------------------
    @property
    def progress(self) -> float:
        return min(1.0, self.frames / self.budget)

    def train_while_ready(self, before_step: Callable[[], None] | None = None) -> int:
        """Learner steps while the collector is ready (``LearnerUpdates.while_ready``)."""
        return self.updates.while_ready(self.frames, self.progress, before_step)

    # --- the run's records, when due -----------------------------------------------------------
    def periodic(self, force_log: bool = False) -> None:
        """The metrics row and the evaluation, each when due (``force_log``: a row of
        whatever came since the last one, the run's last). An evaluation abandoned for a stop
        stays due, for the run's resumption."""
        if self.log.due(self.frames, force=force_log):
            self.log.write(self.frames, self.learner.steps, self.episodes.episodes,
                           len(self.collector), self.roster.restarts)
        if self.evaluation.due(self.frames):
            self.evaluation.run(self.learner.net, self.frames, self.roster.controller_state(0))

    def final_evaluation(self) -> dict | None:
        """The run's closing evaluation (``TrainingEvaluation.final``); None when a stop
        interrupted it."""
        return self.evaluation.final(self.learner.net, self.frames,
                                     self.roster.controller_state(0))

    def checkpoint_due(self) -> bool:
        return self.checkpoints.due(self.frames)

    def save(self, actor_states: list[dict] | None = None) -> Path:
        """Write a checkpoint (``Checkpointing.save``)."""
        return self.checkpoints.save(self.frames, actor_states)

    def restore(self, payload: dict) -> None:
        self.frames = self.checkpoints.restore(payload)

    # --- what the loop and the progress line read ----------------------------------------------
    @property
    def turns(self) -> ActorTurns:
        return self.roster.turns

    def warn(self, *messages: str) -> None:
        self.warnings.warn(*messages)

    def take_messages(self) -> list[str]:
        return self.warnings.take()

    def add_time(self, phase: str, seconds: float) -> None:
        self.log.add_time(phase, seconds)

    def count_actor_restarts(self, restarts: int) -> None:
        self.roster.count_restarts(restarts)

    def close(self) -> None:
        self.writer.close()
