"""A lever screen on one game (an Atari game, or any other environment's runs): runs that each
change one setting, beside the control that differs from them only there, over the same first
frames. One Markdown table and one figure.

    python -m benchmarks.lever_screen --frames 3e6 \\
        --run "paper (control)=benchmarks/results/ale-cpu/breakout-0" \\
        --run "E in log(1 + 1/τ)=benchmarks/results/ale-screen/breakout-log1p-0" \\
        --out docs/figures/screen-breakout.png

Each run is cut at ``--frames`` (a screen stops there with ``gdi train --stop-at``, its
schedules still those of the full budget, so that it matches the control's first frames). The
table gives, per run: how far it ran (its last logged row within the cut), the frames at which the mean return of the last ``--window`` training
episodes first reached each level (``--levels``), the last evaluation within the cut, and what
the learner saw, as medians over the logged rows of each third of the cut: the entropy of π_λ
(nats; uniform over Breakout's 18 actions is log 18 = 2.89), E's mean sampled 1/τ₁ and 1/τ₂,
the spread of A over actions (max − min, how hard π_λ can lean at a given 1/τ) and the mean of
the policy gradient's advantages ρ_s δ (a positive mean reinforces whatever was sampled); where
a run logged them, the spread of a policy head's logits L (``policy_head=separate``), the share
of each batch PPO's clip left without a policy gradient, the standard deviation of ρ_s δ over
a batch (what ``pg_advantage_norm=standardize`` divides by), and the actors' policy lag. A
dash: the run did not log it (runs older than the statistic) or never reached the level. The
figure: training return and entropy against frames, one line per run.

``--appo LABEL=EXPERIMENT`` adds a Sample Factory APPO run (``benchmarks/appo_peer.py``'s
experiment folder: its training episodes; it logs no learner statistics). Runs labelled
``NAME, seed N`` form a group when two or more share NAME; a second table gives each group's
mean frames to each level and mean minutes to the highest, with 95 % percentile-bootstrap
intervals over its seeds (rliable, as ``gdi report``), and its mean last evaluation. A third
reads "the mean over seeds reaches N" as the frames at which the seeds' mean training return
first reached N, defined where a seed never got there, with an interval over resampled seeds.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.atari_learning import (
    Curve,
    diagnostic_series,
    first_reached,
    read_appo,
    read_gdi,
    trailing_mean,
)
from gdi.evaluation.aggregates import aggregate_intervals
from gdi.evaluation.markdown import fmt_interval

#: (metrics key, column title, digits) of the learner statistics, per third of the cut.
STATISTICS = (
    ("losses/entropy", "entropy", 2),
    ("meta/inv_tau1_mean", "1/τ₁", 1),
    ("meta/inv_tau2_mean", "1/τ₂", 1),
    ("stats/adv_spread", "A spread", 2),
    ("stats/pg_advantage_mean", "mean ρδ", 3),
)
#: Each shown only when a run of the table logged it: the spread of a policy head's logits L
#: (policy_head=separate), what π_λ leans on in place of A; the share of a batch that PPO's clip
#: leaves without a policy gradient (pg_clip > 0: π already moved past 1 ± ε of the actors'
#: μ); the standard deviation of the policy gradient's raw advantages over a batch (what
#: pg_advantage_norm=standardize divides them by); how many learner steps the actors'
#: parameters were behind when the batch learned.
OPTIONAL_STATISTICS = (
    ("stats/logit_spread", "L spread", 2),
    ("stats/pg_clipped_frac", "clipped", 2),
    ("stats/pg_advantage_std", "σ of ρδ", 3),
    ("perf/policy_lag", "lag (steps)", 1),
)


@dataclass
class Screened:
    """One run of the screen, cut at the screen's frames."""

    label: str
    curve: Curve


#: How far past the cut a record still counts: a run stopped at N frames stops at the first
#: window past N (640 frames on the ALE at the ale-cpu scale) and evaluates there when N is an
#: evaluation's frame count, as the control did at the same point.
CUT_SLACK = 1e-3


