"""Any registered Gymnasium id, batched by Gymnasium's own ``SyncVectorEnv`` (SAME_STEP).

The layer over ``SyncVectorEnv`` only brings it to the contract of :mod:`gdi.envs`: float32
rewards, ``info["final_obs"]`` as one stacked array (Gymnasium gives an object array of
per-environment observations) and gdi's seeding. Settings: :class:`~gdi.envs.spec.GymConfig`.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import numpy as np
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from gdi.envs.base import BatchedEnv
from gdi.envs.spec import GymConfig

__all__ = ["GymVectorEnv"]


class GymVectorEnv(BatchedEnv):
    """``num_envs`` copies of a Gymnasium environment following the contract of
    :mod:`gdi.envs`. The id must have a ``Discrete`` action space (GDI's policies are over
    discrete actions) and a ``Box`` observation space (one array per step).

    Attributes:
        sync_env: the underlying ``gymnasium.vector.SyncVectorEnv``.
    """

    def __init__(
        self, config: GymConfig, num_envs: int, seed: int, render_mode: str | None = None
    ) -> None:
        super().__init__(config, num_envs, seed)
        make_kwargs: dict[str, Any] = {}
        if render_mode is not None:  # gdi enjoy's video; training never renders
            make_kwargs["render_mode"] = render_mode
        if config.max_episode_steps is not None:
            make_kwargs["max_episode_steps"] = config.max_episode_steps
        make = functools.partial(gymnasium.make, config.name, **make_kwargs)
        self.sync_env = SyncVectorEnv(
            [make] * self.num_envs, autoreset_mode=AutoresetMode.SAME_STEP
        )
        if not isinstance(self.sync_env.single_action_space, Discrete):
            space = self.sync_env.single_action_space
            self.sync_env.close()
            raise ValueError(
                f"gym:{config.name} has action space {space}; gdi needs a Discrete action space"
            )
        if not isinstance(self.sync_env.single_observation_space, Box):
            space = self.sync_env.single_observation_space
            self.sync_env.close()
            raise ValueError(
                f"gym:{config.name} has observation space {space}; gdi needs a Box observation"
            )
        self.single_observation_space = self.sync_env.single_observation_space
        self.single_action_space = self.sync_env.single_action_space
        self.observation_space = self.sync_env.observation_space
        self.action_space = self.sync_env.action_space

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seeds = self._reset_seeds(seed, options)
        return self.sync_env.reset(seed=None if seeds is None else seeds.tolist())

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = self._check_actions(actions)
        obs, rewards, terminated, truncated, info = self.sync_env.step(actions)
        if "final_obs" in info:
            stacked = np.zeros_like(obs)
            for i in np.flatnonzero(info["_final_obs"]):
                stacked[i] = info["final_obs"][i]
            info["final_obs"] = stacked
        return obs, rewards.astype(np.float32), terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        self.sync_env.close()
