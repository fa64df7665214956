"""Boltzmann space (GDI-I¹): λ = 1/τ, π_λ = softmax(A/τ), on family 1's advantages.

Paper: Sec. "Ablation Study", Tab. "Summary of Algorithms of Ablation Study" (GDI-I¹); the
search box is the soft-entropy box's 1/τ range (``INV_TEMPERATURE_SEARCH``). IMPALA's actors
are its point 1/τ = 1 (the ``impala-like`` preset).
"""

import numpy as np

from gdi.policy_space.base import INV_TEMPERATURE_SEARCH, PolicySpace, register
from gdi.policy_space.functions import boltzmann_log_policy, softmax_np


@register
class Boltzmann(PolicySpace):
    name = "boltzmann"
    index_names = ("inv_tau",)
    symbols = ("1/τ",)
    description = "softmax(A/τ)"
    bounds = ((0.0, None),)
    search_box = (INV_TEMPERATURE_SEARCH[0],)
    search_accuracies = (INV_TEMPERATURE_SEARCH[1],)
    inverse_temperatures = (True,)
    #: IMPALA's actors sample from softmax(logits): 1/τ = 1.
    fixed_selection = (1.0,)

    def _log_probs(self, advs, parts, validate):
        return boltzmann_log_policy(advs[0], parts[0], validate=validate)

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        return softmax_np(lam[:, 0:1] * advs[0])
