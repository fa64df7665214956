"""A 2-D space for the Agent57-like preset: λ = (1/τ, ε),
π_λ = ε·uniform + (1−ε)·softmax(A/τ).

Agent57's Λ is {β_i} × {γ_j}: the weight of an intrinsic reward and the discount, both inputs
of a conditioned network. gdi has neither an intrinsic reward nor a γ-conditioned network, so
the Agent57-like preset keeps what E sees of those arms, a 2-D grid from exploratory to
exploitative behavior, with two axes gdi can act with: ε, how much of the uniform (the
exploratory) policy is mixed in, stands in for β; 1/τ, how sharply the exploitative part
follows A, stands in for γ's horizon. It is the soft-entropy space with 1/τ₁ = 0, on family
1's advantages.
"""

import numpy as np

from gdi.policy_space.base import EPSILON_SEARCH, INV_TEMPERATURE_SEARCH, PolicySpace, register
from gdi.policy_space.functions import soft_entropy_log_policy, softmax_np


@register
class EpsilonBoltzmann(PolicySpace):
    name = "epsilon_boltzmann"
    index_names = ("inv_tau", "eps")
    symbols = ("1/τ", "ε")
    description = "ε·uniform + (1−ε)·softmax(A/τ)"
    bounds = ((0.0, None), (0.0, 1.0))
    search_box = (INV_TEMPERATURE_SEARCH[0], EPSILON_SEARCH[0])
    search_accuracies = (INV_TEMPERATURE_SEARCH[1], EPSILON_SEARCH[1])
    inverse_temperatures = (True, False)
    families = (1,)

    def _log_probs(self, advs, parts, validate):
        inv_tau, eps = parts
        return soft_entropy_log_policy(advs[0], advs[0], 0.0 * inv_tau, inv_tau, eps,
                                       validate=validate)

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        eps = lam[:, 1:2]
        return eps / advs.shape[-1] + (1.0 - eps) * softmax_np(lam[:, 0:1] * advs[0])
