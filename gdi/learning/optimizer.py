"""The optimizer's own configuration (``OptimizerConfig``): AdamW's hyperparameters, its
schedule's warm-up and the gradient clip, declared and checked here beside the schedule
(``gdi.learning.schedule``). The run's ``gdi.config.Config`` is composed of it. Defaults are
the paper's (App. "Hyperparameters": AdamW, learning rate 5e-4, β = (0.9, 0.98), ε 1e-6,
weight decay 0.01, warm-up 4000 steps, gradient norm clipped at 50)."""

from __future__ import annotations

from dataclasses import dataclass

from gdi.checks import non_negative, positive


@dataclass(frozen=True)
class OptimizerConfig:
    """How the learner steps: AdamW and its schedule. Checked on creation
    (``check_optimizer``)."""

    learning_rate: float = 5e-4
    """AdamW peak learning rate."""
    adam_beta1: float = 0.9
    """AdamW β₁."""
    adam_beta2: float = 0.98
    """AdamW β₂."""
    adam_eps: float = 1e-6
    """AdamW ε."""
    weight_decay: float = 0.01
    """AdamW weight decay, annealed linearly to 0 with the learning rate."""
    warmup_steps: int = 4000
    """Learner steps of linear learning-rate warm-up."""
    max_grad_norm: float = 50.0
    """Global gradient-norm clip."""

    def __post_init__(self) -> None:
        self.check_optimizer()

    def check_optimizer(self) -> None:
        """ValueError of one line for the first field out of its range."""
        positive(self, "learning_rate", "adam_eps", "max_grad_norm")
        non_negative(self, "warmup_steps", "weight_decay")
        for name in ("adam_beta1", "adam_beta2"):
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, int | float)
                                               and 0.0 <= value < 1.0):
                raise ValueError(f"{name} must be in [0, 1), got {value!r}")
