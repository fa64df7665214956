"""The APPO peer for time-to-score comparisons: Sample Factory 2.1.1 on MinAtar Breakout.

Runs in a virtual environment of its own (Sample Factory needs gymnasium 0.29.1 and numpy < 2,
gdi needs newer), never imported by gdi or its tests:

    python3.11 -m venv /tmp/sfvenv
    /tmp/sfvenv/bin/pip install "sample-factory==2.1.1" "gymnasium==0.29.1" "numpy<2" \\
        "torch==2.13.0" minatar
    /tmp/sfvenv/bin/python benchmarks/appo_peer.py --seed 0 --train_dir /tmp/sf-runs

The settings are those the issue "time to score" measured the peer with: APPO, an MLP encoder
256-256 on the flattened 10×10×4 observation, an LSTM of 256, 2 workers × 8 environments,
rollout 32, batch 1024, on the CPU, for 1M environment steps (one MinAtar frame each, as gdi
counts them); other arguments go through to Sample Factory. Sample Factory prints its FPS and
the mean training-episode return as it goes; the run's wall time is what ``time`` says.
"""

from __future__ import annotations

import sys

import gymnasium as gym
import minatar.gym  # noqa: F401  (registers MinAtar/*-v1 with gymnasium)
import numpy as np
from sample_factory.cfg.arguments import parse_full_cfg, parse_sf_args
from sample_factory.envs.env_utils import register_env
from sample_factory.train import run_rl

ENV = "minatar_breakout"
SETTINGS = [
    f"--env={ENV}", "--algo=APPO", "--device=cpu", "--train_for_env_steps=1000000",
    "--num_workers=2", "--num_envs_per_worker=8", "--rollout=32", "--batch_size=1024",
    "--use_rnn=True", "--rnn_type=lstm", "--rnn_size=256", "--encoder_mlp_layers", "256", "256",
    "--experiment_summaries_interval=10", "--save_every_sec=600",
]


class FlatFloat(gym.ObservationWrapper):
    """MinAtar's boolean 10×10×4 planes as 400 floats, for Sample Factory's MLP encoder."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        size = int(np.prod(env.observation_space.shape))
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)

    def observation(self, observation):
        return np.asarray(observation, np.float32).reshape(-1)


def make_breakout(full_env_name, cfg=None, env_config=None, render_mode=None):
    return FlatFloat(gym.make("MinAtar/Breakout-v1", render_mode=render_mode))


def main(argv: list[str]) -> int:
    register_env(ENV, make_breakout)
    seed = next((a.split("=", 1)[1] for a in argv if a.startswith("--seed=")), "0")
    args = [*SETTINGS, f"--experiment=appo_breakout_seed{seed}", *argv]
    parser, _ = parse_sf_args(argv=args)
    return run_rl(parse_full_cfg(parser, args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
