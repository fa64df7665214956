"""The other operators E: fixed λ (GDI w/o E), uniform (Ape-X/R2D2's identity E), Agent57's
sliding-window UCB, and the registry every preset goes through."""

import pickle
import re

import numpy as np
import pytest

from gdi.meta import (
    CONTROLLERS,
    BanditEnsemble,
    FixedIndex,
    MetaController,
    SlidingWindowUCB,
    SyntheticSurface,
    UniformIndex,
    demo_controller,
    demo_surface,
    make_controller,
    meta_kwargs_over,
    run_controller,
)
from gdi.policy_space import get_policy_space

# -- FixedIndex ---------------------------------------------------------------------------


def test_fixed_index_never_moves():
    f = FixedIndex()
    assert f.index_names == ("inv_tau1", "inv_tau2", "eps") and f.dim == 3
    for g in (1e6, -1e6, 0.0):
        lam = f.sample()
        np.testing.assert_array_equal(lam, [1.0, 0.0, 1.0])  # the table's Fixed Selection
        f.update(lam, g)
        f.update([40.0, 3.0, 0.2], g)  # any λ may be reported; nothing is learned
    np.testing.assert_array_equal(f.sample(), [1.0, 0.0, 1.0])
    lam = f.sample()
    lam[0] = 99.0  # callers get a copy
    np.testing.assert_array_equal(f.sample(), [1.0, 0.0, 1.0])
    one = FixedIndex(value=(2.5,))
    assert one.index_names == ("lam0",) and one.sample().tolist() == [2.5]  # no guessed names


# -- UniformIndex -------------------------------------------------------------------------


def test_uniform_over_a_finite_set():
    values = 0.4 ** (1.0 + np.arange(8.0))[:, None]  # an 8-rung Ape-X ladder: 0.4^(1 + 7i/7)
    u = UniformIndex(values=values, index_names=("eps",), seed=0)
    draws = np.array([u.sample()[0] for _ in range(4000)])
    idx = np.argmin(np.abs(draws[:, None] - values[None, :, 0]), axis=1)
    np.testing.assert_array_equal(draws, values[idx, 0])  # always one of the values: a copy
    # Sampling error, not rounding: 0.03 is 5.7 standard errors of a proportion 1/8 in 4000.
    np.testing.assert_allclose(np.bincount(idx, minlength=8) / 4000, 1 / 8, atol=0.03)


def test_uniform_over_a_box_defaults_to_the_search_box():
    u = UniformIndex(seed=0)
    lam = np.array([u.sample() for _ in range(3000)])
    # Sampling error, not rounding: the extremes of 3000 uniform draws on [0, 50] are within
    # 0.1 of the ends with probability 1 − e⁻⁶ each; 5 % of the mean is 4.7 standard errors.
    np.testing.assert_allclose(lam.min(0), [0, 0, 0], atol=0.1)
    np.testing.assert_allclose(lam.max(0), [50, 50, 1], atol=0.1)
    np.testing.assert_allclose(lam.mean(0), [25, 25, 0.5], rtol=0.05)
    with pytest.raises(ValueError, match="not both"):
        UniformIndex(values=[[0.1]], ranges=[(0.0, 1.0)])


# -- SlidingWindowUCB ---------------------------------------------------------------------


def test_sliding_window_ucb_hand_worked_pulls():
    # 3 arms, window 3, β = 1, ε = 0 (no random pulls). Score = mean + 1/sqrt(N) in the window.
    s = SlidingWindowUCB(
        arms=[[0.0], [1.0], [2.0]], window=3, beta=1.0, epsilon=0.0, index_names=("x",)
    )
    pulls = []
    plan = [
        # k = 0, 1, 2: each arm once, in order; returns 1, 2, 0 -> window [a0:1, a1:2, a2:0]
        (0, 1.0),
        (1, 2.0),
        (2, 0.0),
        # k = 3: a0 1 + 1 = 2, a1 2 + 1 = 3, a2 0 + 1 = 1 -> a1; window [a1:2, a2:0, a1:0.5]
        (1, 0.5),
        # k = 4: a0 left the window (N = 0, score +inf) -> a0; window [a2:0, a1:0.5, a0:0]
        (0, 0.0),
        # k = 5: a0 0 + 1 = 1, a1 0.5 + 1 = 1.5, a2 0 + 1 = 1 -> a1; window [a1:0.5, a0:0, a1:3]
        (1, 3.0),
        # k = 6: a2 left the window -> a2 (a1 would score 1.75 + 1/sqrt(2) ≈ 2.46)
        (2, 0.0),
    ]
    for expected_arm, ret in plan:
        lam = s.sample()
        pulls.append(int(lam[0]))
        assert pulls[-1] == expected_arm, pulls
        s.update(lam, ret)
    counts, means = s.window_stats()
    np.testing.assert_array_equal(counts, [1, 1, 1])  # window [a0:0, a1:3, a2:0]
    np.testing.assert_array_equal(means, [0.0, 3.0, 0.0])


