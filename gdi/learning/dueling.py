"""The dueling Q = Ā + V with the policy-centred advantage (App. "Algorithm Pseudocode",
Eq. "i3 casa equ" and "h3 casa equ")."""

from __future__ import annotations

import torch

__all__ = ["dueling_q"]


def dueling_q(adv: torch.Tensor, value: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    """Q = Ā + V with Ā = A − E_π[A] = A − Σ_a π(a) A(a).

    Centring A under π (not under the uniform policy of Wang et al. 2016) makes
    E_π[Q] = E_π[A] − E_π[A] + V = V exactly, so V is the state value of π and a Retrace target
    can use V as its expected Q. Pass ``probs`` detached when π is computed from ``adv`` (the
    loss does) so that the centring term is a constant of the Q regression.

    Args:
      adv: ``[..., A]`` advantages A(x, ·).
      value: ``[...]`` V(x).
      probs: ``[..., A]`` π(·|x), same shape as ``adv``.

    Returns:
      ``[..., A]`` Q(x, ·).
    """
    for name, tensor in (("adv", adv), ("value", value), ("probs", probs)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if adv.dim() < 1 or adv.shape[-1] < 1:
        raise ValueError(f"adv must have shape [..., A] with A >= 1, got {tuple(adv.shape)}")
    if value.shape != adv.shape[:-1]:
        raise ValueError(
            f"value must have shape {tuple(adv.shape[:-1])} (adv's shape without the action "
            f"axis), got {tuple(value.shape)}"
        )
    if probs.shape != adv.shape:
        raise ValueError(
            f"probs must have adv's shape {tuple(adv.shape)}, got {tuple(probs.shape)}"
        )
    expected_adv = (probs * adv).sum(dim=-1, keepdim=True)
    return adv - expected_adv + value.unsqueeze(-1)
