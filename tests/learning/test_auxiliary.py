"""gdi.learning.auxiliary: masked inverse/forward dynamics losses, against hand computations.

Masked rows hold NaN (and placeholder actions −1): the functions must never read them, neither
into the loss nor into the gradient.
"""

import math

import pytest
import torch

from gdi.learning.auxiliary import forward_dynamics_loss, inverse_dynamics_loss
from tests.tolerance import assert_close

NAN = float("nan")


def test_inverse_dynamics_loss_by_hand():
    # Row (t, b): logits, action, valid. Cross-entropies −log softmax(logits)[a]:
    #   (0, 0): logits [0, 0, 0],       a = 1 → −log(1/3)          = log 3
    #   (0, 1): logits [0, log 2, 0],   a = 1 → −log(2/(1 + 2 + 1)) = log 2
    #   (1, 0): NaN logits, a = −1, masked
    #   (1, 1): logits [log 3, 0, 0],   a = 0 → −log(3/(3 + 1 + 1)) = log(5/3)
    # Masked mean: (log 3 + log 2 + log 5 − log 3) / 3 = log(10) / 3.
    logits = torch.tensor(
        [
            [[0.0, 0.0, 0.0], [0.0, math.log(2.0), 0.0]],
            [[NAN, NAN, NAN], [math.log(3.0), 0.0, 0.0]],
        ],
        requires_grad=True,
    )
    actions = torch.tensor([[1, 1], [-1, 0]])
    valid = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    loss = inverse_dynamics_loss(logits, actions, valid)
    assert_close(loss, torch.tensor(math.log(10.0) / 3))
    loss.backward()
    # d/dlogits of CE/3 = (softmax − one_hot)/3; row (0, 0): ([1, 1, 1]/3 − [0, 1, 0]) / 3.
    assert_close(logits.grad[0, 0], torch.tensor([1 / 9, -2 / 9, 1 / 9]))
    assert torch.equal(logits.grad[1, 0], torch.zeros(3))  # masked NaN row: exactly 0


def test_inverse_dynamics_loss_matches_brute_force_weighted_mean():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 3, 5, generator=gen)
    actions = torch.randint(0, 5, (4, 3), generator=gen)
    valid = torch.tensor([[1.0, 0.5, 0.0], [1.0, 1.0, 1.0], [0.0, 0.25, 1.0], [1.0, 1.0, 0.0]])
    num, den = 0.0, 0.0
    for t in range(4):
        for b in range(3):
            ce = -torch.log_softmax(logits[t, b], dim=0)[actions[t, b]]
            num += valid[t, b] * ce
            den += valid[t, b]
    assert_close(inverse_dynamics_loss(logits, actions, valid), num / den)


def test_forward_dynamics_loss_by_hand_and_target_detached():
    # Per-row error, mean over E = 2:
    #   (0, 0): predicted [1, 2] vs target [1, 0] → (0 + 4)/2 = 2
    #   (0, 1): NaN, masked
    #   (1, 0): predicted [3, 3] vs target [0, 3] → (9 + 0)/2 = 4.5
    #   (1, 1): predicted [0, 0] vs target [1, 1] → (1 + 1)/2 = 1
    # Masked mean: (2 + 4.5 + 1) / 3 = 2.5.
    predicted = torch.tensor(
        [[[1.0, 2.0], [NAN, NAN]], [[3.0, 3.0], [0.0, 0.0]]], requires_grad=True
    )
    target = torch.tensor([[[1.0, 0.0], [NAN, NAN]], [[0.0, 3.0], [1.0, 1.0]]], requires_grad=True)
    valid = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    loss = forward_dynamics_loss(predicted, target, valid)
    assert_close(loss, torch.tensor(2.5))
    loss.backward()
    assert target.grad is None  # the target never receives gradient
    # d/dpredicted = 2·(predicted − target) / E / Σvalid = (predicted − target) / 3.
    expected = torch.tensor([[[0.0, 2 / 3], [0.0, 0.0]], [[1.0, 0.0], [-1 / 3, -1 / 3]]])
    assert_close(predicted.grad, expected)


def test_all_masked_gives_zero_not_nan():
    logits = torch.randn(2, 2, 3, requires_grad=True)
    predicted = torch.randn(2, 2, 4, requires_grad=True)
    valid = torch.zeros(2, 2)
    inv = inverse_dynamics_loss(logits, torch.full((2, 2), -1), valid)
    fwd = forward_dynamics_loss(predicted, torch.randn(2, 2, 4), valid)
    assert inv.item() == 0.0 and fwd.item() == 0.0  # exact: no row is summed
    (inv + fwd).backward()
    assert torch.equal(logits.grad, torch.zeros_like(logits))
    assert torch.equal(predicted.grad, torch.zeros_like(predicted))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"logits": torch.zeros(2, 3)}, "logits"),
        ({"logits": torch.zeros(3, 2, 4)}, "logits"),
        ({"actions": torch.zeros(2, 2, 1, dtype=torch.long)}, "actions"),
        ({"actions": torch.zeros(2, 2)}, "actions"),
        ({"valid": torch.ones(2)}, "valid"),
        ({"valid": torch.ones(2, 2, dtype=torch.long)}, "valid"),
    ],
)
def test_inverse_dynamics_loss_rejects_bad_arguments(kwargs, name):
    args = {"logits": torch.zeros(2, 2, 4), "actions": torch.zeros(2, 2, dtype=torch.long),
            "valid": torch.ones(2, 2)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        inverse_dynamics_loss(**args)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"predicted": torch.zeros(2, 2)}, "predicted"),
        ({"target": torch.zeros(2, 2, 5)}, "target"),
        ({"target": torch.zeros(2, 3, 4)}, "target"),
        ({"valid": torch.ones(2, 2, 1)}, "valid"),
    ],
)
def test_forward_dynamics_loss_rejects_bad_arguments(kwargs, name):
    args = {"predicted": torch.zeros(2, 2, 4), "target": torch.zeros(2, 2, 4),
            "valid": torch.ones(2, 2)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        forward_dynamics_loss(**args)
