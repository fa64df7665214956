"""Dueling Q = Ā + V with Ā = A − E_π[A] (Eq. "i3 casa equ")."""

import pytest
import torch

from gdi.learning import dueling_q
from tests.tolerance import assert_close

DTYPE = torch.float64


def test_by_hand():
    adv = torch.tensor([1.0, 2.0, 3.0], dtype=DTYPE)
    probs = torch.tensor([0.5, 0.25, 0.25], dtype=DTYPE)
    value = torch.tensor(10.0, dtype=DTYPE)
    # E_π[A] = 0.5·1 + 0.25·2 + 0.25·3 = 1.75;  Q = A − 1.75 + 10
    expected = torch.tensor([9.25, 10.25, 11.25], dtype=DTYPE)
    assert_close(dueling_q(adv, value, probs), expected)


def test_expected_q_under_pi_is_value():
    generator = torch.Generator().manual_seed(0)
    adv = 5 * torch.randn(6, 3, 18, generator=generator, dtype=DTYPE)
    value = torch.randn(6, 3, generator=generator, dtype=DTYPE)
    probs = torch.softmax(torch.randn(6, 3, 18, generator=generator, dtype=DTYPE), dim=-1)
    q = dueling_q(adv, value, probs)
    assert q.shape == adv.shape
    # A sum of 18 terms π·Q, each of the size of Q, whose sum V is smaller.
    assert_close((probs * q).sum(-1), value, terms=18, magnitude=(probs * q.abs()).sum(-1).max())


def test_uniform_policy_is_mean_centred_dueling():
    adv = torch.tensor([[4.0, 0.0, -1.0, 1.0]], dtype=DTYPE)
    value = torch.tensor([2.0], dtype=DTYPE)
    uniform = torch.full_like(adv, 0.25)
    # Wang et al. (2016): Q = V + A − mean(A) = 2 + A − 1
    assert_close(dueling_q(adv, value, uniform), adv + 1.0)


def test_gradient_with_detached_policy():
    adv = torch.tensor([1.0, -2.0, 0.5], dtype=DTYPE, requires_grad=True)
    value = torch.tensor(0.3, dtype=DTYPE, requires_grad=True)
    probs = torch.softmax(adv, -1).detach()
    dueling_q(adv, value, probs)[1].backward()
    # ∂Q(a=1)/∂A = e_1 − π,  ∂Q(a=1)/∂V = 1
    assert_close(adv.grad, torch.tensor([0.0, 1.0, 0.0], dtype=DTYPE) - probs)
    assert_close(value.grad, torch.tensor(1.0, dtype=DTYPE))


@pytest.mark.parametrize(
    ("name", "adv_shape", "value_shape", "probs_shape"),
    [
        ("adv", (), (), ()),
        ("value", (4, 3), (4, 1), (4, 3)),
        ("value", (4, 3), (), (4, 3)),
        ("probs", (4, 3), (4,), (4, 2)),
        ("probs", (4, 3), (4,), (3,)),
    ],
)
def test_bad_shapes_name_the_argument(name, adv_shape, value_shape, probs_shape):
    with pytest.raises(ValueError, match=name):
        dueling_q(torch.zeros(adv_shape), torch.zeros(value_shape), torch.zeros(probs_shape))
