"""The files of ``gdi analyze richness``: the paper's t-SNE figure of two runs' visited states
and every number behind it, from a :class:`gdi.analysis.richness.RichnessResult` (what
``gdi.analysis.richness`` measures).

Outputs (``--out``, default ``richness_<A>_vs_<B>/``): ``richness.png`` (the figure),
``richness.json`` (every number, the definitions and the settings) and ``embedding.csv`` (each
state's run, stage, frames, t-SNE coordinates, grid cell and cluster).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.analysis.richness import (
    DEFINITIONS,
    Coverage,
    Grid,
    RichnessResult,
    compute_richness,
    load_observations,
)
from gdi.atomic import save_figure

RUN_NAMES = ("A", "B")
RUN_COLORS = ("#0072B2", "#D55E00")  # Okabe–Ito blue and vermillion


def default_out_dir(run_a: str | Path, run_b: str | Path) -> Path:
    return Path(f"richness_{Path(run_a).resolve().name}_vs_{Path(run_b).resolve().name}")


def _coverage_json(coverage: dict[str, Coverage]) -> dict:
    return {
        method: {"A": c.a, "B": c.b, "conditions_A": c.conditions_a,
                 "conditions_B": c.conditions_b, "conditions_union": c.conditions_union,
                 "A_over_B": c.a / c.b if c.b else None}
        for method, c in coverage.items()
    }


def richness_json(result: RichnessResult) -> dict:
    runs = {
        name: {"run_dir": str(r.run_dir), "label": r.label, "preset": r.preset, "env": r.env,
               "seed": r.seed, "kept_per_stage": [len(s) for s in r.stages]}
        for name, r in zip(RUN_NAMES, result.runs, strict=True)
    }
    stages = []
    for k, (name, coverage) in enumerate(zip(result.stage_names, result.per_stage, strict=True)):
        entry = {"stage": k + 1, "name": name, "states_per_run": result.states[k]}
        if coverage is not None:
            for r, run_name in enumerate(RUN_NAMES):
                frames = result.frames[(result.stage == k) & (result.run == r)]
                entry[f"frames_{run_name}"] = [int(frames.min()), int(frames.max())]
            entry.update(_coverage_json(coverage))
        stages.append(entry)
    return {
        "paper": 'App. "Ablation Study", subsection "t-SNE"; Fig. "ablation study" (b), (c)',
        "definitions": DEFINITIONS,
        "runs": runs,
        "settings": result.settings,
        "per_stage": stages,
        "all_stages": _coverage_json(result.overall),
    }


def _shade_cells(ax, grid: Grid, cells: np.ndarray, color: str) -> None:
    """Fill the grid cells in ``cells`` lightly: what the tsne_grid number counts."""
    from matplotlib.colors import to_rgba

    occupied = np.zeros(grid.bins * grid.bins)
    occupied[np.unique(cells)] = 1.0
    image = np.zeros((grid.bins, grid.bins, 4))
    image[..., :] = to_rgba(color, 0.13)
    image[..., 3] *= occupied.reshape(grid.bins, grid.bins)
    ax.imshow(image, origin="lower", extent=(grid.x0, grid.x1, grid.y0, grid.y1),
              interpolation="nearest", aspect="auto", zorder=0)


def plot_richness(result: RichnessResult, path: str | Path) -> Path:
    """The paper's t-SNE figure: a column per stage and one for all stages, run A's states
    (top row) and run B's (bottom row) highlighted over the grey joint cloud, the grid cells
    each occupies shaded; on the right, each run's richness per stage by all three
    definitions."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from gdi.evaluation.plots import DPI

    stages = len(result.stage_names)
    columns = [(k, f"{result.stage_names[k]}") for k in range(stages)] + [(None, "all stages")]
    fig = Figure(figsize=(2.45 * (stages + 1) + 3.6, 5.6), layout="constrained")
    spec = fig.add_gridspec(2, stages + 2, width_ratios=[1] * (stages + 1) + [1.45])
    (x0, x1), (y0, y1) = (result.grid.x0, result.grid.x1), (result.grid.y0, result.grid.y1)
    pad_x, pad_y = 0.03 * ((x1 - x0) or 1), 0.03 * ((y1 - y0) or 1)
    cells = result.grid.cells(result.embedding)
    for r, (run, color) in enumerate(zip(result.runs, RUN_COLORS, strict=True)):
        for c, (k, title) in enumerate(columns):
            ax = fig.add_subplot(spec[r, c])
            ax.set_xticks([])
            ax.set_yticks([])
            for side in ax.spines.values():
                side.set_color("#BBBBBB")
            ax.set_xlim(x0 - pad_x, x1 + pad_x)
            ax.set_ylim(y0 - pad_y, y1 + pad_y)
            coverage = result.overall if k is None else result.per_stage[k]
            mask = (result.run == r) & (np.ones_like(result.stage, dtype=bool) if k is None
                                        else result.stage == k)
            name = RUN_NAMES[r] + ("" if k is None else _subscript(k + 1))
            ax.set_title(f"{name}: {run.label}, {title}", fontsize=8.5, color=color)
            if coverage is None:
                ax.text(0.5, 0.5, "no states in\none of the runs", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8, color="#777777")
                continue
            _shade_cells(ax, result.grid, cells[mask], color)
            ax.scatter(result.embedding[:, 0], result.embedding[:, 1], s=1.5, c="#CFCFCF",
                       linewidths=0, rasterized=True, zorder=1)
            ax.scatter(result.embedding[mask, 0], result.embedding[mask, 1], s=3.5, c=color,
                       alpha=0.75, linewidths=0, rasterized=True, zorder=2)
            grid_cov = coverage["tsne_grid"]
            cells_seen = grid_cov.conditions_a if r == 0 else grid_cov.conditions_b
            share = grid_cov.a if r == 0 else grid_cov.b
            ax.text(0.02, 0.02, f"{cells_seen}/{grid_cov.conditions_union} cells ({share:.2f})",
                    transform=ax.transAxes, fontsize=7.5, color=color,
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none",
                          "alpha": 0.8}, zorder=3)
    ax = fig.add_subplot(spec[:, stages + 1])
    _summary_panel(ax, result)
    handles = [Line2D([], [], color=col, marker="o", linestyle="none", markersize=5,
                      label=f"{n}: {run.label} ({run.run_dir.name})")
               for n, run, col in zip(RUN_NAMES, result.runs, RUN_COLORS, strict=True)]
    handles.append(Line2D([], [], color="#BBBBBB", marker="o", linestyle="none", markersize=5,
                          label="all states, both runs (joint t-SNE)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8.5,
               frameon=False)
    per_run = ", ".join(str(n) for n in result.states)
    fig.suptitle(
        f"Data richness on {result.runs[0].env}: t-SNE of visited states "
        f"({per_run} per run and stage; shaded: the {result.grid.bins}×{result.grid.bins} "
        "grid cells a run occupies)", fontsize=9.5,
    )
    return save_figure(fig, path, dpi=DPI, bbox_inches="tight", facecolor="white")


def _subscript(number: int) -> str:
    return str(number).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def _summary_panel(ax, result: RichnessResult) -> None:
    from matplotlib.lines import Line2D

    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(True, color="#DDDDDD", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=8)
    labels = [*result.stage_names, "all"]
    x = np.arange(len(labels))
    styles = {"tsne_grid": ("-", "o", "t-SNE grid cells"),
              "kmeans": ("--", "s", f"k-means clusters (k={result.settings['clusters']})"),
              "distinct": (":", "^", "distinct observations")}
    for m, (method, (line, marker, _)) in enumerate(styles.items()):
        shifted = x + 0.07 * (m - 1)  # dodged, so equal values of two definitions stay visible
        for r, color in enumerate(RUN_COLORS):
            values = [np.nan if c is None else (c[method].a if r == 0 else c[method].b)
                      for c in (*result.per_stage, result.overall)]
            ax.plot(shifted[:-1], values[:-1], linestyle=line, marker=marker, color=color,
                    markersize=4, linewidth=1.3)
            ax.plot(shifted[-1:], values[-1:], marker=marker, color=color, markersize=5,
                    linestyle="none")
    ax.axvline(len(labels) - 1.5, color="#BBBBBB", linewidth=0.8)
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_xlim(-0.4, len(labels) - 0.6)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("richness = |seen by run| / |seen by A or B|", fontsize=8)
    ax.set_title("Richness per stage", fontsize=9)
    ax.legend(handles=[Line2D([], [], color="#444444", linestyle=line, marker=marker,
                              markersize=4, label=text)
                       for line, marker, text in styles.values()],
              fontsize=7, loc="lower left", frameon=False)


def write_embedding_csv(result: RichnessResult, path: Path) -> Path:
    cells = result.grid.cells(result.embedding)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["run", "stage", "frames", "x", "y", "grid_cell", "cluster",
                         "distinct_id"])
        for i in range(len(result.run)):
            writer.writerow([RUN_NAMES[result.run[i]], int(result.stage[i]) + 1,
                             int(result.frames[i]), float(result.embedding[i, 0]),
                             float(result.embedding[i, 1]), int(cells[i]),
                             int(result.cluster[i]), int(result.distinct[i])])
    return path


