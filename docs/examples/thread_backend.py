"""A new backend: each actor acts in a thread of the learner's process.

The ``inline`` backend acts a window only when the learner has run out of data, so acting and
learning never overlap; ``local`` overlaps them in separate processes. This backend overlaps
them in one process: the driver asks an actor for a window, the actor's thread acts it while the
learner keeps training, and the window is handed over through a queue. PyTorch releases
Python's lock inside its operators, so a network forward pass in an actor thread runs beside
the learner's backward pass.

A backend decides only where actors run and how windows and parameters travel; the driver loop
(``gdi.runtime.driver``) is the same for every backend. A failure inside an actor thread ends
the run with that error (this backend restarts nothing; see ``ParallelBackend`` in
``gdi.runtime.backends.base`` for restarts with a failure budget).
"""

from __future__ import annotations

import queue
import threading

import torch

from gdi.runtime.acting.actor import Window
from gdi.runtime.training.parameter_server import flatten_parameters, unflatten_parameters_into


class LockedParameterServer:
    """Parameters shared between threads: the learner publishes a flat copy, actors copy it
    into their own networks; one lock keeps a copy and its version together."""

    def __init__(self, module: torch.nn.Module) -> None:
        self._lock = threading.Lock()
        self._flat, self._version = flatten_parameters(module), 0

    def push(self, module: torch.nn.Module, version: int) -> None:
        flat = flatten_parameters(module)  # copied outside the lock: pulls do not wait for it
        with self._lock:
            self._flat, self._version = flat, version

    def pull(self, module: torch.nn.Module, have_version: int) -> int:
        with self._lock:
            flat, version = self._flat, self._version
        if version != have_version:
            unflatten_parameters_into(flat, module)  # push replaces _flat, never writes into it
        return version


class ThreadBackend:
    """One thread per actor; the driver's ``request(i)`` wakes idle actor i (the driver takes
    every actor in turn), ``receive`` takes the windows its threads have finished. Its actors are
    built from the run's ``recipe``; nothing here waits to be placed or restarts an actor, so
    ``placement`` (fault budgets, Ray's settings) and ``stop`` (the run's Ctrl-C, for backends
    that wait) are unused."""

    restarts = 0  # a failed actor ends the run: nothing is restarted
    acts_in_loop = False  # the actors act in threads of their own, not in the driver's loop

    def __init__(self, recipe, placement, stop=None) -> None:
        self.num_actors = self.parallel_actors = recipe.num_actors
        self.actors = [recipe.build(i) for i in range(recipe.num_actors)]
        self._asks = [queue.SimpleQueue() for _ in self.actors]  # True: act a window; None: stop
        self._done: queue.SimpleQueue = queue.SimpleQueue()  # (actor id, Window or exception)
        self._busy: set[int] = set()
        self._threads: list[threading.Thread] = []

    def parameter_server(self, module: torch.nn.Module) -> LockedParameterServer:
        return LockedParameterServer(module)

    def pull_from(self, server: LockedParameterServer) -> None:
        self.server = server  # the run's, made by parameter_server

    def start(self, controller_state, checkpoint: dict | None, stop=None) -> list[str]:
        for actor in self.actors:
            state = controller_state(actor.actor_id)
            if state is not None:  # resuming: each actor's E as the checkpoint saved it
                actor.controller.load_state_dict(state)
        for i in range(self.num_actors):
            thread = threading.Thread(target=self._serve, args=(i,), name=f"actor-{i}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)
        return []

    def _serve(self, i: int) -> None:
        actor = self.actors[i]
        while self._asks[i].get() is not None:
            try:
                # Pull first: the learner moved on while this actor waited for a request.
                self._done.put((i, actor.act_window(self.server, pull_first=True)))
            except Exception as err:
                self._done.put((i, err))
                return

    @property
    def in_flight(self) -> int:
        return len(self._busy)

    def idle_actors(self) -> list[int]:
        return [i for i in range(self.num_actors) if i not in self._busy]

    def request(self, actor_id: int) -> None:
        self._busy.add(actor_id)  # the driver picks whose turn it is among idle_actors()
        self._asks[actor_id].put(True)

    def receive(self, block: bool) -> list[Window]:
        arrived = []
        try:
            if block:  # wait a second at most, so the driver stays responsive to Ctrl-C
                arrived.append(self._done.get(timeout=1.0))
            while True:
                arrived.append(self._done.get_nowait())
        except queue.Empty:
            pass
        windows = []
        for i, item in arrived:
            self._busy.discard(i)
            if isinstance(item, Exception):
                raise RuntimeError(f"actor {i} failed: {item}") from item
            windows.append(item)
        return windows

    def take_warnings(self) -> list[str]:
        return []

    def actor_states(self) -> None:
        return None  # windows being acted cannot be saved: a resume starts environments afresh

    def close(self) -> None:
        for asks in self._asks:
            asks.put(None)
        for thread in self._threads:
            thread.join()  # an actor in the middle of a window finishes it first
        for actor in self.actors:
            actor.close()
