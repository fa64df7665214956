"""A new operator E: Thompson sampling over a finite set of λ ("arms").

Each arm a keeps the count n_a and mean m_a of the returns of the episodes played with it. A
draw samples μ_a ~ Normal(m_a, s² / n_a) for every arm, s² being the variance of all returns
so far, and plays the arm with the largest μ_a; an arm not yet played is played first. The
arms with high mean returns are played more often, and an arm's spread shrinks as its count
grows, so exploration stops by itself where the evidence is clear. (An actor draws λ for all
its environments at once at the start, before any return is reported: one call of
``sample_many`` gives each untried arm once before it repeats any.)

An E is any class with the methods of ``gdi.meta.MetaController``; ``@register_controller``
registers it under its ``kind``, which makes it nameable by ``meta_controller``. Saved as
``gdi/meta/thompson.py`` it is all there is to add (the package imports every module it
holds); imported from anywhere else, it is registered for that Python process.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gdi.meta.base import (
    check_count,
    check_index_names,
    check_lambda,
    check_return,
    check_state,
    match_arm,
    register_controller,
)


@register_controller
class ThompsonArms:
    kind = "thompson"

    def __init__(
        self,
        arms: Sequence[Sequence[float]],
        index_names: Sequence[str] | None = None,
        seed: int | np.random.Generator = 0,
    ):
        self._arms = np.asarray(arms, dtype=np.float64)
        if self._arms.ndim != 2 or len(self._arms) < 1 or not np.isfinite(self._arms).all():
            raise ValueError(f"arms must be a non-empty list of finite λ vectors, got {arms!r}")
        self.index_names = check_index_names(index_names, self._arms.shape[1])
        # What state_dict records and load_state_dict checks: a state saved by an E with other
        # arms is refused instead of being applied to the wrong λ.
        self._config = {"arms": self._arms.tolist(), "index_names": self.index_names}
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self._counts = np.zeros(len(self._arms))
        self._sums = np.zeros(len(self._arms))
        self._squares = 0.0  # sum of squared returns over all arms, for s²

    @property
    def dim(self) -> int:
        return self._arms.shape[1]

    @property
    def lambda_ranges(self) -> np.ndarray:
        """Where the λ this E samples lie: what config validation checks against Λ."""
        return np.stack([self._arms.min(axis=0), self._arms.max(axis=0)], axis=1)

    def _means(self) -> np.ndarray:
        return self._sums / np.maximum(self._counts, 1)

    def sample_many(self, n: int) -> np.ndarray:
        draws = []
        # Arms never played come first, each once per call, in random order.
        untried = list(self._rng.permutation(np.flatnonzero(self._counts == 0)))
        for _ in range(check_count(n)):
            if untried:
                arm = untried.pop()
            elif not self._counts.all():  # more draws than untried arms, before any report
                arm = self._rng.integers(len(self._arms))
            else:
                total = self._counts.sum()
                variance = max(self._squares / total - (self._sums.sum() / total) ** 2, 1e-8)
                mu = self._rng.normal(self._means(), np.sqrt(variance / self._counts))
                arm = int(np.argmax(mu))
            draws.append(self._arms[arm])
        return np.array(draws)

    def sample(self) -> np.ndarray:
        return self.sample_many(1)[0]

    def greedy(self) -> np.ndarray:
        """The played arm with the highest mean return."""
        if not self._counts.any():
            raise ValueError("no episode has been reported yet, so there is no greedy λ")
        means = np.where(self._counts > 0, self._means(), -np.inf)
        return self._arms[int(np.argmax(means))].copy()

    def update(self, lam: np.ndarray, episode_return: float) -> None:
        lam = check_lambda(lam, self.dim, self.index_names)
        g = check_return(episode_return)
        arm = match_arm(self._arms, lam)  # to float32's precision, as λ travels
        self._counts[arm] += 1
        self._sums[arm] += g
        self._squares += g * g

    def state_dict(self) -> dict:
        return {"controller": self.kind, "config": dict(self._config),
                "counts": self._counts.tolist(), "sums": self._sums.tolist(),
                "squares": self._squares, "rng": self._rng.bit_generator.state}

    def load_state_dict(self, state: dict) -> None:
        check_state(state, self.kind, self._config)
        self._counts = np.array(state["counts"], dtype=np.float64)
        self._sums = np.array(state["sums"], dtype=np.float64)
        self._squares = float(state["squares"])
        self._rng.bit_generator.state = state["rng"]
