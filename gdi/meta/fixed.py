"""Identity operators E: a fixed λ, or a fixed distribution that never learns.

Paper: Sec. "Ablation study" (GDI "w/o E": the data distribution is not optimized, one λ is
used throughout; App. "Hyperparameters", Fixed Selection for [1/τ₁, 1/τ₂, ε] = [1.0, 0.0, 1.0])
and the identity E the paper attributes to Ape-X and R2D2 (a fixed family of ε, one per actor,
Horgan et al. 2018), here as a uniform distribution over a finite set or a box.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gdi.meta.base import (
    check_count,
    check_index_names,
    check_lambda,
    check_ranges,
    check_return,
    check_state,
    make_rng,
    no_greedy,
    paper_space,
    register_controller,
)
from gdi.meta.coordinates import CoordinateTransforms

__all__ = ["FixedIndex", "UniformIndex"]


@register_controller
class FixedIndex:
    """E = identity with P_Λ a point mass: ``sample`` always returns ``value``.

    The default is the table's "Fixed Selection" (1/τ₁, 1/τ₂, ε) = (1.0, 0.0, 1.0), i.e.
    π = softmax(A₁) (ε = 1 puts all weight on the first component). ``update`` checks its
    arguments and learns nothing. ``seed`` is accepted so that every controller is built the
    same way; there is no randomness.
    """

    kind = "fixed"

    def __init__(
        self,
        value: Sequence[float] | None = None,
        index_names: Sequence[str] | None = None,
        seed: int | np.random.Generator | None = None,
    ):
        if value is None:  # the paper's fixed selection, in its space's names
            space = paper_space()
            value = space.fixed_selection
            index_names = space.index_names if index_names is None else index_names
        arr = np.asarray(value, dtype=np.float64)
        if arr.ndim != 1 or arr.size < 1 or not np.isfinite(arr).all():
            raise ValueError(
                f"value must be a non-empty 1-D sequence of finite numbers, got {value!r}"
            )
        self._value = arr
        self.index_names = check_index_names(index_names, arr.size)
        self._config = {"value": tuple(arr.tolist()), "index_names": self.index_names}

    @property
    def dim(self) -> int:
        return self._value.size

    @property
    def lambda_ranges(self) -> np.ndarray:
        return np.stack([self._value, self._value], axis=1)

    def sample(self) -> np.ndarray:
        return self._value.copy()

    def greedy(self) -> np.ndarray:
        """The one λ there is."""
        return self._value.copy()

    def sample_many(self, n: int) -> np.ndarray:
        return np.tile(self._value, (check_count(n), 1))

    def update(self, lam: np.ndarray, episode_return: float) -> None:
        check_lambda(lam, self.dim, self.index_names)
        check_return(episode_return)

    def state_dict(self) -> dict:
        return {"controller": self.kind, "config": dict(self._config)}

    def load_state_dict(self, state: dict) -> None:
        check_state(state, self.kind, self._config)


@register_controller
class UniformIndex:
    """E = identity with P_Λ uniform: over a finite set of λ (``values``) or a box (``ranges``).

    With ``values`` the rungs of the ``epsilon_ladder`` policy space this is Ape-X's and R2D2's
    fixed family of behavior policies, drawn per episode instead of per actor. With neither
    argument it is uniform over the bandit's search box of the paper's soft-entropy space.

    A box is uniform in the bandit's coordinates x: ``ranges`` are in x and ``transforms`` map x
    to λ as the bandit's do (``gdi.meta.coordinates``), so that with the bandit's ranges and
    transforms this is the bandit's own P_Λ⁽⁰⁾ kept for the whole run: the control of "does
    E matter" (preset ``gdi-i3-uniform``).
    """

    kind = "uniform"

    def __init__(
        self,
        values: Sequence[Sequence[float]] | None = None,
        ranges: Sequence[Sequence[float]] | None = None,
        index_names: Sequence[str] | None = None,
        transforms: Sequence[str] | None = None,
        seed: int | np.random.Generator = 0,
    ):
        if values is not None and transforms is not None:
            raise ValueError("transforms map a box's coordinates to λ; give them with ranges, "
                             "not with values")
        if values is not None and ranges is not None:
            raise ValueError("give either values (a finite set of λ) or ranges (a box), not both")
        if values is None and ranges is None:  # the paper's search box, in its space's names
            space = paper_space()
            ranges = space.search_box
            index_names = space.index_names if index_names is None else index_names
        if values is not None:
            arr = np.asarray(values, dtype=np.float64)
            if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
                raise ValueError(
                    f"values must be a non-empty list of λ vectors [n, dim], got shape {arr.shape}"
                )
            if not np.isfinite(arr).all():
                raise ValueError(f"values must be finite, got {arr.tolist()}")
            self._values, self._box = arr, None
            dim = arr.shape[1]
            self._config = {"values": tuple(map(tuple, arr.tolist()))}
        else:
            self._box = check_ranges(ranges)
            self._values = None
            dim = self._box.shape[0]
            self._config = {"ranges": tuple(map(tuple, self._box.tolist()))}
            if transforms is not None:
                transforms = tuple(transforms)
                if len(transforms) != dim:
                    raise ValueError(f"transforms must have one entry per range ({dim}), "
                                     f"got {transforms!r}")
                self._config["transforms"] = transforms
            self._transforms = CoordinateTransforms(transforms or ("identity",) * dim,
                                                    self._box)
        self.index_names = check_index_names(index_names, dim)
        self._config["index_names"] = self.index_names
        self._rng = make_rng(seed)

    @property
    def dim(self) -> int:
        return len(self.index_names)

    @property
    def lambda_ranges(self) -> np.ndarray:
        if self._box is not None:
            return np.stack([self._transforms.to_lambda(self._box[:, 0]),
                             self._transforms.to_lambda(self._box[:, 1])], axis=1)
        return np.stack([self._values.min(axis=0), self._values.max(axis=0)], axis=1)

    def sample(self) -> np.ndarray:
        return self.sample_many(1)[0]

    def greedy(self) -> np.ndarray:
        """Never: uniform sampling learns nothing about which λ is best."""
        raise no_greedy(self.kind)

    def sample_many(self, n: int) -> np.ndarray:
        n = check_count(n)
        if self._values is not None:
            return self._values[self._rng.integers(self._values.shape[0], size=n)]
        x = self._rng.uniform(self._box[:, 0], self._box[:, 1], size=(n, self.dim))
        return self._transforms.to_lambda(x)

    def update(self, lam: np.ndarray, episode_return: float) -> None:
        check_lambda(lam, self.dim, self.index_names)
        check_return(episode_return)

    def state_dict(self) -> dict:
        return {
            "controller": self.kind,
            "config": dict(self._config),
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict) -> None:
        check_state(state, self.kind, self._config)
        self._rng.bit_generator.state = state["rng"]

