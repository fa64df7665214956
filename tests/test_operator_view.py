"""The operator-view presets (paper Sec. "An Operator View of RL Methods"): each one's (Λ, E,
families) against the paper's description, T kept as GDI-I³'s, and a tiny real training run."""

import json

import numpy as np
import pytest

from gdi.cli import main
from gdi.meta import make_controller
from gdi.policy_space import get_policy_space
from gdi.presets import PRESETS, index_set_note, preset_table, resolve_config
from gdi.runtime.run_folder.meta_log import load_meta_log
from tests.runtime.helpers import TINY
from tests.tolerance import assert_close, is_close

OPERATOR_VIEW = ("impala-like", "dqn-like", "r2d2-like", "agent57-like", "laser-like")
#: What a preset of the operator view may change: Λ, π_λ, P_Λ, E and the families of T.
ALGORITHM_FIELDS = {"preset", "policy_space", "meta_controller", "meta_kwargs", "families",
                    "reward_shapes"}


def controller_of(cfg):
    return make_controller(cfg.meta_controller, 0, **cfg.meta_kwargs)


@pytest.mark.parametrize("name", OPERATOR_VIEW)
@pytest.mark.parametrize("env", ["minatar:breakout", "ale:Breakout"])
def test_each_preset_keeps_t_and_everything_else_of_gdi_i3(name, env):
    mine, reference = resolve_config(name, env).to_dict(), resolve_config("gdi-i3", env).to_dict()
    changed = {k for k in mine if mine[k] != reference[k]}
    assert changed <= ALGORITHM_FIELDS, changed - ALGORITHM_FIELDS
    assert set(mine["reward_shapes"]) == {"log"}  # GDI-I³'s T in every family


def test_presets_show_the_papers_classes():
    rows = {r["name"]: r for r in preset_table()}
    assert {n: rows[n]["category"] for n in OPERATOR_VIEW} == {
        "impala-like": "GDI-I⁰ (w/o E)", "dqn-like": "GDI-I⁰ (w/o E)",
        "r2d2-like": "GDI-I¹ (w/o E)", "agent57-like": "GDI-I²", "laser-like": "GDI-H¹ (w/o E)",
    }
    assert "agent57-like: " in index_set_note() and "NOT Agent57" in PRESETS["agent57-like"].notes


@pytest.mark.parametrize(("name", "space", "value"),
                         [("impala-like", "boltzmann", [1.0]), ("dqn-like", "epsilon_greedy", [0.1])])
def test_gdi_i0_presets_have_one_lambda(name, space, value):
    """DQN, IMPALA: |Λ| = 1, P_Λ(λ₀) = 1, E the identity, one family."""
    cfg = resolve_config(name, "minatar:breakout")
    assert (cfg.policy_space, cfg.meta_controller, cfg.families) == (space, "fixed", 1)
    controller = controller_of(cfg)
    np.testing.assert_array_equal(controller.sample_many(50), [value] * 50)
    np.testing.assert_array_equal(controller.lambda_ranges, [value * 2])


def test_r2d2_like_is_apex_epsilons_drawn_uniformly():
    """Ape-X/R2D2: Λ = {ε_l}, L = 256, ε_l = 0.4^(1 + 7·l/(L−1)), P_Λ uniform, E identity."""
    cfg = resolve_config("r2d2-like", "minatar:breakout")
    assert (cfg.policy_space, cfg.meta_controller, cfg.families) == ("epsilon_ladder", "uniform", 1)
    controller = controller_of(cfg)
    draws = controller.sample_many(20_000)[:, 0]
    counts = np.bincount(draws.astype(int), minlength=256)
    assert counts.size == 256 and counts.min() > 0  # every ε_l is drawn ...
    assert counts.max() < 3 * counts.mean()  # ... about equally often (mean 78)
    # the ε each index acts with, from π_λ's own probabilities: one greedy action of three
    space = get_policy_space(cfg.policy_space)
    q = np.tile([[0.0, 1.0, 0.0]], (256, 1))[None]
    acted_eps = space.acting_probs(q, np.arange(256.0)[:, None])[:, 0] * 3
    want = [0.4 ** (1 + 7 * index / 255) for index in range(256)]
    assert_close(acted_eps, want)
    controller.update(np.array([5.0]), 10.0)  # E learns nothing: the draws stay uniform
    with pytest.raises(ValueError, match="no greedy λ"):
        controller.greedy()


