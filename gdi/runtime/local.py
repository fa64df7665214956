"""The ``local`` backend: each actor in its own process, the learner in this one.

Actors are ``spawn``-ed processes (no inherited threads or locks) that read parameters from a
shared-memory parameter server and send one ``Window`` per credit (the sequences' observations
as a torch tensor, which torch's queue moves through shared memory instead of a pipe). Each
actor has a credit semaphore of its own, so the backend always knows which actor owes a
window; the driver (``gdi.runtime.driver``) decides when to ask.

Faults: an actor process that dies (``kill -9``, an exception, a crashed emulator) is restarted
with its E as last reported and fresh environments (seeded anew), and a warning says so; the
window it owed is asked again. More than ``actor_failures_max`` failures within
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
import queue as queue_module
import signal
import threading
import time
import traceback

import torch
import torch.multiprocessing as torch_mp

from gdi.config import Config
from gdi.runtime.actor import Actor, Window
from gdi.runtime.backend import ParallelBackend
from gdi.runtime.components import actor_seed, build_controller, build_network, flush_denormals
from gdi.runtime.parameter_server import SharedParameterServer
from gdi.runtime.sequences import SequenceBatch

#: How often (seconds) an actor checks that its learner process is still there, and how long a
#: wait for a credit or queue room lasts before it looks at the stop event again.
PARENT_CHECK_S = 0.2


def _pack(window: Window) -> Window:
    data = window.sequences.as_dict()
    data["obs"] = torch.from_numpy(data["obs"])
    return dataclasses.replace(window, sequences=data)


def _unpack(window: Window) -> Window:
    data = dict(window.sequences)
    data["obs"] = data["obs"].numpy()
    return dataclasses.replace(window, sequences=SequenceBatch(**data))


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
    messages,
    stop_event,
    credits,
    controller_state: dict | None,
    parent_pid: int,
) -> None:
    """Entry point of one actor process: act a window per credit until ``stop_event`` is set
    or the learner process is gone. Messages are ``(actor_id, incarnation, Window | str)``, a
    string being the traceback of a failure."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner process coordinates shutdown
    torch.set_num_threads(1)
    flush_denormals()
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True,
                     name="gdi-orphan-watchdog").start()
    actor = None
    try:
        from gdi.envs import resolve_env

        env_config = resolve_env(config.env, **config.env_overrides)
        seed = actor_seed(config, actor_id, incarnation)
        controller = build_controller(config, seed)
        if controller_state is not None:
            controller.load_state_dict(controller_state)
        actor = Actor(actor_id, config, env_config, build_network(config, shapes),
                      controller, seed)
        while not stop_event.is_set():
            # Idle until the learner asks for a window, then act it with fresh parameters.
            start = time.perf_counter()
            while not (credits.acquire(timeout=PARENT_CHECK_S) or stop_event.is_set()):
                pass
            actor.phase_seconds["idle"] += time.perf_counter() - start
            if stop_event.is_set():
                break
            message = (actor_id, incarnation, _pack(actor.act_window(server, pull_first=True)))
            start = time.perf_counter()
            while not stop_event.is_set():
                try:
                    messages.put(message, timeout=PARENT_CHECK_S)
                    break
                except queue_module.Full:
                    pass
            # Counted with the next window.
            actor.phase_seconds["idle"] += time.perf_counter() - start
    except Exception:
        messages.put((actor_id, incarnation, traceback.format_exc()))
    finally:
        if actor is not None:
            actor.close()


class LocalBackend(ParallelBackend):
    def __init__(self, config: Config, env_config, shapes, learner) -> None:
        super().__init__(config)
        self.shapes = shapes
        self.context = torch_mp.get_context("spawn")
        self.server = SharedParameterServer(learner.net, self.context)
        self.messages = self.context.Queue(maxsize=config.num_actors)
        self.stop_event = self.context.Event()
        self.processes: list = [None] * config.num_actors
        self.credits: list = [None] * config.num_actors
        self.busy = [False] * config.num_actors  # a window is owed

    def _launch(self, i: int) -> None:
        self.credits[i] = self.context.Semaphore(0)
        process = self.context.Process(
            target=actor_process, name=f"gdi-actor-{i}", daemon=True,
            args=(i, self.incarnations[i], self.config, self.shapes, self.server,
                  self.messages, self.stop_event, self.credits[i], self.controller_states[i],
                  os.getpid()),
        )
        process.start()
        self.processes[i] = process

    def _discard(self, i: int) -> None:
        old = self.processes[i]
        if old.is_alive():
            old.terminate()
        old.join(timeout=5.0)
        self.busy[i] = False  # the window it owed is lost: the driver asks again

    @property
    def in_flight(self) -> int:
        return sum(self.busy)

    def request(self) -> None:
        i = self.busy.index(False)
        self.busy[i] = True
        self.credits[i].release()

    def receive(self, block: bool) -> list[Window]:
        windows = []
        while True:
            try:
                actor_id, incarnation, content = self.messages.get(
                    block=block and not windows, timeout=1.0)
            except queue_module.Empty:
                break
            except (OSError, EOFError):
                # A window whose sender died before we took it: its shared-memory handle went
                # with it. The window is lost; _check_processes restarts the sender.
                continue
            current = incarnation == self.incarnations[actor_id]
            if isinstance(content, str):
                if current:
                    error = content.rstrip().splitlines()[-1]
                    self._restart(actor_id, f"actor {actor_id} failed: {error}")
                continue
            window = _unpack(content)
            windows.append(window)
            self.controller_states[actor_id] = window.controller_state
            if current:  # a window from a process since replaced owes no credit
                self.busy[actor_id] = False
        self._check_processes()
        return windows

    def _check_processes(self) -> None:
        for i, process in enumerate(self.processes):
            if not process.is_alive() and process.exitcode not in (0, None):
                self._restart(i, f"actor {i} (pid {process.pid}) exited with code "
                                 f"{process.exitcode}")

    def close(self) -> None:
        self.stop_event.set()
        processes = [p for p in self.processes if p is not None]
        deadline = time.monotonic() + 10.0
        while any(p.is_alive() for p in processes) and time.monotonic() < deadline:
            try:  # unblock actors waiting to put; what they sent is discarded
                self.messages.get(timeout=0.1)
            except queue_module.Empty:
                pass
            except (OSError, EOFError):
                # A message whose sender already exited: its shared-memory handle is gone.
                pass
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join(timeout=5.0)
        self.messages.close()
        self.messages.cancel_join_thread()
