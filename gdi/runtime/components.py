"""Building the parts of a run from its layers' configs: networks, E controllers, the recipe
of its actors, the data collector, the learner. With ``gdi.runtime.wiring`` and
``gdi.runtime.lifecycle``, the only runtime code that reads a whole ``Config``: each builder
hands the part it builds the layers that part reads (``Config.layer``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from gdi.config import Config
from gdi.envs import EnvConfig, make_vector_env, resolve_env
from gdi.learning.loss import LossConfig
from gdi.learning.optimizer import OptimizerConfig
from gdi.meta import make_controller
from gdi.meta.config import MetaConfig
from gdi.nets import build
from gdi.nets.config import NetworkConfig
from gdi.run_spec import RunSpec
from gdi.runtime import seeds
from gdi.runtime.acting.actor import Actor
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.training.learner import Learner
from gdi.runtime_config import ActorsConfig, PlacementConfig, ReplayConfig


def resolve_run_env(spec: RunSpec) -> EnvConfig:
    """The run's environment as its spec gives it: the environment, the ALE protocol and the
    run's own overrides on top."""
    return resolve_env(spec.env, protocol=spec.protocol, **spec.env_overrides)


def build_network(network: NetworkConfig, shapes: EnvShapes):
    """The network ``network`` describes, for an environment of ``shapes``."""
    return build(shapes.obs_shape, shapes.num_actions, obs_scale=shapes.obs_scale,
                 **network.build_options())


def build_collector(replay: ReplayConfig, seed: int, frame_stack: int) -> ReplayCollector:
    """The data collector: actors' windows in, the learner's batches of sequences out (each
    sequence learned from ``replay`` times), seeded from the run's ``seed``; ``frame_stack``:
    the frames an observation stacks (stored once, stacked again for the learner)."""
    return ReplayCollector(
        replay.batch_size, replay.replay, replay.replay_capacity, replay.min_replay,
        seed=seeds.collector(seed), frame_stack=frame_stack,
    )


def build_controller(meta: MetaConfig, seed: int):
    """A fresh E of ``meta``'s kind, seeded."""
    return make_controller(meta.meta_controller, seed, **meta.meta_kwargs)


def build_learner(config: Config, net: torch.nn.Module, device: str | None = None) -> Learner:
    """Operator T for ``net``, with the layers it reads: the loss, the optimizer, the replay's
    burn-in and γ, the network's heads; on ``device`` (default: ``learner_device``)."""
    return Learner(net, config.layer(LossConfig), config.layer(OptimizerConfig),
                   config.layer(ReplayConfig), config.layer(NetworkConfig),
                   compile=config.learner_compile,
                   device=learner_device(config) if device is None else device)


@dataclass(frozen=True)
class ActorRecipe:
    """What every actor of a run is built from: handed to the backend, which builds its
    actors where it places them (in this process, each in a process of its own, in Ray
    workers), so it holds plain data that travels (pickles) and nothing the learner's
    process holds."""

    env_config: EnvConfig
    shapes: EnvShapes
    network: NetworkConfig
    meta: MetaConfig
    actors: ActorsConfig
    replay: ReplayConfig
    policy_space: str
    device: str
    """``actor_device`` (``auto`` resolved where the actor runs)."""
    run_seed: int

    @classmethod
    def of(cls, config: Config, env_config: EnvConfig, shapes: EnvShapes) -> ActorRecipe:
        return cls(env_config, shapes, config.layer(NetworkConfig), config.layer(MetaConfig),
                   config.layer(ActorsConfig), config.layer(ReplayConfig),
                   config.policy_space, config.actor_device, config.seed)

    @property
    def num_actors(self) -> int:
        return self.actors.num_actors

    def build(self, actor_id: int, *, incarnation: int = 0,
              controller_state: dict | None = None) -> Actor:
        """Actor ``actor_id`` as every backend starts it: its environments, its E (restored
        from ``controller_state`` when given: a resumed run, or an actor restarted after a
        failure), its own network and the seeds of its ``incarnation``
        (``gdi.runtime.seeds.actor``)."""
        seed = seeds.actor(self.run_seed, actor_id, incarnation)
        controller = build_controller(self.meta, seed)
        if controller_state is not None:
            controller.load_state_dict(controller_state)
        net = build_network(self.network, self.shapes).to(resolve_device(self.device))
        return Actor(actor_id, self.actors, self.replay, self.policy_space, self.env_config,
                     net, controller, seed)


class EnvShapes(NamedTuple):
    """What the network needs to know of an environment."""

    obs_shape: tuple[int, ...]
    num_actions: int
    obs_scale: float
    """Input scale: 1/high for bounded integer observations (ALE pixels 1/255, MinAtar's 0/1
    planes 1), 1 for everything else."""


def env_shapes(env_config, seed: int) -> EnvShapes:
    env = make_vector_env(env_config, 1, seed)
    try:
        space = env.single_observation_space
        scale = 1.0
        if np.issubdtype(space.dtype, np.integer) and np.all(np.isfinite(space.high)):
            scale = 1.0 / float(np.max(space.high))
        return EnvShapes(tuple(space.shape), int(env.single_action_space.n), scale)
    finally:
        env.close()


def flush_denormals(on: bool = True) -> None:
    """CPU arithmetic of this thread, and of the threads it starts from now on, treats
    denormal floats, |x| < 1.2e-38, as zero. Adam's moment estimates of parameters whose
    gradients vanish decay into that range over a run, where each operation takes a slow
    microcode path, so a trained learner's optimizer step slows down several times; what it
    changes is below 1e-30 of an update (docs/benchmarks.md, "What a run's learner does that a
    random batch does not: denormal floats", has the shares and times). Threads inherit the setting when they
    start, so every training process calls it before torch starts its worker threads (before
    it builds anything); ``flush_denormals(False)`` restores PyTorch's default."""
    torch.set_flush_denormal(on)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def learner_threads(config: Config) -> int:
    """Threads for the learner process: as configured, else the cores not taken by actor
    processes (local backend) or all cores (inline backend)."""
    if config.torch_threads > 0:
        return config.torch_threads
    cores = available_cores()
    # Actor processes on this machine: the local backend's, and a Ray instance started here
    # (on a cluster the ray backend sets the threads once Ray has placed the actors).
    here = config.backend == "local" or (config.backend == "ray" and not config.ray_address)
    actors = config.num_actors if here else 0
    return max(1, cores - actors)


def resolve_device(name: str) -> str:
    """A configured device, ``auto`` being cuda where this machine has a GPU (else cpu)."""
    if name == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def learner_device(placement: PlacementConfig) -> str:
    """The learner's device (``learner_device``, resolved on the learner's machine)."""
    return resolve_device(placement.learner_device)
