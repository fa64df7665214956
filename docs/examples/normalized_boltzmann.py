"""A new policy space Λ: Boltzmann on advantages divided by their spread across actions.

π_λ(a|s) = softmax(β·A(s, a) / σ(s)), λ = β = 1/τ, where σ(s) is the standard deviation of
A(s, ·) over the actions (plus a small floor). The advantages' scale differs from game to game
and moves during training; dividing by σ makes one temperature mean the same sharpness
everywhere, so E searches a small box.

One class, registered with ``@register``. Saved as ``gdi/policy_space/normalized_boltzmann.py``
it is part of gdi (the package imports every module it holds); imported from anywhere else,
it is registered for that Python process.
"""

import numpy as np
import torch

from gdi.policy_space import PolicySpace, register

#: Floor of σ, so that equal advantages give the uniform policy instead of 0/0.
SPREAD_FLOOR = 1e-3


@register
class NormalizedBoltzmann(PolicySpace):
    name = "normalized_boltzmann"
    index_names = ("inv_tau",)
    symbols = ("1/τ",)  # how tables write λ (gdi presets)
    description = "softmax(A/(τ·σ(A)))"  # π_λ as tables write it
    bounds = ((0.0, None),)  # where λ may lie: any β ≥ 0 (β = 0 is the uniform policy)
    search_box = ((0.0, 10.0),)  # where E searches by default
    search_accuracies = (0.5,)  # the bandit's block size in that box
    inverse_temperatures = (True,)
    fixed_selection = (1.0,)  # the one λ of a "w/o E" preset
    families = (1,)  # acts on one parameter family's advantages

    def _log_probs(self, advs, parts, validate):
        """The learner's target policy: log π_λ in torch, differentiable in the advantages."""
        adv, beta = advs[0], parts[0]
        if validate and beta.numel() and float(beta.min()) < 0:
            raise ValueError(f"inv_tau must be >= 0, got {float(beta.min())}")
        spread = adv.std(dim=-1, correction=0, keepdim=True).clamp_min(SPREAD_FLOOR)
        return torch.log_softmax(beta.unsqueeze(-1) * adv / spread, dim=-1)

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """The actor's path: the same π_λ in NumPy float64, one row per environment."""
        adv = advs[0]
        spread = np.maximum(adv.std(axis=-1, keepdims=True), SPREAD_FLOOR)
        logits = lam[:, 0:1] * adv / spread
        z = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)
