"""Metrics of App. "Evaluation Metrics for ALE" on tiny matrices worked out by hand."""

import numpy as np
import pytest

from gdi.evaluation import metrics
from tests.tolerance import assert_close

# Three games: random, human average and human world record scores.
RANDOM = np.array([0.0, 10.0, -20.0])
HUMAN = np.array([100.0, 20.0, 0.0])
RECORD = np.array([1000.0, 110.0, 20.0])
# Two runs (rows); the second did not report game 3 (the paper's N/A).
SCORES = np.array([[50.0, 30.0, -30.0], [200.0, 10.0, np.nan]])


def test_hns_by_hand():
    # (50 - 0)/(100 - 0) = 0.5, (30 - 10)/(20 - 10) = 2, (-30 + 20)/(0 + 20) = -0.5
    # (200 - 0)/100 = 2, (10 - 10)/10 = 0, N/A stays N/A
    expected = np.array([[0.5, 2.0, -0.5], [2.0, 0.0, np.nan]])
    assert_close(metrics.hns(SCORES, RANDOM, HUMAN), expected, equal_nan=True)


def test_chns_caps_to_unit_interval():
    expected = np.array([[0.5, 1.0, 0.0], [1.0, 0.0, np.nan]])
    assert_close(metrics.chns(SCORES, RANDOM, HUMAN), expected, equal_nan=True)


def test_hwrns_and_saber_by_hand():
    # HWRNS: 50/1000 = 0.05, 20/100 = 0.2, -10/40 = -0.25; 200/1000 = 0.2, 0/100 = 0
    hwrns = np.array([[0.05, 0.2, -0.25], [0.2, 0.0, np.nan]])
    assert_close(metrics.hwrns(SCORES, RANDOM, RECORD), hwrns, equal_nan=True)
    # SABER = max{min{HWRNS, 2}, 0}: the negative one becomes 0 ...
    assert_close(metrics.saber(SCORES, RANDOM, RECORD), np.clip(hwrns, 0, 2), equal_nan=True)
    # ... and 5000 on game 1 (HWRNS 5) is capped at 2 (exactly: a clip).
    assert metrics.saber([5000.0, 10.0, -20.0], RANDOM, RECORD)[0] == 2.0


def test_hwrb_counts_games_at_or_above_the_record():
    hwrns = np.array([[1.0, 0.999, 2.5, np.nan], [0.0, 0.5, 0.9, 0.1]])
    np.testing.assert_array_equal(metrics.hwrb(hwrns), [2, 0])


def test_mean_and_median_over_reported_games():
    hns = metrics.hns(SCORES, RANDOM, HUMAN)
    # run 1: mean (0.5 + 2 - 0.5)/3 = 2/3, median 0.5; run 2 (two games): mean 1, median 1
    assert_close(metrics.mean_over_games(hns), [2 / 3, 1.0])
    assert_close(metrics.median_over_games(hns), [0.5, 1.0])


def test_playtime_uses_the_papers_formula():
    assert metrics.FRAMES_PER_DAY == 108_000 * 2 * 24 == 60 * 60 * 60 * 24
    # App. "Playtime": 200M frames are 38.58 days (the paper prints 38.5), 100B 19290.12;
    # compared exactly at the 4 decimals written here.
    assert round(metrics.playtime_days(200e6), 4) == 38.5802
    assert round(metrics.playtime_days(100e9), 4) == 19290.1235


def test_learning_efficiency_is_metric_per_frame():
    # GDI-H³'s mean HNS 9620.33 % in 200M frames.
    assert_close(metrics.learning_efficiency(9620.33, 2e8), 4.810165e-5)
    assert_close(metrics.learning_efficiency([1.0, 2.0], [10.0, 10.0]), [0.1, 0.2])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: metrics.hns(SCORES, RANDOM[:2], HUMAN), "base"),
        (lambda: metrics.hns(SCORES, RANDOM, HUMAN[:, None]), "reference"),
        (lambda: metrics.hwrns(3.0, RANDOM, RECORD), "games axis"),
        (lambda: metrics.hns(SCORES, RANDOM, RANDOM), "differ"),
        (lambda: metrics.mean_over_games([[np.nan, np.nan, np.nan]]), "no game"),
        (lambda: metrics.playtime_days(-1), "non-negative"),
        (lambda: metrics.learning_efficiency(1.0, 0), "positive"),
    ],
)
def test_bad_arguments_raise_naming_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()
