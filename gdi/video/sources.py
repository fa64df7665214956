"""One environment for the agent plus the RGB screen of that same environment, per kind.

- MinAtar: the agent's observation is the whole game state, drawn by
  :func:`gdi.video.frames.minatar_rgb`.
- ALE: ale-py's vector environment returns only the pre-processed observation, so a second
  emulator of the same ROM, seed and settings, but returning the raw 210 × 160 RGB screen
  (no grayscale, resize, max-pool or stack), steps in lockstep with the agent's. The ALE is
  deterministic given its seed and actions (sticky actions and reset no-ops draw from the
  seeded generator), so both play the same game; every step checks that their rewards, ends
  and frame numbers agree and stops with an error if they ever do not.
- Gymnasium: the id made with ``render_mode="rgb_array"``. Gymnasium resets an environment
  within the step that ends its episode (SAME_STEP), so the last screen of an episode cannot
  be rendered: the video holds the previous screen there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gdi.envs import AtariConfig, GymConfig, MinAtarConfig, env_seeds, make_vector_env
from gdi.video.frames import minatar_rgb

MINATAR_FPS = 10


class VideoEnv:
    """``env`` (one environment, gdi's contract) for the agent, and its RGB frames.

    ``reset()`` → ``obs, frame``; ``step(actions)`` → ``obs, rewards, terminated, truncated,
    final_frame, frame`` where ``final_frame`` is the last screen of an episode that ended at
    this step (None when unavailable or none ended) and ``frame`` the screen after the step.
    """

    fps: float = 30.0

    def __init__(self, env_config, seed: int) -> None:
        self.config = env_config
        self.seed = seed
        self.env = make_vector_env(env_config, 1, seed)

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def step(self, actions: np.ndarray):
        raise NotImplementedError

    def close(self) -> None:
        self.env.close()


class MinAtarVideoEnv(VideoEnv):
    fps = MINATAR_FPS

    def reset(self):
        obs, _ = self.env.reset()
        return obs, minatar_rgb(obs[0])

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        final = minatar_rgb(info["final_obs"][0]) if "final_obs" in info else None
        return obs, rewards, terminated, truncated, final, minatar_rgb(obs[0])


class AtariVideoEnv(VideoEnv):
    def __init__(self, env_config: AtariConfig, seed: int) -> None:
        from ale_py.vector_env import AtariVectorEnv

        from gdi.envs.ale_env import ale_vector_env_kwargs

        super().__init__(env_config, seed)
        screen = ale_vector_env_kwargs(env_config)
        screen.update(img_height=210, img_width=160, grayscale=False, stack_num=1,
                      maxpool=False, num_threads=1)
        self.screen_env = AtariVectorEnv(env_config.rom_id, 1, **screen)
        self.fps = 60.0 / env_config.action_repeat  # the emulator runs at 60 frames a second

    def reset(self):
        obs, _ = self.env.reset()
        screen, _ = self.screen_env.reset(seed=env_seeds(self.seed, 1))
        return obs, screen[0, 0]

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        screen, s_rewards, s_terminated, s_truncated, s_info = self.screen_env.step(actions)
        if not (np.array_equal(rewards, s_rewards) and np.array_equal(terminated, s_terminated)
                and np.array_equal(truncated, s_truncated)
                and np.array_equal(info["frame_number"], s_info["frame_number"])):
            raise RuntimeError(
                f"the emulator drawing the video diverged from the agent's on {self.config.spec} "
                "(rewards, episode ends or frame numbers differ); the video would not show the "
                "agent's game"
            )
        final = s_info["final_obs"][0, 0] if terminated[0] or truncated[0] else None
        return obs, rewards, terminated, truncated, final, screen[0, 0]

    def close(self) -> None:
        super().close()
        self.screen_env = None


class GymVideoEnv(VideoEnv):
    def __init__(self, env_config: GymConfig, seed: int) -> None:
        import os

        from gdi.envs.gym_env import GymVectorEnv

        # pygame (classic control's renderer) starts SDL, which complains on stderr when there
        # is no audio device or session; rgb_array rendering needs neither.
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        self.config = env_config
        self.seed = seed
        self.env = GymVectorEnv(env_config, 1, seed, render_mode="rgb_array")
        self.fps = float(self.env.sync_env.envs[0].metadata.get("render_fps") or 30)
        self._last: np.ndarray | None = None

    def _render(self) -> np.ndarray:
        return np.asarray(self.env.sync_env.envs[0].render())

    def reset(self):
        obs, _ = self.env.reset()
        self._last = self._render()
        return obs, self._last

    def step(self, actions):
        previous = self._last
        obs, rewards, terminated, truncated, _ = self.env.step(actions)
        self._last = self._render()
        final = previous if terminated[0] or truncated[0] else None
        return obs, rewards, terminated, truncated, final, self._last


def video_env(env_config, seed: int) -> VideoEnv:
    """The :class:`VideoEnv` of ``env_config``'s kind."""
    kinds: dict[type, Any] = {
        MinAtarConfig: MinAtarVideoEnv, AtariConfig: AtariVideoEnv, GymConfig: GymVideoEnv,
    }
    for kind, cls in kinds.items():
        if isinstance(env_config, kind):
            return cls(env_config, seed)
    raise ValueError(f"no video for environment {env_config!r} (kinds: ale, minatar, gym)")