def test_sliding_window_ucb_exploration_rate():
    # ε = 1: after the first round every pull is uniform.
    s = SlidingWindowUCB(arms=[[0.0], [1.0], [2.0], [3.0]], epsilon=1.0, index_names=("x",), seed=0)
    pulls = []
    for _ in range(4000):
        lam = s.sample()
        s.update(lam, 10.0 if lam[0] == 0 else 0.0)
        pulls.append(int(lam[0]))
    # Sampling error, not rounding: 0.03 is 4.4 standard errors of a proportion ¼ in 3996.
    np.testing.assert_allclose(np.bincount(pulls[4:], minlength=4) / 3996, 0.25, atol=0.03)
    # ε = 0.5 (Agent57): the best arm gets the greedy half plus its share of the random half.
    s = SlidingWindowUCB(arms=[[0.0], [1.0], [2.0], [3.0]], epsilon=0.5, index_names=("x",), seed=0)
    # Noise-free returns on [0, 3]: arm 0 earns 1.0, arm 3 ≈ 0.6, arms 1, 2 less; with the
    # window's bonus 1/sqrt(N) the greedy choice stays arm 0.
    surface = SyntheticSurface(((0.0, 3.0),), optimum=(0.0,), decoy=(3.0,), noise=0.0)
    lam, _ = run_controller(s, surface, 4000)
    share = np.mean(lam[4:, 0] == 0.0)
    assert 0.5 + 0.5 / 4 - 0.04 < share < 0.5 + 0.5 / 4 + 0.04


def test_sliding_window_ucb_matches_arms_and_rejects_others():
    s = SlidingWindowUCB(arms=[[0.1, 2.0], [0.3, 4.0]], index_names=("a", "b"))
    s.update(np.array([0.3, 4.0], dtype=np.float32), 1.0)  # float32 round trip still matches
    assert s.window_stats()[0].tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"not one of the 2 arms.*closest: arm 1"):
        s.update([0.3, 4.5], 1.0)


# -- the registry and the shared contract -------------------------------------------------


ALL = sorted(CONTROLLERS)


@pytest.mark.parametrize("name", ALL)
def test_every_registered_controller_is_built_by_name(name):
    controller = demo_controller(name, 3, seed=0)  # through meta_kwargs_over, as presets are
    assert isinstance(controller, CONTROLLERS[name])
    assert controller.index_names == ("inv_tau1", "inv_tau2", "eps")


def test_registry_errors_list_the_registered_names():
    # The paper's E and the uniform control need no arguments: the paper's space is the default.
    assert isinstance(make_controller("bandit", 0), BanditEnsemble)
    assert isinstance(make_controller("uniform", np.random.default_rng(0)), UniformIndex)
    with pytest.raises(
        ValueError, match=r"unknown meta-controller 'bandits' \(did you mean 'bandit'"
    ):
        make_controller("bandits", 0)
    with pytest.raises(ValueError, match="allowed: " + re.escape(", ".join(CONTROLLERS)) + "$"):
        make_controller("ucb", 0)
    with pytest.raises(ValueError, match=r"unexpected argument\(s\) window.*allowed: ranges"):
        make_controller("bandit", 0, window=90)


def test_meta_kwargs_over_reads_the_space_through_the_constructors_parameter_names():
    ladder = get_policy_space("epsilon_ladder")
    assert meta_kwargs_over("fixed", "soft_entropy") == {
        "value": (1.0, 0.0, 1.0), "index_names": ("inv_tau1", "inv_tau2", "eps")}
    over_ladder = meta_kwargs_over("uniform", ladder)  # a discrete Λ: its points, no box
    assert list(over_ladder) == ["values", "index_names"]
    np.testing.assert_array_equal(over_ladder["values"], ladder.values(1))
    bandit = meta_kwargs_over("bandit", "family_softmax", families=4)  # the box K sets
    assert bandit["ranges"] == ((0.0, 3.0),) and bandit["accuracies"] == (1.0,)
    assert meta_kwargs_over("sliding_window_ucb", ladder)["arms"] == over_ladder["values"]
    with pytest.raises(ValueError, match=r"finite set of arms.*'soft_entropy' is a box"):
        meta_kwargs_over("sliding_window_ucb", "soft_entropy")
    with pytest.raises(ValueError, match=r"'epsilon_boltzmann' names none"):
        meta_kwargs_over("fixed", "epsilon_boltzmann")
    with pytest.raises(ValueError, match=r"unknown meta-controller 'ucb'"):
        meta_kwargs_over("ucb", "soft_entropy")


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dims", [1, 3])
def test_protocol_and_state_round_trip(name, dims):
    surface = demo_surface(dims)
    a = demo_controller(name, dims, seed=3)
    assert isinstance(a, MetaController) and a.dim == dims and len(a.index_names) == dims
    run_controller(a, surface, 120, rng=0)
    state = pickle.loads(pickle.dumps(a.state_dict()))
    b = demo_controller(name, dims, seed=999)
    b.load_state_dict(state)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(20):
        la, lb = a.sample(), b.sample()
        assert la.dtype == np.float64 and la.shape == (dims,)
        np.testing.assert_array_equal(la, lb)
        a.update(la, surface.sample_return(la, rng_a))
        b.update(lb, surface.sample_return(lb, rng_b))


