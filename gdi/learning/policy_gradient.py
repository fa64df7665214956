"""How the policy-gradient term weighs log π: levers on the size of the policy's steps that the
paper does not have (App. "Hyperparameters": the V-trace policy gradient, weight β, no
entropy term), each off by default and chosen by a ``gdi.config.Config`` field. Pure functions over
time-major ``[T, B]`` tensors; docs/paper-choices.md says why each exists.
"""

from __future__ import annotations

import torch

__all__ = ["PG_ADVANTAGE_NORMS", "clipped_fraction", "clipped_surrogate_loss",
           "entropy_floor_penalty", "normalized_pg_advantages"]

#: How the policy gradient's advantages may be normalized over a batch: the choices of
#: ``LossConfig.pg_advantage_norm`` (its annotation reads them from here).
PG_ADVANTAGE_NORMS = ("none", "center", "standardize")


def normalized_pg_advantages(pg_advantages: torch.Tensor, norm: str,
                             eps: float = 1e-8) -> torch.Tensor:
    """The policy gradient's advantages ``[T, B]``, normalized over the whole batch.

    "none": unchanged (the paper). "center": minus their mean, so that a batch whose advantages
    are all positive (a value that lags rewards that are never negative, as early on Breakout)
    no longer reinforces every action it sampled. "standardize": centred and divided by their
    standard deviation (+ ``eps``), PPO's normalization, so that the policy's step no longer
    grows with the rewards' scale.
    """
    if norm == "none":
        return pg_advantages
    centred = pg_advantages - pg_advantages.mean()
    if norm == "center":
        return centred
    if norm == "standardize":
        return centred / (pg_advantages.std(unbiased=False) + eps)
    raise ValueError(f"pg_advantage_norm: unknown normalization {norm!r}; allowed: "
                     f"{', '.join(PG_ADVANTAGE_NORMS)}")


def clipped_surrogate_loss(log_pi_taken: torch.Tensor, behavior_log_probs: torch.Tensor,
                           advantages: torch.Tensor, clip: float) -> torch.Tensor:
    """PPO's clipped surrogate (Schulman et al. 2017, Eq. 7) per step, as a loss ``[T, B]``:
    −min(r·Â, clip(r, 1 − ε, 1 + ε)·Â) with r = π(a_t|x_t)/μ(a_t|x_t), Â = ``advantages``
    (detached) and ε = ``clip`` > 0.

    Its gradient is that of −r·Â (= −ρ·Â·∇log π) until the step has moved π(a_t) past the
    factor 1 ± ε of the behavior policy in the direction Â pushes, and 0 beyond: a bound on how
    far one batch moves π_λ, where the V-trace policy gradient's weight ρ̄-truncated ρ bounds
    nothing. Steps where π(a_t) = 0 (an ε-greedy π_λ off its greedy action) give 0.
    """
    if not clip > 0:
        raise ValueError(f"pg_clip: a clipped surrogate needs ε > 0, got {clip!r}")
    advantages = advantages.detach()
    ratio = torch.exp(log_pi_taken - behavior_log_probs.detach())
    surrogate = torch.minimum(ratio * advantages,
                              torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages)
    return torch.where(torch.isfinite(log_pi_taken), -surrogate, torch.zeros_like(surrogate))


def clipped_fraction(log_pi_taken: torch.Tensor, behavior_log_probs: torch.Tensor,
                     advantages: torch.Tensor, clip: float) -> torch.Tensor:
    """The share of steps whose clipped surrogate (``clipped_surrogate_loss``) gives no
    gradient: π has already moved past 1 ± ε of the behavior policy μ in the direction Â
    pushes, r > 1 + ε where Â > 0 or r < 1 − ε where Â < 0 (r = π/μ). With actors that act
    several learner steps behind, this is the part of a batch the policy gradient cannot use.
    A 0-d tensor; steps with π(a_t) = 0 count as unclipped (their loss is 0 by another rule).
    """
    ratio = torch.exp(log_pi_taken.detach() - behavior_log_probs.detach())
    advantages = advantages.detach()
    beyond = ((ratio > 1.0 + clip) & (advantages > 0)) | ((ratio < 1.0 - clip) & (advantages < 0))
    return (beyond & torch.isfinite(log_pi_taken)).to(ratio.dtype).mean()


def entropy_floor_penalty(entropy: torch.Tensor, floor: float) -> torch.Tensor:
    """max(0, floor − H): how far π_λ's entropy ``H`` (nats, a scalar: the batch's mean) is
    below ``floor``.

    Weighted into the loss it pulls the entropy up only while π_λ is sharper than the floor and
    leaves it alone above, where an entropy term pulls everywhere: on Breakout the runs of
    ``--learning policy-head-ale`` that stalled at 10-12 are those whose π_λ fell to 0.15-0.20
    nats, where a larger entropy term held every run at ~1.8 nats and learned later
    (docs/learning-per-frame-notes.md). ``floor`` 0 is no floor (the penalty is 0 for every H).
    """
    return torch.clamp(floor - entropy, min=0.0)