def cut(curve: Curve, frames: float) -> Curve:
    """``curve`` with only what happened by ``frames`` (and ``CUT_SLACK`` of it past)."""
    frames = frames * (1 + CUT_SLACK)
    keep = curve.episode_frames <= frames
    evals = curve.eval_frames <= frames
    return Curve(
        label=curve.label, group=curve.group, game=curve.game,
        episode_minutes=curve.episode_minutes[keep], episode_frames=curve.episode_frames[keep],
        episode_returns=curve.episode_returns[keep],
        eval_minutes=curve.eval_minutes[evals], eval_frames=curve.eval_frames[evals],
        eval_returns=[r for r, k in zip(curve.eval_returns, evals, strict=True) if k],
        learner_rows=[row for row in curve.learner_rows if row["frames"] <= frames],
    )


def thirds(rows: list[dict], key: str, frames: float) -> list[float | None]:
    """The median of ``key`` over the rows in each third of [0, ``frames``]; None where no row
    logged it."""
    at, values = diagnostic_series(rows, key)
    medians = []
    for low, high in ((0, frames / 3), (frames / 3, 2 * frames / 3), (2 * frames / 3, frames)):
        inside = values[(at > low) & (at <= high)]
        medians.append(float(np.median(inside)) if inside.size else None)
    return medians