@pytest.mark.parametrize("name", ALL)
def test_every_controller_validates_updates(name):
    c = demo_controller(name, 3, seed=0)
    lam = c.sample()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        c.update(lam[:2], 1.0)
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match=r"episode_return must be a finite number"):
            c.update(lam, bad)
    with pytest.raises(ValueError, match="state"):
        c.load_state_dict({"controller": "something else"})


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: FixedIndex(value=()), r"non-empty"),
        (lambda: FixedIndex(value=(1.0, float("nan"))), r"finite"),
        (lambda: UniformIndex(values=[]), r"non-empty"),
        (lambda: UniformIndex(ranges=[(1.0, 1.0)]), r"l < r"),
        (lambda: UniformIndex(ranges=[(2.0, 1.0)]), r"l < r"),
        (lambda: SlidingWindowUCB(arms=[]), r"non-empty"),
        (lambda: SlidingWindowUCB(arms=[[1.0], [1.0]]), r"distinct"),
        (lambda: SlidingWindowUCB(arms=[[1.0]], window=0), r"window must be an integer >= 1"),
        (lambda: SlidingWindowUCB(arms=[[1.0]], beta=-1.0), r"beta"),
        (lambda: SlidingWindowUCB(arms=[[1.0]], epsilon=1.5), r"epsilon must be in \[0, 1\]"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dims", [1, 3])
def test_sample_many_draws_rows_of_lambda_in_range(name, dims):
    surface = demo_surface(dims)
    c = demo_controller(name, dims, seed=5)
    run_controller(c, surface, 60, rng=0)
    lam = c.sample_many(7)
    assert lam.dtype == np.float64 and lam.shape == (7, dims)
    ranges = c.lambda_ranges
    assert ((lam >= ranges[:, 0]) & (lam <= ranges[:, 1])).all()
    for row in lam:  # every row is a λ the controller accepts back
        c.update(row, 1.0)
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="number of draws must be an integer >= 1"):
            c.sample_many(bad)


@pytest.mark.parametrize("name", ALL)
def test_sample_many_continues_from_a_restored_state_identically(name):
    a = demo_controller(name, 3, seed=2)
    run_controller(a, demo_surface(3), 50, rng=0)
    b = demo_controller(name, 3, seed=77)
    b.load_state_dict(pickle.loads(pickle.dumps(a.state_dict())))
    np.testing.assert_array_equal(a.sample_many(5), b.sample_many(5))


# -- greedy λ (gdi evaluate --policy greedy) ------------------------------------------------


def test_greedy_lambda_of_fixed_and_sliding_window_controllers():
    assert FixedIndex(value=(2.0, 3.0, 0.5)).greedy().tolist() == [2.0, 3.0, 0.5]
    s = SlidingWindowUCB(arms=[[0.0], [1.0], [2.0]], window=3, beta=1.0, epsilon=0.0,
                         index_names=("x",))
    with pytest.raises(ValueError, match="no arm has a mean return"):
        s.greedy()
    for arm, ret in [(0, 1.0), (1, 2.0), (2, 0.0), (1, 0.5)]:  # window [a1:2, a2:0, a1:0.5]
        s.update(np.array([float(arm)]), ret)
    # Means: a0 left the window (skipped), a1 1.25, a2 0; the bonus would not change this.
    assert s.greedy().tolist() == [1.0]
    s.update(np.array([2.0]), 3.0)  # window [a2:0, a1:0.5, a2:3] -> a1 0.5, a2 1.5
    assert s.greedy().tolist() == [2.0]


def test_match_arm_finds_an_arm_through_float32_and_names_the_closest_otherwise():
    """The one arm matching of arms-based E's (gdi.meta.base.match_arm): a λ that went
    through float32 is still its arm; a λ that is no arm names the nearest one."""
    from gdi.meta.base import match_arm

    arms = np.array([[0.1, 0.3], [1.0 / 3.0, 0.7], [2.0, 0.0]])
    for index, arm in enumerate(arms):
        assert match_arm(arms, arm.astype(np.float32).astype(np.float64)) == index
    with pytest.raises(ValueError, match=r"λ=\[0\.35, 0\.7\] is not one of the 3 arms.*"
                                         r"closest: arm 1 = \[0\.333"):
        match_arm(arms, np.array([0.35, 0.7]))
