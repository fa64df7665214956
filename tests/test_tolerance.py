"""tests.tolerance: the rule's arithmetic, and that the tolerances it gives the suite's
comparisons still reject real errors: a flipped sign, a dropped term, an error of a few
tolerances."""

import copy
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from gdi.envs import resolve_env
from gdi.learning import LossConfig, loss, vtrace
from gdi.nets import LSTMCore
from gdi.runtime.components import build_learner, build_network, env_shapes
from tests.learning.test_loss import assert_matches_reference, make_case, reference_loss
from tests.learning.test_vtrace import assert_matches_brute_force, vtrace_reference
from tests.learning.test_vtrace import random_inputs as vtrace_inputs
from tests.nets.test_core import assert_matches_cells, per_step_reference, reset_pattern
from tests.nets.test_torsos import (
    assert_matches_minatar_definition,
    minatar_case,
    output_and_gradients,
)
from tests.runtime.helpers import tiny_config
from tests.runtime.test_learner import assert_same_step, new_actor, next_window
from tests.tolerance import DEFAULT_ULPS, assert_close, is_close, mismatch, tolerance

# ---- the rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_tolerance_is_ulps_of_the_dtype_times_the_magnitude_and_root_of_terms(dtype, scale):
    expected = torch.tensor([scale, -scale / 2, 0.0], dtype=dtype)
    one = DEFAULT_ULPS * torch.finfo(dtype).eps * float(expected[0])
    # Exact: the factors differ by powers of two.
    assert tolerance(expected) == one
    assert tolerance(expected, terms=16) == 4 * one
    assert tolerance(expected, magnitude=2 * float(expected[0])) == 2 * one
    assert tolerance(expected, ulps=1) == one / DEFAULT_ULPS


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_errors_just_inside_pass_and_just_outside_fail(dtype):
    expected = torch.tensor([3.0, -1.0, 0.0, 0.5], dtype=dtype)
    atol = tolerance(expected)
    for index in range(4):
        for factor, passes in ((0.9, True), (1.1, False)):
            actual = expected.clone()
            actual[index] += factor * atol
            assert is_close(actual, expected) is passes, (index, factor)


def test_python_floats_are_float64_unless_the_dtype_says_otherwise():
    assert_close(0.1 + 0.2, 0.3)  # one rounding apart
    as_float32 = float(np.float32(0.1))  # a float32 result read as a Python float
    assert not is_close(as_float32, 0.1)
    assert is_close(as_float32, 0.1, dtype=torch.float32)
    assert is_close(as_float32, 0.1, dtype=np.float32)
    # The less precise of the two dtypes sets eps.
    assert is_close(torch.tensor([0.1], dtype=torch.float32), [0.1])


def test_nan_inf_and_the_magnitude_of_infinite_expectations():
    assert not is_close(float("nan"), float("nan"))
    assert is_close([float("nan"), 1.0], [float("nan"), 1.0], equal_nan=True)
    assert not is_close([float("nan"), 1.0], [0.0, 1.0], equal_nan=True)  # not where expected
    assert is_close([-math.inf, 1.0], [-math.inf, 1.0])
    assert not is_close([-math.inf, 1.0], [-1e300, 1.0])
    # The magnitude is that of the finite entries: an infinite one does not widen the rest.
    assert not is_close([-math.inf, 1.0 + 1e-10], [-math.inf, 1.0])


def test_shapes_and_operands():
    assert_close(torch.full((3,), 0.5), 0.5)  # an expected scalar stands for every element
    assert "shape" in mismatch(torch.zeros(2, 1), torch.zeros(2))
    assert "shape" in mismatch(torch.zeros(2), torch.zeros(3))
    with pytest.raises(TypeError, match="integers"):
        assert_close([1, 2], [1, 2])


def test_the_message_names_the_worst_element_in_ulps():
    expected = torch.ones(2, 3)
    actual = expected.clone()
    actual[1, 2] += 40 * torch.finfo(torch.float32).eps
    with pytest.raises(AssertionError, match=r"1 of 6 elements.*worst at \(1, 2\).*, 40 ulps"):
        assert_close(actual, expected, msg="weights")


# ---- the suite's comparisons still reject real errors ----------------------------------------


