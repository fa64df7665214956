"""gdi.learning: operator T of Algorithm 1, as pure functions over time-major [T, B] tensors.

V-trace for V and the policy gradient, Retrace for Q, the dueling Q = Ā + V, the reward
shapings of the hyperparameter table, and the GDI loss that combines them. The naming
convention (what ``rewards[t]``, ``discounts[t]``, ``values[t]`` mean) is written once in
``gdi.learning.vtrace``.
"""

from gdi.learning.dueling import dueling_q
from gdi.learning.loss import LossBatch, LossConfig, LossOutputs, loss
from gdi.learning.optimizer import OptimizerConfig
from gdi.learning.policy_gradient import clipped_surrogate_loss, normalized_pg_advantages
from gdi.learning.retrace import retrace
from gdi.learning.shaping import (
    REWARD_SHAPES,
    get_reward_shape,
    identity_shape,
    log_shape,
    root_shape,
    symlog_shape,
)
from gdi.learning.vtrace import VTraceReturns, vtrace

__all__ = [
    "REWARD_SHAPES",
    "LossBatch",
    "LossConfig",
    "LossOutputs",
    "OptimizerConfig",
    "VTraceReturns",
    "clipped_surrogate_loss",
    "dueling_q",
    "get_reward_shape",
    "identity_shape",
    "log_shape",
    "loss",
    "normalized_pg_advantages",
    "retrace",
    "root_shape",
    "symlog_shape",
    "vtrace",
]

# Re-exports of gdi.learning.auxiliary follow (import + `__all__ += [...]`, so ruff's F401 holds).
from gdi.learning.auxiliary import dynamics_losses, forward_dynamics_loss, inverse_dynamics_loss

__all__ += ["dynamics_losses", "forward_dynamics_loss", "inverse_dynamics_loss"]
