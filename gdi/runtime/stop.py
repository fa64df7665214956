"""How a run is asked to stop: a signal (SIGINT, SIGTERM, SIGHUP), a predicate of the frames
trained (``stop_when``, ``--stop-at``) or a callback (``request``). The training loop polls the
request between learner steps, checkpoints and returns.

The CLI installs the handler before it imports or builds anything slow, so that a Ctrl-C during
start-up is recorded here rather than raised as a KeyboardInterrupt inside some library's
import (the ``minatar`` package imports matplotlib inside a bare ``except:`` that would swallow
it); the training function checks the request once start-up is done.

A step that never returns (an environment that hangs inside ``step()``) would keep the loop
from ever polling the request. Where environments step in the run's own process (the inline
backend) a watchdog is armed (:attr:`StopRequest.watchdog_s`): when the loop has not taken up
the request that many seconds after the signal, SIGALRM raises :class:`StepHung` in the stuck
step, and the run ends without a new checkpoint (its environments are mid-step; the newest
checkpoint is kept). Code stuck in native code that never returns to Python still needs SIGKILL.

An interrupted run exits with 128 + the signal's number, the shell's convention: 130 for
SIGINT, 143 for SIGTERM, 129 for SIGHUP (a closed terminal), so scripts can tell an
interrupted run from a finished one (0).
"""

from __future__ import annotations

import signal
from collections.abc import Callable

from gdi.runtime.errors import RunFailure

#: The signals that checkpoint and stop a run. SIGHUP (the terminal or SSH session closed) is
#: treated like SIGTERM: the run is resumable either way.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Seconds the inline backend's loop has to take up a stop request before the watchdog ends a
#: stuck step.
INLINE_STOP_GRACE_S = 10.0


class StoppedDuringStartUp(Exception):
    """A stop request taken up while a part of the run was being built (a Ray cluster being
    reached): start-up ends there, with nothing trained and no run folder made."""


class StepHung(RunFailure):
    """A stop signal was not taken up within the watchdog's seconds: a step that hangs."""


class StopRequest:
    """Set by SIGINT/SIGTERM/SIGHUP, a predicate of the frames trained (``when``) or a
    callback (``request``): the loop checkpoints and returns. ``signal`` is the signal that
    arrived first (None for a predicate, a callback or no request)."""

    def __init__(self, when: Callable[[int], bool] | None = None, why: str = "a stop request"
                 ) -> None:
        self.requested = False
        self.signal: signal.Signals | None = None
        self._when = when
        self._why = why  # what the predicate stands for, e.g. "--stop-at 3,000,000"
        self._installed = False
        #: Seconds after a signal within which the loop must poll the request, or None for
        #: no watchdog (backends whose environments step in other processes).
        self.watchdog_s: float | None = None
        self._armed = False

    def __call__(self, frames: int) -> bool:
        if self._when is not None and self._when(frames):
            self.requested = True
        if self.requested:
            self._disarm()  # the loop has taken the request up
        return self.requested

    def request(self, why: str) -> None:
        """Ask the run to stop from code (a callback, ``gdi.runtime.callbacks``), for the
        reason ``why``: the loop takes it up as it does a signal's. The first request's reason
        is kept."""
        if not self.requested:
            self._why = why
            self.requested = True

    def signal_received(self, signum: int) -> None:
        if self.signal is None:
            self.signal = signal.Signals(signum)
        self.requested = True
        if self.watchdog_s is not None and self._installed and not self._armed:
            self._armed = True
            signal.signal(signal.SIGALRM, self._hung)
            signal.setitimer(signal.ITIMER_REAL, self.watchdog_s)

    def _hung(self, _signum, _frame) -> None:
        self._disarm()
        raise StepHung(
            f"the run did not stop within {self.watchdog_s:g} s of {self.reason}: a step that "
            "never returns (most likely an environment's step(); the inline backend steps "
            "environments in the run's own process); stopped without a new checkpoint, the "
            "newest one is kept")

    def _disarm(self) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            self._armed = False

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
        self._disarm()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if previous:
            self._installed = False
