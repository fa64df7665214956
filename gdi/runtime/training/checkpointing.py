"""What a checkpoint holds, and writing and restoring one (``Checkpointing``, a part the trainer
calls). The format is the same whatever the backend; the file itself, atomic and pruned, is
``gdi.runtime.run_folder.checkpoint``'s.
"""

from __future__ import annotations

from pathlib import Path

import torch

from gdi.run_files import OBSERVATIONS_FILE
from gdi.runtime.backends.base import ParameterServer
from gdi.runtime.callbacks import Callbacks
from gdi.runtime.run_folder.checkpoint import (
    CheckpointSchedule,
    checkpoint_controller_states,
    save_checkpoint,
)
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.reservoir import StageReservoir
from gdi.runtime.training.episodes import EpisodeRecorder
from gdi.runtime.training.learner import Learner
from gdi.runtime.training.log import TrainingLog
from gdi.runtime.training.periodic_evaluation import TrainingEvaluation
from gdi.runtime.training.roster import ActorRoster
from gdi.runtime_config import OutputConfig


class Checkpointing:
    """Gathers the learner side's state into a checkpoint (``state_dict``), writes it when the
    schedule says (``due``, ``save``: every ``checkpoint_every_s`` seconds or
    ``checkpoint_every_frames`` frames) and puts one back (``restore``). The parts it reads
    are the run's, built by ``gdi.runtime.wiring.build_trainer``."""

    def __init__(self, saved_config: dict, output: OutputConfig, run_dir: Path, learner: Learner,
                 collector: ReplayCollector, server: ParameterServer, log: TrainingLog,
                 evaluation: TrainingEvaluation, episodes: EpisodeRecorder, roster: ActorRoster,
                 reservoir: StageReservoir | None, writer: MetricsWriter,
                 callbacks: Callbacks) -> None:
        self.saved_config, self.keep = saved_config, output.keep_checkpoints
        self.run_dir = run_dir
        self.learner, self.collector, self.server = learner, collector, server
        self.log, self.evaluation, self.episodes, self.roster = log, evaluation, episodes, roster
        self.reservoir, self.writer, self.callbacks = reservoir, writer, callbacks
        self.schedule = CheckpointSchedule(output)

    def due(self, frames: int) -> bool:
        return self.schedule.due(frames)

    def state_dict(self, frames: int, actor_states: list[dict] | None = None) -> dict:
        """What a checkpoint holds: the config, the frame count, the learner (network,
        optimizer, schedule), the learner side's counters and its log's accumulators, the
        torch RNG and every actor's E (``controllers``). With ``actor_states`` (the inline
        backend's ``Backend.actor_states``: every actor's full state) it is exact: the actors
        (``actors``) and the data collector's contents (``collector``) are saved too."""
        payload = {
            "config": self.saved_config,
            "frames": frames,
            "learner": self.learner.state_dict(),
            "trainer": {
                "episodes": self.episodes.episodes,
                **self.log.state_dict(),
                "next_eval": self.evaluation.next_due,
                "recent_returns": self.episodes.recent_returns,
                "actor_restarts": self.roster.restarts,
                "turns": self.roster.turns.state_dict(),
            },
            "torch_rng": torch.get_rng_state(),
            "controllers": list(self.roster.controller_states),
        }
        if actor_states is not None:
            payload["actors"] = actor_states
            payload["collector"] = self.collector.state_dict()
        if self.reservoir is not None:
            payload["reservoir"] = self.reservoir.state_dict()
        return payload

    def save(self, frames: int, actor_states: list[dict] | None = None) -> Path:
        """Write a checkpoint of ``state_dict`` (and the reservoir's states), then tell the
        callbacks (``on_checkpoint``); returns its path."""
        payload = self.state_dict(frames, actor_states)
        self.writer.flush()
        path = save_checkpoint(self.run_dir, frames, payload, self.keep)
        if self.reservoir is not None:
            self.reservoir.save(self.run_dir / OBSERVATIONS_FILE)
        self.schedule.saved(frames)
        self.callbacks.checkpoint(path, frames)
        return path

    def restore(self, payload: dict) -> int:
        """Put a checkpoint back into the parts and push its θ to the parameter server, so
        that actors act with it from their first step; returns its frames."""
        frames = payload["frames"]
        self.schedule.saved(frames)
        self.learner.load_state_dict(payload["learner"])
        t = payload["trainer"]
        self.episodes.episodes = t["episodes"]
        self.log.load_state_dict(t)
        self.evaluation.next_due = t["next_eval"]
        self.episodes.recent_returns = list(t["recent_returns"])
        self.roster.restarts = t["actor_restarts"]
        self.roster.turns.load_state_dict(t["turns"])
        self.roster.controller_states = checkpoint_controller_states(
            payload, len(self.roster.controller_states))
        torch.set_rng_state(payload["torch_rng"])
        if "collector" in payload:
            self.collector.load_state_dict(payload["collector"])
        if self.reservoir is not None and "reservoir" in payload:
            self.reservoir.load_state_dict(payload["reservoir"])
        self.server.push(self.learner.net, self.learner.steps)
        return frames
