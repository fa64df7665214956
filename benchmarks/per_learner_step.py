"""The same T at two scales, per frame and per learner step: whether a run learns less per
frame because it learns less per update, or because each update spends more frames.

The paper's ALE preset and the ``ale-cpu`` scale keep one replay ratio (each sequence learned
from twice) but differ in batch: 64 sequences of 40 new steps against 16 of 10, so a learner
step of the paper's preset comes every 5,120 frames and one of ``ale-cpu`` every 320. On the
same frames the paper's preset takes 16 times fewer steps. This report puts each run's
training return against frames and against learner steps, both cut at ``--steps``:

    python -m benchmarks.per_learner_step --steps 1700 --levels 2 3 \\
        --run "paper's scale, H100=benchmarks/results/gpu-atari/h100-head-he0-seed0" \\
        --run "ale-cpu=benchmarks/results/ale-screen/breakout-head-e-0" \\
        --out docs/figures/breakout-head-per-step.png

The table gives, per run: the frames per learner step (the median over logged rows of the
frames between two rows over the learner steps between them), the learner steps and frames
at the cut, the learner steps and frames at which the mean return of the last ``--window``
training episodes first reached each level (once ``--window`` episodes have ended), and the median entropy of π_λ over the last third
of the cut. An episode's learner step is read off the logged rows (frames → learner steps,
linear between rows). The figure: training return against frames (log scale) and against
learner steps, and π_λ's entropy against learner steps.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.atari_learning import Curve, read_gdi, trailing_mean
from benchmarks.lever_screen import parse_run


@dataclass
class StepCurve:
    """One run with each training episode placed at its learner step, cut at a step."""

    label: str
    curve: Curve
    row_frames: np.ndarray
    row_steps: np.ndarray
    episode_steps: np.ndarray

    def steps_at(self, frames: float) -> float:
        return float(np.interp(frames, self.row_frames, self.row_steps))


def step_clock(curve: Curve) -> tuple[np.ndarray, np.ndarray]:
    """(frames, learner steps) of the logged learner rows, in order of frames, from the run's
    start (frame 0, step 0): an episode that ended before the first logged row is placed
    between the start and that row, not at the row."""
    logged = [row for row in curve.learner_rows if "learner_steps" in row]
    if len(logged) < 2:
        raise ValueError(f"{curve.label} logged fewer than two rows with learner steps")
    frames = np.array([row["frames"] for row in logged], dtype=np.float64)
    steps = np.array([row["learner_steps"] for row in logged], dtype=np.float64)
    order = np.argsort(frames, kind="stable")
    return np.concatenate([[0.0], frames[order]]), np.concatenate([[0.0], steps[order]])


def frames_per_step(frames: np.ndarray, steps: np.ndarray) -> float:
    """The median over consecutive logged rows of Δframes / Δlearner steps (rows with no step
    between them, before the first learner step, are skipped)."""
    d_frames, d_steps = np.diff(frames), np.diff(steps)
    moved = d_steps > 0
    if not moved.any():
        raise ValueError("no learner step between two logged rows")
    return float(np.median(d_frames[moved] / d_steps[moved]))


def cut_at_step(label: str, curve: Curve, steps: float) -> StepCurve:
    """``curve`` with only the episodes that ended by learner step ``steps`` (an episode past
    the last logged row has no step to read and is left out)."""
    row_frames, row_steps = step_clock(curve)
    episode_steps = np.interp(curve.episode_frames, row_frames, row_steps)
    keep = (episode_steps <= steps) & (curve.episode_frames <= row_frames[-1])
    rows = [row for row in curve.learner_rows if row.get("learner_steps", 0) <= steps]
    cut = Curve(label=curve.label, group=curve.group, game=curve.game,
                episode_minutes=curve.episode_minutes[keep],
                episode_frames=curve.episode_frames[keep],
                episode_returns=curve.episode_returns[keep],
                eval_minutes=curve.eval_minutes[:0], eval_frames=curve.eval_frames[:0],
                eval_returns=[], learner_rows=rows)
    return StepCurve(label, cut, row_frames, row_steps, episode_steps[keep])


def first_full_window_reached(curve: Curve, level: float, window: int) -> float | None:
    """The frames of the first training episode at whose end the mean return of the last
    ``window`` episodes reached ``level``, counting only once ``window`` episodes have ended:
    a run of 16 environments ends its first few episodes within a few thousand frames, and
    their mean alone can pass a level near random play's (a run of 480 cannot)."""
    means = trailing_mean(curve.episode_returns, window)[window - 1:]
    reached = np.flatnonzero(means >= level)
    return None if not reached.size else float(curve.episode_frames[window - 1 + reached[0]])


