"""benchmarks/e_power.py's arithmetic, by hand (issue 42, item 1)."""

import math

import numpy as np

from benchmarks.e_power import auc, detectable, pooled_sd, seeds_for
from tests.tolerance import assert_close


def test_auc_is_the_mean_over_the_budget_with_the_first_score_held_from_zero():
    frames = np.array([250, 500, 1000])
    # 0..250 at 0.2 (held), 250..500 from 0.2 to 0.6, 500..1000 from 0.6 to 1.0.
    expected = (250 * 0.2 + 250 * 0.4 + 500 * 0.8) / 1000
    assert_close(auc(frames, np.array([0.2, 0.6, 1.0]), 1000), expected)
    assert_close(auc(frames, np.full(3, 0.5), 1000), 0.5)


def test_pooled_sd_takes_each_groups_own_mean_out():
    a, b = [1.0, 2.0, 3.0], [10.0, 12.0]
    squares = (1 + 0 + 1) + (1 + 1)
    assert_close(pooled_sd([a, b]), math.sqrt(squares / 3))


def test_detectable_effect_and_seeds_follow_the_t_test():
    # Normal approximation: (1.96 + 0.84) · sqrt(2 / n) σ; the t-test needs a little more.
    normal = (1.959964 + 0.841621) * math.sqrt(2 / 20)
    assert normal < detectable(1.0, 20) < normal * 1.05
    assert_close(detectable(3.0, 20), 3 * detectable(1.0, 20))
    assert seeds_for(1.0, 1.0) == 17  # Cohen's d = 1: 16.7 per group, the textbook value
    assert seeds_for(0.01, 1.0) == 2  # a huge effect: the t-test's least
