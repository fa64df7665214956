"""The paper's soft-entropy space (GDI-I³, GDI-H³): λ = (1/τ₁, 1/τ₂, ε),
π_λ = ε·softmax(A₁/τ₁) + (1−ε)·softmax(A₂/τ₂).

Paper: Sec. "Practical Implementation Based on GDI", Eq. (soft entropy policy space); search
box and block sizes from App. "Hyperparameters" (1/τ₁, 1/τ₂ ∈ [0, 50] with blocks of 1.0,
ε ∈ [0, 1] with blocks of 0.1). A₁ is family 1's advantages, A₂ the last family's (GDI-I: the
same advantages twice).
"""

import numpy as np

from gdi.policy_space.base import EPSILON_SEARCH, INV_TEMPERATURE_SEARCH, PolicySpace, register
from gdi.policy_space.functions import soft_entropy_log_policy, softmax_np


@register
class SoftEntropy(PolicySpace):
    name = "soft_entropy"
    index_names = ("inv_tau1", "inv_tau2", "eps")
    symbols = ("1/τ₁", "1/τ₂", "ε")
    description = "ε·softmax(A₁/τ₁) + (1−ε)·softmax(A₂/τ₂)"
    bounds = ((0.0, None), (0.0, None), (0.0, 1.0))
    search_box = (INV_TEMPERATURE_SEARCH[0], INV_TEMPERATURE_SEARCH[0], EPSILON_SEARCH[0])
    search_accuracies = (INV_TEMPERATURE_SEARCH[1], INV_TEMPERATURE_SEARCH[1], EPSILON_SEARCH[1])
    inverse_temperatures = (True, True, False)
    #: The paper's "Fixed Selection for [1/τ₁, 1/τ₂, ε]" of GDI-I⁰ (w/o E), App. "Hyperparameters":
    #: π = softmax(A₁), ε = 1 putting all weight on the first component.
    fixed_selection = (1.0, 0.0, 1.0)

    def _log_probs(self, advs, parts, validate):
        return soft_entropy_log_policy(advs[0], advs[-1], *parts, validate=validate)

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        eps = lam[:, 2:3]
        return (eps * softmax_np(lam[:, 0:1] * advs[0])
                + (1.0 - eps) * softmax_np(lam[:, 1:2] * advs[-1]))
