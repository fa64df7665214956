"""Building the parts every backend needs, from a Config: networks, E controllers, seeds."""

from __future__ import annotations

import os

from gdi.config import Config
from gdi.envs import make_vector_env
from gdi.meta import make_controller
from gdi.nets import build


def actor_seed(config: Config, actor_id: int) -> int:
    """Seeds of actor ``actor_id``'s environments, action sampling and E."""
    return config.seed * 1000 + 17 + actor_id * 101


def build_network(config: Config, obs_shape: tuple[int, ...], num_actions: int):
    return build(
        obs_shape, num_actions, torso=config.torso, lstm_units=config.lstm_units,
        families=config.families, aux=config.aux_tasks,
    )


def build_controller(config: Config, seed: int):
    return make_controller(config.meta_controller, seed, **config.meta_kwargs)


def env_shapes(env_config, seed: int) -> tuple[tuple[int, ...], int]:
    env = make_vector_env(env_config, 1, seed)
    try:
        return tuple(env.single_observation_space.shape), int(env.single_action_space.n)
    finally:
        env.close()


def learner_threads(config: Config) -> int:
    """Threads for the learner process: as configured, else the cores not taken by actor
    processes (local backend) or all cores (inline backend)."""
    if config.torch_threads > 0:
        return config.torch_threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    actors = config.num_actors if config.backend == "local" else 0
    return max(1, (cores or 1) - actors)
