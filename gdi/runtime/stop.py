"""How a run is asked to stop: a signal (SIGINT, SIGTERM) or a test's predicate. The training
loop polls the request between learner steps, checkpoints and returns."""

from __future__ import annotations

import signal
from collections.abc import Callable


class StopRequest:
    """Set by SIGINT/SIGTERM (or a test's predicate): the loop checkpoints and returns."""

    def __init__(self, when: Callable[[int], bool] | None = None) -> None:
        self.requested = False
        self._when = when

    def __call__(self, frames: int) -> bool:
        if self._when is not None and self._when(frames):
            self.requested = True
        return self.requested

    def install(self) -> dict:
        previous = {}

        def handler(signum, _frame):
            self.requested = True

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, handler)
            except ValueError:  # not the main thread: no signal handling
                pass
        return previous
