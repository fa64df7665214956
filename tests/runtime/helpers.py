"""Shared by the runtime tests: a config small enough that a run or a learner step takes
milliseconds on CPU, with every runtime role still exercised."""

import pytest

from gdi.cli import main
from gdi.config import apply_overrides
from gdi.presets import resolve_config

TINY = [
    "envs_per_actor=4", "burn_in=2", "seq_len=4", "seq_stride=4", "batch_size=4",
    "min_replay=8", "replay_capacity=32", "lstm_units=16", "warmup_steps=2", "pull_every=4",
    "push_every=2", "log_every=200", "eval_every=400", "eval_episodes=2", "torch_threads=1",
]


def tiny_config(preset="gdi-i3", env="gym:CartPole-v1", frames=800, backend="inline", seed=3,
                **extra):
    cfg = resolve_config(preset, env, frames=frames, seed=seed, backend=backend)
    return apply_overrides(cfg, TINY + [f"{k}={v}" for k, v in extra.items()])


def train_until(config, run_dir, frames: int):
    """Train ``config`` into ``run_dir`` and stop it once ``frames`` are reached, as a Ctrl-C
    would: the interrupted run, checkpointed, to resume."""
    from gdi.runtime.wiring import train

    return train(config, run_dir, stop_when=lambda done: done >= frames, show_progress=False,
                 tensorboard=False)


def one_line_error(argv, capsys) -> str:
    """Run the CLI with ``argv``; it must exit 2 with one line on stderr and no traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err
