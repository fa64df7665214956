"""The Arcade Learning Environment through ale-py's native vector environment.

ale-py's ``AtariVectorEnv`` steps its emulators in C++ worker threads and does the whole
pre-processing (no-ops, frame skip, max-pool, grayscale, resize, frame stack) there; it also
implements Gymnasium's SAME_STEP autoreset natively. :class:`ALEVectorEnv` is a thin layer over
it: every setting passed explicitly from :class:`~gdi.envs.spec.AtariConfig` (ale-py's own
defaults clip rewards, press FIRE on reset, use the minimal action set and autoreset NEXT_STEP),
action checks, float32 rewards, the ``_final_obs`` mask, and gdi's seeding. The stages and
their sources are documented once, in :class:`~gdi.envs.spec.AtariConfig`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ale_py.vector_env import AtariVectorEnv
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from gdi.envs.base import BatchedEnv
from gdi.envs.spec import AtariConfig

__all__ = ["ALEVectorEnv", "ale_vector_env_kwargs"]


def ale_vector_env_kwargs(config: AtariConfig) -> dict[str, Any]:
    """Every keyword of ``ale_py.vector_env.AtariVectorEnv`` that shapes the data, set from
    ``config``; nothing is left to ale-py's defaults."""
    return {
        "max_num_frames_per_episode": config.max_episode_frames,
        "repeat_action_probability": config.repeat_action_probability,
        "full_action_space": config.full_action_space,
        "continuous": False,
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "img_height": config.image_height,
        "img_width": config.image_width,
        "grayscale": config.grayscale,
        "stack_num": config.frame_stack,
        "frameskip": config.action_repeat,
        "maxpool": config.maxpool,
        "noop_max": config.noop_max,
        "episodic_life": config.episodic_life,
        "life_loss_info": False,
        "reward_clipping": False,
        "use_fire_reset": config.fire_reset,
        "batch_size": 0,
        "num_threads": config.num_threads,
    }


class ALEVectorEnv(BatchedEnv):
    """``num_envs`` Atari emulators with the pre-processing of ``config`` (see
    :class:`~gdi.envs.spec.AtariConfig`), following the contract of :mod:`gdi.envs`.

    Observations ``uint8 [num_envs, frame_stack, image_height, image_width]`` (plus a trailing
    3 when ``grayscale=False``); actions ``Discrete(18)`` with the full action space. ``info``
    carries ale-py's per-environment ``lives``, ``frame_number`` and ``episode_frame_number``
    (emulator frames, reset no-ops included) for logging.

    Attributes:
        ale_kwargs: the exact keywords given to ``ale_py.vector_env.AtariVectorEnv``.
        ale_env: that ale-py environment.
    """

    def __init__(self, config: AtariConfig, num_envs: int, seed: int) -> None:
        super().__init__(config, num_envs, seed)
        self.ale_kwargs = ale_vector_env_kwargs(config)
        self.ale_env = AtariVectorEnv(config.rom_id, self.num_envs, **self.ale_kwargs)
        self.single_observation_space = self.ale_env.single_observation_space
        self.single_action_space = self.ale_env.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seeds = self._reset_seeds(seed, options)
        # ale-py reseeds an emulator (and its no-op generator) for a seed >= 0 and continues its
        # stream for -1.
        return self.ale_env.reset(seed=np.full(self.num_envs, -1) if seeds is None else seeds)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = self._check_actions(actions)
        obs, rewards, terminated, truncated, info = self.ale_env.step(actions)
        if "final_obs" in info:  # ale-py's own SAME_STEP: rows of ended episodes are valid
            info["_final_obs"] = terminated | truncated
        return obs, rewards.astype(np.float32), terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        # Dropping the last reference joins ale-py's worker threads.
        self.ale_env = None