@dataclass(frozen=True)
class RichnessReport:
    """What :func:`analyze_richness` wrote, and its numbers."""

    out_dir: Path
    figure: Path
    numbers: Path
    embedding: Path
    result: RichnessResult


def analyze_richness(
    run_a: str | Path,
    run_b: str | Path,
    *,
    stages: int = 3,
    states: int = 1000,
    out: str | Path | None = None,
    seed: int = 0,
    grid: int = 20,
    clusters: int = 0,
    threads: int = 1,
) -> RichnessReport:
    """Load both runs' observations.npz, embed, measure and write the figure and numbers
    (arguments: :func:`compute_richness`; ``stages``: :func:`load_observations`)."""
    if Path(run_a).resolve() == Path(run_b).resolve():
        raise ValueError("give two different run folders")
    observations = [load_observations(r, stages) for r in (run_a, run_b)]
    result = compute_richness(*observations, states=states, seed=seed, grid=grid,
                              clusters=clusters, threads=threads)
    out_dir = Path(out) if out is not None else default_out_dir(run_a, run_b)
    out_dir.mkdir(parents=True, exist_ok=True)
    figure = plot_richness(result, out_dir / "richness.png")
    numbers = out_dir / "richness.json"
    numbers.write_text(json.dumps(richness_json(result), indent=2, allow_nan=False) + "\n")
    embedding = write_embedding_csv(result, out_dir / "embedding.csv")
    return RichnessReport(out_dir, figure, numbers, embedding, result)
