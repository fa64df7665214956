"""Ape-X's and R2D2's discrete ε-greedy family: Λ = {ε_l | l = 0, …, L−1}, λ = l.

Paper: Sec. "An Operator View of RL Methods" (Ape-X and R2D2 are GDI-I¹ w/o E with
Λ = {ε_l | l = 1, …, 256}, P_Λ uniform); the ladder ε_l = ε^{1 + α·l/(L−1)} with ε = 0.4, α = 7
is Ape-X's (Horgan et al. 2018, Sec. 4.1), which R2D2 keeps. The index is 0-based, l = 0 … L−1,
so that ε_0 = ε = 0.4 and ε_{L−1} = ε^{1+α} = 0.4⁸ ≈ 6.6e-4 are Ape-X's two ends (the paper's
1-based l with the same formula would end at ε^{1 + α·L/(L−1)}, past Ape-X's range).

This file is the whole of the space: the learner, the actor, E's defaults and config
validation read everything from it (``gdi.policy_space`` imports every module it holds).
"""

from typing import ClassVar

import numpy as np
import torch

from gdi.policy_space.base import PolicySpace, register
from gdi.policy_space.functions import epsilon_greedy_np, epsilon_greedy_policy


@register
class EpsilonLadder(PolicySpace):
    name = "epsilon_ladder"
    index_names = ("l",)
    description = "(1−ε_l)·greedy(A) + ε_l·uniform"
    #: Ape-X's and R2D2's ladder: L (size), ε (base) and α. The formula, the range of l, the box
    #: E searches, the points of Λ and the texts all read these three, so a subclass that
    #: changes them is another ladder.
    size: ClassVar[int] = 256
    base: ClassVar[float] = 0.4
    alpha: ClassVar[float] = 7.0
    search_accuracies = (1.0,)
    inverse_temperatures = (False,)
    families = (1,)

    @property
    def bounds(self) -> tuple[tuple[float, float], ...]:
        return ((0.0, self.size - 1.0),)

    search_box = bounds  # E searches every rung

    def epsilon(self, index):
        """ε_l = base^(1 + α·l/(L−1)) for index l (a float, NumPy array or torch tensor)."""
        return self.base ** (1.0 + self.alpha * index / max(self.size - 1, 1))

    def values(self, families: int) -> np.ndarray:
        return np.arange(self.size, dtype=np.float64)[:, None]

    def index_set_text(self, families: int = 1) -> str:
        top = self.size - 1
        return f"Λ = {{ε_l = {self.base:g}^(1 + {self.alpha:g}·l/{top}) | l = 0…{top}}}"

    def _log_probs(self, advs, parts, validate):
        index = parts[0]
        top = self.size - 1
        if validate and index.numel() and not (
            torch.equal(index, index.round()) and 0 <= float(index.min())
            and float(index.max()) <= top
        ):
            raise ValueError(
                f"l must be an integer in [0, {top}], got values in "
                f"[{float(index.min())}, {float(index.max())}]"
            )
        return torch.log(epsilon_greedy_policy(advs[0], self.epsilon(index), validate=False))

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        return epsilon_greedy_np(advs[0], self.epsilon(lam[:, 0:1]))