def _entropy_last_third(run: StepCurve, steps: float) -> float | None:
    values = [row["losses/entropy"] for row in run.curve.learner_rows
              if "losses/entropy" in row and row.get("learner_steps", 0) > 2 * steps / 3]
    return float(np.median(values)) if values else None


def step_table(runs: list[StepCurve], steps: float, levels: Sequence[float],
               window: int) -> str:
    head = ["run", "frames per step", "at the cut: steps / frames",
            *(f"to {level:g}: steps / frames" for level in levels), "entropy (last third)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        last = max(row["learner_steps"] for row in run.curve.learner_rows
                   if "learner_steps" in row)
        last_frames = max(row["frames"] for row in run.curve.learner_rows
                          if "learner_steps" in row)
        cells = [run.label, f"{frames_per_step(run.row_frames, run.row_steps):,.0f}",
                 f"{last:,.0f} / {last_frames / 1e6:.2f}M"]
        for level in levels:
            frames = first_full_window_reached(run.curve, level, window)
            cells.append("—" if frames is None else
                         f"{run.steps_at(frames):,.0f} / {frames / 1e6:.2f}M")
        entropy = _entropy_last_third(run, steps)
        cells.append("—" if entropy is None else f"{entropy:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Training return: mean of the last {window} training episodes (π_λ as it "
                 f"acts); every run cut at learner step {steps:,.0f}.")
    return "\n".join(lines) + "\n"


def step_figure(runs: list[StepCurve], window: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_frames, by_steps, entropy) = plt.subplots(1, 3, figsize=(13, 4.2))
    for i, run in enumerate(runs):
        c = run.curve
        if c.episode_returns.size:
            smooth = trailing_mean(c.episode_returns, window)
            by_frames.plot(c.episode_frames / 1e6, smooth, color=f"C{i}", lw=1.4,
                           label=run.label)
            by_steps.plot(run.episode_steps, smooth, color=f"C{i}", lw=1.4)
        rows = [row for row in c.learner_rows if "losses/entropy" in row]
        entropy.plot([row["learner_steps"] for row in rows],
                     [row["losses/entropy"] for row in rows], color=f"C{i}", lw=1.2)
    by_frames.set_xscale("log")
    by_frames.set_xlabel("frames (millions, log scale)")
    by_frames.set_ylabel(f"training return (last {window} episodes)")
    by_steps.set_xlabel("learner steps")
    by_steps.set_ylabel(f"training return (last {window} episodes)")
    entropy.set_xlabel("learner steps")
    entropy.set_ylabel("entropy of π_λ (nats)")
    for ax in (by_frames, by_steps, entropy):
        ax.grid(alpha=0.3)
    # Two labels a row: a row of every run's label runs off the figure past three runs.
    columns = min(len(runs), 2)
    legend_rows = -(-len(runs) // columns)
    fig.legend(*by_frames.get_legend_handles_labels(), loc="lower center", ncol=columns,
               fontsize=9, frameon=False)
    fig.suptitle(f"{runs[0].curve.game}: per frame and per learner step")
    fig.tight_layout(rect=(0, 0.05 * legend_rows + 0.02, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.per_learner_step",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True,
                        help="LABEL=RUN_FOLDER (repeat for each run)")
    parser.add_argument("--steps", type=float, required=True,
                        help="the learner step where every run is cut")
    parser.add_argument("--levels", nargs="+", type=float, default=[2.0, 3.0],
                        help="training returns whose first learner step the table reports")
    parser.add_argument("--window", type=int, default=100,
                        help="training episodes per point of the training return")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = parser.parse_args(argv)
    if args.steps <= 0:
        parser.error(f"--steps must be positive, got {args.steps:g}")
    try:
        runs = [cut_at_step(label, read_gdi(folder), args.steps)
                for label, folder in map(parse_run, args.run)]
        games = sorted({run.curve.game for run in runs})
        if len(games) > 1:
            raise ValueError(f"the runs play different games ({', '.join(games)})")
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    step_figure(runs, args.window, args.out)
    print(step_table(runs, args.steps, args.levels, args.window))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
