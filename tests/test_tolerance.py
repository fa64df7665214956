"""tests.tolerance: the rule's arithmetic."""

import math

import numpy as np
import pytest
import torch

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

