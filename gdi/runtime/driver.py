"""The learner-side loop every backend feeds (the paper's Algorithm 1, learner side):

    ask actors for windows just in time ─▶ take the windows that arrived (data collector, E's
    bookkeeping) ─▶ learner steps while the collector is ready (operator T, parameters pushed
    every push_every steps) ─▶ metrics, evaluation, progress ─▶ checkpoint when due

Flow control is by credits: an actor acts a window only when asked, at most one window in
flight per actor, the idle actor asked least recently first (``ActorTurns``: every actor acts
in turn, whatever the number in flight), and windows are asked for ``LEAD_STEPS`` learner
steps before the collector would fall below ``min_replay``. Where the learner is the
bottleneck (a CPU), a window acted earlier than needed is acted by older parameters, so asking
just in time keeps the policy lag low (docs/scaling.md, "Asking just in time", has the lags
measured). Memory stays bounded and no data is dropped: the replay ratio stays exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gdi.runtime.backend import Backend
from gdi.runtime.trainer import Trainer

#: How many learner steps ahead of need an actor is asked for its next window: enough for the
#: actor to act it while the learner takes those steps (on MinAtar a window takes about one
#: learner step, docs/scaling.md), few enough that the window is acted by recent parameters.
LEAD_STEPS = 2


def checkpoint(trainer: Trainer, backend: Backend):
    """One checkpoint of the common format, exact when the backend can save its actors."""
    return trainer.save(backend.actor_states())


def drive(trainer: Trainer, backend: Backend, stop: Callable[[int], bool],
          report: Callable[[], None]) -> None:
    """Run until the frame budget is spent or ``stop`` says so (the caller checkpoints)."""
    config, collector = trainer.config, trainer.collector
    room = config.envs_per_actor  # sequences per window
    # Sequences the learner takes out LEAD_STEPS steps from now (each step uses batch_size
    # sequence-uses; a sequence leaves after `replay` of them).
    lead = LEAD_STEPS * -(-config.batch_size // config.replay)

    def ask_for_data() -> None:
        while (backend.in_flight < backend.num_actors
               and len(collector) + room * backend.in_flight < config.min_replay + lead
               and collector.free_slots >= room * (backend.in_flight + 1)):
            backend.request(trainer.turns.next(backend.idle_actors()))

    restarts_seen = backend.restarts
    while trainer.frames < config.frames:
        ask_for_data()
        # Wait for data only when there is nothing to train on.
        start = time.perf_counter()
        windows = backend.receive(block=not collector.ready())
        trainer.add_time("wait", time.perf_counter() - start)
        for window in windows:
            trainer.take_window(window)
        trainer.warn(*backend.take_warnings())
        trainer.count_actor_restarts(backend.restarts - restarts_seen)
        restarts_seen = backend.restarts
        trainer.train_while_ready(before_step=ask_for_data)
        trainer.periodic()
        report()
        if stop(trainer.frames):
            return
        if trainer.checkpoint_due():
            checkpoint(trainer, backend)
