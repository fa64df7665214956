"""What a run's agent is paid for: its episodes' raw returns beside their shaped returns, and a
uniform random policy's on the same game.

The learner never sees the raw score: each family's targets use a shaped reward (GDI-I³:
``log``, the hyperparameter table's log(|r| + 1)·(2·1{r ≥ 0} − 1{r < 0}), which weighs a
positive reward twice a negative one of the same size; docs/paper-choices.md). In a game where
the agent both scores and is scored on, such as Boxing (+1 or +2 per punch landed, −1 or −2 per
punch taken), trading punches then pays even when the raw score does not move. This plays
``--episodes`` episodes with the run's agent (λ ~ P_Λ from its latest checkpoint, as training's
evaluation does) and with a uniform random policy, and prints per policy the mean raw return,
the rewards' positive and negative sums, and the undiscounted shaped return Σ h(r_t) under
each of gdi's reward shapes (``gdi.learning.shaping.REWARD_SHAPES``).

    .venv/bin/python -m benchmarks.shaped_returns runs/ale-cpu/boxing-0 [--episodes 8]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

import gdi
from gdi.envs import make_vector_env
from gdi.learning.shaping import REWARD_SHAPES


@dataclass
class EpisodeTotals:
    """Per finished episode: raw return, sum of positive and of negative rewards, and the
    undiscounted sum of each reward shape."""

    raw: list[float] = field(default_factory=list)
    positive: list[float] = field(default_factory=list)
    negative: list[float] = field(default_factory=list)
    shaped: dict[str, list[float]] = field(
        default_factory=lambda: {name: [] for name in REWARD_SHAPES})


def episode_totals(rewards: np.ndarray, done: np.ndarray, per_env: int) -> EpisodeTotals:
    """Totals of each environment's first ``per_env`` episodes in time-major ``rewards`` and
    ``done`` (``[T, num_envs]``; an episode's last step has ``done`` true, and the next step
    starts the next episode, as gdi's vector environments reset). Episodes still running at
    ``T`` are left out, so every total covers a whole episode. The same count from every
    environment, not the first episodes to end overall, which would favour short episodes."""
    rewards = np.asarray(rewards, dtype=np.float64)
    done = np.asarray(done, dtype=bool)
    if rewards.shape != done.shape or rewards.ndim != 2:
        raise ValueError(f"rewards {rewards.shape} and done {done.shape} must be the same "
                         "[T, num_envs]")
    shaped = {name: shape(torch.from_numpy(rewards)).numpy()
              for name, shape in REWARD_SHAPES.items()}
    totals = EpisodeTotals()
    for env in range(rewards.shape[1]):
        ends = np.flatnonzero(done[:, env])
        if len(ends) < per_env:
            raise ValueError(f"environment {env} finished {len(ends)} episodes, fewer than "
                             f"per_env={per_env}")
        start = 0
        for step in ends[:per_env]:
            r = rewards[start:step + 1, env]
            totals.raw.append(float(r.sum()))
            totals.positive.append(float(r[r > 0].sum()))
            totals.negative.append(float(r[r < 0].sum()))
            for name, values in shaped.items():
                totals.shaped[name].append(float(values[start:step + 1, env].sum()))
            start = step + 1
    return totals


Policy = tuple[Callable[[np.ndarray], np.ndarray], Callable[..., object]]


def play(env_config, policy_for: Callable[[object], Policy], num_envs: int, per_env: int,
         seed: int) -> EpisodeTotals:
    """Step ``num_envs`` environments until each has ended ``per_env`` episodes, with the
    ``(act, observe)`` pair ``policy_for(env)`` returns."""
    env = make_vector_env(env_config, num_envs, seed=seed)
    act, observe = policy_for(env)
    obs, _ = env.reset()
    rewards, dones = [], []
    finished = np.zeros(num_envs, dtype=np.int64)
    try:
        while finished.min() < per_env:
            actions = act(obs)
            obs, reward, terminated, truncated, _ = env.step(actions)
            observe(reward, terminated, truncated)
            rewards.append(np.asarray(reward, dtype=np.float64))
            dones.append(np.logical_or(terminated, truncated))
            finished += dones[-1]
    finally:
        env.close()
    return episode_totals(np.stack(rewards), np.stack(dones), per_env)


def uniform_policy(seed: int) -> Callable[[object], Policy]:
    rng = np.random.default_rng(seed)

    def policy_for(env) -> Policy:
        n = env.single_action_space.n
        return (lambda obs: rng.integers(n, size=len(obs)), lambda *outcome: None)

    return policy_for


def table(rows: dict[str, EpisodeTotals]) -> str:
    names = list(REWARD_SHAPES)
    lines = ["| policy | episodes | raw return | positive sum | negative sum | "
             + " | ".join(f"shaped: {n}" for n in names) + " |",
             "| --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " |"]
    for label, t in rows.items():
        lines.append(f"| {label} | {len(t.raw)} | {np.mean(t.raw):.2f} | "
                     f"{np.mean(t.positive):.2f} | {np.mean(t.negative):.2f} | "
                     + " | ".join(f"{np.mean(t.shaped[n]):.2f}" for n in names) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.shaped_returns",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a gdi run folder with a checkpoint")
    parser.add_argument("--episodes", type=int, default=8,
                        help="episodes per policy, rounded up to a multiple of --envs so that "
                             "every environment plays as many")
    parser.add_argument("--envs", type=int, default=8, help="environments stepped together")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.envs < 1:
        parser.error(f"--episodes {args.episodes} and --envs {args.envs} must be at least 1")
    per_env = -(-args.episodes // args.envs)
    agent = gdi.load_agent(args.run, seed=args.seed)

    def agent_policy(env) -> Policy:
        agent.reset(env)
        return agent.act, agent.observe

    rows = {"agent (λ ~ P_Λ)": play(agent.env_config, agent_policy, args.envs, per_env,
                                    args.seed),
            "uniform random": play(agent.env_config, uniform_policy(args.seed), args.envs,
                                   per_env, args.seed)}
    print(f"{agent.env_config.spec} ({args.run}): mean per episode, {per_env * args.envs} "
          f"episodes per policy ({per_env} in each of {args.envs} environments)\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
