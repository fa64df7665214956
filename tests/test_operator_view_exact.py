"""What the operator-view presets take from their namesakes, said exactly and shown: an ε-greedy
Λ gives the policy-gradient term no gradient with respect to A (A learns through Retrace's
Q = Ā + V alone), and the Agent57-like arms are 32 different policies."""

import itertools

import numpy as np
import pytest
import torch

from gdi.learning import LossConfig, loss
from gdi.policy_space import get_policy_space
from gdi.presets import AGENT57_ARMS, PRESETS
from tests.learning.test_loss import make_case

OPERATOR_VIEW = [name for name in PRESETS if name.endswith("-like")]


def pg_and_q_gradients(space: str, lam: list[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """∂L/∂A of the policy-gradient term alone and of the Q term alone, on one random batch."""
    grads = []
    for scales in ({"value_loss_scale": 0.0, "q_loss_scale": 0.0, "pg_loss_scale": 1.0},
                   {"value_loss_scale": 0.0, "q_loss_scale": 1.0, "pg_loss_scale": 0.0}):
        outputs, batch = make_case(1, seed=11)
        batch = batch._replace(
            lambdas=torch.tensor(lam, dtype=batch.rewards.dtype).expand(*batch.actions.shape,
                                                                          len(lam)))
        total, metrics = loss(outputs, batch, LossConfig(policy_space=space, **scales))
        assert metrics["losses/policy"] != 0.0 or scales["pg_loss_scale"] == 0.0
        (grad,) = torch.autograd.grad(total, [outputs.adv])
        grads.append(grad)
    return grads[0], grads[1]


@pytest.mark.parametrize(("space", "lam"), [("epsilon_greedy", [0.1]),
                                            ("epsilon_greedy", [0.7]),
                                            ("epsilon_ladder", [0.0]),
                                            ("epsilon_ladder", [200.0])])
def test_an_epsilon_greedy_lambda_gives_the_policy_gradient_no_gradient_on_a(space, lam):
    pg, q = pg_and_q_gradients(space, lam)
    # Exact zero, not small: greedy(A) is piecewise constant, so autograd has nothing to pass.
    assert (pg == 0).all()
    assert (q[0, :-1].abs().sum(-1) != 0).all()  # A still learns, through Q = Ā + V


@pytest.mark.parametrize(("space", "lam"), [("boltzmann", [1.0]),
                                            ("epsilon_boltzmann", [5.0, 0.1])])
def test_a_softmax_lambda_does_give_the_policy_gradient_a_gradient_on_a(space, lam):
    pg, _ = pg_and_q_gradients(space, lam)  # the control: the test above can fail
    assert (pg[0, :-1].abs().sum(-1) != 0).any()


def test_agent57_like_arms_are_32_different_policies():
    space = get_policy_space("epsilon_boltzmann")
    assert len(AGENT57_ARMS) == 32 and len(set(AGENT57_ARMS)) == 32
    advantages = np.random.default_rng(0).normal(size=(1, 64, 6))
    probs = [space.acting_probs(advantages, np.tile(arm, (64, 1))) for arm in AGENT57_ARMS]
    for (a, pa), (b, pb) in itertools.combinations(zip(AGENT57_ARMS, probs, strict=True), 2):
        # Far apart, not a rounding difference: a 1e-3 change of one probability at least.
        assert np.abs(pa - pb).max() > 1e-3, (a, b)


@pytest.mark.parametrize("name", OPERATOR_VIEW)
def test_each_like_preset_says_what_is_the_namesakes_and_what_is_gdis(name):
    notes = PRESETS[name].notes
    assert "From GDI, not from the namesake: T (V-trace for V, Retrace for Q = Ā + V" in notes
    assert "no target network" in notes and "no entropy bonus" in notes
    greedy = PRESETS[name].fields["policy_space"] in ("epsilon_greedy", "epsilon_ladder")
    assert ("policy-gradient term carries no gradient to A" in notes) == greedy
