"""StopRequest: which signals stop a run, which one arrived first, and the exit code it
becomes (128 + the signal's number, the shell's convention)."""

import os
import signal

import pytest

from gdi.runtime.stop import StopRequest


@pytest.mark.parametrize(("sig", "code"), [
    (signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_stop_signal_is_recorded_with_its_exit_code(sig, code):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    stop = StopRequest()
    previous = stop.install()
    try:
        assert not stop(0) and stop.signal is None
        os.kill(os.getpid(), sig)
        os.kill(os.getpid(), signal.SIGTERM if sig != signal.SIGTERM else signal.SIGINT)
        assert stop(0) and stop.requested
        assert stop.signal == sig and stop.exit_code == code  # the first one counts
        assert stop.reason == signal.Signals(sig).name
    finally:
        stop.restore(previous)
    assert {s: signal.getsignal(s) for s in before} == before


def test_installing_twice_leaves_the_restore_to_the_first_installer():
    before = signal.getsignal(signal.SIGINT)
    stop = StopRequest()
    previous = stop.install()
    try:
        assert stop.install() == {}  # the training function, after the CLI installed it
    finally:
        stop.restore(previous)
    assert signal.getsignal(signal.SIGINT) is before


def test_a_predicate_stop_has_no_signal():
    stop = StopRequest(lambda frames: frames >= 10)
    assert not stop(9) and stop(10)
    assert stop.signal is None and stop.exit_code == 1
