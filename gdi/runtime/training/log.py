"""The run's metrics rows while it trains: what happened between two rows (the learner's
losses and statistics, its policy lag, the episodes that ended, the time each phase took in
the learner process and in the actors), written every ``log_interval(frames, log_every)`` frames
(``log_every``, or less on a short budget) to metrics.jsonl (and TensorBoard, W&B) by
``gdi.runtime.run_folder.run_dir.MetricsWriter``.

A part the trainer calls: it adds what each step and window brings, asks ``due`` and calls
``write``, which also hands the row to the user's callbacks. Its accumulators are saved in
checkpoints (``state_dict``, under the keys every checkpoint has used), so that a resumed
run's next row covers the same span as the run that was not stopped.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from gdi.runtime.acting.actor import EpisodeRecord
from gdi.runtime.callbacks import Callbacks
from gdi.runtime.run_folder.run_dir import MetricsWriter

#: The rows a short run's metrics.jsonl gets at least (when no window of experience spans two):
#: a budget of fewer than this many ``log_every`` spans is logged every frames / MIN_ROWS
#: frames instead, so that a short run has a curve. Ten keeps the rows of every budget of ten
#: spans or more as they were (the scales' default budgets, scripts/same_records.py's runs).
MIN_ROWS = 10


def log_interval(frames: int, log_every: int) -> int:
    """Frames between two metrics rows: ``log_every``, or the budget (``frames``) over
    ``MIN_ROWS`` (rounded up) when that is less."""
    return max(1, min(log_every, -(-frames // MIN_ROWS)))


class TrainingLog:
    """Accumulates between rows and writes one row every ``interval`` frames
    (``log_interval``)."""

    def __init__(self, interval: int, writer: MetricsWriter, index_names: tuple[str, ...],
                 parallel_actors: int = 1, callbacks: Callbacks | None = None) -> None:
        self.writer, self.index_names = writer, index_names
        self.callbacks = callbacks if callbacks is not None else Callbacks()
        self.parallel_actors = parallel_actors  # each with its own wall clock
        self.interval = interval
        self.next_due = self.interval
        self._losses: dict[str, list[float]] = defaultdict(list)
        self._episodes: list[EpisodeRecord] = []
        self._lag: list[float] = []  # since the last row
        self._recent_lag: deque[float] = deque(maxlen=20)  # for the progress bar
        self._timers: dict[str, float] = defaultdict(float)
        self._actor_timers: dict[str, float] = defaultdict(float)
        self._last_time = time.perf_counter()
        self._last_frames = 0
        self._last_steps = 0

    # --- what the run adds -----------------------------------------------------------------------
    def add_step(self, metrics: dict[str, float], lag: float) -> None:
        """A learner step's metrics and its policy lag (learner steps behind the batch)."""
        for key, value in metrics.items():
            self._losses[key].append(value)
        self._lag.append(lag)
        self._recent_lag.append(lag)

    def add_episodes(self, episodes: list[EpisodeRecord]) -> None:
        self._episodes.extend(episodes)

    def add_time(self, phase: str, seconds: float) -> None:
        """Seconds the learner process spent in ``phase`` (logged as perf/{phase}_share)."""
        self._timers[phase] += seconds

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Time what runs inside as the learner process's ``phase`` (``add_time``)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add_time(phase, time.perf_counter() - start)

    def add_actor_times(self, phase_seconds: dict[str, float]) -> None:
        """Seconds an actor spent per phase (``Actor.take_phase_seconds``), logged as
        perf/actor_{phase}_share: the share of an actor's wall time, averaged over the
        ``parallel_actors`` actors that run in parallel (1 when they share this process)."""
        for phase, seconds in phase_seconds.items():
            self._actor_timers[phase] += seconds

    @property
    def policy_lag(self) -> float:
        """The mean policy lag of the last 20 learner steps (the progress bar's)."""
        return float(np.mean(self._recent_lag)) if self._recent_lag else 0.0

    # --- rows ------------------------------------------------------------------------------------
    def due(self, frames: int, force: bool = False) -> bool:
        """Every ``interval`` frames; with ``force``, whenever frames came since the last row
        (the run's last row)."""
        return frames >= self.next_due or (force and frames > self._last_frames)

    def write(self, frames: int, learner_steps: int, episodes: int, replay_size: int,
              actor_restarts: int) -> dict[str, float]:
        """Write the row at ``frames``, hand it to the callbacks (``on_log``) and start the
        next span; returns the row (without its ``frames``)."""
        now = time.perf_counter()
        elapsed = max(now - self._last_time, 1e-9)
        row: dict[str, float] = {"learner_steps": learner_steps, "episodes": episodes}
        eps = self._episodes
        if eps:
            row["charts/episodic_return"] = float(np.mean([e.episode_return for e in eps]))
            row["charts/episodic_return_max"] = float(np.max([e.episode_return for e in eps]))
            row["charts/episode_length"] = float(np.mean([e.length for e in eps]))
            lams = np.array([e.lam for e in eps], dtype=np.float64)
            for i, name in enumerate(self.index_names):
                row[f"meta/{name}_mean"] = float(lams[:, i].mean())
                row[f"meta/{name}_std"] = float(lams[:, i].std())
        for key, values in self._losses.items():
            row[key] = float(np.mean(values))
        row["perf/policy_lag"] = float(np.mean(self._lag)) if self._lag else 0.0
        row["perf/replay_size"] = replay_size
        row["perf/fps"] = (frames - self._last_frames) / elapsed
        row["perf/learner_steps_per_s"] = (learner_steps - self._last_steps) / elapsed
        for phase, seconds in self._timers.items():
            row[f"perf/{phase}_share"] = seconds / elapsed
        for phase, seconds in self._actor_timers.items():
            row[f"perf/actor_{phase}_share"] = seconds / (elapsed * self.parallel_actors)
        row["perf/actor_restarts"] = actor_restarts
        self.writer.write(frames, row)
        self.writer.flush()
        self._losses.clear()
        self._episodes = []
        self._lag = []
        self._timers.clear()
        self._actor_timers.clear()
        self._last_time, self._last_frames, self._last_steps = now, frames, learner_steps
        while self.next_due <= frames:
            self.next_due += self.interval
        self.callbacks.log({"frames": frames, **row})
        return row

    # --- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The accumulators, under the checkpoint's "trainer" keys of every format so far: a
        copy, which the log's later steps leave as it was."""
        return {
            "next_log": self.next_due,
            "acc_loss": {key: list(values) for key, values in self._losses.items()},
            "acc_episodes": list(self._episodes),
            "lag": list(self._lag),
            "last_log_frames": self._last_frames,
            "last_log_steps": self._last_steps,
        }

    def load_state_dict(self, state: dict) -> None:
        self.next_due = state["next_log"]
        self._losses = defaultdict(list, {key: list(values)
                                          for key, values in state["acc_loss"].items()})
        self._episodes = list(state["acc_episodes"])
        self._lag = list(state["lag"])
        self._last_frames, self._last_steps = state["last_log_frames"], state["last_log_steps"]
