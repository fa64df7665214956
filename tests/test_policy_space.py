"""Policy spaces π_λ and the bandit's λ ↔ x transforms (gdi.policy_space)."""

import math
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import gdi.policy_space
from gdi.policy_space import (
    INDEX_TRANSFORMS,
    POLICY_SPACES,
    boltzmann_log_policy,
    boltzmann_policy,
    epsilon_greedy_policy,
    get_policy_space,
    inv_temperature_to_x,
    soft_entropy_log_policy,
    soft_entropy_policy,
    x_to_inv_temperature,
)
from gdi.policy_space.epsilon_ladder import EpsilonLadder
from tests.tolerance import assert_close

DTYPE = torch.float64


def acts_with(space, families: int) -> bool:
    """Whether ``space`` acts with ``families`` parameter families (its own check says)."""
    try:
        space.check_families(families)
    except ValueError:
        return False
    return True


def first_families(space) -> int:
    """The fewest parameter families ``space`` acts with (1, or 2 for a space that picks one
    of K >= 2 families)."""
    return next(f for f in (1, 2) if acts_with(space, f))


def naive_soft_entropy(adv1, adv2, inv_tau1, inv_tau2, eps):
    """ε·softmax(A₁/τ₁) + (1−ε)·softmax(A₂/τ₂) written as the equation reads."""
    e1 = torch.exp(inv_tau1[..., None] * adv1)
    e2 = torch.exp(inv_tau2[..., None] * adv2)
    return eps[..., None] * e1 / e1.sum(-1, keepdim=True) + (1 - eps[..., None]) * e2 / e2.sum(
        -1, keepdim=True
    )


def random_case(seed=0, lead=(5, 3), num_actions=6):
    generator = torch.Generator().manual_seed(seed)
    adv1 = torch.randn(*lead, num_actions, generator=generator, dtype=DTYPE)
    adv2 = torch.randn(*lead, num_actions, generator=generator, dtype=DTYPE)
    inv_tau1 = 3 * torch.rand(*lead, generator=generator, dtype=DTYPE)
    inv_tau2 = 3 * torch.rand(*lead, generator=generator, dtype=DTYPE)
    eps = torch.rand(*lead, generator=generator, dtype=DTYPE)
    return adv1, adv2, inv_tau1, inv_tau2, eps


# ---- soft entropy ----------------------------------------------------------------------------


def test_soft_entropy_matches_naive_formula():
    case = random_case()
    probs = soft_entropy_policy(*case)
    assert_close(probs, naive_soft_entropy(*case))
    assert_close(probs.sum(-1), torch.ones(5, 3, dtype=DTYPE))
    assert_close(soft_entropy_log_policy(*case), naive_soft_entropy(*case).log())


def test_soft_entropy_by_hand():
    # A₁ = (0, log 3), β₁ = 1 → softmax = (¼, ¾);  β₂ = 0 → uniform (½, ½);  ε = 0.5
    # π = 0.5·(¼, ¾) + 0.5·(½, ½) = (0.375, 0.625)
    adv = torch.tensor([0.0, math.log(3.0)], dtype=DTYPE)
    probs = soft_entropy_policy(adv, adv, 1.0, 0.0, 0.5)
    assert_close(probs, torch.tensor([0.375, 0.625], dtype=DTYPE))


@pytest.mark.parametrize("eps", [0.0, 1.0])
def test_eps_at_the_ends_is_one_boltzmann(eps):
    adv1, adv2, inv_tau1, inv_tau2, _ = random_case(seed=1)
    log_probs = soft_entropy_log_policy(adv1, adv2, inv_tau1, inv_tau2, eps)
    expected = (
        boltzmann_log_policy(adv1, inv_tau1) if eps == 1.0 else boltzmann_log_policy(adv2, inv_tau2)
    )
    # Exact, as the docstring promises: log 1 = 0, exp(0) = 1 and exp(-inf) = 0 are exact in
    # every kernel, so the unused component drops out and the same log-softmax is returned.
    assert torch.equal(log_probs, expected)


def test_eps_at_the_ends_sends_no_gradient_to_the_unused_family():
    adv1, adv2, inv_tau1, inv_tau2, _ = random_case(seed=2)
    adv1.requires_grad_(True)
    adv2.requires_grad_(True)
    soft_entropy_log_policy(adv1, adv2, inv_tau1, inv_tau2, 0.0)[..., 0].sum().backward()
    assert (adv1.grad == 0).all() and torch.isfinite(adv2.grad).all() and (adv2.grad != 0).any()


