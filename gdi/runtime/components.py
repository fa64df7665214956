"""Building the parts of a run from its Config: networks, E controllers, actors, the data
collector."""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import torch

from gdi.config import Config
from gdi.envs import make_vector_env, resolve_env
from gdi.meta import make_controller
from gdi.nets import build
from gdi.runtime import seeds
from gdi.runtime.acting.actor import Actor
from gdi.runtime.storage.collector import ReplayCollector


def resolve_run_env(config: Config):
    """The run's environment as its config gives it: the spec, the ALE protocol and the
    run's own overrides on top."""
    return resolve_env(config.env, protocol=config.protocol, **config.env_overrides)


def build_network(config: Config, spec: EnvShapes):
    """The network the run's config describes (its NetworkConfig fields) for ``spec``."""
    return build(spec.obs_shape, spec.num_actions, obs_scale=spec.obs_scale,
                 **config.build_options())


def build_collector(config: Config, env_config) -> ReplayCollector:
    """The data collector: actors' windows in, the learner's batches of sequences out (each
    sequence learned from ``replay`` times), seeded from the run's seed."""
    return ReplayCollector(
        config.batch_size, config.replay, config.replay_capacity, config.min_replay,
        seed=seeds.collector(config.seed), frame_stack=env_config.stacked_frames,
    )


def build_controller(config: Config, seed: int):
    return make_controller(config.meta_controller, seed, **config.meta_kwargs)


def build_actor(config: Config, actor_id: int, shapes: EnvShapes, *, incarnation: int = 0,
                controller_state: dict | None = None, env_config=None) -> Actor:
    """Actor ``actor_id`` as every backend starts it: its environments, its E (restored from
    ``controller_state`` when given: a resumed run, or an actor restarted after a failure),
    its own network and the seeds of its ``incarnation`` (``gdi.runtime.seeds.actor``).
    ``env_config``: the resolved environment, when the caller holds it (else resolved from
    the config, as a process of its own must)."""
    seed = seeds.actor(config.seed, actor_id, incarnation)
    controller = build_controller(config, seed)
    if controller_state is not None:
        controller.load_state_dict(controller_state)
    if env_config is None:
        env_config = resolve_run_env(config)
    # The actor's network on actor_device (auto resolved in the actor's own process).
    net = build_network(config, shapes).to(resolve_device(config.actor_device))
    return Actor(actor_id, config, env_config, net, controller, seed)


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


def learner_device(config: Config) -> str:
    """The learner's device (``learner_device``, resolved on the learner's machine)."""
    return resolve_device(config.learner_device)
