"""How far from uniform an untrained network's π_λ acts on a game's own frames.

Builds a preset's network at initialization (seeded), plays ``--steps`` steps on ``--envs``
environments of each game with λ drawn uniformly from E's box (the preset's ``ranges``), and
prints the entropy of π_λ over those steps against the uniform policy's log |A|. The same
network (same seed, same weights) meets each game's frames, so a difference between games is
the frames' doing: the policy head's logits spread with its input, and E's inverse
temperatures (up to 50 on ``ale-cpu``) multiply the spread.

    python -m benchmarks.initial_entropy ale:Breakout ale:DoubleDunk ale:BattleZone
    python -m benchmarks.initial_entropy ale:DoubleDunk --set policy_init_scale=0.01
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from gdi.config import apply_overrides
from gdi.envs import make_vector_env, resolve_env
from gdi.presets import resolve_config
from gdi.runtime.acting.step import Acting
from gdi.runtime.components import build_network, env_shapes


def entropies(env_spec: str, preset: str, scale: str, learning: str, envs: int, steps: int,
              seed: int, sets: tuple[str, ...] = ()) -> tuple[np.ndarray, int]:
    """π_λ's entropy (nats) at every step of every environment, and the number of actions
    (``sets``: ``gdi train --set`` assignments on top of the preset, e.g.
    ``policy_init_scale=0.01``)."""
    torch.manual_seed(seed)
    config = apply_overrides(
        resolve_config(preset, env_spec, scale, None, learning, frames=1, seed=seed), sets)
    env_config = resolve_env(env_spec)
    shapes = env_shapes(env_config, seed)
    net = build_network(config, shapes).eval()
    box = np.asarray(config.meta_kwargs["ranges"], dtype=np.float64)
    rng = np.random.default_rng(seed)
    acting = Acting(net, config.policy_space,
                    lambda k: box[:, 0] + (box[:, 1] - box[:, 0]) * rng.random((k, len(box))),
                    np.random.default_rng(seed + 1))
    env = make_vector_env(env_config, envs, seed)
    try:
        obs, _ = env.reset(seed=seed)
        acting.reset(envs)
        found = []
        for _ in range(steps):
            probs, _ = acting.action_probs(obs)
            found.append(-(probs * np.log(np.clip(probs, 1e-300, 1.0))).sum(-1))
            obs, reward, terminated, truncated, _ = env.step(acting.act(obs))
            acting.observe(reward, terminated, truncated)
    finally:
        env.close()
    return np.concatenate(found), shapes.num_actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+", help="environment specs, e.g. ale:DoubleDunk")
    parser.add_argument("--preset", default="gdi-i3")
    parser.add_argument("--scale", default="ale-cpu")
    parser.add_argument("--learning", default="policy-head-ale")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="a config field, as gdi train --set takes it (repeatable)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"π_λ at initialization ({args.preset}, {args.scale}, {args.learning}, seed "
          f"{args.seed}{''.join(', ' + a for a in args.set)}), λ uniform over E's box, "
          f"{args.steps} steps × {args.num_envs} envs")
    print("| env | actions | uniform | mean | p10 | median | p90 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for spec in args.envs:
        ent, actions = entropies(spec, args.preset, args.scale, args.learning, args.num_envs,
                                 args.steps, args.seed, tuple(args.set))
        p10, p50, p90 = np.percentile(ent, [10, 50, 90])
        print(f"| {spec} | {actions} | {np.log(actions):.2f} | {ent.mean():.2f} | {p10:.2f} | "
              f"{p50:.2f} | {p90:.2f} |")


if __name__ == "__main__":
    main()
