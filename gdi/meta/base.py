"""The interface every operator E implements, and the argument checks they share.

Paper: Algorithm 1 (GDI), line "P_Λ ← E(P_Λ, {X_λ})": E is a meta-controller over the index set
Λ. In practice (App. "Adaptive Controller Formalism") it is stateful: the actor asks it for a
λ at every episode start (``sample``) and reports (λ, G) at every episode end (``update``).

λ-space vs bandit coordinates: controllers take and return λ in the policy space's own units
(inverse temperatures 1/τ, ε). The paper's bandit searches coordinates x with λ = f(x); for
inverse temperatures f is the ``transform`` of ``gdi.policy_space`` ("identity": x = 1/τ,
the default; "log1p": x = log(1 + 1/τ)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from gdi.registry import Registry

__all__ = ["MetaController", "default_index_names"]


@runtime_checkable
class MetaController(Protocol):
    """Operator E as the runtime calls it: a distribution over λ that learns from returns."""

    index_names: tuple[str, ...]

    @property
    def dim(self) -> int: ...

    @property
    def lambda_ranges(self) -> np.ndarray:
        """Where the λ this E can sample lie, float64 ``[dim, 2]`` of (low, high) in λ-space:
        what config validation checks against the policy space and what plots draw."""
        ...

    def greedy(self) -> np.ndarray:
        """E's best λ so far, float64 ``[dim]`` (``gdi evaluate --policy greedy``). An E that
        keeps no estimate of the best λ raises ValueError saying so."""
        ...

    def sample(self) -> np.ndarray:
        """One λ, float64 ``[dim]``, in λ-space."""
        ...

    def sample_many(self, n: int) -> np.ndarray:
        """``n`` draws of λ, float64 ``[n, dim]``, as ``n`` calls of ``sample`` would give
        them (in distribution); an actor draws for all its environments whose episodes ended
        at one step in one call."""
        ...

    def update(self, lam: np.ndarray, episode_return: float) -> None:
        """Report the undiscounted return of an episode played with ``lam``."""
        ...

    def state_dict(self) -> dict:
        """Everything needed to resume exactly, RNG state included; picklable."""
        ...

    def load_state_dict(self, state: dict) -> None: ...


#: Every operator E by name, filled by ``@register_controller`` (the class's ``kind``) as the
#: package imports its modules: a new E is one file in gdi/meta/.
CONTROLLERS = Registry("meta-controller", name_attribute="kind")
register_controller = CONTROLLERS.register


def same_arm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: whether coordinates of two λ are one arm's, to float32's precision (λ
    passes through float32 on its way from the actor to E)."""
    return np.isclose(a, b, rtol=1e-6, atol=1e-7)


def match_arm(arms: np.ndarray, lam: np.ndarray) -> int:
    """The index of the arm (a row of ``arms [K, dim]``) equal to a checked ``lam [dim]``, to
    float32's precision: λ passes through float32 on its way from the actor to E, so the λ
    reported for an arm may differ from it by rounding. A ValueError naming the closest arm when
    none is: the one arm matching of every E that plays a finite set of arms."""
    match = np.flatnonzero(same_arm(arms, lam[None, :]).all(-1))
    if match.size == 0:
        nearest = int(np.abs(arms - lam).max(axis=1).argmin())
        raise ValueError(
            f"λ={lam.tolist()} is not one of the {arms.shape[0]} arms of this controller "
            f"(closest: arm {nearest} = {arms[nearest].tolist()}); update with a λ that "
            "sample() returned"
        )
    return int(match[0])


def default_index_names(dim: int) -> tuple[str, ...]:
    """Generic names lam0, lam1, … for an E built without index names. The names of a policy
    space's coordinates are the space's (``gdi.policy_space``); presets pass them."""
    return tuple(f"lam{i}" for i in range(dim))


def no_greedy(kind: str) -> ValueError:
    """The error of an E that keeps no estimate of the best λ."""
    return ValueError(
        f"E {kind!r} keeps no estimate of the best λ, so it has no greedy λ; play it with "
        "--policy population, uniform or fixed (--policy greedy needs an E that learns or "
        "fixes a best λ)"
    )


def paper_space():
    """The paper's soft-entropy policy space (GDI-I³): its search box, block sizes, index names
    and fixed selection are the defaults of the E controllers built without them. Imported
    only then, since ``gdi.policy_space`` imports torch and ``gdi.meta`` is NumPy only."""
    from gdi.policy_space import get_policy_space

    return get_policy_space("soft_entropy")


def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A Generator from an int seed, or the Generator itself (shared, not copied)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        return np.random.default_rng(seed)
    raise ValueError(f"seed must be an int or a numpy Generator, got {type(seed).__name__}")


def check_count(n) -> int:
    """A number of draws: an integer >= 1."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of draws must be an integer >= 1, got {n!r}")
    return int(n)


def check_index_names(names: Sequence[str] | None, dim: int) -> tuple[str, ...]:
    if names is None:
        return default_index_names(dim)
    names = tuple(names)
    if len(names) != dim or not all(isinstance(n, str) and n for n in names):
        raise ValueError(
            f"index_names must be {dim} non-empty strings (one per λ coordinate), got {names}"
        )
    if len(set(names)) != dim:
        raise ValueError(f"index_names must be distinct, got {names}")
    return names


def check_ranges(ranges: Sequence[Sequence[float]]) -> np.ndarray:
    """``[(l, r), ...]`` → float64 ``[dim, 2]``; each range finite with l < r."""
    try:
        arr = np.asarray(ranges, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"ranges must be a sequence of (l, r) pairs, got {ranges!r}") from None
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 1:
        raise ValueError(f"ranges must be a non-empty sequence of (l, r) pairs, got {ranges!r}")
    for i, (lo, hi) in enumerate(arr):
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"range {i} must be finite, got [{lo}, {hi}]")
        if not lo < hi:
            raise ValueError(f"range {i} must have l < r (a non-empty interval), got [{lo}, {hi}]")
    return arr


def check_lambda(lam, dim: int, names: tuple[str, ...]) -> np.ndarray:
    """λ as float64 ``[dim]``, finite."""
    arr = np.asarray(lam, dtype=np.float64)
    if arr.shape != (dim,):
        raise ValueError(f"λ must have shape ({dim},) ({', '.join(names)}), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"λ must be finite, got {arr}")
    return arr


def check_return(episode_return: float) -> float:
    """An episode return as a finite float (raw game score, any scale)."""
    try:
        g = float(episode_return)
    except (TypeError, ValueError):
        raise ValueError(
            f"episode_return must be a finite number, got {episode_return!r}"
        ) from None
    if not math.isfinite(g):
        raise ValueError(f"episode_return must be a finite number, got {g}")
    return g


def check_state(state: dict, kind: str, config: dict) -> None:
    """A state dict from the same kind of controller with the same configuration."""
    if not isinstance(state, dict) or state.get("controller") != kind:
        got = state.get("controller") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"state is not a {kind!r} controller state (got {got!r})")
    saved = state.get("config", {})
    for key, value in config.items():
        if key not in saved or not _equal(saved[key], value):
            raise ValueError(
                f"state was saved with {key}={saved.get(key)!r}, this controller has {key}={value!r}"
            )


def _equal(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
    except (TypeError, ValueError):
        return a == b
