"""gdi.evaluation: the paper's evaluation system for the ALE (App. "Evaluation Metrics for ALE").

- ``metrics``: HNS, CHNS, HWRNS, SABER, HWRB, mean / median over games, playtime, learning
  efficiency, as numpy functions over a ``runs × games`` matrix.
- ``baselines``, ``paper_scores``, ``games``: the paper's per-game tables shipped as CSV (random,
  human average, human world record; every compared algorithm's raw score and training scale)
  and the mapping between the paper's game names and ``ale:<Name>`` env specs.
- ``aggregates``: IQM, mean, median, optimality gap with stratified-bootstrap CIs (rliable).
- The run folder's evaluation files (writer and reader) are ``gdi.scores``, beside
  ``gdi.run_files``: the file format the runtime writes and this package reads, below both so
  that a training process never imports the reports.
- ``paper``: the paper's "Full performance comparison" recomputed from its per-game scores.
- ``report``: ``gdi report``, Markdown + PNG + CSV for a set of runs (imported on first use,
  so that a training process reading or writing score files does not load matplotlib).
"""

import importlib

from gdi.evaluation.aggregates import (
    STATISTICS,
    CurveBand,
    Interval,
    aggregate_intervals,
    curve_band,
    point_estimates,
)
from gdi.evaluation.baselines import Baselines, baselines, normalize
from gdi.evaluation.games import (
    atari_games,
    atari_specs,
    canonical_game,
    game_to_spec,
    is_atari57,
    spec_to_game,
)
from gdi.evaluation.metrics import (
    FRAMES_PER_DAY,
    chns,
    hns,
    hwrb,
    hwrns,
    learning_efficiency,
    mean_over_games,
    median_over_games,
    normalized_score,
    playtime_days,
    saber,
)
from gdi.evaluation.paper import (
    Mismatch,
    SummaryRow,
    format_full_comparison,
    full_comparison,
    summarize,
    summary_mismatches,
)
from gdi.evaluation.paper_scores import (
    DEFAULT_COMPARE,
    Algorithm,
    PaperScores,
    algorithm,
    paper_algorithms,
    paper_scores,
    paper_summary,
)
from gdi.scores import (
    Episode,
    EvalRecord,
    RunEvals,
    load_run,
    periodic_eval_name,
    read_config,
    read_eval_file,
    write_eval_file,
)

__all__ = [
    "DEFAULT_COMPARE",
    "FRAMES_PER_DAY",
    "STATISTICS",
    "Algorithm",
    "Baselines",
    "CurveBand",
    "Episode",
    "EvalRecord",
    "Interval",
    "Mismatch",
    "PaperScores",
    "Report",
    "RunEvals",
    "SummaryRow",
    "aggregate_intervals",
    "algorithm",
    "atari_games",
    "atari_specs",
    "baselines",
    "canonical_game",
    "chns",
    "curve_band",
    "format_full_comparison",
    "full_comparison",
    "game_to_spec",
    "hns",
    "hwrb",
    "hwrns",
    "is_atari57",
    "learning_efficiency",
    "load_run",
    "mean_over_games",
    "median_over_games",
    "normalize",
    "normalized_score",
    "paper_algorithms",
    "paper_scores",
    "paper_summary",
    "parse_compare",
    "periodic_eval_name",
    "playtime_days",
    "point_estimates",
    "read_config",
    "read_eval_file",
    "saber",
    "spec_to_game",
    "summarize",
    "summary_mismatches",
    "write_eval_file",
    "write_report",
    "write_run_report",
]

_LAZY = {"Report", "parse_compare", "write_report", "write_run_report"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module("gdi.evaluation.report"), name)
    raise AttributeError(f"module 'gdi.evaluation' has no attribute {name!r}")