def test_zero_inverse_temperature_is_exactly_uniform():
    adv = torch.tensor([[1e30, -1e30, 5.0], [0.0, 2.0, -7.0]])
    log_probs = boltzmann_log_policy(adv, 0.0)
    assert torch.equal(log_probs, torch.full_like(adv, -math.log(3.0)))
    probs = soft_entropy_policy(adv, -adv, 0.0, 0.0, torch.tensor([0.3, 0.9]))
    assert torch.equal(probs, probs[..., :1].expand_as(probs))  # all entries identical


def test_sharp_policy_with_huge_advantages_is_finite_with_finite_gradient():
    adv = torch.tensor([[1e4, -1e4, 0.0, 1e4 - 1.0]], requires_grad=True)
    for eps in (0.0, 0.3, 1.0):
        log_probs = soft_entropy_log_policy(adv, -adv, 50.0, 50.0, eps)
        assert torch.isfinite(log_probs).all()
        (grad,) = torch.autograd.grad(log_probs[0, 1] + log_probs.exp().sum(), adv)
        assert torch.isfinite(grad).all()
    probs = soft_entropy_policy(adv, adv, 50.0, 50.0, 0.5).detach()
    assert_close(probs.sum(-1), torch.ones(1))


# ---- ε-greedy ------------------------------------------------------------------------------


def test_epsilon_greedy_splits_ties():
    q = torch.tensor([1.0, 3.0, 3.0, 0.0])
    # ε = 0.2: each action gets 0.2/4 = 0.05; the two tied maxima share 0.8 → 0.4 + 0.05
    expected = torch.tensor([0.05, 0.45, 0.45, 0.05])
    assert_close(epsilon_greedy_policy(q, 0.2), expected)
    assert_close(epsilon_greedy_policy(q.flip(0), 0.2), expected.flip(0))


def test_epsilon_greedy_ends():
    q = torch.tensor([[0.0, 2.0, 1.0]])
    assert torch.equal(epsilon_greedy_policy(q, 0.0), torch.tensor([[0.0, 1.0, 0.0]]))
    assert_close(epsilon_greedy_policy(q, 1.0), torch.full((1, 3), 1 / 3))


# ---- shapes and bad inputs -----------------------------------------------------------------


def test_broadcasting_of_lambda_components():
    adv = torch.randn(4, 2, 5)
    per_row = soft_entropy_policy(adv, adv, torch.ones(4, 2), torch.ones(2), 0.5)
    scalars = soft_entropy_policy(adv, adv, 1.0, 1.0, torch.tensor(0.5))
    assert per_row.shape == scalars.shape == (4, 2, 5)
    assert_close(per_row, scalars)
    assert epsilon_greedy_policy(adv, torch.full((4, 1), 0.1)).shape == (4, 2, 5)


def test_lambda_must_not_grow_the_leading_shape():
    # [B, 1] against advantages [B, A] would broadcast to [B, B, A]; it is an error.
    with pytest.raises(ValueError, match=r"inv_tau has shape \(4, 1\)"):
        boltzmann_policy(torch.randn(4, 3), torch.ones(4, 1))
    with pytest.raises(ValueError, match="eps"):
        soft_entropy_policy(torch.randn(4, 3), torch.randn(4, 3), 1.0, 1.0, torch.ones(3))


@pytest.mark.parametrize("eps", [-0.1, 1.1, float("nan")])
def test_eps_outside_unit_interval_rejected(eps):
    adv = torch.randn(2, 3)
    with pytest.raises(ValueError, match="eps"):
        soft_entropy_policy(adv, adv, 1.0, 1.0, eps)
    with pytest.raises(ValueError, match="eps"):
        epsilon_greedy_policy(adv, eps)


def test_negative_inverse_temperature_rejected():
    adv = torch.randn(2, 3)
    with pytest.raises(ValueError, match="inv_tau"):
        boltzmann_policy(adv, -1.0)
    with pytest.raises(ValueError, match="inv_tau"):
        soft_entropy_policy(adv, adv, 1.0, torch.tensor([1.0, -0.5]), 0.5)