def _number(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def screen_table(runs: list[Screened], frames: float, levels: Sequence[float],
                 window: int) -> str:
    statistics = STATISTICS + tuple(
        optional for optional in OPTIONAL_STATISTICS
        if any(optional[0] in row for run in runs for row in run.curve.learner_rows))
    head = ["run", "frames", *(f"to {level:g}" for level in levels), "last eval (frames)",
            *(f"{title} (thirds)" for _, title, _ in statistics)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        c = run.curve
        reached = [first_reached(c, level, window) for level in levels]
        last_eval = (f"{np.mean(c.eval_returns[-1]):.1f} ({c.eval_frames[-1] / 1e6:.1f}M)"
                     if c.eval_returns else "—")
        ran = max([row["frames"] for row in c.learner_rows]
                  or [float(c.episode_frames.max(initial=0))])
        cells = [run.label, f"{ran / 1e6:.2f}M",
                 *("—" if r is None else f"{r[1] / 1e6:.2f}M" for r in reached), last_eval]
        for key, _, digits in statistics:
            cells.append(" / ".join(_number(v, digits) for v in thirds(c.learner_rows, key,
                                                                       frames)))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Training return: mean of the last {window} training episodes (π_λ as it "
                 f"acts). Frames are emulator frames; every run cut at {frames / 1e6:g}M.")
    return "\n".join(lines) + "\n"


def seed_group(label: str) -> str | None:
    """NAME of a label ``NAME, seed N``; None for any other label."""
    match = re.fullmatch(r"(.+), seed \d+", label)
    return None if match is None else match[1]


def seed_groups(runs: list[Screened]) -> dict[str, list[Screened]]:
    """The runs labelled ``NAME, seed N`` by NAME, for each NAME that two or more share."""
    groups: dict[str, list[Screened]] = {}
    for run in runs:
        name = seed_group(run.label)
        if name is not None:
            groups.setdefault(name, []).append(run)
    return {name: members for name, members in groups.items() if len(members) > 1}


def _mean_interval(values: Sequence[float], scale: float = 1.0, digits: int = 2) -> str:
    """The mean of ``values`` / ``scale`` with its 95 % bootstrap interval over them."""
    name = "values"
    (interval,) = aggregate_intervals({name: np.array(values, dtype=np.float64)[:, None] / scale},
                                      ("mean",))[name].values()
    return fmt_interval(*interval, decimals=digits)


def group_table(runs: list[Screened], levels: Sequence[float], window: int) -> str:
    """Per group of two or more seeds (labels ``NAME, seed N``): the mean frames to each level
    and minutes to the highest, each over the seeds that reached it when all did ("k of n"
    otherwise), and the mean last evaluation, each with its 95 % interval over seeds; "" when no
    label makes a group."""
    groups = seed_groups(runs)
    if not groups:
        return ""
    top = max(levels)
    head = ["group", "seeds", *(f"frames to {level:g} (M)" for level in levels),
            f"minutes to {top:g}", "last eval"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def reached(members: list[Screened], level: float, minutes: bool) -> str:
        hits = [first_reached(m.curve, level, window) for m in members]
        hits = [hit for hit in hits if hit is not None]
        if len(hits) < len(members):
            return f"{len(hits)} of {len(members)} reached"
        if minutes:
            return _mean_interval([at_minutes for at_minutes, _ in hits], digits=1)
        return _mean_interval([at_frames for _, at_frames in hits], scale=1e6)

    for name, members in groups.items():
        cells = [name, str(len(members)),
                 *(reached(members, level, minutes=False) for level in levels),
                 reached(members, top, minutes=True)]
        finals = [float(np.mean(m.curve.eval_returns[-1])) for m in members
                  if m.curve.eval_returns]
        cells.append(_mean_interval(finals, digits=1) if len(finals) == len(members) else "—")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Means over each group's seeds with 95 % percentile-bootstrap intervals over "
                 "them; minutes: the run's training clock (evaluations included).")
    return "\n".join(lines) + "\n"


#: The grid of the seeds' mean curve (frames): the tables' two decimals of millions.
MEAN_CURVE_STEP = 10_000
#: Resamples of the seeds for the mean curve's interval.
MEAN_CURVE_RESAMPLES = 2000


def seed_curves(curves: Sequence[Curve], window: int,
                step: float = MEAN_CURVE_STEP) -> tuple[np.ndarray, np.ndarray]:
    """(grid, values [seeds, grid]): each seed's training return (the mean of its last
    ``window`` episodes) held from each episode's end to the next, on a grid of ``step`` frames
    up to the shortest seed's last episode, where every seed is still measured; NaN before a
    seed's first episode."""
    span = min(float(c.episode_frames[-1]) if c.episode_frames.size else 0.0 for c in curves)
    grid = np.arange(step, span + step / 2, step)
    values = np.full((len(curves), grid.size), np.nan)
    for row, c in zip(values, curves, strict=True):
        last = np.searchsorted(c.episode_frames, grid, side="right") - 1
        held = trailing_mean(c.episode_returns, window)[np.maximum(last, 0)]
        row[:] = np.where(last >= 0, held, np.nan)
    return grid, values


def first_crossing(grid: np.ndarray, means: np.ndarray, level: float) -> np.ndarray:
    """Per row of ``means`` [..., grid]: the first grid frame at which it reached ``level``;
    inf where it never did (NaN, a seed not yet measured, never counts as reached)."""
    reached = means >= level
    return np.where(reached.any(axis=-1), grid[np.argmax(reached, axis=-1)], np.inf) \
        if grid.size else np.full(means.shape[:-1], np.inf)


def mean_curve_table(runs: list[Screened], levels: Sequence[float], window: int) -> str:
    """Per group of two or more seeds: the frames at which the mean over its seeds of their
    training returns first reached each level, the reading of "the mean over seeds reaches N"
    that a seed that never got there does not leave undefined, with a 95 % percentile interval
    over resamples of whole seeds (a seed's curve is one draw); "> SPAN" where resamples never
    reached the level within the span every seed covers."""
    groups = seed_groups(runs)
    if not groups:
        return ""
    head = ["group", "seeds", *(f"mean curve to {level:g} (M)" for level in levels), "span (M)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rng = np.random.default_rng(0)
    for name, members in groups.items():
        grid, values = seed_curves([m.curve for m in members], window)
        picks = rng.integers(len(members), size=(MEAN_CURVE_RESAMPLES, len(members)))
        resampled = values[picks].mean(axis=1)  # [resamples, grid]
        span = grid[-1] / 1e6 if grid.size else 0.0
        cells = [name, str(len(members))]
        for level in levels:
            point = float(first_crossing(grid, values.mean(axis=0), level))
            # Order statistics, not interpolation, so that an inf (never) stays an inf.
            low, high = np.quantile(first_crossing(grid, resampled, level), (0.025, 0.975),
                                    method="inverted_cdf")
            shown = [f"{x / 1e6:.2f}" if np.isfinite(x) else f"> {span:.2f}"
                     for x in (point, low, high)]
            cells.append(f"{shown[0]} [{shown[1]}, {shown[2]}]")
        cells.append(f"{span:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"The mean over each group's seeds of their training return (each seed's mean of "
                 f"its last {window} episodes, held between its episodes, on a "
                 f"{MEAN_CURVE_STEP / 1e6:g}M-frame grid up to the span every seed covers) and "
                 f"the frames at which it first reached each level, with a 95 % percentile "
                 f"interval over {MEAN_CURVE_RESAMPLES} resamples of whole seeds.")
    return "\n".join(lines) + "\n"


def screen_figure(runs: list[Screened], window: int, path: Path,
                  title: str = "one lever at a time against its control") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ret, ent) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    # The seeds of a group (labels "NAME, seed N") share a colour and one legend entry.
    keys = [seed_group(run.label) or run.label for run in runs]
    colours = {key: f"C{i % 10}" for i, key in enumerate(dict.fromkeys(keys))}
    labelled: set[str] = set()
    for run, key in zip(runs, keys, strict=True):
        c = run.curve
        if c.episode_returns.size:
            ret.plot(c.episode_frames / 1e6, trailing_mean(c.episode_returns, window),
                     color=colours[key], lw=1.4 if key == run.label else 1.0,
                     label=None if key in labelled else key)
            labelled.add(key)
        at, entropy = diagnostic_series(c.learner_rows, "losses/entropy")
        ent.plot(at / 1e6, entropy, color=colours[key], lw=1.2 if key == run.label else 0.9)
    ret.set_ylabel(f"training return\n(last {window} episodes)")
    ent.set_ylabel("entropy of π_λ (nats)")
    ent.set_xlabel("frames (millions)")
    for ax in (ret, ent):
        ax.grid(alpha=0.3)
    fig.legend(*ret.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=9,
               frameon=False)
    fig.suptitle(f"{runs[0].curve.game}: {title}")
    fig.tight_layout(rect=(0, 0.05 + 0.03 * ((len(colours) + 1) // 2), 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_run(text: str) -> tuple[str, Path]:
    if "=" not in text:
        raise ValueError(f"--run {text!r}: give LABEL=RUN_FOLDER")
    label, folder = text.rsplit("=", 1)
    return label.strip(), Path(folder)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lever_screen",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True,
                        help="LABEL=RUN_FOLDER, the control first (repeat for each run)")
    parser.add_argument("--frames", type=float, default=3e6, help="where every run is cut")
    parser.add_argument("--levels", nargs="+", type=float, default=[5.0, 10.0, 15.0],
                        help="training returns whose first frames the table reports")
    parser.add_argument("--window", type=int, default=100,
                        help="training episodes per point of the training return")
    parser.add_argument("--appo", action="append", default=[],
                        help="LABEL=EXPERIMENT, a Sample Factory APPO run of "
                             "benchmarks/appo_peer.py (repeat for each)")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write (and .md beside)")
    parser.add_argument("--title", default="one lever at a time against its control",
                        help="the figure's title after the game's name (a confirmation of seeds "
                             "is not a screen)")
    args = parser.parse_args(argv)
    try:
        runs = [Screened(label, cut(read_gdi(folder, ale_only=False), args.frames))
                for label, folder in map(parse_run, args.run)]
        runs += [Screened(label, cut(read_appo(folder), args.frames))
                 for label, folder in map(parse_run, args.appo)]
        games = sorted({run.curve.game for run in runs})
        if len(games) > 1:
            raise ValueError(f"the runs play different games ({', '.join(games)})")
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    screen_figure(runs, args.window, args.out, args.title)
    text = screen_table(runs, args.frames, args.levels, args.window)
    groups = group_table(runs, args.levels, args.window)
    if groups:
        text += "\n" + groups + "\n" + mean_curve_table(runs, args.levels, args.window)
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
