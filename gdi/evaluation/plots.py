"""Report figures: learning curves, per-game normalized-score bars, learning efficiency.

The figures follow the paper's: per-game HNS / HWRNS / SABER histograms (App. "Figure of HNS",
"Figure of HWRNS", "Figure of SABER") and the mean HNS against training scale with learning
efficiency (Fig. 1 and App. "Summary of Benchmark Results"). Every function takes the numbers
it draws (the report writes the same numbers to CSV) and saves one PNG; matplotlib is used
through ``Figure`` objects only, so no global backend or pyplot state is touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from gdi.atomic import save_figure
from gdi.evaluation.metrics import FRAMES_PER_DAY

# Okabe–Ito colors: distinguishable with the common color-vision deficiencies.
RUN_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
BASELINE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "8")
BASELINE_COLORS = ("#333333", "#8C564B", "#9467BD", "#BCBD22", "#17BECF", "#E377C2", "#2CA02C")
DPI = 150


def _style(ax) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(True, which="major", color="#DDDDDD", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=8)


def compact_number(value: float, _pos=None) -> str:
    """Short label for a large number (frames, Atari returns): 0, 2.5K, 50M, 1.5B."""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def _save(fig: Figure, path: Path) -> Path:
    return save_figure(fig, path, dpi=DPI, bbox_inches="tight", facecolor="white")


@dataclass(frozen=True)
class Curve:
    """One run's learning curve, or the mean curve of a group of runs with its CI band."""

    frames: np.ndarray
    returns: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None


@dataclass(frozen=True)
class CurvePanel:
    """One environment's subplot: per group, its runs' curves and their mean band."""

    title: str
    runs: Mapping[str, Sequence[Curve]]
    means: Mapping[str, Curve]
    reference: tuple[str, float] | None = None  # e.g. ("human", 7127.8)
    training: Mapping[str, Sequence[Curve]] | None = None
    """Per group, each run's training return (metrics.jsonl), drawn dotted."""


def _marker(curve: Curve) -> dict:
    """A marker where a curve has too few points to be seen as a line (one evaluation)."""
    return {"marker": "o", "markersize": 3.5} if len(curve.frames) < 3 else {}


