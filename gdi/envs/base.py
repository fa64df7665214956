"""What every gdi vector environment shares: seeding, action checks, the SAME_STEP contract.

The contract itself is written once, in the docstring of :mod:`gdi.envs`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from gdi.envs.spec import EnvConfig

__all__ = ["BatchedEnv", "env_seeds"]


def env_seeds(seed: int, num_envs: int) -> np.ndarray:
    """One seed per environment index, ``int64 [num_envs]`` in [0, 2³¹).

    Drawn from ``numpy.random.SeedSequence(seed)``, so seeds are distinct across indices and
    uncorrelated across neighbouring run seeds (Gymnasium's ``seed + i`` would give run seed 0's
    environment 1 the same stream as run seed 1's environment 0). 31 bits because ale-py takes a
    non-negative C ``int``.
    """
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(num_envs, int | np.integer) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    state = np.random.SeedSequence(int(seed)).generate_state(int(num_envs), dtype=np.uint32)
    return (state >> 1).astype(np.int64)


class BatchedEnv(VectorEnv):
    """Base of gdi's vector environments: a ``gymnasium.vector.VectorEnv`` with autoreset mode
    SAME_STEP, float32 rewards, and reset seeds drawn by :func:`env_seeds`.

    ``reset(seed=None)`` the first time uses the seed given at construction, so an environment
    built with a seed is reproducible without further arguments; later ``reset(seed=None)``
    calls continue each environment's random stream. ``reset(seed=s)`` reseeds every environment
    from ``env_seeds(s, num_envs)``.
    """

    def __init__(self, config: EnvConfig, num_envs: int, seed: int) -> None:
        env_seeds(seed, num_envs)  # validates both
        self.config = config
        self.num_envs = int(num_envs)
        self.base_seed = int(seed)
        self.autoreset_mode = AutoresetMode.SAME_STEP
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
        self._seeded = False
        self._needs_reset = True

    def _reset_seeds(self, seed: int | None, options: dict[str, Any] | None) -> np.ndarray | None:
        """Per-environment seeds for this reset, or None to continue the current streams."""
        if options:
            raise ValueError(f"gdi environments take no reset options, got {sorted(options)}")
        if seed is None and self._seeded:
            seeds = None
        else:
            seeds = env_seeds(self.base_seed if seed is None else seed, self.num_envs)
        self._seeded = True
        self._needs_reset = False
        return seeds

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Actions as ``int64 [num_envs]`` within the action space, or a ValueError."""
        if self._needs_reset:
            raise RuntimeError("call reset() before the first step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be integers of shape ({self.num_envs},), got "
                f"{actions.dtype} {actions.shape}"
            )
        n = self.single_action_space.n
        values = actions.tolist()  # Python's min/max beat numpy's on a few dozen entries
        if min(values) < 0 or max(values) >= n:
            raise ValueError(
                f"actions must lie in [0, {n}), got min {min(values)} max {max(values)}"
            )
        return actions.astype(np.int64, copy=False)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.spec!r}, num_envs={self.num_envs})"
