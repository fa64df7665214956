"""The one tolerance rule for comparing floating-point results in the tests.

Two computations of the same number (a kernel against its definition, a compiled step against
an eager one, the AVX-512 kernels against the default ones) round differently. They are
compared up to what rounding can explain, and no more. Element by element:

    |actual - expected| <= ulps * eps * sqrt(terms) * magnitude

eps        The machine epsilon (one ulp at 1.0) of the precision the numbers were computed in:
           the less precise of the two dtypes (a Python float counts as float64), or ``dtype``
           when a float32 result reaches the test as a Python float.
magnitude  The size of the numbers the result is computed from. By default it is the largest
           |expected| of the whole comparison, one number for all elements, because an element
           that is small by cancellation still carries the rounding error of the large numbers
           it was computed from. Pass it explicitly when the inputs are larger than the result:
           a result that should be 0, or a sum whose terms cancel.
terms      How many rounded terms are summed into one element: a matmul's inner size, a
           reduction's length, the steps of a recurrence. Each sum rounds differently in
           another kernel's order, and the errors add up like a random walk, so the tolerance
           grows as sqrt(terms). The default is 1, for elementwise results.
ulps       DEFAULT_ULPS = 4. Each elementwise operation rounds to within half an ulp and the
           vectorised exp/log/tanh of the CPU kernels are within about one; a short chain of
           them stays within a few ulps of the magnitude.

NaN matches nothing, unless ``equal_nan`` says that a NaN is expected there (a missing score).
``assert not is_close(a, b)`` says that a and b differ by more than rounding can explain.

A comparison that must be exact (a copy, an integer-valued result, the same kernel on the same
input in the same process) uses ``torch.equal`` or ``np.testing.assert_array_equal`` and says
why in a comment. A tolerance for sampling noise (frequencies of random draws) is not a
rounding tolerance: it states how many standard errors it allows.
"""

import math

import numpy as np
import torch

DEFAULT_ULPS = 4


def _as_tensor(value) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    return torch.as_tensor(np.asarray(value))  # a Python float becomes float64


def _epsilon(actual: torch.Tensor, expected: torch.Tensor, dtype) -> float:
    if isinstance(dtype, torch.dtype):
        return torch.finfo(dtype).eps
    if dtype is not None:
        return float(np.finfo(dtype).eps)
    floats = [t.dtype for t in (actual, expected) if t.is_floating_point()]
    if not floats:
        raise TypeError("no floating-point operand: compare integers exactly")
    return max(torch.finfo(d).eps for d in floats)


def _largest_finite(expected: torch.Tensor) -> float:
    finite = expected[torch.isfinite(expected)]
    return finite.abs().max().item() if finite.numel() else 0.0


def tolerance(expected, *, dtype=None, terms: int = 1, magnitude=None,
              ulps: float = DEFAULT_ULPS) -> float:
    """The absolute tolerance of the rule for a comparison against ``expected``."""
    expected = _as_tensor(expected)
    if magnitude is None:
        magnitude = _largest_finite(expected)
    return ulps * _epsilon(expected, expected, dtype) * math.sqrt(terms) * float(magnitude)


def mismatch(actual, expected, *, dtype=None, terms: int = 1, magnitude=None,
             ulps: float = DEFAULT_ULPS, equal_nan: bool = False) -> str | None:
    """None when ``actual`` matches ``expected`` under the rule, else what differs."""
    got, want = _as_tensor(actual), _as_tensor(expected)
    if got.shape != want.shape:
        try:  # a scalar or a row stated once for many; the shape of ``actual`` is kept
            want = want.expand_as(got)
        except RuntimeError:
            return f"shape {tuple(got.shape)} != expected {tuple(want.shape)}"
    eps = _epsilon(got, want, dtype)
    if magnitude is None:
        magnitude = _largest_finite(want)
    atol = ulps * eps * math.sqrt(terms) * float(magnitude)
    # Equal values (infinities included) differ by 0; a NaN fails every comparison.
    same = (got == want) | (equal_nan & got.isnan() & want.isnan())
    error = torch.where(same, 0.0, (got.double() - want.double()).abs())
    bad = ~(error <= atol)
    if not bad.any():
        return None
    worst = int(torch.where(bad, error.nan_to_num(math.inf), -1.0).flatten().argmax())
    index = tuple(int(i) for i in np.unravel_index(worst, got.shape))
    unit = eps * math.sqrt(terms) * float(magnitude)  # one ulp of the rule
    off = error.flatten()[worst].item() / unit if unit else math.inf
    return (f"{int(bad.sum())} of {bad.numel()} elements differ by more than {atol:.3g} = "
            f"{ulps} ulps x sqrt(terms={terms}) x magnitude {float(magnitude):.3g} (eps "
            f"{eps:.3g}); worst at {index}: {got.flatten()[worst].item()!r} vs "
            f"{want.flatten()[worst].item()!r}, {off:.3g} ulps")


def assert_close(actual, expected, *, dtype=None, terms: int = 1, magnitude=None,
                 ulps: float = DEFAULT_ULPS, equal_nan: bool = False, msg: str = "") -> None:
    """Assert the rule of this module; ``actual`` and ``expected`` are tensors, arrays,
    sequences or numbers."""
    problem = mismatch(actual, expected, dtype=dtype, terms=terms, magnitude=magnitude,
                       ulps=ulps, equal_nan=equal_nan)
    if problem is not None:
        raise AssertionError(f"{msg}: {problem}" if msg else problem)


def is_close(actual, expected, **rule) -> bool:
    """Whether ``assert_close`` would pass: ``assert not is_close(a, b)`` says that a and b
    differ by more than rounding can explain."""
    return mismatch(actual, expected, **rule) is None

