"""Learning on an Atari game against wall-clock time: gdi runs (their evaluations and training
episodes) beside Sample Factory APPO runs (``benchmarks/appo_peer.py``: training episodes), as
one figure and one Markdown table.

    python -m benchmarks.atari_learning --gdi runs/ale-cpu/breakout-* \\
        --appo runs/sf/appo_ale_breakout_seed0 --out docs/figures/atari-breakout-cpu.png

For each gdi run it reads ``metrics.jsonl`` (the wall clock of training: each row's interval
is its frames over its ``perf/fps``, so the sum of the intervals up to a row is the time to
it, evaluations included; the first row's interval holds the run's start-up, the actors'
processes and their first window, ~5 s on the ALE at the ale-cpu scale, and a resumed run's
first row after the resume its start-up again), ``eval/*.json`` (each evaluation's
episodes) and ``meta.jsonl`` (each training episode's return and the frames at its end). An
APPO run gives ``curve_episodes.csv`` (each training episode's wall time since the script
started, its start-up of ~40 s included, and frames). Both count emulator frames (4 per agent
step) and report raw game scores. HNS is the paper's (App. "Evaluation Metrics for ALE"), with
its random and human scores.

The figure: the mean return of the last ``--window`` training episodes of each run (gdi and
APPO alike, π_λ for gdi, λ ~ P_Λ as it acts) and each gdi evaluation's mean return (markers),
against minutes of wall time (left) and millions of frames (right); one color per group, one
line style per seed. The table: every evaluation with its HNS, and each run's training return
at the wall time every run reached. Runs whose folder names differ only in a trailing seed
(``breakout-0``, ``breakout-1``; ``appo_ale_breakout_seed0``, ``..._seed1``) form a group, and
for each group of two or more the table adds the mean over seeds of each evaluation and of
the training return at that wall time, with 95 % bootstrap CIs (rliable). ``--diagnostics
PNG`` adds the gdi runs' learner statistics against frames (training return, mean V-trace
target, gradient norm, learning rate): where the value targets settle before learning starts.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gdi.evaluation.aggregates import REPS, curve_band
from gdi.evaluation.baselines import baselines
from gdi.evaluation.games import canonical_game
from gdi.evaluation.metrics import hns
from gdi.run_files import read_jsonl
from gdi.run_records import training_clock
from gdi.runtime.run_folder.meta_log import load_meta_rows
from gdi.runtime.run_folder.run_dir import read_config


@dataclass
class Curve:
    """One run: training episodes and (gdi) evaluations, each with its wall time."""

    label: str
    group: str
    game: str
    episode_minutes: np.ndarray
    episode_frames: np.ndarray
    episode_returns: np.ndarray
    eval_minutes: np.ndarray
    eval_frames: np.ndarray
    eval_returns: list[np.ndarray]
    learner_rows: list[dict] = field(default_factory=list)
    """A gdi run's logged rows with learner statistics (losses, targets, schedule)."""

    @property
    def minutes(self) -> float:
        """Wall time the run lasted, as far as its records go."""
        ends = [m[-1] for m in (self.episode_minutes, self.eval_minutes) if m.size]
        return float(max(ends)) if ends else 0.0


def group_of(folder: str) -> str:
    """The runs' group, seeds of one setting: the folder name without its seed suffix
    (``breakout-1`` -> ``breakout``, ``appo_ale_breakout_seed0`` -> ``appo_ale_breakout``)."""
    return re.sub(r"(-|_seed)\d+$", "", folder)


def game_of(env: str) -> str:
    if not env.startswith("ale:"):
        raise ValueError(f"{env!r} is not an Atari game (ale:<Game>); this report is for the ALE")
    return canonical_game(env)


def references(game: str) -> tuple[float, float]:
    """The paper's random and average-human scores of ``game``."""
    scores = baselines([game])
    return float(scores.random[0]), float(scores.human_average[0])


def hns_of(mean_return: float, game: str) -> float:
    """The human-normalized score of one mean return on ``game`` (the paper's HNS)."""
    random_score, human = references(game)
    return float(hns([mean_return], [random_score], [human])[0])


