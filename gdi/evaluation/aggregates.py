"""Aggregate scores with confidence intervals, through rliable (Agarwal et al. 2021).

The paper reports point estimates only (App. "Evaluation Metrics for ALE" advocates mean and
median together); for runs with several seeds gdi adds the interquartile mean and the
optimality gap and a stratified-bootstrap confidence interval for each, all computed by
rliable's ``get_interval_estimates`` (no bootstrap is written here).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

STATISTICS = ("iqm", "mean", "median", "optimality_gap")
#: Bootstrap resamples of a confidence interval unless told otherwise (``gdi report --reps``).
REPS = 2000


class Interval(NamedTuple):
    """A point estimate and its confidence interval."""

    point: float
    low: float
    high: float


def _statistic_functions() -> dict:
    from rliable import metrics as rlm

    return {
        "iqm": rlm.aggregate_iqm,
        "mean": rlm.aggregate_mean,
        "median": rlm.aggregate_median,
        "optimality_gap": rlm.aggregate_optimality_gap,
    }


def _interval_estimates(score_dict, func, reps: int, confidence: float, seed: int):
    """rliable's percentile stratified bootstrap, reproducible for a given ``seed``.

    rliable 1.2 draws its resampling indices from NumPy's global generator (its
    ``random_state`` argument only reaches arch), so the global state is seeded here and
    restored afterwards; arch's notice that RandomState arguments are deprecated is silenced.
    """
    from rliable import library as rly

    if reps < 1:
        raise ValueError(f"reps must be positive, got {reps}")
    saved = np.random.get_state()  # noqa: NPY002 (rliable reads the legacy global generator)
    np.random.seed(seed)  # noqa: NPY002
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"arch\.")
            return rly.get_interval_estimates(
                score_dict,
                func,
                reps=reps,
                confidence_interval_size=confidence,
                random_state=np.random.RandomState(seed),
            )
    finally:
        np.random.set_state(saved)  # noqa: NPY002


def _check_matrix(name: str, scores) -> np.ndarray:
    array = np.asarray(scores, dtype=float)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(
            f"scores[{name!r}] must be a non-empty runs × games matrix, got shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(
            f"scores[{name!r}] has NaN or infinite entries; bootstrap needs every game of every run"
        )
    return array


def aggregate_intervals(
    scores: Mapping[str, np.ndarray],
    statistics: Sequence[str] = STATISTICS,
    *,
    reps: int = REPS,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, Interval]]:
    """``{name: runs × games}`` -> ``{name: {statistic: Interval}}``.

    Statistics are rliable's IQM, mean, median (of per-game means over runs) and optimality gap
    (threshold 1, i.e. the reference score); intervals are percentile stratified-bootstrap CIs
    with ``reps`` resamples of runs within each game.
    """
    functions = _statistic_functions()
    unknown = [s for s in statistics if s not in functions]
    if unknown:
        raise ValueError(f"unknown statistics {unknown}; expected some of {STATISTICS}")
    matrices = {name: _check_matrix(name, value) for name, value in scores.items()}

    def estimate(matrix: np.ndarray) -> np.ndarray:
        return np.array([functions[s](matrix) for s in statistics])

    points, intervals = _interval_estimates(matrices, estimate, reps, confidence, seed)
    return {
        name: {
            s: Interval(
                float(points[name][i]), float(intervals[name][0, i]), float(intervals[name][1, i])
            )
            for i, s in enumerate(statistics)
        }
        for name in matrices
    }


def point_estimates(scores, statistics: Sequence[str] = STATISTICS) -> dict[str, float]:
    """The same statistics of one ``runs × games`` matrix without an interval (for published
    single scores, where a bootstrap over one run has nothing to resample)."""
    functions = _statistic_functions()
    unknown = [s for s in statistics if s not in functions]
    if unknown:
        raise ValueError(f"unknown statistics {unknown}; expected some of {STATISTICS}")
    matrix = _check_matrix("scores", scores)
    return {s: float(functions[s](matrix)) for s in statistics}


class CurveBand(NamedTuple):
    """Mean over runs at each point of a learning curve and its confidence band."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


def curve_band(curves, *, reps: int = REPS, confidence: float = 0.95, seed: int = 0) -> CurveBand:
    """``runs × points`` curves (on a shared x grid) -> mean and bootstrap CI band.

    Whole curves are resampled (rliable's stratified bootstrap over runs of one task), so the
    band at every point comes from the same resampled seeds.
    """
    array = np.asarray(curves, dtype=float)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(
            f"curves must be a non-empty runs × points matrix, got shape {array.shape}"
        )
    points, intervals = _interval_estimates(
        {"curve": array[:, None, :]}, lambda s: np.mean(s[:, 0, :], axis=0), reps, confidence, seed
    )
    return CurveBand(points["curve"], intervals["curve"][0], intervals["curve"][1])


def probability_of_improvement(scores_x, scores_y, *, reps: int = REPS,
                               confidence: float = 0.95, seed: int = 0) -> Interval:
    """P(X > Y): the probability that a run of X scores above a run of Y on a game, averaged
    over games (Mann-Whitney U / (n_x · n_y) per game, ties counting ½), with rliable's
    stratified-bootstrap CI resampling each algorithm's runs within each game independently.

    ``scores_x`` and ``scores_y`` are ``runs × games`` matrices over the same games; their
    numbers of runs may differ (Agarwal et al. 2021, Sec. "Probability of improvement")."""
    from rliable import metrics as rlm

    x, y = _check_matrix("x", scores_x), _check_matrix("y", scores_y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"X and Y must cover the same games, got {x.shape[1]} and {y.shape[1]}")
    points, intervals = _interval_estimates(
        {"x>y": [x, y]}, rlm.probability_of_improvement, reps, confidence, seed)
    low, high = np.ravel(intervals["x>y"])
    return Interval(float(np.ravel(points["x>y"])[0]), float(low), float(high))