def test_bad_advantages_rejected():
    with pytest.raises(ValueError, match="adv"):
        boltzmann_policy(torch.tensor(1.0), 1.0)
    with pytest.raises(ValueError, match="same number of actions"):
        soft_entropy_policy(torch.randn(2, 3), torch.randn(2, 4), 1.0, 1.0, 0.5)


# ---- PolicySpace objects -------------------------------------------------------------------


def test_registry_and_lookup():
    # Every module of the package but the shared two is a space that registered itself.
    package = Path(gdi.policy_space.__file__).parent
    modules = {f"gdi.policy_space.{m.name}" for m in pkgutil.iter_modules([str(package)])}
    assert {type(space).__module__ for space in POLICY_SPACES.values()} == modules - {
        "gdi.policy_space.base", "gdi.policy_space.functions"}
    for name, space in POLICY_SPACES.items():
        assert space.name == name and get_policy_space(name) is space
    assert get_policy_space("soft_entropy").index_names == ("inv_tau1", "inv_tau2", "eps")
    with pytest.raises(ValueError, match="unknown policy space 'ucb'; allowed: " + re.escape(
            ", ".join(sorted(POLICY_SPACES)))):
        get_policy_space("ucb")


def test_policy_space_log_probs_take_lambda_as_last_axis():
    adv1, adv2, inv_tau1, inv_tau2, eps = random_case(seed=3)
    space = POLICY_SPACES["soft_entropy"]
    lam = torch.stack([inv_tau1, inv_tau2, eps], dim=-1)
    assert_close(
        space.log_probs([adv1, adv2], lam),
        soft_entropy_log_policy(adv1, adv2, inv_tau1, inv_tau2, eps),
    )
    # one family: A₁ = A₂; a stacked [F, ..., A] tensor is the same as a list of F tensors
    assert_close(
        space.log_probs(adv1[None], lam),
        soft_entropy_log_policy(adv1, adv1, inv_tau1, inv_tau2, eps),
    )
    assert_close(space.probs(torch.stack([adv1, adv2]), lam).sum(-1),
                               torch.ones(5, 3, dtype=DTYPE))
    boltzmann = POLICY_SPACES["boltzmann"]
    assert_close(
        boltzmann.log_probs([adv1, adv2], inv_tau1[..., None]), boltzmann_log_policy(adv1, inv_tau1)
    )
    greedy = POLICY_SPACES["epsilon_greedy"]
    assert_close(
        greedy.probs([adv1, adv2], eps[..., None]), epsilon_greedy_policy(adv1, eps)
    )


@pytest.mark.parametrize("name", sorted(POLICY_SPACES))
@pytest.mark.parametrize("extra", [-1, 1])
def test_wrong_lambda_width_rejected(name, extra):
    adv = torch.randn(4, 3)
    space = POLICY_SPACES[name]
    with pytest.raises(ValueError, match=rf"{name}.*\[\.\.\., {space.dim}\]"):
        space.log_probs([adv, adv], torch.ones(4, space.dim + extra))


def test_every_space_declares_one_entry_per_coordinate_and_a_box_inside_its_bounds():
    for space in POLICY_SPACES.values():
        k = space.dim
        assert len(space.bounds) == len(space.search_box) == len(space.search_accuracies) == k
        assert len(space.inverse_temperatures) == k
        families = first_families(space)
        space.check_lambda_box(np.asarray(space.default_box(families)), families)


# ---- the spaces added for the operator view ------------------------------------------------


def test_epsilon_ladder_is_apex_ladder():
    """ε_l = 0.4^(1 + 7·l/255), l = 0…255, written out from Ape-X's formula per index."""
    space = get_policy_space("epsilon_ladder")
    values = space.values(1)
    assert values.shape == (256, 1) and values[0, 0] == 0 and values[-1, 0] == 255
    q = torch.tensor([[1.0, 3.0, 2.0]] * 4, dtype=DTYPE)
    lam = torch.tensor([[0.0], [1.0], [128.0], [255.0]], dtype=DTYPE)
    probs = space.probs([q], lam)
    for row, index in enumerate([0, 1, 128, 255]):
        eps = 0.4 ** (1 + 7 * index / 255)
        want = [eps / 3, 1 - eps + eps / 3, eps / 3]
        assert_close(probs[row], want)
    assert_close(float(probs[3, 0]) * 3, 0.4 ** 8)  # Ape-X's smallest ε
    with pytest.raises(ValueError, match=r"l must be an integer in \[0, 255\]"):
        space.log_probs([q[:1]], torch.tensor([[0.5]], dtype=DTYPE))
    with pytest.raises(ValueError, match=r"l must be an integer in \[0, 255\]"):
        space.log_probs([q[:1]], torch.tensor([[256.0]], dtype=DTYPE))


