"""How a run is asked to stop: a signal (SIGINT, SIGTERM, SIGHUP) or a test's predicate. The
training loop polls the request between learner steps, checkpoints and returns.

The CLI installs the handler before it imports or builds anything slow, so that a Ctrl-C during
start-up is recorded here rather than raised as a KeyboardInterrupt inside some library's
import (the ``minatar`` package imports matplotlib inside a bare ``except:`` that would swallow
it); the training function checks the request once start-up is done.

An interrupted run exits with 128 + the signal's number, the shell's convention: 130 for
SIGINT, 143 for SIGTERM, 129 for SIGHUP (a closed terminal), so scripts can tell an
interrupted run from a finished one (0).
"""

from __future__ import annotations

import signal
from collections.abc import Callable

#: The signals that checkpoint and stop a run. SIGHUP (the terminal or SSH session closed) is
#: treated like SIGTERM: the run is resumable either way.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequest:
    """Set by SIGINT/SIGTERM/SIGHUP (or a test's predicate): the loop checkpoints and returns.
    ``signal`` is the signal that arrived first (None for a predicate or no request)."""

    def __init__(self, when: Callable[[int], bool] | None = None, why: str = "a stop request"
                 ) -> None:
        self.requested = False
        self.signal: signal.Signals | None = None
        self._when = when
        self._why = why  # what the predicate stands for, e.g. "--stop-at 3,000,000"
        self._installed = False

    def __call__(self, frames: int) -> bool:
        if self._when is not None and self._when(frames):
            self.requested = True
        return self.requested

    def signal_received(self, signum: int) -> None:
        if self.signal is None:
            self.signal = signal.Signals(signum)
        self.requested = True

    @property
    def exit_code(self) -> int:
        """128 + the signal's number; 1 for a stop without a signal (a predicate)."""
        return 128 + int(self.signal) if self.signal is not None else 1

    @property
    def reason(self) -> str:
        return self.signal.name if self.signal is not None else self._why

    def install(self) -> dict:
        """Route the stop signals to this request; returns the handlers to restore (empty when
        this request is already installed: whoever installed it first restores them)."""
        if self._installed:
            return {}
        previous = {}
        for sig in STOP_SIGNALS:
            try:
                previous[sig] = signal.signal(sig, self._handler)
            except ValueError:  # not the main thread: no signal handling
                pass
        self._installed = bool(previous)
        return previous

    def _handler(self, signum, _frame) -> None:
        self.signal_received(signum)

    def reclaim(self) -> None:
        """Put this request's handler back in place, once installed, after a library replaced
        it below Python: ``ray.init`` installs a C++ (absl) SIGTERM handler that dumps a
        stack and kills the process, and ``signal.getsignal`` still names ours, so the
        handler is set again whatever Python reports."""
        if not self._installed:
            return
        for sig in STOP_SIGNALS:
            try:
                signal.signal(sig, self._handler)
            except ValueError:
                pass

    def restore(self, previous: dict) -> None:
        """Put back the handlers :meth:`install` returned."""
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if previous:
            self._installed = False
