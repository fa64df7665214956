"""MinAtar (Young & Tian 2019) as one batched vector environment.

A loop over ``minatar.Environment`` instances, one per index, each with its own seeded random
generator (MinAtar's sticky actions and game randomness share it). The per-step Python work
beyond MinAtar's own is one list comprehension and one stacked copy into the channels-first
``uint8`` batch. Settings and their sources: :class:`~gdi.envs.spec.MinAtarConfig`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Box, Discrete
from gymnasium.vector.utils import batch_space

from gdi.envs.base import BatchedEnv
from gdi.envs.spec import MinAtarConfig

__all__ = ["MinAtarVectorEnv"]

_NUM_ACTIONS = 6  # every MinAtar game takes the same 6 actions (minatar.Environment.num_actions)


class MinAtarVectorEnv(BatchedEnv):
    """``num_envs`` MinAtar games following the contract of :mod:`gdi.envs`.

    Observations ``uint8 [num_envs, C, 10, 10]`` with values 0/1 (MinAtar's ``[10, 10, C]``
    boolean state, channels moved first); actions ``Discrete(6)``.

    Attributes:
        games: the ``minatar.Environment`` instances, one per index.
    """

    def __init__(self, config: MinAtarConfig, num_envs: int, seed: int) -> None:
        super().__init__(config, num_envs, seed)
        import minatar  # imports matplotlib: deferred until a MinAtar env is actually made

        self.games = [
            minatar.Environment(
                config.name,
                sticky_action_prob=config.sticky_action_prob,
                difficulty_ramping=config.difficulty_ramping,
            )
            for _ in range(self.num_envs)
        ]
        height, width, channels = self.games[0].state_shape()
        self.single_observation_space = Box(0, 1, (channels, height, width), np.uint8)
        self.single_action_space = Discrete(_NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._cap = config.max_episode_steps
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)

    @staticmethod
    def _batch(states: list[np.ndarray]) -> np.ndarray:
        """MinAtar's bool ``[10, 10, C]`` states as one ``uint8 [N, C, 10, 10]`` array."""
        return np.array(states).transpose(0, 3, 1, 2).astype(np.uint8, order="C")

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seeds = self._reset_seeds(seed, options)
        for i, env in enumerate(self.games):
            if seeds is not None:
                env.seed(int(seeds[i]))
                env.last_action = 0  # the sticky-action memory, as a fresh Environment has it
            env.reset()
        self._elapsed[:] = 0
        return self._batch([env.state() for env in self.games]), {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = self._check_actions(actions).tolist()
        results = [game.act(a) for game, a in zip(self.games, actions, strict=True)]
        obs = self._batch([game.state() for game in self.games])
        raw_rewards, dones = zip(*results, strict=True)
        rewards = np.array(raw_rewards, dtype=np.float32)
        terminated = np.array(dones, dtype=bool)
        if self._cap is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            self._elapsed += 1
            truncated = (self._elapsed >= self._cap) & ~terminated
        info: dict[str, Any] = {}
        if True in dones or truncated.any():
            ended = terminated | truncated
            info["final_obs"] = obs.copy()
            info["_final_obs"] = ended
            for i in np.flatnonzero(ended):
                env = self.games[i]
                env.reset()
                obs[i] = env.state().transpose(2, 0, 1)
            self._elapsed[ended] = 0
        return obs, rewards, terminated, truncated, info
