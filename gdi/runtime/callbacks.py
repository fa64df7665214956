"""Callbacks: the user's code, called by a run as it trains (``gdi.train(..., callbacks=[...])``,
``gdi.runtime.wiring.train``) at the events users hook: each metrics row, each evaluation, each
checkpoint, each episode's end. A callback stops the run by calling its ``stop_training``: the
run then ends as a stop signal ends it, with a checkpoint and no final evaluation.

They run in the learner's process, between learner steps (whatever the backend), so a slow
callback slows training; an exception raised in one ends the run, as any error in the loop
does (with a checkpoint when the learner is whole).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gdi.runtime.acting.actor import EpisodeRecord
    from gdi.runtime.acting.evaluator import Evaluation

#: The events a callback hooks, each the name of a :class:`Callback` method.
EVENTS = ("on_log", "on_evaluation", "on_checkpoint", "on_episode_end")


class Callback:
    """The base of a run's callbacks: override the events you hook; the others do nothing.
    Any of them may call :meth:`stop_training` to end the run (its return value is not read).

        class StopAtReturn(gdi.Callback):
            def on_evaluation(self, evaluation):
                if evaluation.mean_return >= 200:
                    self.stop_training(f"evaluation return {evaluation.mean_return:.0f}")

    A run clears ``stop_reason`` when it starts, so one callback object can serve several runs.
    """

    stop_reason: str | None = None
    """Why this callback asked the run to stop (None: it has not)."""

    def on_log(self, row: dict[str, float]) -> None:
        """A metrics row as metrics.jsonl holds it, every ``log_every`` frames (more often on a
        short budget) and at the end of the run: ``frames``, ``learner_steps``, ``episodes``,
        ``charts/episodic_return`` (the mean return of the episodes that ended since the last
        row, when any did) and the ``losses/``, ``meta/`` and ``perf/`` metrics."""

    def on_evaluation(self, evaluation: Evaluation) -> None:
        """An evaluation the run played (every ``eval_every`` frames and at the end), once it
        is recorded in eval/: ``evaluation.mean_return``, ``.returns``, ``.frames``."""

    def on_checkpoint(self, path: Path, frames: int) -> None:
        """A checkpoint was written to ``path`` at ``frames`` (``gdi.load_agent(run_dir)`` loads
        the newest)."""

    def on_episode_end(self, episode: EpisodeRecord, frames: int) -> None:
        """An actor's training episode ended: ``episode.episode_return`` (undiscounted),
        ``.length`` (agent steps), ``.lam`` (the λ it played), ``.actor``, ``.env``; ``frames``:
        the run's frames once the window that brought it was counted."""

    def stop_training(self, reason: str | None = None) -> None:
        """Ask the run to stop once this event's call returns: it checkpoints and ends without
        its final evaluation. ``reason`` is what the run's last line says it stopped for."""
        self.stop_reason = reason or f"{type(self).__name__} asked to stop"


class Callbacks:
    """A run's callbacks, called in the order given at each event; the first stop one asks for
    goes to ``request_stop`` (the run's ``StopRequest.request``)."""

    def __init__(self, callbacks: Sequence[Callback] = (),
                 request_stop: Callable[[str], None] | None = None) -> None:
        callbacks = list(callbacks)
        for callback in callbacks:
            if not isinstance(callback, Callback):
                raise ValueError(
                    f"callbacks: {callback!r} is not a gdi.Callback; allowed: instances of a "
                    f"subclass of gdi.Callback that overrides any of {', '.join(EVENTS)}")
        for callback in callbacks:
            callback.stop_reason = None  # a callback object reused from an earlier run
        self.callbacks = callbacks
        self._request_stop = request_stop
        self.stop_reason: str | None = None
        """The first stop a callback asked for (None: none has)."""

    def log(self, row: dict[str, float]) -> None:
        self._call("on_log", row)

    def evaluation(self, evaluation: Evaluation) -> None:
        self._call("on_evaluation", evaluation)

    def checkpoint(self, path: Path, frames: int) -> None:
        self._call("on_checkpoint", path, frames)

    def episode_end(self, episode: EpisodeRecord, frames: int) -> None:
        self._call("on_episode_end", episode, frames)

    def _call(self, event: str, *args) -> None:
        for callback in self.callbacks:
            getattr(callback, event)(*args)
            if callback.stop_reason is not None and self.stop_reason is None:
                self.stop_reason = callback.stop_reason
                if self._request_stop is not None:
                    self._request_stop(self.stop_reason)
