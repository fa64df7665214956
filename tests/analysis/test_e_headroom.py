"""gdi.analysis.e_headroom: what E's objective allows over uniform, each measure against a hand
computation or a known expectation."""

import math

import numpy as np
import pytest

from gdi.analysis.e_headroom import (
    bin_edges,
    bin_means,
    bin_of,
    rank_agreement,
    realized_gain,
    split_half_headroom,
)
from tests.tolerance import assert_close


def test_bins_by_hand():
    edges = bin_edges(0.0, 50.0)
    assert_close(edges, np.arange(11) * 5.0)
    # Left edges open a bin, the right end belongs to the last; outside → the end bins.
    assert bin_of(np.array([0.0, 4.99, 5.0, 49.9, 50.0, -1.0, 51.0]), edges).tolist() == \
        [0, 0, 1, 9, 9, 0, 9]
    with pytest.raises(ValueError, match=r"high > low, got \[1.0, 1.0\]"):
        bin_edges(1.0, 1.0)


def test_bin_means_by_hand():
    means, counts = bin_means(np.array([0.5, 0.7, 2.5]), np.array([1.0, 3.0, 10.0]),
                              np.array([0.0, 1.0, 2.0, 3.0]))
    assert counts.tolist() == [2, 0, 1]
    assert_close(means[[0, 2]], [2.0, 10.0], terms=2) and math.isnan(means[1])


def test_headroom_of_a_noiseless_surface_is_the_best_bin_over_the_mean():
    # 100 episodes per bin, bin k returns exactly k: every half picks bin 9, whose held-out
    # return is 9; the held-out mean is 4.5 up to which episodes fall in that half (its sd over
    # halves is 2.87 / √500 ≈ 0.13, averaged over 200 halves).
    values = np.repeat(np.arange(10) * 5.0 + 2.5, 100)
    returns = np.repeat(np.arange(10.0), 100)
    assert split_half_headroom(values, returns, bin_edges(0, 50)) == pytest.approx(4.5, abs=0.1)


def test_headroom_of_pure_noise_is_zero_where_the_best_in_sample_mean_is_not():
    # Returns independent of λ: no P_Λ can gain. The largest of 10 in-sample bin means (20
    # episodes each, sd 1/√20) exceeds the overall mean by ≈ 1.54/√20 ≈ 0.34 on average; the
    # split-half estimate is unbiased: its mean over 40 datasets has sd ≲ 0.05.
    edges = bin_edges(0, 50)
    in_sample, split = [], []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        values, returns = rng.uniform(0, 50, 200), rng.normal(size=200)
        means = [returns[bin_of(values, edges) == k].mean() for k in range(10)]
        in_sample.append(max(means) - returns.mean())
        split.append(split_half_headroom(values, returns, edges, reps=20, seed=seed))
    assert np.mean(in_sample) > 0.25
    assert abs(np.mean(split)) < 0.15


def test_headroom_refuses_mismatched_input():
    with pytest.raises(ValueError, match="matching 1-D arrays"):
        split_half_headroom(np.zeros(3), np.zeros(4), bin_edges(0, 1))
    with pytest.raises(ValueError, match="reps must be >= 1, got 0"):
        split_half_headroom(np.zeros(3), np.zeros(3), bin_edges(0, 1), reps=0)


def test_realized_gain_by_hand():
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    control_values = np.array([0.5, 0.5, 1.5, 1.5])
    control_returns = np.array([0.0, 2.0, 4.0, 6.0])  # bin means 1 and 5, overall 3
    # E sampled bin 1 three times in four: ¼·1 + ¾·5 − 3 = 1.
    assert_close(realized_gain(np.array([1.5, 1.5, 1.5, 0.5]), control_values,
                               control_returns, edges), 1.0, terms=3)
    # A bin the control never visited (bin 2) is left out: shares ½, ½ over bins 0 and 1.
    assert_close(realized_gain(np.array([0.5, 1.5, 2.5, 2.5]), control_values,
                               control_returns, edges), 0.0, magnitude=6.0, terms=3)
    # Uniform sampling takes nothing.
    assert_close(realized_gain(control_values, control_values, control_returns, edges), 0.0,
                 magnitude=6.0, terms=3)
    assert math.isnan(realized_gain(np.array([2.5]), control_values, control_returns, edges))


def test_rank_agreement_by_hand():
    edges = bin_edges(0, 50)
    block_edges = np.arange(51.0)  # E's 50 blocks of width 1, 5 to a tenth
    control_values = np.repeat(np.arange(10) * 5.0 + 2.5, 3)
    rising = np.repeat(np.arange(10.0), 3)
    assert_close(rank_agreement(block_edges, np.arange(50.0), control_values, rising, edges),
                 1.0, terms=10)
    assert_close(rank_agreement(block_edges, -np.arange(50.0), control_values, rising, edges),
                 -1.0, terms=10)
    # E believes nothing differs: no ranking to compare.
    assert math.isnan(rank_agreement(block_edges, np.zeros(50), control_values, rising, edges))
    # Only the tenths the control visited count: two are too few.
    assert math.isnan(rank_agreement(block_edges, np.arange(50.0), control_values[:6],
                                     rising[:6], edges))
