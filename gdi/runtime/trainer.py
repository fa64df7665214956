"""The learner side of a run, shared by every backend: data collector → learner → parameter
server, plus the run's bookkeeping (frames, metrics rows, checkpoints) and its evaluations
(``TrainingEvaluation``, a part the trainer calls).

Backends differ only in how actors run and how their windows arrive; the driver loop
(``gdi.runtime.driver``) hands every window to ``take_window``, runs ``train_while_ready`` and
lets ``periodic`` do the rest.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from gdi.config import Config
from gdi.run_files import EVAL_DIR, OBSERVATIONS_FILE
from gdi.runtime import seeds
from gdi.runtime.actor import EpisodeRecord, Window
from gdi.runtime.backend import ActorTurns
from gdi.runtime.checkpoint import checkpoint_controller_states, save_checkpoint
from gdi.runtime.collector import ReplayCollector
from gdi.runtime.components import build_controller
from gdi.runtime.errors import LearnerDiverged
from gdi.runtime.evaluator import POLICY_DESCRIPTION, play_episodes
from gdi.runtime.learner import Learner
from gdi.runtime.reservoir import StageReservoir
from gdi.runtime.run_dir import MetricsWriter
from gdi.runtime.sequences import SequenceBatch
from gdi.runtime.steps import StepChunk
from gdi.scores import periodic_eval_name, write_eval_file


def final_evaluation_recorded(run_dir: Path, frames: int) -> bool:
    """Whether the run's evaluation at ``frames`` was recorded (a stop during the final
    evaluation records nothing: a resume plays it)."""
    return (Path(run_dir) / EVAL_DIR / f"{periodic_eval_name(frames)}.json").is_file()


class TrainingEvaluation:
    """The evaluations a run plays while it trains: every ``eval_every`` frames (``due``) and
    at its end, each written to ``eval/`` and as a metrics row (``eval/mean_return``). The
    policy is the population's: λ drawn from a copy of actor 0's E as last reported, never
    updated by evaluation."""

    def __init__(self, config: Config, env_config, run_dir: Path, writer: MetricsWriter) -> None:
        self.config, self.env_config, self.run_dir, self.writer = (
            config, env_config, run_dir, writer)
        #: The frames at which the next periodic evaluation is due (None: none are).
        self.next_due: int | None = config.eval_every if config.eval_every > 0 else None
        #: The last evaluation's record (its frames, mean return and episodes), or None.
        self.latest: dict | None = None

    def due(self, frames: int) -> bool:
        return self.next_due is not None and frames >= self.next_due

    def controller(self, controller_state: dict | None):
        """A copy of an actor's E (its reported state; a fresh E before any report) to draw
        evaluation λ from."""
        cfg = self.config
        controller = build_controller(cfg, seeds.periodic_evaluation_lambda(cfg.seed))
        if controller_state is not None:
            controller.load_state_dict(controller_state)
        return controller

    def play(self, net: torch.nn.Module, frames: int, controller_state: dict | None,
             should_stop: Callable[[], bool]) -> dict | None:
        """Play the evaluation episodes of ``net`` at ``frames`` and record them
        (eval/<frames>.json, eval/mean_return); the next periodic one is then due
        ``eval_every`` frames on. None, recording nothing (and still due), when
        ``should_stop`` interrupted them."""
        device = next(net.parameters()).device
        if device.type != "cpu":
            import copy

            net = copy.deepcopy(net).cpu()
        controller = self.controller(controller_state)
        seed = seeds.periodic_evaluation(self.config.seed)
        results = play_episodes(
            net, self.env_config, self.config.policy_space, controller.sample,
            self.config.eval_episodes, seed, should_stop=should_stop,
        )
        if results is None:
            return None
        name = periodic_eval_name(frames)
        write_eval_file(
            self.run_dir, name, checkpoint=name, frames=frames, env=self.config.env,
            policy=POLICY_DESCRIPTION, seed=seed, episodes=results,
        )
        mean_return = float(np.mean([r["return"] for r in results]))
        self.writer.write(frames, {"eval/mean_return": mean_return,
                                   "eval/episodes": len(results)})
        self.latest = {"frames": frames, "mean_return": mean_return, "episodes": results}
        while self.next_due is not None and self.next_due <= frames:
            self.next_due += self.config.eval_every
        return self.latest


class Trainer:
    def __init__(
        self,
        config: Config,
        env_config,
        run_dir: Path,
        learner: Learner,
        server,
        index_names: tuple[str, ...],
        parallel_actors: int = 1,
        tensorboard: bool = True,
    ) -> None:
        self.config = config
        self.run_dir = Path(run_dir)
        self.learner = learner
        self.server = server
        self.index_names = index_names
        self.collector = ReplayCollector(
            config.batch_size, config.replay, config.replay_capacity, config.min_replay,
            seed=seeds.collector(config.seed), frame_stack=env_config.stacked_frames,
        )
        # Visited states per training stage for `gdi analyze richness` (None when off).
        self.reservoir = StageReservoir(
            config.reservoir_stages, config.observation_reservoir, seed=seeds.reservoir(config.seed),
        ) if config.observation_reservoir > 0 else None
        self.writer = MetricsWriter(self.run_dir, tensorboard=tensorboard,
                                    wandb_project=config.wandb_project, config=config)
        self.frames = 0
        self.episodes = 0
        self.next_log = config.log_every
        self.evaluation = TrainingEvaluation(config, env_config, self.run_dir, self.writer)
        # Every actor's E as last reported (None until it reports): saved in checkpoints,
        # given to a restarted actor, and actor 0's is copied to draw evaluation λ from.
        self._controller_states: list[dict | None] = [None] * config.num_actors
        self.actor_restarts = 0
        self.turns = ActorTurns(config.num_actors)  # which idle actor the driver asks next
        self.recent_returns: list[float] = []  # for the progress bar
        self._acc_loss: dict[str, list[float]] = defaultdict(list)
        self._acc_episodes: list[EpisodeRecord] = []
        self._lag: list[float] = []  # since the last metrics row
        self._recent_lag: deque[float] = deque(maxlen=20)  # for the progress bar
        self._timers: dict[str, float] = defaultdict(float)
        self._actor_timers: dict[str, float] = defaultdict(float)
        self.parallel_actors = parallel_actors  # each with its own wall clock
        # Asked during an evaluation, so that a stop request does not wait for its episodes
        # (the training loop sets it to its stop request's state).
        self.should_stop: Callable[[], bool] = lambda: False
        self._last_log_time = time.perf_counter()
        self._last_log_frames = 0
        self._last_log_steps = 0
        self._last_checkpoint_time = time.monotonic()
        self._last_checkpoint_frames = 0
        self._messages: list[str] = []  # warnings for the user (take_messages)
        self.learner_intact = True  # False while a learner step is under way
        self._skipped_in_a_row = 0

    # --- data in ---------------------------------------------------------------------------------
    def take_window(self, window: Window) -> None:
        """Everything an actor's window brings: frames, its E's state, its phase times, the
        episodes that ended (to meta.jsonl) and the sequences (to the data collector)."""
        self.frames += window.frames
        self._controller_states[window.actor_id] = window.controller_state
        self.add_actor_times(window.phase_seconds)
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
            self._acc_episodes.append(ep)
            self.recent_returns.append(ep.episode_return)
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
            for key, value in metrics.items():
                self._acc_loss[key].append(value)
            lag = self.learner.steps - batch.versions[self.config.burn_in:].mean()
            self._lag.append(float(lag))
            self._recent_lag.append(float(lag))
            pushed = time.perf_counter()
            self._timers["learner"] += pushed - start
            if self.learner.steps % self.config.push_every == 0:
                self.server.push(self.learner.net, self.learner.steps)
                self._timers["push"] += time.perf_counter() - pushed
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
        self._timers[phase] += seconds

    def add_actor_times(self, phase_seconds: dict[str, float]) -> None:
        """Seconds an actor spent per phase (``Actor.take_phase_seconds``), logged as
        perf/actor_{phase}_share: the share of an actor's wall time, averaged over the
        ``parallel_actors`` actors that run in parallel (1 when they share this process)."""
        for phase, seconds in phase_seconds.items():
            self._actor_timers[phase] += seconds

    @property
    def policy_lag(self) -> float:
        return float(np.mean(self._recent_lag)) if self._recent_lag else 0.0

    def periodic(self, force_log: bool = False) -> None:
        if self.frames >= self.next_log or (force_log and self.frames > self._last_log_frames):
            self._log()
            while self.next_log <= self.frames:
                self.next_log += self.config.log_every
        if self.evaluation.due(self.frames) and self.evaluate() is None:
            return  # abandoned for a stop: still due, for the run's resumption

    def _log(self) -> None:
        now = time.perf_counter()
        elapsed = max(now - self._last_log_time, 1e-9)
        row: dict[str, float] = {"learner_steps": self.learner.steps, "episodes": self.episodes}
        eps = self._acc_episodes
        if eps:
            row["charts/episodic_return"] = float(np.mean([e.episode_return for e in eps]))
            row["charts/episodic_return_max"] = float(np.max([e.episode_return for e in eps]))
            row["charts/episode_length"] = float(np.mean([e.length for e in eps]))
            lams = np.array([e.lam for e in eps], dtype=np.float64)
            for i, name in enumerate(self.index_names):
                row[f"meta/{name}_mean"] = float(lams[:, i].mean())
                row[f"meta/{name}_std"] = float(lams[:, i].std())
        for key, values in self._acc_loss.items():
            row[key] = float(np.mean(values))
        row["perf/policy_lag"] = float(np.mean(self._lag)) if self._lag else 0.0
        row["perf/replay_size"] = len(self.collector)
        row["perf/fps"] = (self.frames - self._last_log_frames) / elapsed
        row["perf/learner_steps_per_s"] = (self.learner.steps - self._last_log_steps) / elapsed
        for phase, seconds in self._timers.items():
            row[f"perf/{phase}_share"] = seconds / elapsed
        for phase, seconds in self._actor_timers.items():
            row[f"perf/actor_{phase}_share"] = seconds / (elapsed * self.parallel_actors)
        row["perf/actor_restarts"] = self.actor_restarts
        self.writer.write(self.frames, row)
        self.writer.flush()
        self._acc_loss.clear()
        self._acc_episodes = []
        self._lag = []
        self._timers.clear()
        self._actor_timers.clear()
        self._last_log_time, self._last_log_frames = now, self.frames
        self._last_log_steps = self.learner.steps

    def evaluate(self) -> dict | None:
        """Play an evaluation of the learner's network now, with λ from actor 0's E (see
        ``TrainingEvaluation.play``); its time counts as the run's ``eval`` phase."""
        start = time.perf_counter()
        try:
            return self.evaluation.play(self.learner.net, self.frames, self._controller_states[0],
                                        self.should_stop)
        finally:
            self._timers["eval"] += time.perf_counter() - start

    def final_evaluation(self) -> dict | None:
        """The run's closing evaluation: the periodic one when it was made at these very frames
        (a budget that is a multiple of ``eval_every``; playing it again would give the same
        episodes, same network and seed), else a new one; None when a stop interrupted it."""
        latest = self.evaluation.latest
        if latest is not None and latest["frames"] == self.frames:
            return latest
        return self.evaluate()

    def checkpoint_due(self) -> bool:
        """Every checkpoint_every_s seconds or checkpoint_every_frames frames, whichever first."""
        return (time.monotonic() - self._last_checkpoint_time >= self.config.checkpoint_every_s
                or self.frames - self._last_checkpoint_frames
                >= self.config.checkpoint_every_frames)

    def save(self, actor_states: list[dict] | None = None) -> Path:
        """Write a checkpoint. The format is the same whatever the backend: the config, the
        frame count, the learner (network, optimizer, schedule), the trainer's counters, the
        torch RNG and every actor's E (``controllers``). With ``actor_states`` (the inline
        backend's ``Backend.actor_states``: every actor's full state) it is exact: the actors
        (``actors``) and the data collector's contents (``collector``) are saved too."""
        payload = {
            "config": self.config.to_dict(),
            "frames": self.frames,
            "learner": self.learner.state_dict(),
            "trainer": {
                "episodes": self.episodes,
                "next_log": self.next_log,
                "next_eval": self.evaluation.next_due,
                "acc_loss": dict(self._acc_loss),
                "acc_episodes": self._acc_episodes,
                "lag": self._lag,
                "recent_returns": self.recent_returns,
                "last_log_frames": self._last_log_frames,
                "last_log_steps": self._last_log_steps,
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
        self.writer.flush()
        path = save_checkpoint(self.run_dir, self.frames, payload, self.config.keep_checkpoints)
        if self.reservoir is not None:
            self.reservoir.save(self.run_dir / OBSERVATIONS_FILE)
        self._last_checkpoint_time = time.monotonic()
        self._last_checkpoint_frames = self.frames
        return path

    def restore(self, payload: dict) -> None:
        self.frames = self._last_checkpoint_frames = payload["frames"]
        self.learner.load_state_dict(payload["learner"])
        t = payload["trainer"]
        self.episodes, self.next_log = t["episodes"], t["next_log"]
        self.evaluation.next_due = t["next_eval"]
        self._acc_loss = defaultdict(list, t["acc_loss"])
        self._acc_episodes = list(t["acc_episodes"])
        self._lag = list(t["lag"])
        self.recent_returns = list(t["recent_returns"])
        self._last_log_frames, self._last_log_steps = t["last_log_frames"], t["last_log_steps"]
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
