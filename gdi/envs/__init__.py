"""Environments: the ALE with the paper's pre-processing, MinAtar, any Gymnasium id; one batched
interface for all of them.

    config = resolve_env("ale:Breakout", repeat_action_probability=0.25)   # validated, frozen
    env = make_vector_env(config, num_envs=32, seed=0)                       # a gymnasium VectorEnv
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(actions)            # actions int64 [32]

Specs: ``ale:<Game>`` (ALE CamelCase names, all 57 games of the paper in
:data:`ATARI_57_GAMES`; pre-processing in :class:`AtariConfig`), ``minatar:<game>``
(:data:`MINATAR_GAMES`; :class:`MinAtarConfig`), ``gym:<id>`` (any registered Gymnasium id;
:class:`GymConfig`). Each config's fields are the overrides its kind accepts;
``config.as_dict()`` is the JSON record of a run's environment and ``config.frames_per_step``
converts agent steps to environment frames (4 on the ALE, 1 otherwise).

The step contract, the same for every kind (Gymnasium's ``AutoresetMode.SAME_STEP``):

- ``reset(seed=None)`` returns ``obs, info`` for all environments. The first reset uses the
  seed given to :func:`make_vector_env`; ``reset(seed=s)`` reseeds; environment ``i`` gets
  ``env_seeds(seed, num_envs)[i]``, so indices differ and the same seed gives the same
  observations for the same actions. A later ``reset()`` without a seed continues the streams.
- ``step(actions)`` takes ``int64 [num_envs]`` in ``[0, single_action_space.n)`` and returns
  ``obs [num_envs, *single_observation_space.shape]``, ``reward float32 [num_envs]``,
  ``terminated bool [num_envs]``, ``truncated bool [num_envs]``, ``info``.
- For an environment whose episode did not end at this step, ``obs[i]`` follows from its action.
- For an environment whose episode ended at this step (``terminated[i] or truncated[i]``):
  ``reward[i]``, ``terminated[i]`` and ``truncated[i]`` are those of the episode's *final*
  transition, and ``obs[i]`` is already the *first* observation of the next episode (reset
  within the same step). The final observation is ``info["final_obs"][i]``:
  ``info["final_obs"]`` is an array shaped like ``obs``, present only on steps where some
  episode ended, valid in the rows where ``info["_final_obs"]`` is True (elsewhere
  unspecified).
- So every step is a real transition of one episode: no transition crosses an episode boundary,
  and there is never an extra "reset step" whose action is ignored. ``actions[i]`` of the next
  call acts on the new episode's first observation.
- ``terminated`` means the game ended (a terminal state: bootstrap with zero); ``truncated``
  means a time limit cut the episode (the ALE's 30-minute cap, a ``max_episode_steps``); both
  never hold at once.
- Rewards are raw and unclipped (the Atari game score differences); clipping or shaping is the
  learner's job.
"""

from gdi.envs.base import BatchedEnv, env_seeds
from gdi.envs.make import make_vector_env
from gdi.envs.spec import (
    ATARI_57_GAMES,
    ENV_KINDS,
    MINATAR_GAMES,
    AtariConfig,
    EnvConfig,
    GymConfig,
    MinAtarConfig,
    atari_rom_ids,
    resolve_env,
)

__all__ = [
    "ATARI_57_GAMES",
    "ENV_KINDS",
    "MINATAR_GAMES",
    "AtariConfig",
    "BatchedEnv",
    "EnvConfig",
    "GymConfig",
    "MinAtarConfig",
    "atari_rom_ids",
    "env_seeds",
    "make_vector_env",
    "resolve_env",
]
