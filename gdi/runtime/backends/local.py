"""The ``local`` backend: each actor in its own process, the learner in this one.

Actors are ``spawn``-ed processes (no inherited threads or locks) that read parameters from a
shared-memory parameter server and send one ``Window`` per credit through a pipe of their own
(the steps' frames as a torch tensor, which torch's pickler moves through shared memory
instead of the pipe). Each actor has a credit semaphore of its own, so the backend
always knows which actor owes a window; the driver (``gdi.runtime.driver``) decides when to
ask.

Faults: an actor process that dies (``kill -9``, an exception, a crashed emulator), or sends
nothing for ``actor_timeout_s`` seconds after it was asked for a window (a hung environment, a
SIGSTOP), is restarted with its E as last reported and fresh environments (seeded anew), and a
warning says so; the window it owed, even half sent, is asked again. More than
``actor_failures_max`` failures within ``actor_failure_window_s`` stop the run
(``ActorFailure``).

The learner never reads a pipe itself: one reader thread per actor process does, and hands
what arrives to a queue. Reading a window can block (a sender stopped halfway through a
window larger than the pipe holds, or while torch hands over a tensor's shared memory), and a
thread blocked in a read does not return to Python's signal handlers; the main thread only
waits on the queue with a timeout, so a Ctrl-C or SIGTERM is seen within a second whatever
an actor does. A discarded process is killed (SIGKILL after a grace period: a stopped
process ignores SIGTERM until it is continued), which ends its reader with end of file. The
credits keep memory bounded as the pipe once did: an actor owes at most one window.

An actor whose learner process is gone (``kill -9`` of the main process) exits within a
fraction of a second, wherever it is blocked (a dead learner may have left a push
half-written or the window pipe full), so nothing is left running.

Resuming restores the learner, optimizer, counters and every actor's E exactly; environments
restart their episodes and the collector starts empty (docs/paper-choices.md). Exact resume
is the inline backend's job.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import threading
import time
import traceback
from multiprocessing.connection import Connection

import torch
import torch.multiprocessing as torch_mp

from gdi.runtime.acting.actor import Window
from gdi.runtime.backends.base import ParallelBackend
from gdi.runtime.components import ActorRecipe, flush_denormals
from gdi.runtime.training.parameter_server import SharedParameterServer
from gdi.runtime_config import PlacementConfig

#: How often (seconds) an actor checks that its learner process is still there, and how long a
#: wait for a credit or queue room lasts before it looks at the stop event again.
PARENT_CHECK_S = 0.2
#: Seconds a discarded or closing actor process gets to end after SIGTERM before SIGKILL.
TERMINATE_GRACE_S = 2.0
#: What a reader thread hands on when its actor's pipe is closed (the process ended).
_END_OF_PIPE = object()
#: What an actor process sends once its environments are built (before its first window).
_READY = ("ready",)


def _pack(window: Window) -> Window:
    # The frames as a torch tensor, which torch's pickler moves through shared memory instead
    # of the pipe.
    steps = window.steps.replace(frames=torch.from_numpy(window.steps.frames))
    return dataclasses.replace(window, steps=steps)


def _unpack(window: Window) -> Window:
    steps = window.steps.replace(frames=window.steps.frames.numpy())
    return dataclasses.replace(window, steps=steps)


def _read_windows(actor_id: int, incarnation: int, channel: Connection,
                  arrived: queue.Queue) -> None:
    """Reader thread of one actor process's pipe: hand each message on, then the end of the
    pipe, tagged with the actor and its incarnation (a replaced process's leftovers are
    dropped by the receiver). The thread owns the pipe's reading end and closes it."""
    try:
        while True:
            try:
                content = channel.recv()
            except (OSError, EOFError):
                # The sender died: before its window was whole, or before it was taken (its
                # shared-memory handle went with it). Nothing more comes from this process.
                break
            except Exception as err:  # a window that does not unpickle: the actor failed
                arrived.put((actor_id, incarnation,
                             f"its window could not be read: {type(err).__name__}: {err}"))
                break
            arrived.put((actor_id, incarnation, content))
    finally:
        channel.close()
        arrived.put((actor_id, incarnation, _END_OF_PIPE))


