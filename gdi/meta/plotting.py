"""What operator E did: the sampled λ over training and the return each region of Λ earned.

Paper: Algorithm 1 (GDI), P_Λ ← E(P_Λ, {X_λ}); the paper shows no such plot, but E is the part
of GDI no other agent has, so ``gdi plot-meta RUN`` and ``gdi meta-demo`` draw it. matplotlib is
imported inside the function and drives the Agg canvas directly (no pyplot, no global backend
switch), so importing ``gdi.meta`` stays numpy-only and plotting works without a display.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gdi.atomic import save_figure

__all__ = ["plot_meta_history"]


def _rolling_quantiles(x: np.ndarray, y: np.ndarray, chunks: int) -> tuple[np.ndarray, ...]:
    """Median, 10 % and 90 % quantiles of y over ``chunks`` consecutive runs of x-sorted points."""
    parts = np.array_split(np.argsort(x, kind="stable"), chunks)
    xs = np.array([np.median(x[p]) for p in parts])
    q = np.array([np.quantile(y[p], [0.1, 0.5, 0.9]) for p in parts])
    return xs, q[:, 1], q[:, 0], q[:, 2]


def _padded(lo: float, hi: float) -> tuple[float, float]:
    if hi > lo:
        return lo, hi
    pad = 0.5 * max(abs(lo), 1.0)
    return lo - pad, hi + pad


def plot_meta_history(
    frames: np.ndarray,
    lambdas: np.ndarray,
    returns: np.ndarray,
    index_names: Sequence[str],
    ranges: Sequence[Sequence[float]],
    path: str | Path,
    title: str = "Operator E: where the behavior index λ was sampled",
    *,
    optimum: Sequence[float] | None = None,
    xlabel: str = "frames",
    bins: int = 20,
    max_points: int = 20000,
) -> Path:
    """Save a PNG with one row per λ coordinate and return its path.

    Left: every sampled λ (``lambdas[:, k]``) against ``frames``, coloured by its episode
    return (2nd–98th percentile colour scale), with the rolling median and 10–90 % band of λ.
    Right: the mean return (± standard error) in ``bins`` equal bins of the coordinate's
    range, over the number of samples per bin (grey). ``optimum`` (one value per coordinate,
    e.g. a synthetic problem's λ*) is drawn dashed. Above ``max_points`` samples the scatter
    shows an evenly spaced subset; the statistics use all samples.

    Shapes: ``frames`` [N], ``lambdas`` [N, k], ``returns`` [N], ``index_names`` and ``ranges``
    k entries each ((l, r) in λ-space).
    """
    frames = np.asarray(frames, dtype=np.float64)
    lambdas = np.asarray(lambdas, dtype=np.float64)
    returns = np.asarray(returns, dtype=np.float64)
    if lambdas.ndim != 2:
        raise ValueError(f"lambdas must have shape [N, k], got {lambdas.shape}")
    n, k = lambdas.shape
    if n == 0:
        raise ValueError("nothing to plot: no episodes (lambdas has 0 rows)")
    if frames.shape != (n,) or returns.shape != (n,):
        raise ValueError(
            f"frames and returns must have shape [{n}] like lambdas' rows, got {frames.shape} and {returns.shape}"
        )
    if len(index_names) != k:
        raise ValueError(f"index_names needs {k} names (one per λ column), got {list(index_names)}")
    box = np.asarray(ranges, dtype=np.float64)
    if box.shape != (k, 2):
        raise ValueError(f"ranges must be {k} (l, r) pairs, got {ranges!r}")
    if optimum is not None and np.shape(optimum) != (k,):
        raise ValueError(f"optimum must have {k} values, got {optimum!r}")
    if not (
        np.isfinite(frames).all() and np.isfinite(lambdas).all() and np.isfinite(returns).all()
    ):
        raise ValueError("frames, lambdas and returns must be finite")
    if not (
        isinstance(bins, int) and bins >= 1 and isinstance(max_points, int) and max_points >= 1
    ):
        raise ValueError(f"bins and max_points must be integers >= 1, got {bins} and {max_points}")

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 1.0 + 2.9 * k), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(k, 2, squeeze=False, gridspec_kw={"width_ratios": [3.0, 1.25]})
    shown = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(np.int64))
    lo_c, hi_c = np.percentile(returns, [2, 98])
    norm = Normalize(*_padded(float(lo_c), float(hi_c)))
    chunks = int(np.clip(n // 50, 1, 60))
    scatter = None

    for i in range(k):
        ax, ax_r = axes[i]
        lo, hi = _padded(*box[i])
        margin = 0.03 * (hi - lo)
        y = lambdas[:, i]
        scatter = ax.scatter(
            frames[shown],
            y[shown],
            c=returns[shown],
            cmap="viridis",
            norm=norm,
            s=6,
            alpha=0.6,
            linewidths=0,
            rasterized=True,
        )
        if n >= 10:
            xs, med, q10, q90 = _rolling_quantiles(frames, y, chunks)
            ax.fill_between(
                xs, q10, q90, color="tab:orange", alpha=0.25, linewidth=0, label="10–90 %"
            )
            ax.plot(xs, med, color="tab:orange", linewidth=2.0, label="rolling median")
        if optimum is not None:
            ax.axhline(
                optimum[i], color="tab:red", linestyle="--", linewidth=1.2, label="optimum λ*"
            )
        ax.set_ylim(lo - margin, hi + margin)
        ax.set_ylabel(index_names[i])
        ax.grid(alpha=0.25)
        if i == 0 and ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize=8, framealpha=0.85)
        if i == k - 1:
            ax.set_xlabel(xlabel)

        edges = np.linspace(lo, hi, bins + 1)
        which = np.clip(np.searchsorted(edges, y, side="right") - 1, 0, bins - 1)
        count = np.bincount(which, minlength=bins)
        total = np.bincount(which, weights=returns, minlength=bins)
        total_sq = np.bincount(which, weights=returns**2, minlength=bins)
        has = count > 0
        mean = np.divide(total, count, out=np.zeros(bins), where=has)
        var = np.divide(total_sq, count, out=np.zeros(bins), where=has) - mean**2
        sem = np.sqrt(np.maximum(var, 0.0) / np.maximum(count - 1, 1))
        centres = 0.5 * (edges[:-1] + edges[1:])
        ax_n = ax_r.twinx()
        ax_n.bar(centres, count, width=edges[1] - edges[0], color="0.6", alpha=0.3, linewidth=0)
        ax_n.set_ylabel("samples", color="0.45", fontsize=8)
        ax_n.tick_params(axis="y", labelsize=7, colors="0.45")
        ax_r.set_zorder(ax_n.get_zorder() + 1)
        ax_r.patch.set_visible(False)
        ax_r.errorbar(
            centres[has],
            mean[has],
            yerr=sem[has],
            fmt="o-",
            color="tab:blue",
            markersize=3,
            linewidth=1.2,
            capsize=2,
        )
        if optimum is not None:
            ax_r.axvline(optimum[i], color="tab:red", linestyle="--", linewidth=1.2)
        ax_r.set_xlim(lo - margin, hi + margin)
        ax_r.set_ylabel(f"mean return by {index_names[i]}", fontsize=9)
        ax_r.grid(alpha=0.25)
        if i == 0:
            ax_r.set_title("return per λ region", fontsize=10)
        if i == k - 1:
            ax_r.set_xlabel("λ coordinate value")

    axes[0, 0].set_title("sampled λ, coloured by episode return", fontsize=10)
    fig.colorbar(scatter, ax=axes[:, 0].tolist(), label="episode return", pad=0.01, aspect=30)
    fig.suptitle(title, fontsize=12)
    return save_figure(fig, path, dpi=110)
