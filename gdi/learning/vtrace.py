"""V-trace targets and policy-gradient advantages (IMPALA; the paper's App. "Background on RL",
subsection "Vtrace").

Naming convention for all of ``gdi.learning`` (time-major, written down once here):

* ``[T, B]`` tensors are indexed by learning step ``t`` and batch row ``b``; step ``t`` is the
  transition ``x_t --a_t--> x_{t+1}``.
* ``rewards[t]`` is r_t, the reward for taking ``a_t`` in ``x_t``.
* ``discounts[t]`` is γ·(1 − done_t), the discount applied to the transition t → t+1, so an
  episode end inside a sequence is a zero discount and needs no separate flag.
* ``values[t]`` is V(x_t) for t < T; ``bootstrap_value`` ``[B]`` is V(x_T), the state after
  the last learning step.
* ``log_rhos[t]`` is log π(a_t|x_t) − log μ(a_t|x_t): target over behavior policy.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

# The check_* helpers are the input checks shared by every function of gdi.learning; they are
# importable but not part of the re-exported API.
__all__ = ["VTraceReturns", "vtrace"]


class VTraceReturns(NamedTuple):
    """V-trace outputs; neither carries gradient."""

    vs: torch.Tensor  # [T, B] V-trace value targets v_s
    pg_advantages: torch.Tensor  # [T, B] ρ_s (r_s + γ_s v_{s+1} − V(x_s))
    # [T, B] r_s + γ_s v_{s+1} − V(x_s), the same advantage before its importance weight (what a
    # clipped surrogate weighs with its own ratio); None from callers that build only the two.
    td_advantages: torch.Tensor | None = None


def check_time_major(name: str, tensor: torch.Tensor, shape: tuple[int, ...] | None) -> None:
    """Raise ValueError naming ``name`` unless ``tensor`` is a floating ``[T, B]`` tensor.

    ``shape`` is the ``[T, B]`` shape already fixed by an earlier argument, or None for the
    first argument, which fixes it.
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() != 2:
        raise ValueError(
            f"{name} must be time-major with rank 2 [T, B], got rank {tensor.dim()} "
            f"shape {tuple(tensor.shape)}"
        )
    if shape is None and tensor.shape[0] < 1:
        raise ValueError(
            f"{name} must have at least one time step, got shape {tuple(tensor.shape)}"
        )
    if shape is not None and tuple(tensor.shape) != shape:
        raise ValueError(f"{name} must have shape [T, B] = {shape}, got {tuple(tensor.shape)}")
    if not tensor.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")


def check_bootstrap(name: str, tensor: torch.Tensor, batch_size: int) -> None:
    """Raise ValueError naming ``name`` unless ``tensor`` is a floating ``[B]`` tensor."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() != 1 or tensor.shape[0] != batch_size:
        raise ValueError(
            f"{name} must have shape [B] = ({batch_size},), got shape {tuple(tensor.shape)}"
        )
    if not tensor.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")


def check_trace_lambda(value: float) -> None:
    """A trace λ must be a number in [0, 1] (1: the paper's traces, cut by c̄ only)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"trace_lambda must be a float, got {type(value).__name__}")
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"trace_lambda must be in [0, 1] (1: the paper's traces), got {value}")