def read_gdi(run: Path, ale_only: bool = True) -> Curve:
    """A gdi run's curves. ``ale_only``: refuse a run off the ALE (this report's human-normalized
    scores need an Atari game); without it another environment's spec names its game."""
    config, _ = read_config(run)
    rows = read_jsonl(run / "metrics.jsonl")
    frames, seconds = training_clock(rows)
    if frames.size < 2:
        raise ValueError(f"{run} has no logged training rows yet")
    meta = load_meta_rows(run)
    episode_frames = np.array([r["frames"] for r in meta], dtype=np.float64)
    evals = sorted((json.loads(p.read_text()) for p in (run / "eval").glob("frames_*.json")),
                   key=lambda record: record["frames"])
    eval_frames = np.array([e["frames"] for e in evals], dtype=np.float64)
    return Curve(
        label=f"gdi {run.name} ({config.preset}, {config.scale}, seed {config.seed})",
        group=group_of(run.name),
        game=game_of(config.env) if ale_only or config.env.startswith("ale:") else config.env,
        episode_minutes=np.interp(episode_frames, frames, seconds) / 60,
        episode_frames=episode_frames,
        episode_returns=np.array([r["return"] for r in meta], dtype=np.float64),
        eval_minutes=np.interp(eval_frames, frames, seconds) / 60,
        eval_frames=eval_frames,
        eval_returns=[np.array([ep["return"] for ep in e["episodes"]]) for e in evals],
        learner_rows=[row for row in rows if "losses/total" in row],
    )


def read_appo(experiment: Path) -> Curve:
    path = experiment / "curve_episodes.csv"
    if not path.is_file():
        raise ValueError(f"{experiment} has no curve_episodes.csv (a benchmarks/appo_peer.py "
                         "experiment folder has)")
    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path} holds no finished episode yet")
    match = re.fullmatch(r"appo_ale_(\w+?)_seed\d+", experiment.name)
    if match is None:
        raise ValueError(f"{experiment.name!r} is not an ALE experiment of appo_peer.py "
                         "(appo_ale_<rom>_seed<N>)")
    return Curve(
        label=f"Sample Factory APPO ({experiment.name})", group=group_of(experiment.name),
        game=canonical_game(match[1]),
        episode_minutes=np.array([float(r["wall_s"]) for r in rows]) / 60,
        episode_frames=np.array([float(r["frames"]) for r in rows]),
        episode_returns=np.array([float(r["return"]) for r in rows]),
        eval_minutes=np.zeros(0), eval_frames=np.zeros(0), eval_returns=[],
    )


def trailing_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of each value and the ``window - 1`` before it (fewer at the start)."""
    sums = np.cumsum(np.concatenate([[0.0], values]))
    ends = np.arange(1, values.size + 1)
    starts = np.maximum(0, ends - window)
    return (sums[ends] - sums[starts]) / (ends - starts)


def return_at(curve: Curve, minutes: float, window: int) -> float:
    """Mean return of the last ``window`` training episodes that ended by ``minutes``."""
    done = curve.episode_returns[curve.episode_minutes <= minutes]
    return float(np.mean(done[-window:])) if done.size else float("nan")


def first_reached(curve: Curve, level: float, window: int) -> tuple[float, float] | None:
    """(minutes, frames) of the first training episode at whose end the mean return of the
    last ``window`` episodes reached ``level``; None if it never did."""
    reached = np.flatnonzero(trailing_mean(curve.episode_returns, window) >= level)
    if not reached.size:
        return None
    return float(curve.episode_minutes[reached[0]]), float(curve.episode_frames[reached[0]])


def default_levels(game: str) -> list[float]:
    """Raw scores at a quarter, half, three quarters and all of the human score (HNS)."""
    random_score, human = references(game)
    return [random_score + share * (human - random_score) for share in (0.25, 0.5, 0.75, 1.0)]


def time_to_levels(curves: list[Curve], window: int, levels: Sequence[float]) -> list[str]:
    """A table of when each run's training return first reached each level."""
    lines = ["", f"First time the training return (mean of the last {window} episodes) reached "
             "each level, minutes / frames (— never):", "",
             "| run | " + " | ".join(f"{level:g}" for level in levels) + " |",
             "| --- |" + " ---: |" * len(levels)]
    for c in curves:
        cells = []
        for level in levels:
            at = first_reached(c, level, window)
            cells.append("—" if at is None else f"{at[0]:.0f} / {at[1] / 1e6:.2f}M")
        lines.append(f"| {c.label} | " + " | ".join(cells) + " |")
    return lines