def test_a_ladder_subclass_is_another_ladder():
    """size, base and alpha are what the formula, the range of l, E's box, Λ's points and the
    text read: changing them in a subclass changes all of them."""

    class ShortLadder(EpsilonLadder):
        name = "short_ladder"
        size, base, alpha = 8, 0.5, 3.0

    space = ShortLadder()  # not registered: POLICY_SPACES stays as it is
    assert space.bounds == space.default_box(1) == ((0.0, 7.0),)
    np.testing.assert_array_equal(space.values(1)[:, 0], np.arange(8.0))
    assert space.index_set_text() == "Λ = {ε_l = 0.5^(1 + 3·l/7) | l = 0…7}"
    q = torch.tensor([[1.0, 3.0, 2.0]] * 2, dtype=DTYPE)
    probs = space.probs([q], torch.tensor([[0.0], [7.0]], dtype=DTYPE))
    for row, eps in enumerate([0.5, 0.5 ** 4]):  # ε_0 = base, ε_7 = base^(1 + α)
        assert_close(probs[row], [eps / 3, 1 - eps + eps / 3, eps / 3], magnitude=1.0)
    with pytest.raises(ValueError, match=r"l must be an integer in \[0, 7\]"):
        space.log_probs([q[:1]], torch.tensor([[8.0]], dtype=DTYPE))
    assert get_policy_space("epsilon_ladder").size == 256  # the registered ladder is Ape-X's


def test_texts_are_read_from_the_space():
    soft = get_policy_space("soft_entropy")
    assert soft.lambda_text() == "λ = (1/τ₁, 1/τ₂, ε)"
    assert soft.index_set_text() == "λ = (1/τ₁, 1/τ₂, ε) ∈ [0, 50]×[0, 50]×[0, 1]"
    assert soft.point_text(soft.fixed_selection) == "λ = (1/τ₁, 1/τ₂, ε) = (1, 0, 1)"
    assert soft.policy_text(2) == soft.description  # two families: A₁ and A₂
    assert soft.policy_text(1) == "ε·softmax(A/τ₁) + (1−ε)·softmax(A/τ₂)"
    assert get_policy_space("boltzmann").index_set_text() == "λ = 1/τ ∈ [0, 50]"
    assert get_policy_space("family_softmax").index_set_text(3).startswith("Λ = {i | i = 0…2}")
    for space in POLICY_SPACES.values():  # every space has its texts, whatever its kind
        families = first_families(space)
        assert space.lambda_text().startswith("λ = ") and space.policy_text(families)
        assert space.index_set_text(families)


