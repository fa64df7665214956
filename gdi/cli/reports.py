"""Commands that read finished runs: ``gdi report`` (runs beside the paper's algorithms),
``gdi plot-meta`` (what E learned in a run) and ``gdi analyze`` (the paper's data richness)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Union

import tyro
from tyro.conf import Positional

from gdi.analysis.richness_report import analyze_richness as run_richness
from gdi.cli.options import defaults_of, subcommands
from gdi.evaluation.aggregates import REPS
from gdi.evaluation.paper_scores import DEFAULT_COMPARE

_RICHNESS = defaults_of(run_richness)


def report(
    runs: tyro.conf.Positional[tuple[Path, ...]] = (),
    compare: str = ",".join(DEFAULT_COMPARE),
    out: Path | None = None,
    paper: bool = False,
    reps: int = REPS,
    video: bool = False,
) -> None:
    """Report runs beside the paper's algorithms: Markdown, PNG figures and a CSV of every
    number. Atari runs get raw score, HNS, HWRNS and SABER per game, aggregates with
    confidence intervals across seeds, learning curves and learning efficiency (paper App.
    "Evaluation Metrics for ALE"); other environments get raw returns only.

    Args:
        runs: Run folders (each with config.json and eval/*.json).
        compare: The paper's algorithms shown beside Atari runs, comma-separated ids or
            labels (the rows of `gdi report --paper`; an unknown name is refused with the list
            of ids).
        out: Report folder (default: RUN/report for one run, reports/<bundle name> for a
            bundle of `gdi export`, which is never written into, report/ beside several).
        paper: Print the paper's "Full performance comparison" table, recomputed from its
            per-game scores.
        reps: Bootstrap resamples of each confidence interval (rliable).
        video: Embed a GIF of each run's agent at its last evaluation (one episode, at most
            1,000 steps; made now, with the checkpoint behind that evaluation).
    """
    from gdi.evaluation.paper import format_full_comparison
    from gdi.evaluation.report import write_report

    if not runs and not paper:
        raise ValueError("give run folders to report on, or --paper")
    if paper:
        print(format_full_comparison())
    if runs:
        result = write_report(runs, out, compare=compare, reps=reps, video=video)
        for line in result.skipped:
            print(line, file=sys.stderr)
        print(f"report: {result.markdown} ({len(result.files)} files)")


def plot_meta(run: Positional[Path], out: Path | None = None) -> None:
    """Plot what E learned in a run: the sampled λ over frames and the return per λ region
    (from the run's meta.jsonl); writes a PNG (default RUN/meta.png).

    Args:
        run: The run folder.
        out: Where to write the PNG.
    """
    from gdi.runtime.run_folder.meta_log import plot_run_meta

    notes: list[str] = []
    path = plot_run_meta(run, out, notes)
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    print(path)


def analyze_richness(
    run_a: Positional[Path],
    run_b: Positional[Path],
    stages: int = _RICHNESS.stages,
    states: int = _RICHNESS.states,
    out: Path | None = None,
    seed: int = _RICHNESS.seed,
    grid: int = _RICHNESS.grid,
    clusters: int = _RICHNESS.clusters,
    threads: int = _RICHNESS.threads,
) -> None:
    """Data richness of two runs' visited states (paper App. "Ablation Study", "t-SNE"): a
    joint t-SNE of states from each training stage, each run highlighted (A_i, B_i), and
    richness = conditions a run visited / conditions either visited, by t-SNE grid cells,
    k-means clusters and exact observations. Writes richness.png, richness.json and
    embedding.csv. Both runs need observations.npz: train with
    `--set observation_reservoir=1000`.

    Args:
        run_a: Run A (the paper's A_i: GDI-I³).
        run_b: Run B (the paper's B_i: GDI-I¹, or any other preset), same environment.
        stages: Training stages compared (paper: 3); must divide the runs' reservoir_stages.
        states: States drawn per stage from each run (paper: 1000), equally many from both.
        out: Output folder (default richness_<A>_vs_<B>/).
        seed: Seed of the state sampling, PCA, t-SNE and k-means.
        grid: Cells per side of the grid laid over the t-SNE embedding.
        clusters: k-means clusters of the embedding-free richness (0: distinct states / 5).
        threads: CPU threads of t-SNE and k-means (more than the free cores run slower).
    """
    from gdi.analysis.richness import summary_lines

    written = run_richness(run_a, run_b, stages=stages, states=states, out=out, seed=seed,
                           grid=grid, clusters=clusters, threads=threads)
    print("\n".join(summary_lines(written.result)))
    print(f"wrote {written.figure}, {written.numbers}, {written.embedding}")


#: `gdi analyze <analysis>`'s analyses.
ANALYSES = {"richness": analyze_richness}


# The suppressed None member lets the union hold a single analysis.
AnalyzeCommand = Union[(*subcommands(ANALYSES), Annotated[None, tyro.conf.Suppress])]


def analyze(command: tyro.conf.OmitArgPrefixes[AnalyzeCommand]) -> None:
    """Analyses of finished runs: `gdi analyze richness RUN_A RUN_B` (data richness of the
    visited states, paper App. "Ablation Study", "t-SNE")."""
