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

import numpy as np
import torch

from gdi.envs import env_seeds, make_vector_env
from gdi.run_files import EVALUATION_POLICIES, POPULATION, eval_folder
from gdi.runtime import seeds

#: What periodic evaluation during training records as its policy: the population's.
POLICY_DESCRIPTION = EVALUATION_POLICIES[POPULATION]


def play_episodes(
    net: torch.nn.Module,
    env_config,
    policy_space: str,
    sample_lambda: Callable[[], np.ndarray],
    episodes: int,
    seed: int,
    max_envs: int = 32,
    on_episode: Callable[[], None] | None = None,
) -> list[dict]:
    """Play ``episodes`` episodes with ``net`` acting by π_λ, λ from ``sample_lambda``: the
    trainer's periodic evaluation (see :func:`play_agent_episodes`)."""
    from gdi.agent import Agent

    agent = Agent(net, policy_space, sample_lambda, seed)
    return play_agent_episodes(agent, env_config, episodes, seed, max_envs, on_episode)


def play_agent_episodes(
    agent,
    env_config,
    episodes: int,
    seed: int,
    max_envs: int = 32,
    on_episode: Callable[[], None] | None = None,
) -> list[dict]:
    """Play ``episodes`` episodes with a :class:`gdi.agent.Agent`, each on its own environment
    (the environments of a block of ``max_envs`` are seeded by ``gdi.envs.env_seeds(seed +
    start, n)``); returns per episode ``{"return", "frames", "seed", "lambda"}`` with the
    environment's actual seed. An environment whose episode ended keeps stepping (the block
    steps together) but its next episode is not counted."""
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


def checkpoint_controller_state(payload: dict) -> dict | None:
    """Actor 0's E state as saved by either backend."""
    if "actors" in payload:
        return payload["actors"][0]["controller"]
    if payload.get("controllers"):
        return payload["controllers"][0]
    return None


def evaluate_checkpoint(
    run_dir,
    checkpoint: str = "latest",
    episodes: int = 32,
    envs: int = 32,
    seed: int | None = None,
    on_episode: Callable[[], None] | None = None,
    policy: str = POPULATION,
    allow_foreign_checkpoint: bool = False,
):
    """Play ``episodes`` evaluation episodes with a run's checkpoint and write
    ``eval/<checkpoint-name>.json``; returns (path, per-episode results). The greedy policy
    writes to ``eval_greedy/`` instead, which reports never read: a run's curve and final
    score stay those of one policy, the population's. ``policy``: "population" (λ ~ P_Λ) or
    "greedy" (E's greedy λ), see the module docstring. A checkpoint outside the run folder or
    from another kind of run is refused unless ``allow_foreign_checkpoint``
    (:func:`gdi.agent.resolve_checkpoint`)."""
    from gdi.agent import load_agent
    from gdi.scores import write_eval_file

    if episodes < 1 or envs < 1:
        raise ValueError(f"episodes and envs must be >= 1, got {episodes} and {envs}")
    folder = eval_folder(policy)  # ValueError for an unknown policy, before any work
    agent = load_agent(run_dir, checkpoint, policy=policy, seed=seed,
                       allow_foreign_checkpoint=allow_foreign_checkpoint)
    config, path = agent.config, agent.checkpoint
    seed = seeds.checkpoint_evaluation(config.seed) if seed is None else seed
    results = play_agent_episodes(agent, agent.env_config, episodes, seed, max_envs=envs,
                                  on_episode=on_episode)
    written = write_eval_file(
        run_dir, path.stem, checkpoint=path.stem, frames=agent.frames, env=config.env,
        policy=EVALUATION_POLICIES[policy], seed=seed, episodes=results,
        folder=folder,
    )
    return written, results