def test_family_softmax_acts_with_the_family_lambda_names():
    space = get_policy_space("family_softmax")
    advs = torch.randn(3, 4, 5, dtype=DTYPE, requires_grad=True)  # K = 3 families, 4 rows
    lam = torch.tensor([[0.0], [2.0], [1.0], [2.0]], dtype=DTYPE)
    log_pi = space.log_probs(advs, lam)
    for row, family in enumerate([0, 2, 1, 2]):
        assert_close(log_pi[row], torch.log_softmax(advs[family, row], -1))
    log_pi[1].sum().backward()  # row 1 acted with family 2: gradient reaches family 2 only
    assert advs.grad[2, 1].abs().sum() > 0 and advs.grad[:2].abs().sum() == 0
    with pytest.raises(ValueError, match=r"family must be an integer in \[0, 2\]"):
        space.log_probs(advs.detach(), torch.full((4, 1), 3.0, dtype=DTYPE))
    with pytest.raises(ValueError, match="K >= 2"):
        space.check_families(1)
    np.testing.assert_array_equal(space.values(3), [[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match=r"family in \[0, 3\]"):  # E reaches a 4th family
        space.check_lambda_box(np.array([[0.0, 3.0]]), families=3)


def test_epsilon_boltzmann_is_the_uniform_mixed_into_a_softmax():
    space = get_policy_space("epsilon_boltzmann")
    adv = torch.tensor([[0.0, 1.0, 3.0]], dtype=DTYPE)
    got = space.probs([adv], torch.tensor([[2.0, 0.3]], dtype=DTYPE))[0]
    soft = torch.exp(2.0 * adv[0]) / torch.exp(2.0 * adv[0]).sum()
    assert_close(got, 0.3 / 3 + 0.7 * soft)


# ---- λ ↔ x ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transform", INDEX_TRANSFORMS)
def test_transforms_round_trip(transform):
    inv_tau = np.array([0.0, 0.5, 1.0, 7.0, 50.0])
    x = inv_temperature_to_x(inv_tau, transform)
    assert_close(x_to_inv_temperature(x, transform), inv_tau)


def test_log1p_transform_is_the_appendix_formula():
    # τ = 1/(exp(x) − 1): x = log 2 → τ = 1; x = log 1.5 → τ = 2; x = 0 → τ = ∞ (β = 0).
    x = np.array([math.log(2.0), math.log(1.5), 0.0, 3.0])
    inv_tau = x_to_inv_temperature(x, "log1p")
    assert_close(inv_tau, [1.0, 0.5, 0.0, math.exp(3.0) - 1.0])
    assert_close(1.0 / inv_tau[:2], 1.0 / (np.exp(x[:2]) - 1.0))
    assert_close(inv_temperature_to_x([1.0, 0.5], "log1p"), np.log1p([1.0, 0.5]))
    # Exact: the identity transform returns a copy.
    np.testing.assert_array_equal(inv_temperature_to_x([0.0, 50.0]), [0.0, 50.0])


def test_transform_bad_inputs_rejected():
    with pytest.raises(ValueError, match="unknown index transform 'exp'"):
        inv_temperature_to_x(1.0, "exp")
    with pytest.raises(ValueError, match=">= 0"):
        inv_temperature_to_x(-1.0)
    with pytest.raises(ValueError, match=">= 0"):
        x_to_inv_temperature(np.array([0.1, -0.1]), "log1p")


# ---- the acting path (NumPy, probability space) ---------------------------------------------


def lambdas_of(space, families: int, n: int, rng) -> np.ndarray:
    """``n`` λ of a space, read from it: its points when Λ is discrete, else draws over its
    default box, the box's two corners first; inverse temperatures also far past the box."""
    points = space.values(families)
    if points is not None:
        return points[rng.integers(len(points), size=n)]
    box = np.asarray(space.default_box(families), dtype=np.float64)
    lam = rng.uniform(box[:, 0], box[:, 1], size=(n, space.dim))
    lam[0], lam[1] = box[:, 0], box[:, 1]
    lam[2] = np.where(space.inverse_temperatures, 1000.0, box[:, 1])
    return lam


@pytest.mark.parametrize("name", sorted(POLICY_SPACES))
def test_acting_probs_equal_the_log_space_policy(name):
    """The actor's NumPy π_λ against the learner's torch π_λ, on λ drawn from each space's own
    box or points (the box's corners and 1/τ = 1000 included), and on every family count the
    test can give it."""
    rng = np.random.default_rng(11)
    n, a = 64, 6
    space = POLICY_SPACES[name]
    families = first_families(space)
    advs = rng.normal(0, 3, (families, n, a)).astype(np.float32)
    advs[0, 3, 1] = advs[0, 3, 4]  # a tie for ε-greedy
    lam = lambdas_of(space, families, n, rng)
    got = space.acting_probs(advs, lam)
    want = space.probs(torch.from_numpy(advs).double(), torch.from_numpy(lam))
    assert got.dtype == np.float64
    assert_close(got, want)
    assert_close(got.sum(-1), 1.0)


def test_soft_entropy_acting_probs_are_the_papers_mixture():
    """The soft-entropy space's acting π_λ against the equation as written, on two families,
    where e^{1000·A} overflows the naive formula and the mixture stays exact."""
    rng = np.random.default_rng(12)
    adv1, adv2 = rng.normal(0, 3, (2, 64, 6))
    lam = np.column_stack([rng.uniform(0, 50, 64), rng.uniform(0, 50, 64), rng.uniform(0, 1, 64)])
    lam[:4] = [[0, 0, 0], [0, 50, 1], [50, 0, 0.5], [1000, 1000, 1]]
    got = POLICY_SPACES["soft_entropy"].acting_probs(np.stack([adv1, adv2]), lam)
    a1, a2, lt = (torch.from_numpy(x) for x in (adv1, adv2, lam))
    want = naive_soft_entropy(a1, a2, lt[:, 0], lt[:, 1], lt[:, 2])
    want[3] = torch.softmax(1000 * a1[3], -1)  # ε = 1: the first component alone
    # Probabilities ≤ 1 from a six-term normalization: the rule at magnitude 1, terms = 6.
    assert_close(got, want, magnitude=1.0, terms=6)
    assert_close(got.sum(-1), 1.0, terms=6)


LN2, LN3 = float(np.log(2.0)), float(np.log(3.0))


@pytest.mark.parametrize(("name", "advs", "lam", "by_hand"), [
    # softmax(A/τ): A = (0, ln 2, ln 3) at 1/τ = 1 gives e^A / Σ e^A = (1, 2, 3)/6, at
    # 1/τ = 2 (1, 4, 9)/14, at 1/τ = 0 uniform.
    ("boltzmann", [[0.0, LN2, LN3]], [1.0], [1 / 6, 2 / 6, 3 / 6]),
    ("boltzmann", [[0.0, LN2, LN3]], [2.0], [1 / 14, 4 / 14, 9 / 14]),
    ("boltzmann", [[0.0, LN2, LN3]], [0.0], [1 / 3, 1 / 3, 1 / 3]),
    # ε/|A| each, and 1 − ε more on the greedy action; a tie shares the 1 − ε.
    ("epsilon_greedy", [[1.0, 3.0, 2.0]], [0.3], [0.1, 0.8, 0.1]),
    ("epsilon_greedy", [[3.0, 3.0, 1.0]], [0.3], [0.45, 0.45, 0.1]),
    # ε·uniform + (1 − ε)·softmax(A/τ): 0.1 + 0.7·(1, 2, 3)/6.
    ("epsilon_boltzmann", [[0.0, LN2, LN3]], [1.0, 0.3], [0.1 + 0.7 / 6, 0.1 + 1.4 / 6, 0.1 + 2.1 / 6]),
    # Ape-X's rung l = 0 is ε = 0.4, rung 255 is 0.4⁸ = 0.00065536.
    ("epsilon_ladder", [[1.0, 3.0, 2.0]], [0.0], [0.4 / 3, 0.6 + 0.4 / 3, 0.4 / 3]),
    ("epsilon_ladder", [[1.0, 3.0, 2.0]], [255.0],
     [0.00065536 / 3, 1 - 0.00065536 * 2 / 3, 0.00065536 / 3]),
    # softmax of the family λ names: family 1's A = (0, ln 2, ln 3), family 0's ignored.
    ("family_softmax", [[5.0, 0.0, 0.0], [0.0, LN2, LN3]], [1.0], [1 / 6, 2 / 6, 3 / 6]),
    # ε·softmax(A₁/τ₁) + (1 − ε)·softmax(A₂/τ₂) = 0.5·(1, 2, 3)/6 + 0.5·uniform.
    ("soft_entropy", [[0.0, LN2, LN3], [9.0, 0.0, 1.0]], [1.0, 0.0, 0.5],
     [0.5 / 6 + 0.5 / 3, 1.0 / 6 + 0.5 / 3, 1.5 / 6 + 0.5 / 3]),
])
def test_acting_probs_by_hand(name, advs, lam, by_hand):
    """Each space's actor-side (NumPy) π_λ on a case worked by hand from its formula: a check
    that does not lean on the learner's torch π_λ (test_acting_probs_equal_the_log_space_policy
    ties the two together)."""
    advs = np.asarray(advs)[:, None, :]  # [F, N = 1, A]
    got = POLICY_SPACES[name].acting_probs(advs, np.asarray([lam], dtype=np.float64))
    assert_close(got[0], np.asarray(by_hand), magnitude=1.0, terms=3)


def test_acting_probs_reject_a_lambda_of_the_wrong_shape():
    adv = np.zeros((1, 4, 3), np.float32)
    with pytest.raises(ValueError, match=r"λ \[N, 3\] \(inv_tau1, inv_tau2, eps\), got .*\(4, 2\)"):
        POLICY_SPACES["soft_entropy"].acting_probs(adv, np.ones((4, 2)))