def check_clip(name: str, value: float) -> None:
    """An importance-weight truncation level must be a number ≥ 0 (inf means no truncation)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a float, got {type(value).__name__}")
    if not value >= 0:  # also rejects NaN
        raise ValueError(f"{name} must be >= 0 (float('inf') for no truncation), got {value}")


@torch.no_grad()
def vtrace(
    log_rhos: torch.Tensor,
    discounts: torch.Tensor,
    rewards: torch.Tensor,
    values: torch.Tensor,
    bootstrap_value: torch.Tensor,
    clip_rho: float = 1.05,
    clip_c: float = 1.05,
    clip_pg_rho: float | None = None,
    trace_lambda: float = 1.0,
) -> VTraceReturns:
    """V-trace targets v_s and policy-gradient advantages (Espeholt et al. 2018, Eq. 1).

    The paper's App. "Background on RL" ("Vtrace") writes, with δ_t = r_t + γ V(x_{t+1}) − V(x_t),
    ρ_t = min(ρ̄, π_t/μ_t), c_i = min(c̄, π_i/μ_i) and per-step discounts γ_i::

        v_s = V(x_s) + Σ_{t=s}^{T-1} (Π_{i=s}^{t-1} γ_i c_i) ρ_t δ_t,   V(x_T) := bootstrap_value

    computed here by its backward recursion
    ``v_s − V(x_s) = ρ_s δ_s + γ_s c_s (v_{s+1} − V(x_{s+1}))`` with ``v_T := bootstrap_value``.
    The policy gradient advantage is the appendix's ρ_s (r_s + γ_s v_{s+1} − V(x_s)) with its ρ
    truncated at ``clip_pg_rho`` (default: ``clip_rho``). The fixed point is V of the policy
    π̃ ∝ min(ρ̄ μ, π) when c̄ ≤ ρ̄; the function does not require it. ``trace_lambda`` λ
    scales the traces, c_i = λ·min(c̄, π_i/μ_i) (Espeholt et al. 2018, Sec. 4.1, scale them
    by λ as Retrace(λ) does: less variance for more bias; on-policy with ρ̄, c̄ ≥ 1 the targets
    are then λ-returns, GAE's with λ). The paper's V-trace has none (λ = 1).

    Runs under ``torch.no_grad``: targets never carry gradient.

    Args:
      log_rhos: ``[T, B]`` log π(a_t|x_t) − log μ(a_t|x_t), untruncated.
      discounts: ``[T, B]`` γ·(1 − done_t).
      rewards: ``[T, B]`` r_t.
      values: ``[T, B]`` V(x_t).
      bootstrap_value: ``[B]`` V(x_T).
      clip_rho: ρ̄ ≥ 0, truncation of ρ in δ's weight.
      clip_c: c̄ ≥ 0, truncation of the trace coefficients c.
      clip_pg_rho: truncation of ρ in the policy gradient advantage; None means ``clip_rho``.
      trace_lambda: λ ∈ [0, 1] multiplying each trace coefficient (1: the paper's).

    Returns:
      ``VTraceReturns(vs, pg_advantages, td_advantages)``, each ``[T, B]``.
    """
    check_time_major("log_rhos", log_rhos, None)
    shape = tuple(log_rhos.shape)
    check_time_major("discounts", discounts, shape)
    check_time_major("rewards", rewards, shape)
    check_time_major("values", values, shape)
    check_bootstrap("bootstrap_value", bootstrap_value, shape[1])
    check_clip("clip_rho", clip_rho)
    check_clip("clip_c", clip_c)
    if clip_pg_rho is None:
        clip_pg_rho = clip_rho
    check_clip("clip_pg_rho", clip_pg_rho)
    check_trace_lambda(trace_lambda)

    importance_weights = torch.exp(log_rhos)
    rhos = torch.clamp(importance_weights, max=clip_rho)
    cs = torch.clamp(importance_weights, max=clip_c)
    if trace_lambda != 1.0:  # the paper's traces are left untouched, bit for bit
        cs = trace_lambda * cs
    values_tp1 = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
    deltas = rhos * (rewards + discounts * values_tp1 - values)
    trace_decay = discounts * cs

    # Backward recursion on v_s − V(x_s); v_T − V(x_T) = 0. One fused op per step.
    deltas_by_step, trace_decay_by_step = deltas.unbind(0), trace_decay.unbind(0)
    correction = torch.zeros_like(bootstrap_value)
    corrections = [correction] * shape[0]
    for t in reversed(range(shape[0])):
        correction = torch.addcmul(deltas_by_step[t], trace_decay_by_step[t], correction)
        corrections[t] = correction
    vs = values + torch.stack(corrections, dim=0)

    vs_tp1 = torch.cat([vs[1:], bootstrap_value.unsqueeze(0)], dim=0)
    pg_rhos = torch.clamp(importance_weights, max=clip_pg_rho)
    td_advantages = rewards + discounts * vs_tp1 - values
    return VTraceReturns(vs=vs, pg_advantages=pg_rhos * td_advantages,
                         td_advantages=td_advantages)
