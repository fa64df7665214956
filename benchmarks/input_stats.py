"""What ``input_norm=running`` learned: a run's running input statistics, and one observation as
the torso sees it with and without them.

    python -m benchmarks.input_stats --run runs/screen/breakout-head-e-inputnorm-0 \\
        --out docs/figures/breakout-input-stats.png

Reads the run's newest checkpoint (``gdi.load_agent``), plays its agent for ``--steps`` agent
steps in one environment to reach an observation mid-game, and draws, for the stack's newest
frame: the running mean and standard deviation of every pixel, the observation as the paper's
torso reads it (pixels × 1/255) and as ``input_norm`` gives it (standardized, clipped to ±5).
It prints the count of observations behind the statistics, the share of pixels whose standard
deviation is below 0.01 (pixels that hardly ever change, sent to ~0 unless they do), and the
salience of the observation's unusual pixels (more than 2 standard deviations from their mean:
the ball, the paddle away from where it mostly is): the mean magnitude of those pixels over
the mean magnitude of the whole input, raw and standardized.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

import gdi
from gdi.atomic import save_figure
from gdi.nets.torsos import preprocess_observations


def observation(agent, steps: int, seed: int) -> np.ndarray:
    """One observation ``[*obs_shape]`` after ``steps`` agent steps of the agent's own play
    (a new episode where one ends)."""
    env = gdi.envs.make_vector_env(agent.env_config, num_envs=1, seed=seed)
    try:
        obs, _ = env.reset()
        agent.reset(env)
        for _ in range(steps):
            obs, rewards, terminated, truncated, _ = env.step(agent.act(obs))
            agent.observe(rewards, terminated, truncated)
        return np.asarray(obs[0])
    finally:
        env.close()


def report(run: Path, steps: int, seed: int) -> dict:
    """The statistics, the observation raw and standardized (newest frame), and the figures
    the module docstring names."""
    agent = gdi.load_agent(run, checkpoint="latest", policy="population")
    norm = agent.net.input_norm
    if not agent.config.env.startswith("ale:"):
        raise SystemExit(f"{run}: draws ALE frames ([stack, 84, 84]); the run's environment "
                         f"is {agent.config.env}")
    if norm is None:
        raise SystemExit(f"{run}: the run has no input statistics (it was trained with "
                         "input_norm=none; train with --set input_norm=running)")
    obs = torch.from_numpy(observation(agent, steps, seed))[None]
    raw = preprocess_observations(obs, torch.float32, agent.net.obs_scale)
    with torch.no_grad():
        standardized = norm(raw)
    mean, std = norm.mean.float(), norm.var.float().sqrt()
    newest = -1  # the stack's newest frame (channels first)

    unusual = (raw[0] - mean).abs() > 2 * std

    def salience(x: torch.Tensor) -> float:
        """Mean |x| over the unusual pixels / mean |x| over all (nan without any)."""
        if not unusual.any():
            return float("nan")
        return float(x.abs()[unusual].mean() / x.abs().mean().clamp_min(1e-12))

    return {
        "count": int(norm.count.item()),
        "still_share": float((std < 0.01).float().mean()),
        "unusual": int(unusual.sum()),
        "raw_salience": salience(raw[0]),
        "standardized_salience": salience(standardized[0]),
        "images": {
            "running mean (× 1/255)": mean[newest].numpy(),
            "running std (× 1/255)": std[newest].numpy(),
            "observation as the paper's torso reads it (× 1/255)": raw[0, newest].numpy(),
            "the same with input_norm (standardized, ±5)": standardized[0, newest].numpy(),
        },
    }


def plot(result: dict, title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = result["images"]
    fig, axes = plt.subplots(1, len(images), figsize=(4.2 * len(images), 4.6))
    for ax, (name, image) in zip(axes, images.items(), strict=True):
        signed = "standardized" in name
        shown = ax.imshow(image, cmap="RdBu_r" if signed else "gray",
                          vmin=-5 if signed else 0, vmax=5 if signed else None)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(shown, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save_figure(fig, out)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.input_stats",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a run trained with "
                        "input_norm=running, with a checkpoint")
    parser.add_argument("--steps", type=int, default=200,
                        help="agent steps played before the observation drawn (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="the figure (PNG)")
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error(f"--steps {args.steps}: allowed: 0 or more")
    result = report(args.run, args.steps, args.seed)
    print(f"{args.run}: statistics of {result['count']:,} observations; "
          f"{result['still_share']:.0%} of pixels with a standard deviation under 0.01 "
          f"(× 1/255); {result['unusual']} of the observation's values are more than 2 "
          f"standard deviations from their mean, {result['raw_salience']:.1f} times the "
          f"input's mean magnitude as the paper's torso reads them, "
          f"{result['standardized_salience']:.1f} times standardized")
    plot(result, f"What input_norm=running learned: {args.run.name} (newest frame of the stack, "
         f"{result['count']:,} observations)", args.out)
    print(f"figure: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
