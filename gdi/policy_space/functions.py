"""The policy-space math: π_λ for each family as pure torch functions, and the λ ↔ x transforms.

Paper: Sec. "Practical Implementation Based on GDI", Eq. (soft entropy policy space), and
App. "Adaptive Controller Formalism" for the λ ↔ x transforms of the bandit.

Temperatures are carried as *inverse* temperatures β = 1/τ throughout, so that β = 0 (the
uniform policy) is representable: the paper's bandit search ranges are 1/τ ∈ [0, 50], which
includes τ = ∞. Every policy is computed in log space (log-softmax, log-sum-exp of the mixture)
so that β = 50 with advantages in the thousands gives no NaN or inf.

All torch functions broadcast over leading dimensions: advantages are ``[..., A]`` and each λ
component is ``[...]`` (one λ per environment or per sequence step). The policy-space classes
(one module per space in ``gdi.policy_space``, on ``gdi.policy_space.base.PolicySpace``) put
these together with their NumPy acting counterparts.
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = [
    "INDEX_TRANSFORMS",
    "boltzmann_log_policy",
    "boltzmann_policy",
    "epsilon_greedy_np",
    "epsilon_greedy_policy",
    "inv_temperature_to_x",
    "soft_entropy_log_policy",
    "soft_entropy_policy",
    "softmax_np",
    "x_to_inv_temperature",
]


def _check_advantages(name: str, adv: torch.Tensor) -> None:
    if not isinstance(adv, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(adv).__name__}")
    if adv.dim() < 1 or adv.shape[-1] < 1:
        raise ValueError(f"{name} must have shape [..., A] with A >= 1, got {tuple(adv.shape)}")


def _as_param(name: str, value: torch.Tensor | float, like: torch.Tensor) -> torch.Tensor:
    """A λ component as a tensor broadcastable against ``like[..., 0]``."""
    value = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    lead = like.shape[:-1]
    if value.shape == lead:  # the common case (one λ per row): nothing to broadcast
        return value
    try:
        broadcast = torch.broadcast_shapes(value.shape, lead)
    except RuntimeError:
        broadcast = None
    # Broadcasting must not grow the advantages' leading shape: a λ of shape [B, 1] against
    # advantages [B, A] would otherwise broadcast to [B, B, A] and silently mix rows.
    if broadcast != lead:
        raise ValueError(
            f"{name} has shape {tuple(value.shape)}, which does not broadcast to the "
            f"advantages' leading shape {tuple(lead)} (one λ per row of [..., A])"
        )
    return value


def _check_range(name: str, value: torch.Tensor, low: float, high: float | None) -> None:
    # One fused reduction (min and max propagate NaN) and one host sync: this runs on every
    # acting step, so three separate .any() checks were a measurable share of an actor's time.
    if value.numel() == 0:
        return
    lowest, highest = (float(v) for v in torch.aminmax(value.detach()))
    if math.isnan(lowest) or math.isnan(highest):
        raise ValueError(f"{name} contains NaN")
    if lowest < low or (high is not None and highest > high):
        allowed = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {allowed}, got values in [{lowest}, {highest}]")


def boltzmann_log_policy(
    adv: torch.Tensor, inv_tau: torch.Tensor | float, *, validate: bool = True
) -> torch.Tensor:
    """log softmax(β·A), β = 1/τ ≥ 0 (GDI-I¹'s policy space). Returns ``[..., A]``.

    ``validate=False`` skips the value-range check of λ (shapes are always checked): for
    callers whose λ comes from an E controller, which keeps λ in range by construction.
    """
    _check_advantages("adv", adv)
    beta = _as_param("inv_tau", inv_tau, adv)
    if validate:
        _check_range("inv_tau", beta, 0.0, None)
    return torch.log_softmax(beta.unsqueeze(-1) * adv, dim=-1)


def boltzmann_policy(adv: torch.Tensor, inv_tau: torch.Tensor | float) -> torch.Tensor:
    """softmax(β·A); β = 0 gives exactly the uniform policy."""
    return boltzmann_log_policy(adv, inv_tau).exp()


def soft_entropy_log_policy(
    adv1: torch.Tensor,
    adv2: torch.Tensor,
    inv_tau1: torch.Tensor | float,
    inv_tau2: torch.Tensor | float,
    eps: torch.Tensor | float,
    *,
    validate: bool = True,
) -> torch.Tensor:
    """log π_λ for λ = (1/τ₁, 1/τ₂, ε): log(ε·softmax(β₁A₁) + (1−ε)·softmax(β₂A₂)).

    Computed as logaddexp(log ε + log-softmax(β₁A₁), log(1−ε) + log-softmax(β₂A₂)), which is
    finite wherever the mixture is positive and exact at ε ∈ {0, 1} (log 0 = −inf drops a
    component). Eq. (soft entropy policy space); for GDI-I³ pass the same advantages twice.
    """
    _check_advantages("adv1", adv1)
    _check_advantages("adv2", adv2)
    if adv1.shape[-1] != adv2.shape[-1]:
        raise ValueError(
            f"adv1 and adv2 must have the same number of actions, got {adv1.shape[-1]} and "
            f"{adv2.shape[-1]}"
        )
    eps_t = _as_param("eps", eps, adv1)
    if validate:
        _check_range("eps", eps_t, 0.0, 1.0)
    log_p1 = boltzmann_log_policy(adv1, inv_tau1, validate=validate)
    log_p2 = boltzmann_log_policy(adv2, inv_tau2, validate=validate)
    eps_t = eps_t.unsqueeze(-1)
    # log(ε·p₁ + (1−ε)·p₂) as a max-shifted log-sum-exp of the two weighted log-components:
    # exact, finite wherever the mixture is positive (ε = 0 gives log ε = −inf, whose exp is 0
    # and whose gradient is 0), and faster than torch.logaddexp's backward on the CPU
    # (docs/benchmarks.md, "Learner math").
    weighted1 = torch.log(eps_t) + log_p1
    weighted2 = torch.log1p(-eps_t) + log_p2
    top = torch.maximum(weighted1, weighted2).detach()
    return top + torch.log(torch.exp(weighted1 - top) + torch.exp(weighted2 - top))


def soft_entropy_policy(
    adv1: torch.Tensor,
    adv2: torch.Tensor,
    inv_tau1: torch.Tensor | float,
    inv_tau2: torch.Tensor | float,
    eps: torch.Tensor | float,
) -> torch.Tensor:
    """π_λ = ε·softmax(A₁/τ₁) + (1−ε)·softmax(A₂/τ₂) as probabilities ``[..., A]``."""
    return soft_entropy_log_policy(adv1, adv2, inv_tau1, inv_tau2, eps).exp()


def epsilon_greedy_policy(
    q: torch.Tensor, eps: torch.Tensor | float, *, validate: bool = True
) -> torch.Tensor:
    """(1−ε)·greedy(Q) + ε·uniform, the Ape-X / R2D2 behavior policies.

    Ties in argmax Q split the greedy mass evenly, so the result does not depend on the order
    of the actions.
    """
    _check_advantages("q", q)
    eps_t = _as_param("eps", eps, q)
    if validate:
        _check_range("eps", eps_t, 0.0, 1.0)
    is_max = (q == q.max(dim=-1, keepdim=True).values).to(q.dtype)
    greedy = is_max / is_max.sum(dim=-1, keepdim=True)
    eps_t = eps_t.unsqueeze(-1)
    return (1.0 - eps_t) * greedy + eps_t / q.shape[-1]


# ---------------------------------------------------------------------------------------------
# λ ↔ x: the coordinates the bandit controller searches in (App. "Adaptive Controller Formalism").
# ---------------------------------------------------------------------------------------------

#: "identity": the bandit searches β = 1/τ itself (default). "log1p": x = log(1 + 1/τ), the
#: appendix's formula τ = 1/(exp(x) − 1). See docs/paper-choices.md for why identity is default.
INDEX_TRANSFORMS = ("identity", "log1p")


def _check_transform(transform: str) -> None:
    if transform not in INDEX_TRANSFORMS:
        raise ValueError(
            f"unknown index transform {transform!r}; allowed: {', '.join(INDEX_TRANSFORMS)}"
        )


def inv_temperature_to_x(inv_tau: np.ndarray | float, transform: str = "identity") -> np.ndarray:
    """β = 1/τ ≥ 0 → bandit coordinate x. "log1p": x = log(1 + 1/τ) (the appendix's formula)."""
    _check_transform(transform)
    beta = np.asarray(inv_tau, dtype=np.float64)
    if np.isnan(beta).any() or (beta < 0).any():
        raise ValueError(f"inverse temperatures must be >= 0 and not NaN, got {beta}")
    return beta.copy() if transform == "identity" else np.log1p(beta)


def softmax_np(logits: np.ndarray) -> np.ndarray:
    """softmax over the last axis in NumPy float64 (the acting path's π_λ)."""
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def epsilon_greedy_np(q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """(1−ε)·greedy(Q) + ε·uniform in NumPy, ties sharing the greedy mass; ``eps`` ``[N, 1]``."""
    is_max = q == q.max(axis=-1, keepdims=True)
    greedy = is_max / is_max.sum(axis=-1, keepdims=True)
    return (1.0 - eps) * greedy + eps / q.shape[-1]


def x_to_inv_temperature(x: np.ndarray | float, transform: str = "identity") -> np.ndarray:
    """Bandit coordinate x → β = 1/τ. "log1p": 1/τ = exp(x) − 1, i.e. τ = 1/(exp(x) − 1)."""
    _check_transform(transform)
    x = np.asarray(x, dtype=np.float64)
    if np.isnan(x).any() or (x < 0).any():
        raise ValueError(f"bandit coordinates for inverse temperatures must be >= 0, got {x}")
    return x.copy() if transform == "identity" else np.expm1(x)

