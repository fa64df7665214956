"""How much E's own objective can gain over a uniform P_Λ, how much of it E takes, and whether
E ranks Λ's regions as they are: the measurements behind "why E does not beat uniform".

Paper: Sec. "Data Distribution Optimization Operator": E solves the bandit problem
max_{P_Λ} E_{λ~P_Λ}[r_λ], with r_λ the return of an episode played with π_λ (App. "Adaptive
Controller Formalism", Algorithm "Bandits Controller": "Execute x and receive the return G").
With the network of a given moment, no P_Λ returns more than the best region of Λ does, so
the return of Λ's best region over the mean return of uniform sampling bounds what E can add in
its own objective. Everything is measured per coordinate of λ, as the paper's bandit models
the return (one ensemble per coordinate), over ``BINS`` equal bins of the coordinate's range.

The surface is read from the uniform control's episodes (``gdi-i3-uniform``): they sample every
region evenly, so each bin's mean return is an unbiased estimate of that region's return, and
they are independent of the bandit run whose E is judged.

* ``split_half_headroom``: the best bin is chosen on a random half of the episodes and its
  return measured on the other half, so that the maximum of noisy means does not inflate it.
* ``realized_gain``: the control's bin means weighted by where E sampled, minus the control's
  mean: what E's P_Λ would have returned on the control's surface.
* ``rank_agreement``: Spearman's correlation between E's own estimate per bin and the control's
  observed mean per bin.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["BINS", "bin_edges", "bin_means", "bin_of", "rank_agreement", "realized_gain",
           "split_half_headroom"]

#: Bins of each coordinate's range (as ``gdi.analysis.e_learning``).
BINS = 10


def bin_edges(low: float, high: float, bins: int = BINS) -> np.ndarray:
    """``bins + 1`` equal-width edges over [low, high]."""
    if not high > low:
        raise ValueError(f"a coordinate's range needs high > low, got [{low}, {high}]")
    return np.linspace(low, high, bins + 1)


def bin_of(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Index of each value's bin; the right edge belongs to the last bin, values outside the
    range to the nearest end bin."""
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)


def bin_means(values: np.ndarray, returns: np.ndarray, edges: np.ndarray):
    """Mean return per bin (NaN where a bin has no episode) and episodes per bin."""
    bins = bin_of(values, edges)
    counts = np.bincount(bins, minlength=len(edges) - 1)
    sums = np.bincount(bins, weights=returns, minlength=len(edges) - 1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan), counts


def split_half_headroom(values: np.ndarray, returns: np.ndarray, edges: np.ndarray,
                        reps: int = 200, seed: int = 0) -> float:
    """Mean over ``reps`` random halves H of: mean return on the other half of the bin whose
    mean return on H is highest, minus the mean return of the other half. In the returns'
    units; NaN when no split leaves the chosen bin episodes on both sides."""
    values, returns = np.asarray(values, np.float64), np.asarray(returns, np.float64)
    if values.shape != returns.shape or values.ndim != 1:
        raise ValueError(f"values and returns must be matching 1-D arrays, got {values.shape} "
                         f"and {returns.shape}")
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    rng = np.random.default_rng(seed)
    bins = bin_of(values, edges)
    gains = []
    for _ in range(reps):
        half = rng.random(returns.size) < 0.5
        chosen_means, _ = bin_means(values[half], returns[half], edges)
        if np.all(np.isnan(chosen_means)):
            continue
        best = int(np.nanargmax(chosen_means))
        held_out = ~half & (bins == best)
        if held_out.any():
            gains.append(returns[held_out].mean() - returns[~half].mean())
    return float(np.mean(gains)) if gains else float("nan")


def realized_gain(sampled: np.ndarray, control_values: np.ndarray,
                  control_returns: np.ndarray, edges: np.ndarray) -> float:
    """Σ_k share_k · m_k − m̄: ``share`` the fraction of E's ``sampled`` values in bin k, m_k
    the control's mean return in bin k, m̄ the control's mean return. Bins the control never
    visited are left out and the shares renormalized over the others."""
    means, counts = bin_means(np.asarray(control_values, np.float64),
                               np.asarray(control_returns, np.float64), edges)
    share = np.bincount(bin_of(np.asarray(sampled, np.float64), edges),
                        minlength=len(edges) - 1).astype(np.float64)
    seen = counts > 0
    if not seen.any() or share[seen].sum() == 0:
        return float("nan")
    weights = share[seen] / share[seen].sum()
    return float(weights @ means[seen] - np.asarray(control_returns, np.float64).mean())


def rank_agreement(estimate_edges: np.ndarray, estimates: np.ndarray,
                   control_values: np.ndarray, control_returns: np.ndarray,
                   edges: np.ndarray) -> float:
    """Spearman's ρ between E's estimate per bin (the mean of its blocks whose centres lie in
    the bin; ``estimate_edges`` ``[n + 1]`` and ``estimates`` ``[n]`` as
    ``BanditEnsemble.estimated_returns`` gives them) and the control's mean return per bin, over
    the bins that have both. NaN when fewer than 3 bins do or either side is constant."""
    centres = (np.asarray(estimate_edges)[:-1] + np.asarray(estimate_edges)[1:]) / 2
    of_block = bin_of(centres, edges)
    counts = np.bincount(of_block, minlength=len(edges) - 1)
    sums = np.bincount(of_block, weights=np.asarray(estimates, np.float64),
                       minlength=len(edges) - 1)
    believed = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    observed, _ = bin_means(np.asarray(control_values, np.float64),
                             np.asarray(control_returns, np.float64), edges)
    both = ~np.isnan(believed) & ~np.isnan(observed)
    if both.sum() < 3 or np.ptp(believed[both]) == 0 or np.ptp(observed[both]) == 0:
        return float("nan")
    return float(stats.spearmanr(believed[both], observed[both])[0])