def test_agent57_like_is_sliding_window_ucb_over_a_discrete_2d_grid():
    """Agent57: GDI-I², E a sliding-window UCB (window 90, β = 1, ε_UCB = 0.5) over 32 arms."""
    cfg = resolve_config("agent57-like", "minatar:breakout")
    assert (cfg.meta_controller, cfg.families) == ("sliding_window_ucb", 1)
    space = get_policy_space(cfg.policy_space)
    controller = controller_of(cfg)
    assert space.dim == controller.dim == 2 and controller.arms.shape == (32, 2)
    assert (controller.window, controller.beta, controller.epsilon) == (90, 1.0, 0.5)
    assert len({tuple(a) for a in controller.arms}) == 32
    # E moves P_Λ: an arm with higher returns is played more once every arm was tried
    best = controller.arms[7]
    for _ in range(600):
        lam = controller.sample()
        controller.update(lam, 1.0 if np.array_equal(lam, best) else 0.0)
    np.testing.assert_array_equal(controller.greedy(), best)


def test_laser_like_has_k_families_each_drawn_uniformly_per_episode():
    """LASER: GDI-H¹ w/o E, Λ = {i | i = 1…K} the learners, P_Λ uniform, θ_i disjoint."""
    cfg = resolve_config("laser-like", "minatar:breakout")
    k = cfg.families
    assert k >= 2 and cfg.policy_space == "family_softmax" and cfg.meta_controller == "uniform"
    assert len(cfg.reward_shapes) == k
    draws = controller_of(cfg).sample_many(4000)[:, 0]
    np.testing.assert_array_equal(np.unique(draws), np.arange(k))
    assert np.bincount(draws.astype(int)).min() > 4000 / k * 0.8
    with pytest.raises(ValueError, match="family in"):  # E's reach must fit the K families
        resolve_config("laser-like", "minatar:breakout", families=2, reward_shapes=("log",) * 2)


@pytest.mark.parametrize("name", OPERATOR_VIEW)
def test_each_preset_trains(name, tmp_path, capsys):
    """A tiny real run from the command line: it completes, learns, and acts with λ ∈ Λ."""
    run = tmp_path / "run"
    main(["train", "--preset", name, "--env", "minatar:Breakout", "--frames", "1500",
          "--backend", "inline", "--run-dir", str(run), "--no-report", "--set", *TINY])
    out = capsys.readouterr().out
    assert "'minatar:Breakout' is stored as its canonical spec 'minatar:breakout'" in out
    config = json.loads((run / "config.json").read_text())
    assert config["preset"] == name and config["env"] == "minatar:breakout"
    assert "losses/total" in (run / "metrics.jsonl").read_text()
    _, lambdas, _ = load_meta_log(run)
    cfg = resolve_config(name, "minatar:breakout")
    space = get_policy_space(cfg.policy_space)
    values = space.values(cfg.families)
    if cfg.meta_controller == "sliding_window_ucb":
        values = np.asarray(cfg.meta_kwargs["arms"])
    elif cfg.meta_controller == "fixed":
        values = np.asarray([cfg.meta_kwargs["value"]])
    assert len(lambdas) > 0
    # Each λ is one of the values, as the actors' float32 copy of it.
    assert all(any(is_close(lam, value, dtype=np.float32) for value in values) for lam in lambdas)
    if name == "laser-like":  # episodes acted with more than one family
        assert len(np.unique(lambdas[:, 0])) > 1


def test_new_presets_are_listed_after_the_papers_rows():
    assert list(PRESETS)[:4] == ["gdi-i3", "gdi-h3", "gdi-i1", "gdi-i0"]
    assert set(OPERATOR_VIEW) <= set(PRESETS)
