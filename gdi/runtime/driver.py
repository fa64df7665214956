"""The learner-side loop every backend feeds (the paper's Algorithm 1, learner side):

    ask actors for windows just in time ─▶ take the windows that arrived (data collector, E's
    bookkeeping) ─▶ learner steps while the collector is ready (operator T, parameters pushed
    every push_every steps) ─▶ metrics, evaluation, progress ─▶ checkpoint when due

Flow control is by credits: an actor acts a window only when asked, at most one window in
flight per actor, the idle actor asked least recently first (``ActorTurns``: every actor acts
in turn, whatever the number in flight), and windows are asked for ``LEAD_STEPS`` learner
steps before the collector would fall below ``min_replay``, or more when an actor takes longer
to act a window than the learner takes for those steps (``AskAhead``). Where the learner is the
bottleneck (a CPU), a window acted earlier than needed is acted by older parameters, so asking
just in time keeps the policy lag low (docs/scaling.md, "Asking just in time", has the lags
measured). Memory stays bounded and no data is dropped: the replay ratio stays exact.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from gdi.runtime.backends.base import Backend
from gdi.runtime.training.trainer import Trainer

#: How many learner steps ahead of need an actor is asked for its next window: enough for the
#: actor to act it while the learner takes those steps (on MinAtar a window takes about one
#: learner step, docs/scaling.md), few enough that the window is acted by recent parameters.
LEAD_STEPS = 2


class AskAhead:
    """How many learner steps ahead of need the driver asks for a window: ``LEAD_STEPS``, or
    as many steps as the learner takes while an actor acts a window, plus one.

    A GPU learner steps faster than an actor acts a window: on the paper's ALE preset with CPU
    inference a window (32 environments × 40 new steps, 5,120 frames) took an actor ~1.9 s and
    a learner step 0.17-0.21 s, so a lead of 2 steps left the learner waiting for windows three
    quarters of the time while the actors idled (docs/scaling.md, "One command for a GPU
    machine"). Where the learner is the bottleneck (a window takes at most one step) the lead
    stays ``LEAD_STEPS`` and the policy lag as low as asking just in time gives. Only where
    several actors act at once (``parallel_actors`` > 1): one actor has at most one window in
    flight, and the inline backend's actors take turns with the learner, where a lead read off
    the clock would make its runs, exactly reproducible, depend on timing. Both durations are
    moving averages (weight ``SMOOTHING`` for the newest); an actor's is the time it spent
    acting the window (its phases but idle, as it reports them), so the driver's own delays do
    not feed back."""

    SMOOTHING = 0.2

    def __init__(self) -> None:
        self.window_s: float | None = None
        """Seconds an actor takes to act a window (moving average)."""
        self.step_s: float | None = None
        """Seconds per learner step (moving average)."""

    def _average(self, old: float | None, new: float) -> float:
        return new if old is None else old + self.SMOOTHING * (new - old)

    def arrived(self, phase_seconds: dict[str, float]) -> None:
        """A window arrived, with its actor's seconds per phase (``Window.phase_seconds``)."""
        acting = sum(seconds for phase, seconds in phase_seconds.items() if phase != "idle")
        if acting > 0:
            self.window_s = self._average(self.window_s, acting)

    def stepped(self, steps: int, seconds: float) -> None:
        if steps > 0:
            self.step_s = self._average(self.step_s, seconds / steps)

    @property
    def steps(self) -> int:
        if self.window_s is None or not self.step_s:
            return LEAD_STEPS
        return max(LEAD_STEPS, math.ceil(self.window_s / self.step_s) + 1)


def checkpoint(trainer: Trainer, backend: Backend):
    """One checkpoint of the common format, exact when the backend can save its actors."""
    return trainer.save(backend.actor_states())


def drive(trainer: Trainer, backend: Backend, stop: Callable[[int], bool],
          report: Callable[[], None], sequences_per_window: int) -> None:
    """Run until the frame budget is spent or ``stop`` says so (the caller checkpoints).
    ``sequences_per_window``: what one window brings the collector (an actor's
    environments)."""
    replay, collector = trainer.replay, trainer.collector
    room = sequences_per_window
    # Sequences the learner takes out per step (each step uses batch_size sequence-uses; a
    # sequence leaves after `replay` of them).
    taken_per_step = -(-replay.batch_size // replay.replay)
    ahead = AskAhead() if backend.parallel_actors > 1 else None

    def ask_for_data() -> None:
        lead = (ahead.steps if ahead is not None else LEAD_STEPS) * taken_per_step
        while (backend.in_flight < backend.num_actors
               and len(collector) + room * backend.in_flight < replay.min_replay + lead
               and collector.free_slots >= room * (backend.in_flight + 1)):
            backend.request(trainer.turns.next(backend.idle_actors()))

    restarts_seen = backend.restarts
    while trainer.frames < trainer.budget:
        ask_for_data()
        # Wait for data only when there is nothing to train on.
        start = time.perf_counter()
        windows = backend.receive(block=not collector.ready())
        trainer.add_time("wait", time.perf_counter() - start)
        for window in windows:
            if ahead is not None:
                ahead.arrived(window.phase_seconds)
            trainer.take_window(window)
        trainer.warn(*backend.take_warnings())
        trainer.count_actor_restarts(backend.restarts - restarts_seen)
        restarts_seen = backend.restarts
        start = time.perf_counter()
        steps = trainer.train_while_ready(before_step=ask_for_data)
        if ahead is not None:
            ahead.stepped(steps, time.perf_counter() - start)
        trainer.periodic()
        report()
        if stop(trainer.frames):
            return
        if trainer.checkpoint_due():
            checkpoint(trainer, backend)
