"""AdamW learning-rate and weight-decay schedule (App. "Hyperparameters": warm-up 4000 steps,
learning rate and weight decay annealed linearly to 0).

The anneal is measured in training progress (frames seen / frames budgeted), not in learner
steps: how many learner steps a frame budget buys depends on the replay ratio and on how fast
actors are, while frames are what the paper budgets (200M). Warm-up is in learner steps.
"""

from __future__ import annotations

from typing import NamedTuple


class ScheduleValues(NamedTuple):
    learning_rate: float
    weight_decay: float


def optimizer_schedule(
    step: int,
    progress: float,
    *,
    learning_rate: float,
    weight_decay: float,
    warmup_steps: int,
) -> ScheduleValues:
    """Values for learner step ``step`` (0-based) at ``progress`` ∈ [0, 1] of the frame budget.

    lr = learning_rate · min(1, (step + 1) / warmup_steps) · (1 − progress);
    wd = weight_decay · (1 − progress). Progress past 1 clamps to 1 (both 0).
    """
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if not progress >= 0:  # also rejects NaN
        raise ValueError(f"progress must be >= 0, got {progress}")
    remaining = 1.0 - min(progress, 1.0)
    warmup = 1.0 if warmup_steps <= 0 else min(1.0, (step + 1) / warmup_steps)
    return ScheduleValues(learning_rate * warmup * remaining, weight_decay * remaining)
