"""The runtime seam: what a backend is, and the registry of backends.

A backend decides only where actors run and how windows and parameters travel; everything
else (collector, learner, E's bookkeeping, metrics, evaluation, checkpoints) is the one driver
loop in ``gdi.runtime.driver``, the same for every backend. The driver asks for windows just
in time, one actor at a time and every actor in turn (``request``, ``ActorTurns``), and takes
what has arrived (``receive``):

    driver ──request(i)─▶ backend ──▶ actor i acts a window with the newest parameters
    driver ◀─receive()─── backend ◀── Window (sequences, episodes, frames, E's state, times)
    learner ──push()────▶ backend.server ──pull()──▶ actors

Backends: ``inline`` (this process, a fixed order: exactly reproducible), ``local`` (one
process per actor, shared memory), ``ray`` (Ray actors on any number of nodes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import torch

from gdi.backend_registry import BACKENDS  # name → "module:class", the one registry
from gdi.runtime.acting.actor import Window
from gdi.runtime.errors import ENVIRONMENT_FAULT, ActorFailure, EnvironmentFault
from gdi.runtime_config import PlacementConfig


class ParameterServer(Protocol):
    """The learner's side of the paper's PS: versioned parameters, pushed every
    ``push_every`` steps. How actors pull them is the backend's business (``Actor.pull``
    takes any object with ``pull(module, have_version) -> version``)."""

    def push(self, module: torch.nn.Module, version: int) -> None: ...


#: Actor i's E as last reported (``None``: a fresh one): ``ActorRoster.controller_state``.
ControllerStates = Callable[[int], "dict | None"]


class Backend(Protocol):
    """Built as ``cls(recipe, placement, stop=stop)``: the actors of a run, where they run
    and how their windows and θ travel. ``recipe`` (``gdi.runtime.components.ActorRecipe``)
    builds actor i where the backend places it (``recipe.build(i)``); ``placement``
    (``gdi.runtime_config.PlacementConfig``) holds the backends' settings and fault budgets.
    ``stop`` (the run's stop request) lets a backend that waits while it is built (a Ray
    cluster being reached) give up on a Ctrl-C, raising
    ``gdi.runtime.stop.StoppedDuringStartUp``."""

    server: ParameterServer
    """Where the learner publishes parameters (``pull_from``)."""
    num_actors: int
    parallel_actors: int
    """Actors that run at the same time, each with its own wall clock (1 when they take turns
    in this process): per-actor phase shares are averaged over them."""
    acts_in_loop: bool
    """Whether the actors act inside the driver's loop, in the learner's thread (``inline``):
    then an environment step that never returns blocks the loop, and a stop request arms a
    watchdog (``gdi.runtime.stop.StopRequest.watchdog_s``)."""

    def parameter_server(self, module: torch.nn.Module) -> ParameterServer:
        """A parameter server holding ``module``'s θ as version 0, of the kind this backend's
        actors read (a tensor in this process, shared memory, Ray's object store)."""
        ...

    def pull_from(self, server: ParameterServer) -> None:
        """The parameter server the actors pull θ from (one of ``parameter_server``)."""
        ...

    def start(self, controller_state: ControllerStates, checkpoint: dict | None,
              stop=None) -> list[str]:
        """Start the actors, actor i with its E ``controller_state(i)`` (``None``: a fresh
        one); a backend that restarts failed actors asks it again then (the learner side's
        ``ActorRoster`` keeps each actor's E as last reported). ``checkpoint`` is the payload
        resumed from, for backends that restore more of it. A backend that waits for its
        actors to be placed gives up early once ``stop.requested`` (a Ctrl-C). Returns
        warnings."""
        ...

    @property
    def restarts(self) -> int:
        """Actors restarted after a failure since ``start``."""
        ...

    @property
    def in_flight(self) -> int:
        """Windows requested and not yet received."""
        ...

    def idle_actors(self) -> list[int]:
        """The actors with no window in flight (a window lost with its actor counts as not
        in flight: the driver asks again)."""
        ...

    def request(self, actor_id: int) -> None:
        """Ask actor ``actor_id``, one of ``idle_actors()``, to act a window."""
        ...

    def receive(self, block: bool) -> list[Window]:
        """The windows that have arrived; with ``block``, wait (about a second at most) for
        at least one."""
        ...

    def take_warnings(self) -> list[str]:
        """Warnings since the last call (e.g. an actor restarted)."""
        ...

    def actor_states(self) -> list[dict] | None:
        """Every actor's whole state (environments, recurrent states, partial sequences, RNG)
        for an exact resume, which ``Checkpointing.save`` adds to the checkpoint with the data
        collector's contents; ``None`` for the parallel backends, whose windows in flight
        cannot be saved."""
        ...

    def close(self) -> None: ...


def backend_class(name: str) -> type:
    """The backend class registered as ``name`` (imported now); ValueError naming the allowed
    backends otherwise."""
    return BACKENDS.load(name)


class ActorTurns:
    """Which idle actor the driver asks next: the one asked least recently (ties: the lowest
    id), so that every actor acts in turn.

    The driver asks just in time, so after warm-up it rarely has more than one window in
    flight; asking "the first idle actor" would mean actor 0 every time, and every other
    actor, its environments and its E would stand still after warm-up. Counted
    in requests, not seconds, so the inline backend stays exactly reproducible; saved in
    checkpoints for exact resume."""

    def __init__(self, num_actors: int) -> None:
        self.last_asked = [-1] * num_actors  # request number of each actor's last request
        self.requests = 0

    def next(self, idle: list[int]) -> int:
        """The actor to ask among ``idle`` (not empty); counts the request."""
        chosen = min(idle, key=lambda i: (self.last_asked[i], i))
        self.last_asked[chosen] = self.requests
        self.requests += 1
        return chosen

    def state_dict(self) -> dict:
        return {"last_asked": list(self.last_asked), "requests": self.requests}

    def load_state_dict(self, state: dict) -> None:
        if len(state["last_asked"]) == len(self.last_asked):
            self.last_asked, self.requests = list(state["last_asked"]), state["requests"]


class FailureBudget:
    """Counts actor failures in a sliding time window; ``record`` raises ``ActorFailure`` once
    more than ``limit`` fall within ``window_s`` seconds."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit, self.window_s = limit, window_s
        self.times: list[float] = []
        self.total = 0

    def record(self, now: float, what: str) -> None:
        self.total += 1
        self.times = [t for t in self.times if now - t < self.window_s] + [now]
        if len(self.times) > self.limit:
            raise ActorFailure(
                f"{len(self.times)} actor failures within {self.window_s:g} s (more than "
                f"actor_failures_max={self.limit}); the last: {what}"
            )


#: Seconds an actor may take to start (a process spawned, torch imported, its environments
#: built: over a minute for the paper's ALE preset on a small CPU) before it counts as hung.
ACTOR_START_TIMEOUT_S = 600.0


class ParallelBackend:
    """What the backends whose actors run elsewhere (local processes, Ray actors) share: each
    actor's incarnation, the failure budget and the restart that replaces a failed actor. A
    subclass says how to start (``_launch``) and discard (``_discard``) actor ``i``.

    A failed actor is discarded at once and started again at the next ``request`` or
    ``receive``: by then the driver has handed every window received before the failure to
    the Trainer, so the replacement gets its E as last reported (``controller_state``).

    An actor that has not sent a window ``actor_timeout_s`` seconds after it was asked for it
    (an environment whose ``step`` never returns, a process stopped with SIGSTOP, a Ray actor
    whose node hangs) fails the same way: ``_restart_silent_actors``, called by each subclass
    in ``receive``, names it and replaces it. Alive is not enough: the driver waits for the
    window, not for the process. A subclass whose actors report when they are ready
    (``_starting``, ``_ready``) gives their start-up (a process spawned, its environments
    built) ``ACTOR_START_TIMEOUT_S`` instead, and the window's clock starts when it is ready."""

    acts_in_loop = False  # the actors act in processes or Ray workers of their own

    def __init__(self, num_actors: int, placement: PlacementConfig) -> None:
        self.placement = placement
        self.num_actors = self.parallel_actors = num_actors
        self.incarnations = [0] * num_actors
        self.controller_state: ControllerStates = lambda i: None
        self.failures = FailureBudget(placement.actor_failures_max,
                                      placement.actor_failure_window_s)
        self._to_relaunch: list[int] = []
        self._warnings: list[str] = []
        self._asked_at: list[float | None] = [None] * num_actors  # monotonic seconds
        self._started_at: list[float | None] = [None] * num_actors  # None: ready

    def pull_from(self, server: ParameterServer) -> None:
        self.server = server

    def _launch(self, i: int) -> None:
        """Start actor ``i`` (incarnation ``self.incarnations[i]``) with E
        ``self.controller_state(i)``."""
        raise NotImplementedError

    def _discard(self, i: int) -> None:
        """Stop what is left of actor ``i`` and forget the window it owed."""
        raise NotImplementedError

    def start(self, controller_state: ControllerStates, checkpoint: dict | None,
              stop=None) -> list[str]:
        self.controller_state = controller_state
        for i in range(self.num_actors):
            self._launch(i)
        return []

    @property
    def restarts(self) -> int:
        return sum(self.incarnations)

    def _restart(self, i: int, what: str) -> None:
        """Replace actor ``i``: its E as last reported, fresh environments with seeds of their
        own (``incarnation``), unless the failure budget is spent (``ActorFailure``). The
        replacement starts at the next ``_relaunch_failed``. An environment's fault
        (``EnvironmentFault``, which a new actor would only meet again) stops the run instead."""
        _, fault, message = what.partition(ENVIRONMENT_FAULT.split(".")[-1])
        if fault:
            raise EnvironmentFault(message.strip())
        self.failures.record(time.monotonic(), what)
        self._answered(i)
        self._started_at[i] = None
        self._discard(i)
        self.incarnations[i] += 1
        self._to_relaunch.append(i)
        self._warnings.append(f"{what}; restarted it with its E as last reported and fresh "
                              f"environments (restart {self.restarts})")

    def _starting(self, i: int) -> None:
        """Actor ``i`` was launched and has not said it is ready."""
        self._started_at[i] = time.monotonic()

    def _ready(self, i: int) -> None:
        """Actor ``i`` is ready: a window it was asked for during start-up is timed from now."""
        self._started_at[i] = None
        if self._asked_at[i] is not None:
            self._asked_at[i] = time.monotonic()

    def _asked(self, i: int) -> None:
        self._asked_at[i] = time.monotonic()

    def _answered(self, i: int) -> None:
        """Actor ``i`` owes nothing now: it sent its window, or it was discarded."""
        self._asked_at[i] = None

    def _restart_silent_actors(self, skip=()) -> None:
        """Restart every actor that owes a window asked for more than ``actor_timeout_s``
        seconds ago, but those in ``skip`` (a Ray actor still being placed has a deadline of
        its own)."""
        now = time.monotonic()
        for i, (asked, started) in enumerate(zip(self._asked_at, self._started_at, strict=True)):
            if i in skip:
                continue
            if started is not None and now - started > ACTOR_START_TIMEOUT_S:
                self._restart(i, f"actor {i} did not start within {now - started:.0f} s "
                                 f"(ACTOR_START_TIMEOUT_S={ACTOR_START_TIMEOUT_S:g}): "
                                 "environments that never finish building, or a stopped "
                                 "process")
            elif (started is None and asked is not None
                    and now - asked > self.placement.actor_timeout_s):
                self._restart(i, f"actor {i} sent nothing for {now - asked:.0f} s after it was "
                                 f"asked for a window (actor_timeout_s="
                                 f"{self.placement.actor_timeout_s:g}): an environment whose "
                                 "step never returns, or a stopped process")

    def _relaunch_failed(self) -> None:
        """Start the replacements of the actors that failed since the last call (each
        subclass calls it first in ``request`` and ``receive``)."""
        while self._to_relaunch:
            self._launch(self._to_relaunch.pop(0))

    def take_warnings(self) -> list[str]:
        taken, self._warnings = self._warnings, []
        return taken

    def actor_states(self) -> None:
        return None  # windows in flight cannot be saved: resume starts environments afresh
