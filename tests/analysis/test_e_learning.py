"""gdi.analysis.e_learning: what E learned, from a run folder — each measure against a hand
computation, and E rebuilt from meta.jsonl against the state a checkpoint saved."""

import math

import numpy as np
import pytest

from gdi.analysis.e_learning import (
    EpisodeLog,
    kl_to_uniform,
    load_episode_log,
    log_scaled_coordinates,
    observed_returns,
    replay_updates,
    replayed_estimates,
    sampled_kl_over_time,
    share_above_over_time,
    uniform_kl_floor,
)
from gdi.meta.bandit import BanditEnsemble
from gdi.runtime import seeds
from gdi.runtime.components import build_controller
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config
from tests.tolerance import assert_close


def test_kl_to_uniform_by_hand():
    assert_close(kl_to_uniform(np.full(40, 0.55)), math.log(10))
    assert kl_to_uniform((np.arange(100) + 0.5) / 100) == 0.0  # ten per bin
    # Half in bin 0, half in bin 9: Σ ½·log(½·10) = log 5.
    assert_close(kl_to_uniform(np.r_[np.full(7, 0.01), np.full(7, 0.99)]), math.log(5))
    assert math.isnan(kl_to_uniform(np.array([])))


def test_the_floor_of_uniform_draws_is_the_known_small_sample_bias():
    # E[KL̂] ≈ (bins − 1) / (2n) for n uniform draws (the χ² approximation). Sampling, not
    # rounding: 400 draws of KL̂ (sd ≈ √(2·9)/(2n) each) put the mean within 2 % (1 sd) of
    # its expectation; 15 % also covers the approximation's O(1/n²) terms.
    assert uniform_kl_floor(2000, reps=400) == pytest.approx(9 / 4000, rel=0.15)


def synthetic_log(lambdas, returns, frames, budget=1000, actors=None):
    n = len(returns)
    return EpisodeLog(np.asarray(frames), np.zeros(n, int) if actors is None else
                      np.asarray(actors), np.asarray(lambdas, float), np.asarray(returns, float),
                      ("inv_tau", "eps"), np.array([[0.0, 50.0], [0.0, 1.0]]), budget)


def test_observed_returns_per_block_after_a_frame():
    log = synthetic_log([[1, 0.05], [2, 0.15], [3, 0.12], [49, 0.95], [1, 0.5]],
                        [10, 20, 40, 7, 99], frames=[600, 700, 800, 900, 100])
    means, counts = observed_returns(log, np.linspace(0, 1, 11), 1, since=500)
    assert counts.tolist() == [1, 2, 0, 0, 0, 0, 0, 0, 0, 1]  # the episode at 100 is too early
    np.testing.assert_array_equal(means[[0, 1, 9]], [10, 30, 7])
    assert np.isnan(means[2:9]).all()


def test_share_above_a_threshold_per_slice_of_the_budget_by_hand():
    # Budget 1000 (synthetic_log's), four slices of 250 frames: 1/τ₁ of each episode below.
    log = synthetic_log([[10, 0.5], [60, 0.5], [80, 0.5], [50, 0.5], [900, 0.5], [3, 0.5]],
                        np.zeros(6), frames=[100, 200, 300, 400, 900, 1000],
                        actors=[0, 1, 0, 1, 0, 1])
    share = share_above_over_time(log, 0, 50.0, windows=4)
    # (0, 250]: 10, 60 → 1/2; (250, 500]: 80, 50 (not above) → 1/2; (500, 750]: none;
    # (750, 1000]: 900, 3 → 1/2.
    np.testing.assert_array_equal(share[[0, 1, 3]], [0.5, 0.5, 0.5])
    assert np.isnan(share[2])
    assert share_above_over_time(log, 1, 0.4, windows=1).tolist() == [1.0]


