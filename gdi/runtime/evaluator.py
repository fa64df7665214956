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
from gdi.policy_space import get_policy_space
from gdi.runtime.actor import sample_actions
from gdi.runtime.sequences import compress_reward

POLICY_DESCRIPTION = "π_λ with λ ~ P_Λ (current E, frozen during evaluation)"
EVALUATION_POLICIES = {
    "population": POLICY_DESCRIPTION,
    "greedy": "π_λ with λ = E's greedy λ (highest value estimate, no exploration)",
}


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
    """Play ``episodes`` episodes, each on its own environment (the environments of a block of
    ``max_envs`` are seeded by ``gdi.envs.env_seeds(seed + start, n)``); returns per episode
    ``{"return", "frames", "seed", "lambda"}`` with the environment's actual seed."""
    space = get_policy_space(policy_space)
    results: list[dict] = []
    rng = np.random.default_rng(seed)
    for start in range(0, episodes, max_envs):
        n = min(max_envs, episodes - start)
        env = make_vector_env(env_config, n, seed + start)
        try:
            obs, _ = env.reset(seed=seed + start)
            lambdas = np.stack([sample_lambda() for _ in range(n)]).astype(np.float32)
            state = net.initial_state(n)
            resets = np.ones(n, dtype=bool)
            prev_actions = np.zeros(n, dtype=np.int64)
            prev_rewards = np.zeros(n, dtype=np.float32)
            returns = np.zeros(n)
            steps = np.zeros(n, dtype=np.int64)
            running = np.ones(n, dtype=bool)
            while running.any():
                with torch.no_grad():
                    out, state = net(
                        torch.from_numpy(obs)[None], torch.from_numpy(prev_actions)[None],
                        torch.from_numpy(prev_rewards)[None], torch.from_numpy(resets)[None],
                        state,
                    )
                probs = space.acting_probs(out.adv[:, 0].numpy(), lambdas)  # adv [F, N, A]
                actions, _ = sample_actions(probs, rng)
                obs, rewards, terminated, truncated, _ = env.step(actions)
                rewards = np.asarray(rewards, dtype=np.float64)
                returns += np.where(running, rewards, 0.0)
                steps += running
                finished = running & (terminated | truncated)
                if on_episode is not None:
                    for _ in range(int(finished.sum())):
                        on_episode()
                running &= ~finished
                resets = np.asarray(terminated | truncated)
                prev_actions = np.where(resets, 0, actions)
                prev_rewards = np.where(resets, 0.0, compress_reward(rewards)).astype(np.float32)
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
    policy: str = "population",
):
    """Play ``episodes`` evaluation episodes with a run's checkpoint and write
    ``eval/<checkpoint-name>.json``; returns (path, per-episode results). The greedy policy
    writes to ``eval_greedy/`` instead, which reports never read: a run's curve and final
    score stay those of one policy, the population's. ``policy``: "population" (λ ~ P_Λ) or
    "greedy" (E's greedy λ), see the module docstring."""
    from pathlib import Path

    from gdi.envs import resolve_env
    from gdi.runtime.checkpoint import latest_checkpoint, load_checkpoint
    from gdi.runtime.components import build_controller, build_network, env_shapes
    from gdi.runtime.run_dir import read_config
    from gdi.scores import write_eval_file

    run_dir = Path(run_dir)
    config, _ = read_config(run_dir)
    if episodes < 1 or envs < 1:
        raise ValueError(f"episodes and envs must be >= 1, got {episodes} and {envs}")
    if policy not in EVALUATION_POLICIES:
        raise ValueError(f"unknown evaluation policy {policy!r}; allowed: "
                         f"{', '.join(EVALUATION_POLICIES)}")
    path = latest_checkpoint(run_dir) if checkpoint == "latest" else Path(checkpoint)
    payload = load_checkpoint(path)
    env_config = resolve_env(config.env, **config.env_overrides)
    net = build_network(config, env_shapes(env_config, config.seed))
    net.load_state_dict(payload["learner"]["net"])
    net.eval()
    seed = config.seed + 2_000_003 if seed is None else seed
    controller = build_controller(config, seed)
    state = checkpoint_controller_state(payload)
    if state is not None:
        controller.load_state_dict(state)
    sample_lambda = controller.sample
    if policy == "greedy":
        if not hasattr(controller, "greedy"):
            raise ValueError(
                f"E {config.meta_controller!r} keeps no estimate of the best λ, so it has no "
                "greedy λ; --policy greedy needs bandit, sliding_window_ucb or fixed"
            )
        best = controller.greedy()
        sample_lambda = best.copy
    results = play_episodes(net, env_config, config.policy_space, sample_lambda, episodes,
                            seed, max_envs=envs, on_episode=on_episode)
    written = write_eval_file(
        run_dir, path.stem, checkpoint=path.stem, frames=int(payload["frames"]), env=config.env,
        policy=EVALUATION_POLICIES[policy], seed=seed, episodes=results,
        folder="eval" if policy == "population" else f"eval_{policy}",
    )
    return written, results
