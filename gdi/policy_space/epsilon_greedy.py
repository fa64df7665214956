"""ε-greedy space (DQN): λ = ε, π_λ = (1−ε)·greedy(A) + ε·uniform, on family 1's advantages.

greedy(A) = greedy(Q) since Q = Ā + V shifts every action by the same V.
"""

import numpy as np
import torch

from gdi.policy_space.base import EPSILON_SEARCH, PolicySpace, register
from gdi.policy_space.functions import epsilon_greedy_np, epsilon_greedy_policy


@register
class EpsilonGreedy(PolicySpace):
    name = "epsilon_greedy"
    index_names = ("eps",)
    symbols = ("ε",)
    description = "(1−ε)·greedy(A) + ε·uniform"
    bounds = ((0.0, 1.0),)
    search_box = (EPSILON_SEARCH[0],)
    search_accuracies = (EPSILON_SEARCH[1],)
    inverse_temperatures = (False,)
    #: DQN's ε once annealed (Mnih et al. 2015: 1 → 0.1 over the first 1M frames, then 0.1;
    #: MinAtar's DQN baseline the same), which the "w/o E" point keeps throughout.
    fixed_selection = (0.1,)

    def _log_probs(self, advs, parts, validate):
        return torch.log(epsilon_greedy_policy(advs[0], parts[0], validate=validate))

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        return epsilon_greedy_np(advs[0], lam[:, 0:1])
