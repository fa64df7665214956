"""``make_vector_env``: a spec (or a resolved config) to a batched environment of its kind."""

from __future__ import annotations

from typing import Any

from gdi.envs.base import BatchedEnv
from gdi.envs.spec import AtariConfig, EnvConfig, GymConfig, MinAtarConfig, resolve_env

__all__ = ["make_vector_env"]


def make_vector_env(
    spec: str | EnvConfig, num_envs: int, seed: int, **overrides: Any
) -> BatchedEnv:
    """Build ``num_envs`` environments of ``spec`` as one ``gymnasium.vector.VectorEnv``.

    ``spec`` is a spec string (resolved with ``overrides`` by :func:`resolve_env`) or an
    :class:`EnvConfig` (``overrides`` then replace its settings). Environment ``i`` is seeded
    with ``env_seeds(seed, num_envs)[i]`` at the first ``reset()``; the same ``seed`` gives the
    same observations for the same actions. The returned environment follows the SAME_STEP
    contract of :mod:`gdi.envs`.
    """
    if isinstance(spec, EnvConfig):
        config = spec.replace(**overrides) if overrides else spec
    else:
        config = resolve_env(spec, **overrides)
    if isinstance(config, AtariConfig):
        from gdi.envs.ale_env import ALEVectorEnv

        return ALEVectorEnv(config, num_envs, seed)
    if isinstance(config, MinAtarConfig):
        from gdi.envs.minatar_env import MinAtarVectorEnv

        return MinAtarVectorEnv(config, num_envs, seed)
    if isinstance(config, GymConfig):
        from gdi.envs.gym_env import GymVectorEnv

        return GymVectorEnv(config, num_envs, seed)
    raise ValueError(f"no environment for config {config!r} (kinds: ale, minatar, gym)")
