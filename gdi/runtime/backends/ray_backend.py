"""The ``ray`` backend: actors as Ray actors on any number of nodes, the learner in the driver.

What runs where:
- the driver (the process that runs ``gdi train``, on the head node or any node of the
  cluster) holds the learner (on its GPU when it has one and ``learner_device=auto``), the
  data collector, the run folder, evaluation and checkpoints;
- each actor is a Ray actor reserving ``ray_cpus_per_actor`` CPUs, with its environments and
  its own E; ``ray_placement=spread`` asks Ray to put them on different nodes (Ray's SPREAD
  scheduling strategy), ``pack`` fills nodes in Ray's default order;
- the parameter server is Ray's object store: every ``push_every`` learner steps the driver
  puts the flat parameters there once; each window request carries a reference to the newest
  ones, which the actor fetches (zero-copy on its node) only when its version is older. An
  actor therefore acts a window with the parameters of the moment it was asked for it (just
  in time: a few learner steps old), and pulls nothing newer within the window.

Windows come back as Ray object references and are asked for just in time with credits by
the same driver loop as every other backend, so the replay ratio stays exact and memory
bounded. An actor whose worker dies (``kill -9``, a lost node) or whose window raised is
replaced by a new Ray actor with its E as last reported and fresh environments, within the
``actor_failures_max`` budget.

Ray is an optional extra: ``pip install gdi-rl[ray]``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import sys
import tempfile
import time

import numpy as np
import torch

from gdi.runtime.acting.actor import Window
from gdi.runtime.backends.base import ControllerStates, ParallelBackend
from gdi.runtime.components import ActorRecipe, available_cores
from gdi.runtime.errors import ActorFailure
from gdi.runtime.stop import StoppedDuringStartUp
from gdi.runtime.training.parameter_server import flatten_parameters, unflatten_parameters_into
from gdi.runtime_config import PlacementConfig

#: Seconds to wait for the cluster to place every actor (at start-up, and again for an actor
#: restarted after a failure) before saying it cannot.
PLACEMENT_TIMEOUT_S = 120.0
#: Seconds to keep trying to reach a cluster's address before saying it cannot: Ray itself
#: retries an unreachable GCS for many minutes, printing a warning every 30 s. Short, so that
#: a wrong address is said within 10 s of the command (a head node still starting is met by
#: running the command again).
CONNECT_TIMEOUT_S = 3.0
#: How often a wait of start-up (connection, placement) looks at the stop request (Ctrl-C).
POLL_S = 0.5

CLUSTER_HELP = ("start one with `ray start --head --port 6379` on the head node (and `ray start "
                "--address HEAD:6379` on the others), then pass --set ray_address=HEAD:6379; "
                "see docs/scaling.md, \"Running on a cluster\"")


def import_ray():
    try:
        import ray
    except ImportError:
        raise ValueError(
            "--backend ray needs Ray: pip install 'gdi-rl[ray]' (or pip install ray)"
        ) from None
    return ray


def _cluster_address(ray, address: str) -> tuple[str, int]:
    """The (host, port) that ``ray.init(address=...)`` would connect to, or a ValueError of one
    line: ``auto`` with no cluster recorded on this machine, a malformed address."""
    target = address.removeprefix("ray://")
    _check_port(address, target)  # before Ray rewrites 127.0.0.1 into this node's address
    if address == "auto" or not address.startswith("ray://"):
        from ray._private import services  # how ray.init resolves "auto" and RAY_ADDRESS

        try:
            target = services.canonicalize_bootstrap_address(address) or ""
        except ConnectionError:
            raise ValueError(
                f"ray_address={address}: no running Ray cluster was found from this machine "
                f"(none started here, RAY_ADDRESS unset); {CLUSTER_HELP}") from None
        except ValueError as err:
            raise ValueError(f"ray_address={address!r} is not an address ({err}); allowed: "
                             "auto, HOST:PORT or ray://HOST:PORT") from None
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"ray_address={address!r} is not an address; allowed: auto, "
                         "HOST:PORT or ray://HOST:PORT")
    _check_port(address, target)
    host = host.strip("[]")
    try:  # a misspelt host fails here at once, not after the connection timeout
        socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise ValueError(f"ray_address={address}: the host {host!r} is not known "
                         f"({err.strerror or err}); {CLUSTER_HELP}") from None
    return host, int(port)


def _check_port(address: str, target: str) -> None:
    """ValueError of one line for a port outside 1-65535 (``auto`` has none)."""
    _, colon, port = target.rpartition(":")
    if colon and port.isdigit() and not 0 < int(port) <= 65535:
        raise ValueError(f"ray_address={address!r}: port {port} is not a TCP port; allowed: "
                         "1-65535")


def _reach(host: str, port: int, address: str, stop, timeout_s: float) -> bool:
    """Wait until ``host:port`` accepts a TCP connection (True), or ``stop`` is requested
    (False); a ValueError of one line once ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, port), timeout=POLL_S * 2):
                return True
        except OSError as err:
            reason = err.strerror or type(err).__name__
        if stop is not None and stop.requested:
            return False
        if time.monotonic() >= deadline:
            raise ValueError(
                f"cannot reach the Ray cluster at ray_address={address} ({host}:{port}: "
                f"{reason}) within {timeout_s:g} s; check that its head node runs and that "
                f"this machine can reach that port, or {CLUSTER_HELP}")
        time.sleep(POLL_S)