def test_torso_comparison_rejects_a_dropped_bias_a_flipped_sign_and_a_small_scale_error():
    """The comparison that failed on an AVX2-only CPU (its gradients reach ~1e3): with its
    terms counted, it still tells the definition from a torso without the conv bias, with
    the linear bias subtracted, or with the linear weights 2⁻¹⁴ (~500 float32 ulps) off."""
    torso, x = minatar_case()
    got = output_and_gradients(torso, torso(x))
    planes = x.permute(0, 3, 1, 2).contiguous()
    conv, linear = torso.conv, torso.linear

    def definition(conv_bias=conv.bias, linear_bias=linear.bias, weight_scale=1.0):
        h = torch.relu(torch.nn.functional.conv2d(planes, conv.weight, conv_bias))
        weight = weight_scale * linear.weight
        return output_and_gradients(torso, torch.relu(h.reshape(len(h), -1) @ weight.T
                                                      + linear_bias))

    assert_matches_minatar_definition(got, definition(), len(x))
    for wrong in (definition(conv_bias=0 * conv.bias), definition(linear_bias=-linear.bias),
                  definition(weight_scale=1 + 2.0**-14)):
        with pytest.raises(AssertionError):
            assert_matches_minatar_definition(got, wrong, len(x))


def test_lstm_comparison_rejects_a_dropped_bias_and_a_missed_reset():
    torch.manual_seed(0)
    core = LSTMCore(6, 8)
    x = torch.randn(13, 4, 6, requires_grad=True)
    reset = reset_pattern("random", 13, 4)
    state = torch.randn(4, 2, 8)
    assert_matches_cells(core, x, core(x, reset, state), per_step_reference(core, x, reset, state))
    without_bias = copy.deepcopy(core)
    with torch.no_grad():
        without_bias.lstm.bias_hh_l0.zero_()
    missed = reset.clone()
    missed[reset.nonzero()[-1].unbind()] = False  # the last reset of the pattern
    for wrong in (per_step_reference(without_bias, x, reset, state),
                  per_step_reference(core, x, missed, state)):
        with pytest.raises(AssertionError):
            assert_matches_cells(core, x, core(x, reset, state), wrong)


def test_loss_comparison_rejects_a_billionth_of_entropy_a_flipped_reward_and_a_missed_end():
    config = LossConfig(reward_shapes=("log", "root"), entropy_scale=1e-9)
    outputs, batch = make_case(config.num_families)
    got = loss(outputs, batch, config)
    assert_matches_reference(got, reference_loss(outputs, batch, config), batch)
    flipped = batch.rewards.clone()
    flipped[0, 0] *= -1
    continued = batch.discounts.clone()
    continued[2, 2] = 0.97  # the episode end of make_case, missed
    for wrong_config, wrong_batch in (
        (replace(config, entropy_scale=0.0), batch),  # the entropy term dropped: ~1e-9 of it
        (config, batch._replace(rewards=flipped)),
        (config, batch._replace(discounts=continued)),
    ):
        with pytest.raises(AssertionError):
            assert_matches_reference(got, reference_loss(outputs, wrong_batch, wrong_config),
                                     batch)


def test_vtrace_comparison_rejects_swapped_clips_a_lost_bootstrap_and_a_tiny_reward_error():
    inputs = vtrace_inputs()
    returns = vtrace(*inputs, clip_rho=1.3, clip_c=0.8)
    assert_matches_brute_force(returns, vtrace_reference(*inputs, 1.3, 0.8))
    log_rhos, discounts, rewards, values, bootstrap_value = inputs
    nudged = rewards.clone()
    nudged[-1, 0] += 1e-12  # ~100 tolerances of the targets' magnitude
    for wrong in (
        vtrace_reference(*inputs, 0.8, 1.3),
        vtrace_reference(log_rhos, discounts, rewards, values, 0 * bootstrap_value, 1.3, 0.8),
        vtrace_reference(log_rhos, discounts, nudged, values, bootstrap_value, 1.3, 0.8),
    ):
        with pytest.raises(AssertionError):
            assert_matches_brute_force(returns, wrong)


def test_learner_comparison_rejects_a_learning_rate_one_percent_off():
    """Eager against eager (the compiled learner's comparison without the compile time): the
    same step passes, one with a learning rate 1 % off does not."""
    config = tiny_config(env="minatar:breakout", seed=2)
    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, 2)
    torch.manual_seed(2)
    learners = [build_learner(config, build_network(config, shapes), device="cpu")]
    for changed in (config, replace(config, learning_rate=1.01 * config.learning_rate)):
        learners.append(build_learner(changed, build_network(changed, shapes), device="cpu"))
        learners[-1].net.load_state_dict(learners[0].net.state_dict())
    actor = new_actor(config, env_config, build_network(config, shapes), 2)
    batch = next_window(actor)
    reference, same, off = learners
    assert off.optimizer_config.learning_rate == 1.01 * config.learning_rate
    want = reference.step(batch, 0.5)
    assert_same_step(same.step(batch, 0.5), want, same, reference, config)
    with pytest.raises(AssertionError):
        assert_same_step(off.step(batch, 0.5), want, off, reference, config)