def over_seeds(curves: list[Curve], window: int, common: float, reps: int) -> list[str]:
    """For each group of two or more runs (seeds of one setting): the mean over seeds of each
    evaluation they all made and of the training return at ``common`` minutes, with its 95 %
    percentile stratified-bootstrap interval (rliable, through ``curve_band``)."""
    groups: dict[str, list[Curve]] = {}
    for c in curves:
        groups.setdefault(c.group, []).append(c)
    lines = []
    for name, runs in groups.items():
        if len(runs) < 2:
            continue
        lines += ["", f"{name}, {len(runs)} seeds: the mean over seeds with its 95 % "
                  f"stratified-bootstrap CI (rliable, {reps} resamples; with few seeds the "
                  "interval is close to their range):", "",
                  "| frames | mean minutes | mean return [95 % CI] | each seed | HNS of the mean |",
                  "| ---: | ---: | ---: | ---: | ---: |"]
        shared = sorted(set.intersection(*(set(c.eval_frames.tolist()) for c in runs)))
        if shared:
            at = [[list(c.eval_frames).index(f) for f in shared] for c in runs]
            returns = np.array([[np.mean(c.eval_returns[i]) for i in idx]
                                for c, idx in zip(runs, at, strict=True)])
            minutes = np.array([c.eval_minutes[idx] for c, idx in zip(runs, at, strict=True)])
            band = curve_band(returns, reps=reps)
            for j, frames in enumerate(shared):
                seeds = ", ".join(f"{r:.2f}" for r in returns[:, j])
                score = hns_of(band.mean[j], curves[0].game)
                lines.append(f"| {frames:,.0f} | {minutes[:, j].mean():.0f} | {band.mean[j]:.2f} "
                             f"[{band.low[j]:.2f}, {band.high[j]:.2f}] | {seeds} | {score:.3f} |")
        training = np.array([[return_at(c, common, window)] for c in runs])
        if np.all(np.isfinite(training)):
            band = curve_band(training, reps=reps)
            lines += ["", f"{name}: training return at {common:.0f} minutes, mean over seeds "
                      f"{band.mean[0]:.2f} [95 % CI {band.low[0]:.2f}, {band.high[0]:.2f}]."]
    return lines


def table(curves: list[Curve], window: int, reps: int = REPS,
          levels: Sequence[float] | None = None) -> str:
    game = curves[0].game
    random_score, human = references(game)
    lines = [f"Each gdi evaluation on {game} (random {random_score:g}, human {human:g}):", "",
             "| run | frames | minutes | mean return | min – max | HNS |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for c in curves:
        for minutes, frames, returns in zip(c.eval_minutes, c.eval_frames, c.eval_returns,
                                            strict=True):
            mean = float(np.mean(returns))
            lines.append(f"| {c.label} | {frames:,.0f} | {minutes:.0f} | {mean:.2f} | "
                         f"{returns.min():g} – {returns.max():g} | "
                         f"{hns_of(mean, game):.3f} |")
    common = min(c.minutes for c in curves)
    lines += ["", f"Training return (mean of the last {window} episodes) at the wall time every "
              f"run reached, {common:.0f} minutes:", "",
              "| run | frames by then | training return | best evaluation by then |",
              "| --- | ---: | ---: | ---: |"]
    for c in curves:
        frames = c.episode_frames[c.episode_minutes <= common]
        evals = [float(np.mean(r)) for m, r in zip(c.eval_minutes, c.eval_returns, strict=True)
                 if m <= common]
        lines.append(f"| {c.label} | {frames.max() if frames.size else 0:,.0f} | "
                     f"{return_at(c, common, window):.2f} | "
                     f"{max(evals) if evals else float('nan'):.2f} |")
    lines += time_to_levels(curves, window, default_levels(game) if levels is None else levels)
    lines += over_seeds(curves, window, common, reps)
    return "\n".join(lines) + "\n"


STYLES = ("-", "--", "-.", (0, (1, 1)))
MARKERS = ("o", "s", "^", "D")


def figure(curves: list[Curve], window: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    game = curves[0].game
    random_score, human = references(game)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2), sharey=True)
    groups = list(dict.fromkeys(c.group for c in curves))
    seen: dict[str, int] = {}
    for c in curves:
        color = f"C{groups.index(c.group)}"  # one color per group, a line style per seed
        k = seen[c.group] = seen.get(c.group, -1) + 1
        style, marker = STYLES[k % len(STYLES)], MARKERS[k % len(MARKERS)]
        smooth = trailing_mean(c.episode_returns, window)
        for ax, x, ex in ((axes[0], c.episode_minutes, c.eval_minutes),
                          (axes[1], c.episode_frames / 1e6, c.eval_frames / 1e6)):
            ax.plot(x, smooth, linestyle=style, color=color, lw=1.2,
                    label=f"{c.label}: training, last {window} episodes")
            if ex.size:
                ax.plot(ex, [np.mean(r) for r in c.eval_returns], marker, color=color, ms=5,
                        label=f"{c.label}: evaluation mean")
    for ax in axes:
        ax.axhline(random_score, color="grey", ls=":", lw=1, label="random")
        ax.axhline(human, color="grey", ls="--", lw=1, label="human")
        ax.grid(alpha=0.3)
    axes[0].set_xlabel("wall time (minutes)")
    axes[1].set_xlabel("frames (millions)")
    axes[0].set_ylabel(f"{game} return (raw score)")
    fig.suptitle(f"{game}: learning against wall time and frames")
    handles, labels = axes[1].get_legend_handles_labels()
    rows = (len(labels) + 1) // 2
    fig.legend(handles, labels, fontsize=9, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.045 * (rows + 1), 1, 1))  # the legend below the panels
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


