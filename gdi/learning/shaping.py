"""Reward shapings of the paper's App. "Hyperparameters" table ("GDI-I³ Reward Shape",
"GDI-H³ Reward Shape 1/2"). Rewards are never clipped ("Reward Clip: No"); each parameter
family of GDI-H³ learns from its own shaping of the same raw rewards. ``sign`` (DQN's clip)
is not the paper's, and no preset uses it: a lever to compare with APPO's T.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["REWARD_SHAPES", "get_reward_shape", "identity_shape", "log_shape", "root_shape",
           "sign_shape", "symlog_shape"]


def _check_rewards(rewards: torch.Tensor) -> None:
    if not isinstance(rewards, torch.Tensor):
        raise TypeError(f"rewards must be a torch.Tensor, got {type(rewards).__name__}")
    if not rewards.is_floating_point():
        raise ValueError(f"rewards must be a floating-point tensor, got dtype {rewards.dtype}")


def log_shape(rewards: torch.Tensor) -> torch.Tensor:
    """log(|r| + 1)·(2·1{r ≥ 0} − 1{r < 0}), exactly as printed in the hyperparameter table.

    Literally: 2·log(1 + r) for r ≥ 0 and −log(1 + |r|) for r < 0, so positive rewards weigh
    twice as much as negative ones of the same size. gdi implements the printed formula (see
    docs/paper-choices.md); GDI-I³ and family 1 of GDI-H³ use it.
    """
    _check_rewards(rewards)
    sign_weight = torch.where(rewards >= 0, 2.0, -1.0).to(rewards.dtype)
    return torch.log1p(rewards.abs()) * sign_weight


def symlog_shape(rewards: torch.Tensor) -> torch.Tensor:
    """sign(r)·log(|r| + 1): the log shape with both signs weighed alike.

    Not in the paper's table: it is the reading of Reward Shape 1 as a typo (docs/
    paper-choices.md), kept beside the printed formula so that a run can test whether the
    printed shape's 2:1 weight of positive over negative rewards matters (``--set
    reward_shapes='["symlog"]'``).
    """
    _check_rewards(rewards)
    return torch.sign(rewards) * torch.log1p(rewards.abs())


def root_shape(rewards: torch.Tensor) -> torch.Tensor:
    """sign(r)·((|r| + 1)^0.25 − 1) + 0.001·r (GDI-H³ Reward Shape 2)."""
    _check_rewards(rewards)
    return torch.sign(rewards) * ((rewards.abs() + 1.0) ** 0.25 - 1.0) + 0.001 * rewards


def sign_shape(rewards: torch.Tensor) -> torch.Tensor:
    """sign(r) ∈ {−1, 0, 1}: DQN's reward clipping as Sample Factory's Atari setting applies it
    (its ``ClipRewardEnv``). Not in the paper, whose table says "Reward Clip: No"; a lever
    for comparing gdi's T with APPO's (docs/learning-per-frame.md)."""
    _check_rewards(rewards)
    return torch.sign(rewards)


def identity_shape(rewards: torch.Tensor) -> torch.Tensor:
    """The raw reward, unchanged."""
    _check_rewards(rewards)
    return rewards


REWARD_SHAPES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "log": log_shape,
    "root": root_shape,
    "symlog": symlog_shape,
    "sign": sign_shape,
    "none": identity_shape,
}


def get_reward_shape(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """The shaping registered under ``name`` in ``REWARD_SHAPES``."""
    try:
        return REWARD_SHAPES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown reward shape {name!r}; allowed: {', '.join(sorted(REWARD_SHAPES))}"
        ) from None
