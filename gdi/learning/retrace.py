"""Retrace targets for Q (Munos et al. 2016; the paper's App. "Background on RL", subsection
"Retrace"). Naming convention: see ``gdi.learning.vtrace``.
"""

from __future__ import annotations

import torch

from gdi.learning.vtrace import check_bootstrap, check_clip, check_time_major, check_trace_lambda

__all__ = ["retrace"]


@torch.no_grad()
def retrace(
    log_rhos: torch.Tensor,
    discounts: torch.Tensor,
    rewards: torch.Tensor,
    q_taken: torch.Tensor,
    expected_q: torch.Tensor,
    bootstrap_value: torch.Tensor,
    clip_c: float = 1.05,
    trace_lambda: float = 1.0,
) -> torch.Tensor:
    """Retrace targets G_t for Q(x_t, a_t), ``[T, B]``, without gradient.

    The paper's App. "Background on RL" writes the Retrace estimate as::

        Q(x_t, a_t) + Σ_{k≥0} γ^k c_{[t+1:t+k]} δ_{t+k},   c_i = min(c̄, π_i/μ_i)

    with c_{[t+1:t+k]} = c_{t+1}···c_{t+k} (the empty product 1 for k = 0) and a *sampled*
    TD error δ_t = r_t + γ Q(x_{t+1}, a_{t+1}) − Q(x_t, a_t). gdi uses the TD error of
    Munos et al. (2016, Eq. 3), whose operator the appendix cites for its contraction property:
    the *expected* one, δ_t = r_t + γ E_π Q(x_{t+1}, ·) − Q(x_t, a_t). With the sampled δ the
    c ≡ 0 case would be the SARSA target of μ's next action, which does not evaluate π; with the
    expected δ it is the expected-SARSA target of π (see docs/paper-choices.md). Truncating the
    sum at the sequence end with E_π Q(x_T, ·) := ``bootstrap_value`` and telescoping gives the
    backward recursion computed here, with per-step discounts γ_t::

        G_{T-1} = r_{T-1} + γ_{T-1} · bootstrap_value
        G_t     = r_t + γ_t (E_π Q(x_{t+1}, ·) + c_{t+1} (G_{t+1} − Q(x_{t+1}, a_{t+1})))

    Consequently ``q_taken[0]``, ``expected_q[0]`` and ``log_rhos[0]`` are never read: the
    target for step t depends only on what happens after a_t. ``trace_lambda`` λ scales the
    traces, c_i = λ·min(c̄, π_i/μ_i): Retrace(λ) of Munos et al. (2016), whose c_s is
    λ·min(1, π/μ); the paper's has none (λ = 1).

    Args:
      log_rhos: ``[T, B]`` log π(a_t|x_t) − log μ(a_t|x_t), untruncated.
      discounts: ``[T, B]`` γ·(1 − done_t).
      rewards: ``[T, B]`` r_t.
      q_taken: ``[T, B]`` Q(x_t, a_t) of the online network (detach it; it is not read with
        gradient anyway).
      expected_q: ``[T, B]`` E_{a∼π} Q(x_t, a). For the dueling Q = Ā + V this is V(x_t).
      bootstrap_value: ``[B]`` E_{a∼π} Q(x_T, a).
      clip_c: c̄ ≥ 0, truncation of the trace coefficients.
      trace_lambda: λ ∈ [0, 1] multiplying each trace coefficient (1: the paper's).
    """
    check_time_major("log_rhos", log_rhos, None)
    shape = tuple(log_rhos.shape)
    check_time_major("discounts", discounts, shape)
    check_time_major("rewards", rewards, shape)
    check_time_major("q_taken", q_taken, shape)
    check_time_major("expected_q", expected_q, shape)
    check_bootstrap("bootstrap_value", bootstrap_value, shape[1])
    check_clip("clip_c", clip_c)
    check_trace_lambda(trace_lambda)

    # Everything below reads time indices 1..T-1 of log_rhos, q_taken and expected_q only.
    # G_t = r_t + γ_t (E_{t+1} − c_{t+1} q_{t+1}) + γ_t c_{t+1} G_{t+1}: an affine map of G_{t+1}
    # whose coefficients are computed for all t at once, leaving one fused op per step.
    cs_tp1 = torch.clamp(torch.exp(log_rhos[1:]), max=clip_c)
    if trace_lambda != 1.0:  # the paper's traces are left untouched, bit for bit
        cs_tp1 = trace_lambda * cs_tp1
    discounts_t = discounts[:-1]
    offsets = rewards[:-1] + discounts_t * (expected_q[1:] - cs_tp1 * q_taken[1:])
    slopes = discounts_t * cs_tp1
    offsets_by_step, slopes_by_step = offsets.unbind(0), slopes.unbind(0)
    target = rewards[-1] + discounts[-1] * bootstrap_value
    targets = [target] * shape[0]
    for t in reversed(range(shape[0] - 1)):
        target = torch.addcmul(offsets_by_step[t], slopes_by_step[t], target)
        targets[t] = target
    return torch.stack(targets, dim=0)