@contextlib.contextmanager
def _stderr_kept_aside(kept: list[str]):
    """File descriptor 2 into a temporary file while Ray connects to a cluster, its text put
    in ``kept`` afterwards: Ray's C++ core writes a warning there on every retry (a head
    that refuses an unauthenticated driver: one line a second for ~20 s), which gdi turns
    into one line of its own. Only for joining a cluster: processes started meanwhile would
    inherit the file."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as aside:
        os.dup2(aside.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            aside.seek(0)
            kept.append(aside.read().decode(errors="replace"))


def _token_auth_refused(text: str) -> bool:
    return "InvalidAuthToken" in text or "Unauthenticated" in text


def actor_name(actor_id: int, incarnation: int) -> str:
    """The Ray actor's name (in the driver's namespace, so runs sharing a cluster never
    clash): ``ray.get_actor(actor_name(0, 0))`` finds actor 0 as first started."""
    return f"gdi-actor-{actor_id}.{incarnation}"


class ObjectStoreParameterServer:
    """The learner's side of the parameter server: parameters put into Ray's object store."""

    def __init__(self, ray, module: torch.nn.Module) -> None:
        self._ray = ray
        self.push(module, 0)

    def push(self, module: torch.nn.Module, version: int) -> None:
        self.version = version
        self.ref = self._ray.put(flatten_parameters(module).numpy())


class OfferedParameters:
    """An actor's side: the newest parameters it was offered with its window request."""

    def __init__(self, ray) -> None:
        self._ray = ray
        self.version, self.ref = -1, None

    def offer(self, version: int, ref) -> None:
        self.version, self.ref = version, ref

    def pull(self, module: torch.nn.Module, have_version: int) -> int:
        if self.ref is not None and self.version != have_version:
            # Fetched from the object store (a read-only view): copied into the module.
            unflatten_parameters_into(torch.from_numpy(np.array(self._ray.get(self.ref))),
                                      module)
            return self.version
        return have_version


class RayActor:
    """One actor (environments + E) inside a Ray worker process."""

    def __init__(self, actor_id: int, incarnation: int, recipe: ActorRecipe, threads: int,
                 controller_state: dict | None) -> None:
        import ray

        from gdi.runtime.components import flush_denormals

        torch.set_num_threads(threads)
        flush_denormals()
        self.actor = recipe.build(actor_id, incarnation=incarnation,
                                  controller_state=controller_state)
        self.server = OfferedParameters(ray)
        self._idle_since = time.perf_counter()

    def where(self) -> tuple[str, int]:
        """(Ray node id, process id): for placement checks and fault tests."""
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

    def act_window(self, version: int, refs: list) -> Window:
        # The reference travels inside a list so that Ray hands it over instead of fetching
        # the parameters for every request: the actor fetches only when they are newer.
        self.actor.phase_seconds["idle"] += time.perf_counter() - self._idle_since
        self.server.offer(version, refs[0])
        window = self.actor.act_window(self.server, pull_first=True)
        self._idle_since = time.perf_counter()
        return window