def learning_curves(panels: Sequence[CurvePanel], path: Path) -> Path:
    """Return against frames: a thin line per seed, the mean over seeds and its 95% CI band,
    one subplot per environment, one color per group of runs."""
    if not panels:
        raise ValueError("learning_curves needs at least one panel")
    groups = list(dict.fromkeys(g for p in panels for g in p.runs))
    colors = {g: RUN_COLORS[i % len(RUN_COLORS)] for i, g in enumerate(groups)}
    ncols = min(4, len(panels))
    nrows = -(-len(panels) // ncols)
    fig = Figure(figsize=(3.4 * ncols, 2.6 * nrows + 0.5), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        _style(ax)
        for group, curves in (panel.training or {}).items():
            for curve in curves:
                ax.plot(curve.frames, curve.returns, color=colors[group], alpha=0.6,
                        linewidth=0.9, linestyle=":")
        for group, curves in panel.runs.items():
            for curve in curves:
                ax.plot(curve.frames, curve.returns, color=colors[group], alpha=0.35,
                        linewidth=0.8, **_marker(curve))
            mean = panel.means.get(group)
            if mean is not None:
                if mean.low is not None and len(curves) > 1:
                    ax.fill_between(
                        mean.frames,
                        mean.low,
                        mean.high,
                        color=colors[group],
                        alpha=0.18,
                        linewidth=0,
                    )
                ax.plot(mean.frames, mean.returns, color=colors[group], linewidth=1.8,
                        **_marker(mean))
        if panel.reference is not None:
            label, value = panel.reference
            low, high = ax.get_ylim()
            if low - 0.5 * (high - low) <= value <= high + 0.5 * (high - low):
                ax.axhline(value, color="#666666", linestyle="--", linewidth=0.9)
                ax.annotate(
                    label,
                    (1.0, value),
                    xycoords=("axes fraction", "data"),
                    ha="right",
                    va="bottom",
                    fontsize=7,
                    color="#444444",
                )
        ax.set_title(panel.title, fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    fig.supxlabel("environment frames", fontsize=9)
    fig.supylabel("return" if any(p.training for p in panels) else "evaluation return",
                  fontsize=9)
    handles = [_legend_line(colors[g], 1.8, _group_legend(g, panels)) for g in groups]
    if any(len(p.runs[g]) > 1 for p in panels for g in p.runs):
        handles.append(_legend_line("#888888", 0.8, "one seed", alpha=0.6))
    if any(p.training for p in panels):
        handles.append(Line2D([], [], color="#888888", linewidth=0.9, linestyle=":",
                              label="training return (last 100 episodes, as it acts)"))
    # Long group labels (a setting with its changes) two to a row, so that the legend is not
    # many times wider than the panels.
    wide = max(len(h.get_label()) for h in handles) > 40
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncols=min(len(handles), 2 if wide else 4),
        fontsize=8,
        frameon=False,
    )
    return _save(fig, path)


def _group_legend(group: str, panels: Sequence[CurvePanel]) -> str:
    """What the group's thick line is, as drawn: the mean of several seeds with its band, or
    a single seed's curve; says so when no mean could be drawn (frames that do not overlap)."""
    drawn = [len(p.runs[group]) for p in panels if group in p.runs and group in p.means]
    if any(n > 1 for n in drawn):
        return f"{group} (mean of seeds, 95% CI)"
    if drawn:
        return f"{group} (one seed)"
    return f"{group} (one line per seed; no mean: their frames do not overlap)"


def _legend_line(color: str, width: float, label: str, alpha: float = 1.0) -> Line2D:
    return Line2D([], [], color=color, linewidth=width, alpha=alpha, label=label)


@dataclass(frozen=True)
class GameBars:
    """Per-game values of one group of runs: mean over seeds and the seeds' range."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


def per_game_bars(
    games: Sequence[str],
    runs: Mapping[str, GameBars],
    baselines: Mapping[str, np.ndarray],
    *,
    metric: str,
    reference: str,
    path: Path,
    log: bool = True,
) -> Path:
    """A bar per game (percent), games sorted by the first group's score as in the paper's
    histograms; whiskers span the seeds; the paper's algorithms are markers on the same games;
    a dashed line marks 100% (``reference``)."""
    if not runs:
        raise ValueError("per_game_bars needs at least one group of runs")
    first = next(iter(runs.values()))
    order = np.argsort(-np.nan_to_num(first.mean, nan=-np.inf), kind="stable")
    n = len(games)
    x = np.arange(n)
    width = min(0.8, 0.25 * max(n, 2)) / len(runs)
    fig = Figure(figsize=(max(5.0, 0.24 * n + 2.5), 4.4), layout="constrained")
    ax = fig.subplots()
    _style(ax)
    ax.grid(False, axis="x")
    tops = [100.0]
    for i, (group, bars) in enumerate(runs.items()):
        offset = (i - (len(runs) - 1) / 2) * width
        mean, low, high = (
            100 * np.asarray(a, dtype=float)[order] for a in (bars.mean, bars.low, bars.high)
        )
        ax.bar(
            x + offset,
            mean,
            width=width * 0.9,
            color=RUN_COLORS[i % len(RUN_COLORS)],
            label=f"{group} (mean, seed range)",
            zorder=2,
        )
        ax.errorbar(
            x + offset,
            mean,
            yerr=[mean - low, high - mean],
            fmt="none",
            ecolor="#222222",
            elinewidth=0.8,
            capsize=2,
            zorder=3,
        )
        tops.append(np.nanmax(high))
    spread = min(0.8, 0.25 * max(n, 2)) / max(len(baselines), 1)
    for j, (name, values) in enumerate(baselines.items()):
        shown = 100 * np.asarray(values, dtype=float)[order]
        ax.scatter(
            x + (j - (len(baselines) - 1) / 2) * spread * 0.6,
            shown,
            marker=BASELINE_MARKERS[j % len(BASELINE_MARKERS)],
            s=24,
            facecolor="white",
            edgecolor=BASELINE_COLORS[j % len(BASELINE_COLORS)],
            linewidth=1.2,
            label=name,
            zorder=4,
        )
        tops.append(np.nanmax(shown) if np.any(np.isfinite(shown)) else 100.0)
    ax.axhline(
        100, color="#444444", linestyle="--", linewidth=0.9, zorder=1, label=f"100% = {reference}"
    )
    top = max(tops)
    if log:
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylim(top=top * 2.5)
    else:
        ax.set_ylim(top=top * 1.12)
    ax.set_xticks(x, [games[k] for k in order], rotation=90 if n > 6 else 0, fontsize=8)
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylabel(f"{metric} (%)", fontsize=9)
    fig.legend(
        loc="outside upper center",
        fontsize=7,
        frameon=False,
        ncols=min(5, len(runs) + len(baselines)),
    )
    return _save(fig, path)


@dataclass(frozen=True)
class EfficiencyPoint:
    """One algorithm (or group of runs) in the learning-efficiency plane."""

    label: str
    frames: float
    value: float  # metric in percent
    low: float | None = None
    high: float | None = None
    is_run: bool = False


def efficiency_scatter(
    panels: Mapping[str, Sequence[EfficiencyPoint]], path: Path, *, games_note: str
) -> Path:
    """Metric (percent) against training frames, both log-scaled, one subplot per metric; the
    paper's algorithms are labeled reference points, runs are stars with their CI; dotted
    diagonals are constant learning efficiency (metric / frames, App. "Learning Efficiency");
    the top axis reads the frames as human playtime in days (App. "Playtime")."""
    fig = Figure(figsize=(5.2 * len(panels), 4.4), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (metric, points) in zip(axes, panels.items(), strict=True):
        _style(ax)
        ax.set_xscale("log")
        ax.set_yscale("log")
        positive = [p for p in points if p.value > 0]
        xs = np.array([p.frames for p in positive])
        ys = np.array([p.value for p in positive])
        x_lo, x_hi = xs.min() / 4, xs.max() * 4
        y_lo, y_hi = ys.min() / 3, ys.max() * 3
        for exponent in range(-14, 2):
            slope = 10.0**exponent
            ax.plot(
                [x_lo, x_hi],
                [slope * x_lo, slope * x_hi],
                color="#BBBBBB",
                linestyle=":",
                linewidth=0.8,
                zorder=0,
            )
            exit_x = y_hi / slope  # where the line leaves the top of the plot
            if x_lo < exit_x < x_hi / 1.5:
                ax.annotate(
                    f"{slope:.0e} %/frame",
                    (exit_x, y_hi),
                    xytext=(2, -2),
                    textcoords="offset points",
                    fontsize=6,
                    color="#999999",
                    ha="left",
                    va="top",
                )
        _draw_points(ax, positive)
        ax.set_xlim(x_lo, x_hi)
        ax.set_ylim(y_lo, y_hi)
        ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("training scale (frames)", fontsize=9)
        ax.set_ylabel(f"{metric} (%)", fontsize=9)
        top = ax.secondary_xaxis(
            "top", functions=(lambda f: f / FRAMES_PER_DAY, lambda d: d * FRAMES_PER_DAY)
        )
        top.set_xlabel("playtime (days)", fontsize=8)
        top.tick_params(labelsize=7)
        top.set_xscale("log")
        top.xaxis.set_major_locator(LogLocator(numticks=8))
        top.xaxis.set_minor_locator(LogLocator(subs=(), numticks=8))
        top.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        dropped = [p.label for p in points if p.value <= 0]
        if dropped:
            ax.annotate(
                f"not shown (≤ 0): {', '.join(dropped)}",
                (0.01, 0.01),
                xycoords="axes fraction",
                fontsize=6,
                color="#777777",
            )
    fig.suptitle(f"Learning efficiency ({games_note})", fontsize=10)
    return _save(fig, path)


def _draw_points(ax, points: Sequence[EfficiencyPoint]) -> None:
    by_x: dict[float, list[EfficiencyPoint]] = {}
    for p in points:
        if not p.is_run:
            by_x.setdefault(p.frames, []).append(p)
    for same_x in by_x.values():
        for rank, p in enumerate(sorted(same_x, key=lambda q: q.value)):
            ax.scatter(p.frames, p.value, s=26, color="#4D4D4D", zorder=3)
            right = rank % 2 == 0
            ax.annotate(
                p.label,
                (p.frames, p.value),
                xytext=(5 if right else -5, 0),
                textcoords="offset points",
                ha="left" if right else "right",
                va="center",
                fontsize=7,
                color="#333333",
            )
    runs = [p for p in points if p.is_run]
    for i, p in enumerate(runs):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        if p.low is not None and p.high is not None:
            low, high = max(p.low, p.value * 1e-3), p.high
            ax.errorbar(
                p.frames,
                p.value,
                yerr=[[p.value - low], [high - p.value]],
                fmt="none",
                ecolor=color,
                elinewidth=1.2,
                capsize=3,
                zorder=4,
            )
        ax.scatter(
            p.frames,
            p.value,
            s=130,
            marker="*",
            color=color,
            edgecolor="black",
            linewidth=0.5,
            zorder=5,
        )
        # Runs close together (within a factor of 2 both ways) get their labels stacked, a
        # line each, rather than written over each other; the colour says whose star it is.
        near = sum(1 for q in runs[:i] if max(q.frames / p.frames, p.frames / q.frames) < 2
                   and max(q.value / p.value, p.value / q.value) < 2)
        ax.annotate(
            p.label,
            (p.frames, p.value),
            xytext=(7, 5 - 11 * near),
            textcoords="offset points",
            fontsize=8,
            fontweight="bold",
            color=color,
            # Over the paper's points and their names, the run's label stays legible.
            bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none",
                  "alpha": 0.8},
            zorder=6,
        )
