"""Aggregates with confidence intervals, computed through rliable."""

import numpy as np
import pytest

from gdi.evaluation.aggregates import aggregate_intervals, curve_band, point_estimates
from tests.tolerance import assert_close


def test_interval_through_rliable_by_hand():
    # Two runs of one game scoring 0 and 1: the mean is 0.5; a bootstrap resample of the two
    # runs has mean 0, 0.5 or 1 (probabilities 1/4, 1/2, 1/4), so the 95% percentile interval
    # is [0, 1].
    result = aggregate_intervals({"agent": np.array([[0.0], [1.0]])}, ("mean",), reps=400, seed=3)
    assert result["agent"]["mean"] == (0.5, 0.0, 1.0)


def test_statistics_match_their_definitions():
    # One run of eight games 1..8: IQM trims two from each end, mean(3, 4, 5, 6) = 4.5; the
    # median of 1..8 is 4.5; the optimality gap is 1 - mean(min(x, 1)) = 0 as every x >= 1.
    points = point_estimates(np.arange(1.0, 9.0)[None, :])
    assert points == {"iqm": 4.5, "mean": 4.5, "median": 4.5, "optimality_gap": 0.0}
    assert point_estimates([[0.5, 2.0]], ("optimality_gap",)) == {"optimality_gap": 0.25}


def test_intervals_are_reproducible_and_leave_numpy_global_state_alone():
    scores = {"a": np.array([[0.1, 0.9, 2.0], [0.4, 1.1, 1.5], [0.0, 0.7, 3.0]])}
    # rliable draws from NumPy's legacy global generator; the caller's state must survive.
    np.random.seed(123)  # noqa: NPY002
    expected_next = np.random.rand()  # noqa: NPY002
    np.random.seed(123)  # noqa: NPY002
    first = aggregate_intervals(scores, reps=100, seed=7)
    assert np.random.rand() == expected_next  # noqa: NPY002
    assert aggregate_intervals(scores, reps=100, seed=7) == first
    for interval in first["a"].values():
        assert interval.low <= interval.point <= interval.high


def test_curve_band_resamples_whole_curves():
    band = curve_band(np.array([[0.0, 1.0], [2.0, 3.0]]), reps=400, seed=0)
    assert_close(band.mean, [1.0, 2.0])
    assert_close(band.low, [0.0, 1.0])
    assert_close(band.high, [2.0, 3.0])


@pytest.mark.parametrize(
    ("scores", "statistics", "message"),
    [
        ({"a": np.array([[np.nan, 1.0]])}, ("mean",), "NaN"),
        ({"a": np.array([1.0, 2.0])}, ("mean",), "runs × games"),
        ({"a": np.ones((2, 2))}, ("mode",), "unknown statistics"),
    ],
)
def test_bad_input_is_refused(scores, statistics, message):
    with pytest.raises(ValueError, match=message):
        aggregate_intervals(scores, statistics, reps=10)
