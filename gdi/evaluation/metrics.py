"""The paper's ALE metrics as small numpy functions (App. "Evaluation Metrics for ALE").

Scores are arrays whose last axis is games, typically a ``runs × games`` matrix; baselines are
1-D arrays over the same games. Normalized scores are fractions (1.0 = the reference; the
paper prints them ×100 as %). NaN marks a game an algorithm did not report (the paper's N/A):
it propagates through normalization and is skipped by the statistics over games.

| paper | function |
| --- | --- |
| HNS = (G − G_random) / (G_human average − G_random) | :func:`hns` |
| CHNS = max{min{HNS, 1}, 0} | :func:`chns` |
| HWRNS = (G − G_random) / (G_human world record − G_random) | :func:`hwrns` |
| SABER = max{min{HWRNS, 2}, 0} | :func:`saber` |
| HWRB = Σ_games [HWRNS ≥ 1] | :func:`hwrb` |
| mean / median over the games an algorithm reports | :func:`mean_over_games`, :func:`median_over_games` |
| Playtime (day) = Num.Frames / (108000·2·24) | :func:`playtime_days` |
| Learning Efficiency = metric / Num.Frames | :func:`learning_efficiency` |
"""

from __future__ import annotations

import numpy as np

# App. "Playtime": 108,000 frames are the 30 minutes an episode is truncated at (60 frames per
# second), so 108000·2·24 = 5,184,000 frames are one day of real-time play.
FRAMES_PER_DAY = 108_000 * 2 * 24


def _as_scores(scores, name: str) -> np.ndarray:
    array = np.asarray(scores, dtype=float)
    if array.ndim == 0:
        raise ValueError(f"{name} must have a games axis (last axis), got a scalar")
    return array


def _as_baseline(values, name: str, n_games: int) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.shape != (n_games,):
        raise ValueError(
            f"{name} must have shape ({n_games},) to match the games axis, got {array.shape}"
        )
    return array


def normalized_score(scores, base, reference) -> np.ndarray:
    """Z = (G − G_base) / (G_reference − G_base), App. "Normalized Scores", per game."""
    scores = _as_scores(scores, "scores")
    n_games = scores.shape[-1]
    base = _as_baseline(base, "base", n_games)
    reference = _as_baseline(reference, "reference", n_games)
    if np.any(reference == base):
        raise ValueError("reference must differ from base for every game")
    return (scores - base) / (reference - base)


def hns(scores, random, human_average) -> np.ndarray:
    """Human normalized score (App. "Human Average Score Baseline")."""
    return normalized_score(scores, random, human_average)


def chns(scores, random, human_average) -> np.ndarray:
    """Capped human normalized score, HNS clipped to [0, 1] (App. "Capped Normalized Score")."""
    return np.clip(hns(scores, random, human_average), 0.0, 1.0)


def hwrns(scores, random, human_world_record) -> np.ndarray:
    """Human world records normalized score (App. "Human World Records Baseline")."""
    return normalized_score(scores, random, human_world_record)


def saber(scores, random, human_world_record) -> np.ndarray:
    """SABER, HWRNS clipped to [0, 2] (App. "Human World Records Baseline", "Capped HWRNS")."""
    return np.clip(hwrns(scores, random, human_world_record), 0.0, 2.0)


def hwrb(hwrns_scores) -> np.ndarray:
    """Human world record breakthroughs: the number of games with HWRNS ≥ 1 (App. "Human
    World Record Breakthrough"), over the last axis; NaN games do not count."""
    array = _as_scores(hwrns_scores, "hwrns_scores")
    return np.sum(array >= 1.0, axis=-1)


def _reported(scores) -> np.ndarray:
    array = _as_scores(scores, "scores")
    if np.any(np.all(np.isnan(array), axis=-1)):
        raise ValueError("scores report no game (all NaN) for some run")
    return array


def mean_over_games(scores) -> np.ndarray:
    """Mean over the games a run reports (NaN games skipped), e.g. mean HNS."""
    return np.nanmean(_reported(scores), axis=-1)


def median_over_games(scores) -> np.ndarray:
    """Median over the games a run reports (NaN games skipped), e.g. median HNS."""
    return np.nanmedian(_reported(scores), axis=-1)


def playtime_days(frames) -> np.ndarray | float:
    """Equivalent human playtime in days, frames / (108000·2·24) (App. "Playtime")."""
    frames = np.asarray(frames, dtype=float)
    if np.any(frames < 0):
        raise ValueError("frames must be non-negative")
    return frames / FRAMES_PER_DAY


def learning_efficiency(metric, frames) -> np.ndarray | float:
    """Metric per training frame, e.g. mean HNS / frames (App. "Learning Efficiency")."""
    frames = np.asarray(frames, dtype=float)
    if np.any(frames <= 0):
        raise ValueError("frames must be positive")
    return np.asarray(metric, dtype=float) / frames
