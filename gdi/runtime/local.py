"""The ``local`` backend: each actor in its own process, the learner in this one.

Actors are ``spawn``-ed processes (no inherited threads or locks) that read parameters from a
shared-memory parameter server and send one ``Window`` per credit through a pipe of their own
(the steps' frames as a torch tensor, which torch's pickler moves through shared memory
instead of the pipe). Each actor has a credit semaphore of its own, so the backend
always knows which actor owes a window; the driver (``gdi.runtime.driver``) decides when to
ask.

Faults: an actor process that dies (``kill -9``, an exception, a crashed emulator) is restarted
with its E as last reported and fresh environments (seeded anew), and a warning says so; the
window it owed, even half sent, is asked again. More than ``actor_failures_max`` failures within
``actor_failure_window_s`` stop the run (``ActorFailure``). An actor whose learner process is
gone (``kill -9`` of the main process) exits within a fraction of a second, wherever it is
blocked (a dead learner may have left a push half-written or the window pipe full), so
nothing is left running.

Resuming restores the learner, optimizer, counters and every actor's E exactly; environments
restart their episodes and the collector starts empty (docs/paper-choices.md). Exact resume
is the inline backend's job.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
import traceback
from multiprocessing.connection import Connection, wait

import torch
import torch.multiprocessing as torch_mp

from gdi.config import Config
from gdi.runtime.actor import Window
from gdi.runtime.backend import ParallelBackend
from gdi.runtime.components import build_actor, flush_denormals
from gdi.runtime.parameter_server import SharedParameterServer

#: How often (seconds) an actor checks that its learner process is still there, and how long a
#: wait for a credit or queue room lasts before it looks at the stop event again.
PARENT_CHECK_S = 0.2


def _pack(window: Window) -> Window:
    # The frames as a torch tensor, which torch's pickler moves through shared memory instead
    # of the pipe.
    steps = dataclasses.replace(window.steps, frames=torch.from_numpy(window.steps.frames))
    return dataclasses.replace(window, steps=steps)


def _unpack(window: Window) -> Window:
    steps = dataclasses.replace(window.steps, frames=window.steps.frames.numpy())
    return dataclasses.replace(window, steps=steps)


def _exit_when_orphaned(parent_pid: int) -> None:
    """Watchdog thread of an actor process: end the process once its learner is gone.

    A thread, not checks in the actor's loops: a learner killed mid-push leaves a write that
    the actor's next pull waits for forever, and a queue's feeder thread blocks the process's
    exit while the pipe is full and no one reads. ``os._exit`` skips both; nothing in an actor
    outlives its learner's use for it."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def actor_process(
    actor_id: int,
    incarnation: int,
    config: Config,
    shapes,
    server: SharedParameterServer,
    channel: Connection,
    stop_event,
    credits,
    controller_state: dict | None,
    parent_pid: int,
) -> None:
    """Entry point of one actor process: act a window per credit until ``stop_event`` is set
    or the learner process is gone. It sends the learner a ``Window`` per credit through its
    own ``channel``, or a string, the traceback of a failure."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner process coordinates shutdown
    torch.set_num_threads(1)
    flush_denormals()
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True,
                     name="gdi-orphan-watchdog").start()
    actor = None
    try:
        actor = build_actor(config, actor_id, shapes, incarnation=incarnation,
                            controller_state=controller_state)
        while not stop_event.is_set():
            # Idle until the learner asks for a window, then act it with fresh parameters.
            start = time.perf_counter()
            while not (credits.acquire(timeout=PARENT_CHECK_S) or stop_event.is_set()):
                pass
            actor.phase_seconds["idle"] += time.perf_counter() - start
            if stop_event.is_set():
                break
            window = _pack(actor.act_window(server, pull_first=True))
            start = time.perf_counter()
            channel.send(window)  # returns once the learner has read what the pipe can't hold
            # Counted with the next window.
            actor.phase_seconds["idle"] += time.perf_counter() - start
    except Exception:
        channel.send(traceback.format_exc())
    finally:
        if actor is not None:
            actor.close()


class LocalBackend(ParallelBackend):
    def __init__(self, config: Config, env_config, shapes, learner, stop=None) -> None:
        super().__init__(config)
        self.shapes = shapes
        self.context = torch_mp.get_context("spawn")
        self.server = SharedParameterServer(learner.net, self.context)
        self.stop_event = self.context.Event()
        self.processes: list = [None] * config.num_actors
        self.credits: list = [None] * config.num_actors
        # One pipe per actor process, whose writing end only that process holds: a process
        # killed in the middle of sending a window (larger than a pipe's buffer, so sending it
        # takes until the learner reads) leaves the learner an end of file, not a stream
        # shared with other senders that it would wait on forever for the rest.
        self.channels: list[Connection | None] = [None] * config.num_actors
        self.busy = [False] * config.num_actors  # a window is owed

    def _launch(self, i: int) -> None:
        self.credits[i] = self.context.Semaphore(0)
        receiving, sending = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=actor_process, name=f"gdi-actor-{i}", daemon=True,
            args=(i, self.incarnations[i], self.config, self.shapes, self.server, sending,
                  self.stop_event, self.credits[i], self.controller_state(i), os.getpid()),
        )
        process.start()
        sending.close()  # the actor's copy is now the only one
        self.processes[i] = process
        self.channels[i] = receiving

    def _close_channel(self, i: int) -> None:
        if self.channels[i] is not None:
            self.channels[i].close()
            self.channels[i] = None

    def _discard(self, i: int) -> None:
        old, self.processes[i] = self.processes[i], None  # None until it is launched again
        if old.is_alive():
            old.terminate()
        old.join(timeout=5.0)
        self._close_channel(i)  # with whatever it held: a window from a replaced process
        self.busy[i] = False  # the window it owed is lost: the driver asks again

    @property
    def in_flight(self) -> int:
        return sum(self.busy)

    def idle_actors(self) -> list[int]:
        return [i for i, busy in enumerate(self.busy) if not busy]

    def request(self, actor_id: int) -> None:
        self._relaunch_failed()
        self.busy[actor_id] = True
        self.credits[actor_id].release()

    def receive(self, block: bool) -> list[Window]:
        self._relaunch_failed()
        windows = []
        timeout = 1.0 if block else 0.0
        while ready := wait([c for c in self.channels if c is not None], timeout=timeout):
            timeout = 0.0  # then take whatever else has arrived, without waiting
            for channel in ready:
                i = self.channels.index(channel)
                try:
                    content = channel.recv()
                except (OSError, EOFError):
                    # The sender died: before its window was whole, or before we took it
                    # (its shared-memory handle went with it). The window is lost;
                    # _check_processes restarts the sender.
                    self._close_channel(i)
                    continue
                if isinstance(content, str):
                    error = content.rstrip().splitlines()[-1]
                    self._restart(i, f"actor {i} failed: {error}")
                    continue
                window = _unpack(content)
                windows.append(window)
                self.busy[i] = False
        self._check_processes()
        return windows

    def _check_processes(self) -> None:
        for i, process in enumerate(self.processes):
            if process is not None and not process.is_alive() and process.exitcode not in (
                    0, None):
                self._restart(i, f"actor {i} (pid {process.pid}) exited with code "
                                 f"{process.exitcode}")

    def close(self) -> None:
        self.stop_event.set()
        processes = [p for p in self.processes if p is not None]
        deadline = time.monotonic() + 10.0
        while any(p.is_alive() for p in processes) and time.monotonic() < deadline:
            # Unblock actors in the middle of a send; what they sent is discarded. (With no
            # channel open, wait() just sleeps its timeout.)
            for channel in wait([c for c in self.channels if c is not None], timeout=0.1):
                try:
                    channel.recv()
                except (OSError, EOFError):
                    self._close_channel(self.channels.index(channel))
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join(timeout=5.0)
        for i in range(len(self.channels)):
            self._close_channel(i)
