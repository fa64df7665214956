"""A grid's results from Python: the Name This Game screens (benchmarks/grids/atari-ntg-screen.toml)
read from the records the repository keeps, no run needed. The scores at 1.5M frames per
setting, then each run's curve (the trailing mean of 100 training episodes the report draws)
for the control, APPO's learning rate and APPO itself.

    python docs/examples/grid_results.py ntg-lr.png
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt

import gdi.benchmark as bench

GRID = Path(__file__).resolve().parents[2] / "benchmarks" / "grids" / "atari-ntg-screen.toml"
SHOWN = {"control": "C0", "lr-2.5e-4": "C1", "APPO": "C2"}  # system → colour


def main(out: Path) -> Path:
    grid = bench.load_grid(GRID)
    scores = bench.grid_scores(grid, at=1_500_000)  # one row per run that reached 1.5M frames
    print(scores.groupby("system")[["score", "normalized_auc"]].agg(["mean", "count"])
          .sort_values(("score", "mean")).round(3).to_string())

    curves = bench.grid_curves(grid)  # one row per training episode, every run
    curves = curves[curves["frames"] <= 1_500_000]  # the control and APPO ran on to 3M
    figure, axes = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for system, colour in SHOWN.items():
        for seed, run in curves[curves["system"] == system].groupby("seed"):
            axes.plot(run["frames"] / 1e6, run["trailing"], color=colour, lw=1.2,
                      ls="-" if seed == 0 else "--", label=f"{system}, seed {seed}")
    axes.set(xlim=(0, 1.5), xlabel="frames (millions)",
             ylabel="mean return, last 100 episodes",
             title="Name This Game: gdi's control, APPO's learning rate, APPO")
    axes.legend(fontsize=7, ncols=3, loc="lower right")
    figure.savefig(out, dpi=120)
    return out


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else "ntg-lr.png")))