#: What the diagnostics figure plots of each gdi run's learner rows: (key, title, log scale).
DIAGNOSTICS = (
    ("charts/episodic_return", "training return (episodes since the previous row)", False),
    ("stats/vs_mean", "mean V-trace target v_s (shaped return)", False),
    ("losses/grad_norm", "gradient norm before clipping", True),
    ("losses/entropy", "entropy of π_λ at the batch's λ (nats)", False),
    ("schedule/learning_rate", "learning rate", False),
)


def diagnostic_series(rows: list[dict], key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(frames, values)`` of the learner rows that logged ``key``, the others skipped so the
    line joins the logged points: a row has a training return only when an episode ended since
    the previous row, which in a long game (Boxing: 1,780 steps, the actor's environments in
    lockstep) is one row in several."""
    logged = [row for row in rows if key in row]
    return (np.array([row["frames"] for row in logged], dtype=np.float64),
            np.array([row[key] for row in logged], dtype=np.float64))


def diagnostics(curves: list[Curve], path: Path) -> None:
    """The gdi runs' learner statistics against frames, one panel per ``DIAGNOSTICS`` key:
    where a run's value targets and gradients settle, and what its learning rate was then."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [c for c in curves if c.learner_rows]
    if not runs:
        raise ValueError("--diagnostics needs a gdi run (--gdi) with logged learner rows")
    fig, axes = plt.subplots(len(DIAGNOSTICS), 1, figsize=(10, 2.4 * len(DIAGNOSTICS)),
                             sharex=True)
    for i, c in enumerate(runs):
        for ax, (key, title, log) in zip(axes, DIAGNOSTICS, strict=True):
            frames, values = diagnostic_series(c.learner_rows, key)
            ax.plot(frames / 1e6, values, color=f"C{i}", lw=1, label=c.label)
            ax.set_title(title, fontsize=9)
            ax.set_yscale("log" if log else "linear")
            ax.grid(alpha=0.3)
    axes[0].legend(fontsize=9)
    axes[-1].set_xlabel("frames (millions)")
    fig.suptitle(f"{runs[0].game}: what the learner saw")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.atari_learning",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--gdi", nargs="*", default=[], type=Path, help="gdi run folders")
    parser.add_argument("--appo", nargs="*", default=[], type=Path,
                        help="appo_peer.py experiment folders (with curve_episodes.csv)")
    parser.add_argument("--window", type=int, default=100,
                        help="training episodes per point of the training curves")
    parser.add_argument("--levels", nargs="+", type=float, default=None,
                        help="training returns whose first time to reach the report tables "
                             "(default: a quarter, half, three quarters and all of the human "
                             "score)")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    parser.add_argument("--diagnostics", type=Path, default=None,
                        help="also a PNG of the gdi runs' value targets, gradient norms and "
                             "learning rate against frames")
    args = parser.parse_args(argv)
    if args.window < 1:
        parser.error(f"--window must be at least 1, got {args.window}")
    if not args.gdi and not args.appo:
        parser.error("give at least one run: --gdi RUN ... and/or --appo EXPERIMENT ...")
    try:
        curves = [read_gdi(run) for run in args.gdi] + [read_appo(e) for e in args.appo]
        games = sorted({c.game for c in curves})
        if len(games) > 1:
            raise ValueError(f"the runs play different games ({', '.join(games)}); give one "
                             "game's runs")
        if args.diagnostics is not None:
            diagnostics(curves, args.diagnostics)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    figure(curves, args.window, args.out)
    text = table(curves, args.window, levels=args.levels)
    args.out.with_suffix(".md").write_text(text)
    print(text)
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