def test_sampled_kl_over_time_sees_a_distribution_that_narrows():
    rng = np.random.default_rng(0)
    n = 4000
    frames = np.linspace(1, 1000, n)
    late = frames > 500
    inv_tau = np.where(late, rng.uniform(40, 45, n), rng.uniform(0, 50, n))  # narrows late
    log = synthetic_log(np.c_[inv_tau, rng.uniform(0, 1, n)], np.zeros(n), frames,
                        actors=np.arange(n) % 2)
    table = sampled_kl_over_time(log, windows=2)
    assert set(table) == {0, 1}
    floor = uniform_kl_floor(n // 4)
    for actor in (0, 1):
        early, later = table[actor]
        assert early[0] < 5 * floor and early[1] < 5 * floor and later[1] < 5 * floor
        assert_close(later[0], math.log(10))  # [40, 45) is exactly one bin of ten


def test_estimated_returns_are_the_ensemble_mean_per_block_with_edges_in_lambda():
    bandit = BanditEnsemble(ranges=[(0.0, math.log1p(1000.0)), (0.0, 1.0)],
                            accuracies=(1.0, 0.25), index_names=("inv_tau", "eps"),
                            transforms=("log1p", "identity"), seed=0)
    before = bandit.estimated_returns()
    edges, values = before[1]
    np.testing.assert_array_equal(edges, [0, 0.25, 0.5, 0.75, 1.0])
    assert (values == 0).all()
    edges0 = before[0][0]  # x = 0, 1, ..., 6, log(1001): 1/τ = e^x − 1
    assert len(edges0) == 8
    assert_close(edges0[-1], 1000.0)  # expm1(log1p(1000)): two roundings
    assert_close(edges0[:7], np.expm1(np.arange(7)))
    for _ in range(30):
        bandit.update(np.array([0.5, 0.9]), 10.0)  # 1/τ in x-block 0, ε in block 3
    values = bandit.estimated_returns()[1][1]
    assert values.argmax() == 3 and values[3] > 0
    np.testing.assert_array_equal(values, bandit.block_values().mean(axis=1)[1, :4])


def test_e_replayed_from_meta_jsonl_is_the_e_the_checkpoint_saved(tmp_path):
    config = tiny_config("gdi-i3", frames=3000)
    result = train(config, tmp_path / "run", show_progress=False)
    saved = load_checkpoint(latest_checkpoint(result.run_dir))["controllers"][0]
    rebuilt = build_controller(config, seeds.actor(config.seed, 0))
    updates = replay_updates(rebuilt, load_episode_log(result.run_dir), 0, None)
    assert updates == saved["updates"] > 20
    state = rebuilt.state_dict()
    # Exact: the same updates in the same order, in float64, with no randomness.
    np.testing.assert_array_equal(state["weights"], saved["weights"])
    np.testing.assert_array_equal(state["counts"], saved["counts"])
    estimates = replayed_estimates(result.run_dir)
    assert len(estimates) == 3 and all(len(e) == len(v) + 1 for e, v in estimates)
    halfway = replayed_estimates(result.run_dir, at_frames=1500)
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(halfway, estimates, strict=True))


def test_an_e_without_estimates_replays_to_none(tmp_path):
    result = train(tiny_config("gdi-i3-uniform", frames=800), tmp_path / "run",
                   show_progress=False)
    assert replayed_estimates(result.run_dir) is None


def test_only_coordinates_spanning_orders_of_magnitude_are_log_scaled():
    # The gym 1/τ search [0, 1000] is read in log1p units; ALE's [0, 50] and ε's [0, 1] linearly.
    log = EpisodeLog(frames=np.zeros(0), actors=np.zeros(0), lambdas=np.zeros((0, 3)),
                     returns=np.zeros(0), index_names=("inv_tau1", "inv_tau2", "eps"),
                     ranges=np.array([[0.0, 1000.0], [0.0, 50.0], [0.0, 1.0]]), budget=1)
    assert log_scaled_coordinates(log) == [True, False, False]
