"""Evaluation episodes on environments of their own (App. "Experiment Details": undiscounted
episode returns averaged over 32 environments with different seeds).

Which policy is evaluated: π_λ with λ drawn from the current P_Λ (E's state, not updated by
evaluation), because the paper reports "the average score of the population of agents" — the
behavior policies GDI actually selects — rather than a greedy policy it never acts with.
That population includes E's exploratory draws (UCB bonus, random-mode bandits), so a network
that solves a task can still lose the odd episode to a near-uniform λ. ``gdi evaluate
--policy greedy`` separates the two: it plays E's greedy λ (the highest value estimate, no
exploration) in every environment. Periodic evaluation during training is always the
population. Each evaluation environment plays exactly one episode, to its end or the cap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from gdi.envs import env_seeds, make_vector_env
from gdi.run_files import EVALUATION_POLICIES, POPULATION
from gdi.runtime.acting.step import Acting, one_at_a_time

#: What periodic evaluation during training records as its policy: the population's.
POLICY_DESCRIPTION = EVALUATION_POLICIES[POPULATION]

#: Evaluations of at most this many episodes print every return; longer ones their range.
LISTED_RETURNS = 8


@dataclass(frozen=True)
class Evaluation:
    """What evaluation episodes gave: one record per episode, and the training frames of the
    network that played them. Printed, it reads "mean return 21.50 over 2 episodes: 18, 25
    (at 20,000 frames)"."""

    episodes: tuple[dict, ...]
    """Per episode ``{"return", "frames", "seed", "lambda"}``, as :func:`play_agent_episodes`
    gives them and an ``eval/`` file holds them: the undiscounted return, the frames it
    lasted, its environment's seed and the λ it played."""
    frames: int | None = None
    """The frames the network had trained when it played (None: not known)."""

    @property
    def returns(self) -> tuple[float, ...]:
        """Each episode's undiscounted return, in the order played."""
        return tuple(float(episode["return"]) for episode in self.episodes)

    @property
    def mean_return(self) -> float:
        return float(np.mean(self.returns))

    def __str__(self) -> str:
        returns = self.returns
        spread = (", ".join(f"{r:g}" for r in returns) if len(returns) <= LISTED_RETURNS
                  else f"from {min(returns):g} to {max(returns):g}")
        at = f" (at {self.frames:,} frames)" if self.frames is not None else ""
        return (f"mean return {self.mean_return:.2f} over {len(returns)} "
                f"episode{'s' if len(returns) != 1 else ''}: {spread}{at}")


def play_episodes(
    net: torch.nn.Module,
    env_config,
    policy_space: str,
    sample_lambda: Callable[[], np.ndarray],
    episodes: int,
    seed: int,
    max_envs: int = 32,
    on_episode: Callable[[], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[dict] | None:
    """Play ``episodes`` episodes with ``net`` acting by π_λ, λ from ``sample_lambda``: the
    trainer's periodic evaluation (see :func:`play_agent_episodes`)."""
    acting = Acting(net, policy_space, one_at_a_time(sample_lambda), np.random.default_rng(seed))
    return play_agent_episodes(acting, env_config, episodes, seed, max_envs, on_episode,
                               should_stop)


def play_agent_episodes(
    agent: Acting,
    env_config,
    episodes: int,
    seed: int,
    max_envs: int = 32,
    on_episode: Callable[[], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[dict] | None:
    """Play ``episodes`` episodes with ``agent`` (the acting step, or a :class:`gdi.agent.Agent`,
    which is one), each on its own environment
    (the environments of a block of ``max_envs`` are seeded by ``gdi.envs.env_seeds(seed +
    start, n)``); returns per episode ``{"return", "frames", "seed", "lambda"}`` with the
    environment's actual seed. An environment whose episode ended keeps stepping (the block
    steps together) but its next episode is not counted.

    ``should_stop`` is asked before every step: when it says so, the episodes are abandoned
    and None is returned (no partial result: an unfinished episode's return means nothing).
    A stop request must not wait for an evaluation, which on the ALE can run to the episode
    cap (27,000 steps) when a policy never launches Breakout's ball."""
    results: list[dict] = []
    for start in range(0, episodes, max_envs):
        n = min(max_envs, episodes - start)
        env = make_vector_env(env_config, n, seed + start)
        try:
            obs, _ = env.reset(seed=seed + start)
            agent.reset(env)
            lambdas = agent.lambdas.copy()
            returns = np.zeros(n)
            steps = np.zeros(n, dtype=np.int64)
            running = np.ones(n, dtype=bool)
            while running.any():
                if should_stop is not None and should_stop():
                    return None
                actions = agent.act(obs)
                obs, rewards, terminated, truncated, _ = env.step(actions)
                agent.observe(rewards, terminated, truncated)
                returns += np.where(running, np.asarray(rewards, dtype=np.float64), 0.0)
                steps += running
                finished = running & (terminated | truncated)
                if on_episode is not None:
                    for _ in range(int(finished.sum())):
                        on_episode()
                running &= ~finished
            frames_per_step = env_config.frames_per_step
            seeds = env_seeds(seed + start, n)
            for i in range(n):
                results.append({
                    "return": float(returns[i]),
                    "frames": int(steps[i] * frames_per_step),
                    "seed": int(seeds[i]),
                    "lambda": [float(x) for x in lambdas[i]],
                })
        finally:
            env.close()
    return results
