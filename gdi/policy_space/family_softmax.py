"""LASER's Λ: one softmax policy per parameter family, λ = i the family an episode acts with.

Paper: Sec. "An Operator View of RL Methods": LASER is GDI-H¹ w/o E with Λ = {i | i = 1, …, K}
the learners, P_Λ uniform, θ_i sharing nothing, each θ_i trained on the samples of all
learners. π_λ = softmax(A_i): every LASER learner is an IMPALA agent, whose actors sample from
its softmax policy (τ = 1). The index is 0-based, i = 0 … K−1, and travels with the data in λ,
so the learner's target policy for a step is the family that acted (``gdi.learning.loss``
takes π_λ as every family's target; docs/paper-choices.md says how that differs from LASER).
"""

import numpy as np
import torch

from gdi.policy_space.base import PolicySpace, register
from gdi.policy_space.functions import softmax_np


@register
class FamilySoftmax(PolicySpace):
    name = "family_softmax"
    index_names = ("family",)
    symbols = ("i",)
    description = "softmax(A_i)"
    bounds = ((0.0, None),)  # the top is K − 1: lambda_bounds
    search_box = ((0.0, 1.0),)  # with K = 2; default_box gives [0, K − 1]
    search_accuracies = (1.0,)
    inverse_temperatures = (False,)
    families = ()  # any K >= 2: check_families

    def check_families(self, families: int) -> None:
        if families < 2:
            raise ValueError(
                f"policy space {self.name!r} picks one of K >= 2 parameter families per "
                f"episode, got families={families}"
            )

    def lambda_bounds(self, families: int):
        return ((0.0, families - 1.0),)

    def default_box(self, families: int):
        return ((0.0, families - 1.0),)

    def values(self, families: int) -> np.ndarray:
        return np.arange(families, dtype=np.float64)[:, None]

    def index_set_text(self, families: int = 1) -> str:
        return f"Λ = {{i | i = 0…{families - 1}}}, one per parameter family"

    def _log_probs(self, advs, parts, validate):
        stacked = torch.stack(list(advs))  # [K, ..., A]
        index = parts[0]
        if validate and index.numel() and not (
            torch.equal(index, index.round()) and 0 <= float(index.min())
            and float(index.max()) <= len(advs) - 1
        ):
            raise ValueError(
                f"family must be an integer in [0, {len(advs) - 1}], got values in "
                f"[{float(index.min())}, {float(index.max())}]"
            )
        chosen = index.long().clamp(0, len(advs) - 1)
        gather = chosen.unsqueeze(0).unsqueeze(-1).expand(1, *stacked.shape[1:])
        return torch.log_softmax(stacked.gather(0, gather).squeeze(0), dim=-1)

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        chosen = lam[:, 0].astype(np.int64)
        return softmax_np(advs[chosen, np.arange(lam.shape[0])])
