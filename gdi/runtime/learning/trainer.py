"""The learner side of a run, shared by every backend: data collector → learner → parameter
server, and the parts it calls: the metrics rows (``TrainingLog``), the evaluations
(``TrainingEvaluation``) and when to checkpoint (``CheckpointSchedule``); the checkpoint's
contents are the trainer's ``state_dict``.

Backends differ only in how actors run and how their windows arrive; the driver loop
(``gdi.runtime.driver``) hands every window to ``take_window``, runs ``train_while_ready`` and
lets ``periodic`` do the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import torch

from gdi.config import Config
from gdi.run_files import OBSERVATIONS_FILE
from gdi.runtime import seeds
from gdi.runtime.acting.actor import EpisodeRecord, Window
from gdi.runtime.acting.evaluator import Evaluation
from gdi.runtime.backends.base import ActorTurns
from gdi.runtime.callbacks import Callbacks
from gdi.runtime.errors import LearnerDiverged
from gdi.runtime.learning.evaluation import TrainingEvaluation, final_evaluation_recorded
from gdi.runtime.learning.learner import Learner
from gdi.runtime.learning.log import TrainingLog
from gdi.runtime.run_folder.checkpoint import (
    CheckpointSchedule,
    checkpoint_controller_states,
    save_checkpoint,
)
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.reservoir import StageReservoir
from gdi.runtime.storage.sequences import SequenceBatch
from gdi.runtime.storage.steps import StepChunk

__all__ = ["Trainer", "TrainingEvaluation", "final_evaluation_recorded"]


#: An episode return this large (in magnitude) is warned about: far beyond any game's score, it
#: is most likely an environment's bug, and float32 values lose all precision around it.
ABSURD_RETURN = 1e10


class Trainer:
    """The learner side of one run: takes the actors' windows (frames, episodes, E's states,
    sequences into the data collector), steps the learner while the collector is ready and
    pushes its parameters, and calls its parts when due: ``log`` (TrainingLog),
    ``evaluation`` (TrainingEvaluation), ``checkpoints`` (CheckpointSchedule; ``save`` writes
    ``state_dict``). ``callbacks`` hears of each episode's end, metrics row, evaluation and
    checkpoint once it is recorded."""

    def __init__(
        self,
        config: Config,
        env_config,
        run_dir: Path,
        learner: Learner,
        server,
        collector: ReplayCollector,
        index_names: tuple[str, ...],
        parallel_actors: int = 1,
        tensorboard: bool = True,
        callbacks: Callbacks | None = None,
    ) -> None:
        self.config = config
        self.callbacks = callbacks if callbacks is not None else Callbacks()
        self.run_dir = Path(run_dir)
        self.learner = learner
        self.server = server
        self.collector = collector
        # Visited states per training stage for `gdi analyze richness` (None when off).
        self.reservoir = StageReservoir(
            config.reservoir_stages, config.observation_reservoir, seed=seeds.reservoir(config.seed),
        ) if config.observation_reservoir > 0 else None
        self.writer = MetricsWriter(self.run_dir, tensorboard=tensorboard,
                                    wandb_project=config.wandb_project, config=config)
        self.frames = 0
        self.episodes = 0
        self.log = TrainingLog(config, self.writer, index_names, parallel_actors)
        self.evaluation = TrainingEvaluation(config, env_config, self.run_dir, self.writer)
        self.checkpoints = CheckpointSchedule(config)
        # Every actor's E as last reported (None until it reports): saved in checkpoints,
        # given to a restarted actor, and actor 0's is copied to draw evaluation λ from.
        self._controller_states: list[dict | None] = [None] * config.num_actors
        self.actor_restarts = 0
        self.turns = ActorTurns(config.num_actors)  # which idle actor the driver asks next
        self.recent_returns: list[float] = []  # for the progress bar
        # Asked during an evaluation, so that a stop request does not wait for its episodes
        # (the training loop sets it to its stop request's state).
        self.should_stop: Callable[[], bool] = lambda: False
        self._messages: list[str] = []  # warnings for the user (take_messages)
        self.learner_intact = True  # False while a learner step is under way
        self._skipped_in_a_row = 0
        self._warned_absurd = False  # an episode return of ABSURD_RETURN or more, said once

    # --- data in ---------------------------------------------------------------------------------
    def take_window(self, window: Window) -> None:
        """Everything an actor's window brings: frames, its E's state, its phase times, the
        episodes that ended (to meta.jsonl) and the sequences (to the data collector)."""
        self.frames += window.frames
        self._controller_states[window.actor_id] = window.controller_state
        self.log.add_actor_times(window.phase_seconds)
        self.record_episodes(window.episodes)
        self.ingest(window.steps, window.actor_id)

    def ingest(self, data: StepChunk | SequenceBatch, actor: int | None = None) -> None:
        """Sequences into the data collector: an actor's chunk of steps (continuing that
        actor's stream), or whole sequences."""
        self.collector.add(data, actor)
        if self.reservoir is not None:
            # States the behavior policies visited, from the learning part of the sequences
            # just added. Each is offered once: consecutive sequences of an environment overlap
            # by length − stride steps, so only their last seq_stride observations are new.
            window = self.collector.newest(
                data.num_envs if isinstance(data, StepChunk) else data.size)
            start = max(self.config.burn_in, window.length - self.config.seq_stride)
            visited = window.obs[start : window.length]
            self.reservoir.add(visited.reshape(-1, *visited.shape[2:]), self.progress,
                               self.frames)

    def record_episodes(self, episodes: list[EpisodeRecord]) -> None:
        for ep in episodes:
            self.writer.write_episode(self.frames, ep.actor, ep.lam, ep.episode_return, ep.length)
            self.callbacks.episode_end(ep, self.frames)
            self.recent_returns.append(ep.episode_return)
            if abs(ep.episode_return) >= ABSURD_RETURN and not self._warned_absurd:
                self._warned_absurd = True  # once a run: every later episode is likely alike
                self.warn(f"an episode returned {ep.episode_return:.3g} (actor {ep.actor}, "
                          f"environment {ep.env}, at {self.frames:,} frames) in "
                          f"{self.config.env}: returns of |G| >= {ABSURD_RETURN:.0e} swamp E's "
                          "statistics and float32 values; check the environment's reward "
                          "scale (this is said once)")
        self.log.add_episodes(episodes)
        self.episodes += len(episodes)
        del self.recent_returns[:-100]

    # --- operator T ------------------------------------------------------------------------------
    @property
    def progress(self) -> float:
        return min(1.0, self.frames / self.config.frames)

    def train_while_ready(self, before_step: Callable[[], None] | None = None) -> int:
        """Learner steps while the collector holds enough sequences; returns how many.
        ``before_step`` runs before each step (the driver asks actors for data there)."""
        done = 0
        while self.collector.ready():
            if before_step is not None:
                before_step()
            start = time.perf_counter()
            # Stacked observations as frames: the learner rebuilds the stacks on its device
            # (a quarter of the bytes to assemble here and to copy to a GPU).
            batch = self.collector.sample(out=self.learner.staging, stacked=False)
            self.learner_intact = False  # an exception inside the step may leave it half-done
            metrics = self.learner.step(batch, self.progress)
            self.learner_intact = True
            self._check_skipped("losses/skipped_nonfinite" in metrics)
            lag = self.learner.steps - batch.versions[self.config.burn_in:].mean()
            self.log.add_step(metrics, float(lag))
            pushed = time.perf_counter()
            self.log.add_time("learner", pushed - start)
            if self.learner.steps % self.config.push_every == 0:
                self.server.push(self.learner.net, self.learner.steps)
                self.log.add_time("push", time.perf_counter() - pushed)
            done += 1
        return done

    def _check_skipped(self, skipped: bool) -> None:
        """Warn once per streak of skipped updates; stop when a streak reaches the limit."""
        if not skipped:
            self._skipped_in_a_row = 0
            return
        self._skipped_in_a_row += 1
        cause = self.learner.skip_cause  # non-finite data: the environment, not the learner
        if self._skipped_in_a_row == 1:
            self.warn(
                f"learner step {self.learner.steps}: non-finite loss or gradient, update "
                "skipped (parameters unchanged"
                + (f"; in the batch from {self.config.env}: {cause}" if cause else "")
                + "); the run stops after "
                f"skipped_updates_max={self.config.skipped_updates_max} in a row"
            )
        if self._skipped_in_a_row >= self.config.skipped_updates_max:
            if cause:
                raise LearnerDiverged(
                    f"the learner skipped {self._skipped_in_a_row} consecutive updates after "
                    f"step {self.learner.steps}, at {self.frames:,} frames: the environment "
                    f"{self.config.env} gives non-finite data ({cause}); fix or wrap the "
                    "environment (the learning rate is not the cause)")
            raise LearnerDiverged(
                f"the learner skipped {self._skipped_in_a_row} consecutive updates (non-finite "
                f"loss or gradient) after step {self.learner.steps}, at {self.frames:,} frames; "
                f"no update can be applied (learning_rate={self.config.learning_rate:g}, "
                f"max_grad_norm={self.config.max_grad_norm:g})"
            )

    # --- bookkeeping ---------------------------------------------------------------------------
    def controller_state(self, actor_id: int) -> dict | None:
        """Actor ``actor_id``'s E as last reported (None before its first window): what a
        backend starts or restarts that actor with."""
        return self._controller_states[actor_id]

    def warn(self, *messages: str) -> None:
        """Warnings for the user, shown with the next progress report (``take_messages``)."""
        self._messages.extend(messages)

    def take_messages(self) -> list[str]:
        """The warnings since the last call."""
        taken, self._messages = self._messages, []
        return taken

    def count_actor_restarts(self, restarts: int) -> None:
        """Actors a backend restarted after failures (perf/actor_restarts counts them over the
        whole run, resumes included)."""
        self.actor_restarts += restarts

    def add_time(self, phase: str, seconds: float) -> None:
        """Seconds the learner process spent in ``phase`` (logged as perf/{phase}_share)."""
        self.log.add_time(phase, seconds)

    @property
    def policy_lag(self) -> float:
        return self.log.policy_lag

    def periodic(self, force_log: bool = False) -> None:
        """The metrics row and the evaluation, each when due (``force_log``: a row of
        whatever came since the last one, the run's last)."""
        if self.log.due(self.frames, force=force_log):
            row = self.log.write(self.frames, self.learner.steps, self.episodes,
                                 len(self.collector), self.actor_restarts)
            self.callbacks.log({"frames": self.frames, **row})
        if self.evaluation.due(self.frames) and self.evaluate() is None:
            return  # abandoned for a stop: still due, for the run's resumption

    def evaluate(self) -> dict | None:
        """Play an evaluation of the learner's network now, with λ from actor 0's E (see
        ``TrainingEvaluation.play``); its time counts as the run's ``eval`` phase."""
        start = time.perf_counter()
        try:
            played = self.evaluation.play(self.learner.net, self.frames,
                                          self._controller_states[0], self.should_stop)
        finally:
            self.log.add_time("eval", time.perf_counter() - start)
        if played is not None:
            self.callbacks.evaluation(Evaluation(tuple(played["episodes"]), played["frames"]))
        return played

    def final_evaluation(self) -> dict | None:
        """The run's closing evaluation: the periodic one when it was made at these very frames
        (a budget that is a multiple of ``eval_every``; playing it again would give the same
        episodes, same network and seed), else a new one; None when a stop interrupted it."""
        latest = self.evaluation.latest
        if latest is not None and latest["frames"] == self.frames:
            return latest
        return self.evaluate()

    def checkpoint_due(self) -> bool:
        return self.checkpoints.due(self.frames)

    def state_dict(self, actor_states: list[dict] | None = None) -> dict:
        """What a checkpoint holds; the format is the same whatever the backend: the config,
        the frame count, the learner (network, optimizer, schedule), the trainer's counters
        and its log's accumulators, the torch RNG and every actor's E (``controllers``). With
        ``actor_states`` (the inline backend's ``Backend.actor_states``: every actor's full
        state) it is exact: the actors (``actors``) and the data collector's contents
        (``collector``) are saved too."""
        payload = {
            "config": self.config.to_dict(),
            "frames": self.frames,
            "learner": self.learner.state_dict(),
            "trainer": {
                "episodes": self.episodes,
                **self.log.state_dict(),
                "next_eval": self.evaluation.next_due,
                "recent_returns": self.recent_returns,
                "actor_restarts": self.actor_restarts,
                "turns": self.turns.state_dict(),
            },
            "torch_rng": torch.get_rng_state(),
            "controllers": list(self._controller_states),
        }
        if actor_states is not None:
            payload["actors"] = actor_states
            payload["collector"] = self.collector.state_dict()
        if self.reservoir is not None:
            payload["reservoir"] = self.reservoir.state_dict()
        return payload

    def save(self, actor_states: list[dict] | None = None) -> Path:
        """Write a checkpoint of ``state_dict(actor_states)`` (and the reservoir's states)."""
        payload = self.state_dict(actor_states)
        self.writer.flush()
        path = save_checkpoint(self.run_dir, self.frames, payload, self.config.keep_checkpoints)
        if self.reservoir is not None:
            self.reservoir.save(self.run_dir / OBSERVATIONS_FILE)
        self.checkpoints.saved(self.frames)
        self.callbacks.checkpoint(path, self.frames)
        return path

    def restore(self, payload: dict) -> None:
        self.frames = payload["frames"]
        self.checkpoints.saved(self.frames)
        self.learner.load_state_dict(payload["learner"])
        t = payload["trainer"]
        self.episodes = t["episodes"]
        self.log.load_state_dict(t)
        self.evaluation.next_due = t["next_eval"]
        self.recent_returns = list(t["recent_returns"])
        self.actor_restarts = t.get("actor_restarts", 0)
        if "turns" in t:  # checkpoints written before ActorTurns start everyone afresh
            self.turns.load_state_dict(t["turns"])
        self._controller_states = checkpoint_controller_states(payload, self.config.num_actors)
        torch.set_rng_state(payload["torch_rng"])
        if "collector" in payload:
            self.collector.load_state_dict(payload["collector"])
        if self.reservoir is not None and "reservoir" in payload:
            self.reservoir.load_state_dict(payload["reservoir"])
        # Actors act with the restored parameters from their first step.
        self.server.push(self.learner.net, self.learner.steps)

    def close(self) -> None:
        self.writer.close()