def _end_processes(processes, grace_s: float = TERMINATE_GRACE_S) -> None:
    """SIGTERM to all, then SIGKILL to those not ended within ``grace_s`` (a stopped process
    leaves SIGTERM pending until it is continued; SIGKILL ends it anyway): a few seconds
    however many there are."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace_s
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=grace_s)


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
    recipe: ActorRecipe,
    server: SharedParameterServer,
    channel: Connection,
    stopping,
    credits,
    controller_state: dict | None,
    parent_pid: int,
) -> None:
    """Entry point of one actor process: act a window per credit until ``stopping`` is 1 or
    the learner process is gone. It sends the learner a ``Window`` per credit through its own
    ``channel``, or a string, the traceback of a failure. ``stopping`` is a shared byte with
    no lock: an actor stopped while it held an Event's lock would block the learner's
    ``set`` forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner process coordinates shutdown
    torch.set_num_threads(1)
    flush_denormals()
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True,
                     name="gdi-orphan-watchdog").start()
    actor = None
    try:
        actor = recipe.build(actor_id, incarnation=incarnation,
                             controller_state=controller_state)
        channel.send(_READY)
        while not stopping.value:
            # Idle until the learner asks for a window, then act it with fresh parameters.
            start = time.perf_counter()
            while not (credits.acquire(timeout=PARENT_CHECK_S) or stopping.value):
                pass
            actor.phase_seconds["idle"] += time.perf_counter() - start
            if stopping.value:
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
    def __init__(self, recipe: ActorRecipe, placement: PlacementConfig, stop=None) -> None:
        super().__init__(recipe.num_actors, placement)
        self.recipe = recipe
        self.context = torch_mp.get_context("spawn")
        self.stopping = self.context.RawValue("b", 0)  # actors stop once it is 1
        self.processes: list = [None] * self.num_actors
        self.credits: list = [None] * self.num_actors
        # One pipe per actor process, whose writing end only that process holds: a process
        # killed in the middle of sending a window (larger than a pipe's buffer, so sending it
        # takes until the learner reads) leaves its reader an end of file, not a stream
        # shared with other senders that it would wait on forever for the rest.
        self.arrived: queue.Queue = queue.Queue()
        self.readers: list[threading.Thread] = []
        self.busy = [False] * self.num_actors  # a window is owed

    def parameter_server(self, module: torch.nn.Module) -> SharedParameterServer:
        return SharedParameterServer(module, self.context)

    def _launch(self, i: int) -> None:
        self.credits[i] = self.context.Semaphore(0)
        receiving, sending = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=actor_process, name=f"gdi-actor-{i}", daemon=True,
            args=(i, self.incarnations[i], self.recipe, self.server, sending,
                  self.stopping, self.credits[i], self.controller_state(i), os.getpid()),
        )
        process.start()
        sending.close()  # the actor's copy is now the only one
        self.processes[i] = process
        self._starting(i)
        reader = threading.Thread(
            target=_read_windows, args=(i, self.incarnations[i], receiving, self.arrived),
            daemon=True, name=f"gdi-reader-{i}.{self.incarnations[i]}")
        reader.start()
        self.readers.append(reader)

    def _discard(self, i: int) -> None:
        old, self.processes[i] = self.processes[i], None  # None until it is launched again
        _end_processes([old])  # its reader then sees the end of the pipe and stops
        self.busy[i] = False  # the window it owed is lost: the driver asks again

    @property
    def in_flight(self) -> int:
        return sum(self.busy)

    def idle_actors(self) -> list[int]:
        return [i for i, busy in enumerate(self.busy) if not busy]

    def request(self, actor_id: int) -> None:
        self._relaunch_failed()
        self.busy[actor_id] = True
        self._asked(actor_id)
        self.credits[actor_id].release()

    def receive(self, block: bool) -> list[Window]:
        self._relaunch_failed()
        windows = []
        timeout = 1.0 if block else None
        while True:
            try:
                if timeout is None:
                    actor_id, incarnation, content = self.arrived.get_nowait()
                else:
                    actor_id, incarnation, content = self.arrived.get(timeout=timeout)
            except queue.Empty:
                break
            timeout = None  # then take whatever else has arrived, without waiting
            if incarnation != self.incarnations[actor_id] or content is _END_OF_PIPE:
                continue  # a replaced process's leftovers; a dead one is seen below
            if isinstance(content, tuple) and content == _READY:
                self._ready(actor_id)
                continue
            if isinstance(content, str):
                error = content.rstrip().splitlines()[-1]
                self._restart(actor_id, f"actor {actor_id} failed: {error}")
                continue
            windows.append(_unpack(content))
            self.busy[actor_id] = False
            self._answered(actor_id)
        self._check_processes()
        self._restart_silent_actors()
        return windows

    def _check_processes(self) -> None:
        for i, process in enumerate(self.processes):
            if process is not None and not process.is_alive() and process.exitcode not in (
                    0, None):
                self._restart(i, f"actor {i} (pid {process.pid}) exited with code "
                                 f"{process.exitcode}")

    def close(self) -> None:
        """Stop every actor within a few seconds, whatever it is doing: asked to stop, then
        SIGTERM, then SIGKILL (a stopped or hung actor never answers the first two). Actors
        blocked sending a window are unblocked by their readers, which read on until the end
        of their pipes; what they read is discarded."""
        self.stopping.value = 1
        processes = [p for p in self.processes if p is not None]
        deadline = time.monotonic() + 2 * TERMINATE_GRACE_S
        while any(p.is_alive() for p in processes) and time.monotonic() < deadline:
            time.sleep(0.05)
        _end_processes(processes)
        for reader in self.readers:
            reader.join(timeout=TERMINATE_GRACE_S)
