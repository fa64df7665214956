"""Reward shapes of the hyperparameter table, by hand."""

import math

import pytest
import torch

from gdi.learning import (
    REWARD_SHAPES,
    get_reward_shape,
    identity_shape,
    log_shape,
    root_shape,
    symlog_shape,
)
from gdi.learning.shaping import sign_shape
from tests.tolerance import assert_close

DTYPE = torch.float64


def test_log_shape_as_printed():
    e = math.e
    rewards = torch.tensor([0.0, 1.0, e - 1.0, -1.0, -(e - 1.0), -(e**2 - 1.0)], dtype=DTYPE)
    # r ≥ 0: log(|r| + 1)·(2·1 − 0) = 2·log(1 + r);  r < 0: log(|r| + 1)·(0 − 1) = −log(1 + |r|)
    expected = torch.tensor([0.0, 2 * math.log(2.0), 2.0, -math.log(2.0), -1.0, -2.0], dtype=DTYPE)
    assert_close(log_shape(rewards), expected)


def test_log_shape_weighs_positive_rewards_twice():
    rewards = torch.tensor([0.5, 3.0, 100.0], dtype=DTYPE)
    assert_close(log_shape(rewards), -2.0 * log_shape(-rewards))


def test_symlog_shape_weighs_both_signs_alike():
    e = math.e
    rewards = torch.tensor([0.0, e - 1.0, -(e - 1.0), e**2 - 1.0, -(e**3 - 1.0), -1.0], dtype=DTYPE)
    # sign(r)·log(|r| + 1): 0 → 0, ±(e − 1) → ±1, e² − 1 → 2, −(e³ − 1) → −3, −1 → −log 2
    expected = torch.tensor([0.0, 1.0, -1.0, 2.0, -3.0, -math.log(2.0)], dtype=DTYPE)
    assert_close(symlog_shape(rewards), expected)
    # Where the printed log shape doubles a positive reward, symlog keeps it.
    positive = torch.tensor([0.5, 3.0, 100.0], dtype=DTYPE)
    assert_close(log_shape(positive), 2.0 * symlog_shape(positive))
    assert_close(log_shape(-positive), symlog_shape(-positive))


def test_root_shape_by_hand():
    rewards = torch.tensor([0.0, 15.0, -15.0, 80.0, -1.0], dtype=DTYPE)
    # 16^0.25 = 2 and 81^0.25 = 3, so:
    # 15 → (2 − 1) + 0.015 = 1.015;  −15 → −(2 − 1) − 0.015 = −1.015;  80 → (3 − 1) + 0.08 = 2.08
    # −1 → −(2^0.25 − 1) − 0.001
    expected = torch.tensor([0.0, 1.015, -1.015, 2.08, -(2**0.25 - 1.0) - 0.001], dtype=DTYPE)
    assert_close(root_shape(rewards), expected)


def test_root_shape_is_odd():
    rewards = torch.linspace(-50, 50, 11, dtype=DTYPE)
    assert_close(root_shape(-rewards), -root_shape(rewards))


def test_sign_shape_clips_as_dqn_by_hand():
    # Breakout's bricks (1, 4, 7) all become 1; a fraction keeps its sign; 0 stays 0.
    rewards = torch.tensor([-3.0, -0.5, 0.0, 0.2, 1.0, 4.0, 7.0], dtype=DTYPE)
    expected = torch.tensor([-1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0], dtype=DTYPE)
    assert torch.equal(sign_shape(rewards), expected)


def test_identity_and_dtype_preserved():
    rewards = torch.tensor([[-3.0, 0.0], [2.5, 1e6]], dtype=torch.float32)
    assert torch.equal(identity_shape(rewards), rewards)
    for shape in REWARD_SHAPES.values():
        shaped = shape(rewards)
        assert shaped.dtype == torch.float32 and shaped.shape == rewards.shape


def test_registry():
    assert set(REWARD_SHAPES) == {"log", "root", "symlog", "sign", "none"}
    assert get_reward_shape("log") is log_shape
    assert get_reward_shape("root") is root_shape
    assert get_reward_shape("symlog") is symlog_shape
    assert get_reward_shape("none") is identity_shape
    assert get_reward_shape("sign") is sign_shape
    with pytest.raises(ValueError, match=r"unknown reward shape 'clip'.*log, none, root, sign"):
        get_reward_shape("clip")


def test_integer_rewards_rejected():
    with pytest.raises(ValueError, match="rewards"):
        log_shape(torch.tensor([1, -1]))
