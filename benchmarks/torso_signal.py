"""How much of an Atari screen reaches the LSTM at initialization: each ALE torso's embedding of
real frames under each initialization, over several network seeds.

The LSTM reads the torso's embedding beside a one-hot previous action of 1 (and the previous
reward). If the embedding is small and hardly differs between frames, the first gradients see
a network whose output does not depend on the screen; a GDI-I³ run on Breakout at the ale-cpu
scale with PyTorch's default initialization of the ``nature`` torso learned one action for
every state (docs/learning-per-frame-notes.md). Printed per torso and initialization, means over
``--nets`` network seeds:

- ``mean |x|``: the embedding's mean magnitude;
- ``frame part``: mean |x − x̄| with x̄ the mean embedding over the frames: the part of the
  embedding that depends on the screen;
- ``dead``: the share of units that are zero for every frame.

Initializations (``gdi.nets.torsos.INITIALIZATIONS``, the config's ``torso_init``):
``pytorch`` (PyTorch's default), ``he`` (normal, std √(2 / fan_in), zero biases), and for
``impala_deep`` ``he_zero_residual`` (He, with each residual block's last convolution zero, so
every block starts as the identity). Frames are random-play Breakout frames through gdi's ALE
pre-processing, every 10th step.

    .venv/bin/python -m benchmarks.torso_signal [--env ale:Breakout] [--frames 24] [--nets 5]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from gdi.envs.make import make_vector_env
from gdi.nets.torsos import make_torso, preprocess_observations

STEP_EVERY = 10


#: The initializations compared on each torso (gdi.nets.torsos.INITIALIZATIONS).
COMPARED = {
    "nature": ("pytorch", "he"),
    "impala_deep": ("pytorch", "he", "he_zero_residual"),
}


def screen_frames(env: str, count: int, seed: int) -> torch.Tensor:
    """``count`` stacked observations of random play, every ``STEP_EVERY``-th step of two
    environments, as the torsos read them (float, pixels / 255)."""
    envs = make_vector_env(env, 2, seed=seed)
    rng = np.random.default_rng(seed)
    try:
        obs, _ = envs.reset()
        kept = []
        while sum(len(o) for o in kept) < count:
            for _ in range(STEP_EVERY):
                obs, *_ = envs.step(rng.integers(0, envs.single_action_space.n, 2))
            kept.append(np.array(obs))
    finally:
        envs.close()
    frames = torch.as_tensor(np.concatenate(kept)[:count])
    return preprocess_observations(frames, torch.float32, 1 / 255)


def signal(torso: nn.Module, frames: torch.Tensor) -> tuple[float, float, float]:
    """(mean |x|, mean |x − x̄| over frames, share of units zero for every frame)."""
    with torch.no_grad():
        x = torso(frames)
    return (x.abs().mean().item(), (x - x.mean(0)).abs().mean().item(),
            (x == 0).all(0).float().mean().item())


def measure(frames: torch.Tensor, nets: int) -> list[tuple[str, str, np.ndarray]]:
    rows = []
    shape = tuple(frames.shape[1:])
    for name, inits in COMPARED.items():
        for init in inits:
            values = []
            for seed in range(nets):
                torch.manual_seed(seed)
                values.append(signal(make_torso(name, shape, init=init), frames))
            rows.append((name, init, np.mean(values, axis=0)))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.torso_signal",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="ale:Breakout", help="an ALE game (ale:<Game>)")
    parser.add_argument("--frames", type=int, default=24, help="frames to embed")
    parser.add_argument("--nets", type=int, default=5, help="network seeds per initialization")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random play")
    args = parser.parse_args(argv)
    if not args.env.startswith("ale:"):
        parser.error(f"--env must be an ALE game (ale:<Game>), got {args.env!r}")
    if args.frames < 2 or args.nets < 1:
        parser.error(f"--frames must be at least 2 and --nets at least 1, got {args.frames} "
                     f"and {args.nets}")
    frames = screen_frames(args.env, args.frames, args.seed)
    print(f"{args.env}: {len(frames)} frames (input mean {frames.mean().item():.3f}), "
          f"{args.nets} network seeds")
    print(f"{'torso':12s} {'initialization':18s} {'mean |x|':>9s} {'frame part':>11s} "
          f"{'dead':>6s}")
    for name, init_name, (magnitude, frame_part, dead) in measure(frames, args.nets):
        print(f"{name:12s} {init_name:18s} {magnitude:9.4f} {frame_part:11.4f} {dead:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