class RayBackend(ParallelBackend):
    def __init__(self, recipe: ActorRecipe, placement: PlacementConfig, stop=None) -> None:
        super().__init__(recipe.num_actors, placement)
        self.ray = ray = import_ray()
        self.recipe = recipe
        self.started_ray = False
        self.handles: list = [None] * self.num_actors
        self.pending: dict = {}  # window reference → (actor id, incarnation)
        # Actors restarted and not yet placed: actor id → (its where() reference, deadline).
        self.placing: dict[int, tuple] = {}
        self.failed: dict[int, str] = {}  # restarted, not launched yet: actor id → its failure
        if not ray.is_initialized():
            if not self._init(placement, stop):  # a Ctrl-C while reaching the cluster
                raise StoppedDuringStartUp("stopped while reaching the Ray cluster")
            self.started_ray = True
        self.remote_class = ray.remote(RayActor)

    def parameter_server(self, module: torch.nn.Module) -> ObjectStoreParameterServer:
        return ObjectStoreParameterServer(self.ray, module)

    def _init(self, placement: PlacementConfig, stop) -> bool:
        """Connect to ``ray_address``, or start a Ray instance on this machine. Every way this
        fails is one line (ValueError); False when ``stop`` was requested first."""
        ray = self.ray
        quiet = {"log_to_driver": False, "include_dashboard": False,
                 "logging_level": logging.ERROR}
        if placement.ray_address:
            # Ray retries an address it cannot reach for many minutes, deaf to Ctrl-C: reach
            # it first, for a bounded time.
            host, port = _cluster_address(ray, placement.ray_address)
            if not _reach(host, port, placement.ray_address, stop, CONNECT_TIMEOUT_S):
                return False
            target = {"address": placement.ray_address}
        else:
            # A Ray instance for this run on this machine, with room for every actor (like
            # the local backend, more actors than cores share them); one actor's CPUs cannot
            # exceed the machine's.
            cores = os.cpu_count() or 1
            if placement.ray_cpus_per_actor > cores:
                raise ValueError(
                    f"ray_cpus_per_actor={placement.ray_cpus_per_actor:g} is more than this "
                    f"machine's {cores} cores (no ray_address: a Ray instance on this machine); "
                    f"allowed here: at most {cores}, or a cluster with nodes that large "
                    "(--set ray_address=HEAD:PORT)")
            cpus = max(cores, math.ceil(self.num_actors * placement.ray_cpus_per_actor))
            target = {"address": "local", "num_cpus": cpus}
        said: list[str] = []
        token_help = (
            f"the Ray cluster at ray_address={placement.ray_address} uses token authentication "
            "and refused this process: set RAY_AUTH_MODE=token and give it the cluster's "
            "token (the file ~/.ray/auth_token, RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN) before "
            "gdi train; see docs/scaling.md, \"Running on a cluster\"")
        try:
            with _stderr_kept_aside(said) if placement.ray_address else contextlib.nullcontext():
                ray.init(**target, **quiet)
        except ray.exceptions.AuthenticationError:  # RAY_AUTH_MODE=token, but no token
            raise ValueError(token_help) from None
        except (ConnectionError, RuntimeError) as err:
            if not placement.ray_address:
                raise
            cause = f"{err} {err.__cause__ or ''} {''.join(said)}"
            if _token_auth_refused(cause):  # no RAY_AUTH_MODE=token: refused ~20 times
                raise ValueError(token_help) from None
            raise ValueError(
                f"cannot connect to the Ray cluster at ray_address={placement.ray_address} "
                f"({str(err).strip().splitlines()[0]}); {CLUSTER_HELP}") from None
        if said and said[0].strip():
            sys.stderr.write(said[0])  # what Ray said on a connection that worked
        return True

    # --- actors ---------------------------------------------------------------------------
    def start(self, controller_state: ControllerStates, checkpoint: dict | None,
              stop=None) -> list[str]:
        warnings = super().start(controller_state, checkpoint)
        if self._wait_placed(stop):
            self._fit_learner_threads()
        return warnings

    def _fit_learner_threads(self) -> None:
        """The learner's threads (unless torch_threads sets them): the cores of this node
        that its actors leave free. Where the actors land is known only once Ray has placed
        them, and a learner with more threads than free cores spins (docs/scaling.md, "Ray
        against local", says what that cost)."""
        if self.placement.torch_threads > 0:
            return
        here = self.ray.get_runtime_context().get_node_id()
        actors_here = sum(node == here for node, _ in self.placed)
        torch.set_num_threads(max(1, available_cores() - actors_here))

    def _launch(self, i: int) -> None:
        strategy = "SPREAD" if self.placement.ray_placement == "spread" else "DEFAULT"
        self.handles[i] = self.remote_class.options(
            name=actor_name(i, self.incarnations[i]), num_cpus=self.placement.ray_cpus_per_actor,
            scheduling_strategy=strategy, max_restarts=0,
        ).remote(i, self.incarnations[i], self.recipe,
                 max(1, math.floor(self.placement.ray_cpus_per_actor)),
                 self.controller_state(i))
        if i in self.failed:
            # A replacement must be placed within the same bound as at start-up: a lost node
            # may have left no room for it, and its window would be waited for forever.
            self.placing[i] = (self.handles[i].where.remote(),
                               time.monotonic() + PLACEMENT_TIMEOUT_S, self.failed.pop(i))

    def _wait_placed(self, stop) -> bool:
        """Wait until the cluster has placed every actor (True), or ``stop`` is requested
        (False: a Ctrl-C during the wait); a ValueError after ``PLACEMENT_TIMEOUT_S``."""
        refs = [handle.where.remote() for handle in self.handles]
        deadline = time.monotonic() + PLACEMENT_TIMEOUT_S
        ready: list = []
        while len(ready) < len(refs):
            if stop is not None and stop.requested:
                return False
            if time.monotonic() >= deadline:
                raise ValueError(f"the Ray cluster placed {len(ready)} of {len(refs)} actors "
                                 f"in {PLACEMENT_TIMEOUT_S:g} s: {self._room()}")
            ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=POLL_S)
        self.placed = self.ray.get(refs)
        return True

    def _room(self) -> str:
        free = self.ray.available_resources().get("CPU", 0.0)
        return (f"each actor reserves ray_cpus_per_actor={self.placement.ray_cpus_per_actor:g} "
                f"CPUs and {free:g} are free; add nodes or lower num_actors / "
                "ray_cpus_per_actor")

    def _restart(self, i: int, what: str) -> None:
        self.failed[i] = what
        super()._restart(i, what)

    def _check_placing(self) -> None:
        for i, (ref, deadline, what) in list(self.placing.items()):
            ready, _ = self.ray.wait([ref], timeout=0.0)
            if ready:
                del self.placing[i]
                self._ready(i)  # a window asked during its placement is timed from now
            elif time.monotonic() >= deadline:
                raise ActorFailure(
                    f"{what}; its replacement was not placed within {PLACEMENT_TIMEOUT_S:g} s: "
                    f"{self._room()}")

    def where(self) -> list[tuple[str, int]]:
        """Each actor's (node id, pid), as placed now."""
        return self.ray.get([handle.where.remote() for handle in self.handles])

    @property
    def in_flight(self) -> int:
        return len(self.pending)

    def idle_actors(self) -> list[int]:
        busy = {actor_id for actor_id, _ in self.pending.values()}
        return [i for i in range(self.num_actors) if i not in busy]

    def request(self, actor_id: int) -> None:
        self._relaunch_failed()
        ref = self.handles[actor_id].act_window.remote(self.server.version, [self.server.ref])
        self.pending[ref] = (actor_id, self.incarnations[actor_id])
        self._asked(actor_id)

    def receive(self, block: bool) -> list[Window]:
        self._relaunch_failed()
        self._check_placing()
        if not self.pending:
            return []
        ready, _ = self.ray.wait(list(self.pending), num_returns=1,
                                 timeout=1.0 if block else 0.0)
        if ready:  # then everything else that has arrived too
            ready, _ = self.ray.wait(list(self.pending), num_returns=len(self.pending),
                                     timeout=0.0)
        windows = []
        for ref in ready:
            actor_id, incarnation = self.pending.pop(ref)
            try:
                window = self.ray.get(ref)
            except (self.ray.exceptions.RayActorError, self.ray.exceptions.RayTaskError) as err:
                if incarnation == self.incarnations[actor_id]:
                    self._restart(actor_id, f"actor {actor_id} failed: "
                                            f"{str(err).strip().splitlines()[-1]}")
                continue
            if incarnation == self.incarnations[actor_id]:
                self._answered(actor_id)
            windows.append(window)
        # After the windows that arrived are taken: an actor whose window waited in the object
        # store while the driver was busy (a long evaluation) is not silent.
        self._restart_silent_actors(skip=self.placing)
        return windows

    def _discard(self, i: int) -> None:
        # The window it owes is waited for no more (a failed one's reference was taken out
        # of `pending` already; a silent one's is still there).
        for ref, (actor_id, _) in list(self.pending.items()):
            if actor_id == i:
                del self.pending[ref]
        self.ray.kill(self.handles[i], no_restart=True)

    def close(self) -> None:
        if self.ray.is_initialized():
            for handle in self.handles:
                if handle is not None:
                    self.ray.kill(handle, no_restart=True)
        if self.started_ray:
            self.ray.shutdown()
