"""Agent57's meta-controller: a sliding-window UCB bandit with ε-greedy exploration.

Badia et al. 2020, "Agent57: Outperforming the Atari Human Benchmark", Sec. 4 "Adaptive
exploration over a family of policies" (a simplified sliding-window UCB, after Garivier &
Moulines 2011) and its hyperparameter table: bandit window size 90, UCB β = 1, ε_UCB = 0.5. GDI's paper cites this controller as prior work
(App. "Adaptive Controller Formalism", "widely used in prior works") and its E operator view
covers it; here it runs over any finite set of λ (Agent57's arms are (β_j, γ_j) pairs).

The rule for episode k (0-based), N arms, window τ:

* k < N: play arm k (every arm once);
* otherwise, with U_k ~ Uniform[0, 1): if U_k < ε_UCB play an arm uniformly at random; else
  play argmax_a μ̂(a) + β·sqrt(1 / N(a)), where N(a) and μ̂(a) are the count and mean return of
  arm a over the last τ *updates* (the window slides over episodes of this controller, not
  per arm). The bonus has no log term: Agent57's simplification of SW-UCB.

An arm with no pull inside the window has an infinite score (its mean is undefined); ties
go to the lowest arm index, as numpy's argmax gives them. Agent57's §4 text says τ = 160 for
the actors while its table says 90; the default here follows the table.
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
    make_rng,
    match_arm,
    register_controller,
    same_arm,
)

__all__ = ["SlidingWindowUCB"]


@register_controller
class SlidingWindowUCB:
    """Agent57's sliding-window UCB over a finite set of λ (``arms``, ``[n_arms, dim]``).

    ``update(lam, ret)`` finds the arm equal to ``lam`` (to float32 precision, so a λ that
    went through a float32 tensor still matches) and raises ValueError if there is none.
    """

    kind = "sliding_window_ucb"

    def __init__(
        self,
        arms: Sequence[Sequence[float]],
        window: int = 90,
        beta: float = 1.0,
        epsilon: float = 0.5,
        index_names: Sequence[str] | None = None,
        seed: int | np.random.Generator = 0,
    ):
        arr = np.asarray(arms, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ValueError(
                f"arms must be a non-empty list of λ vectors [n_arms, dim], got shape {arr.shape}"
            )
        if not np.isfinite(arr).all():
            raise ValueError(f"arms must be finite, got {arr.tolist()}")
        same = same_arm(arr[:, None, :], arr[None, :, :]).all(-1)
        np.fill_diagonal(same, False)
        if same.any():
            i, j = np.argwhere(same)[0]
            raise ValueError(
                f"arms must be distinct, but arm {i} and arm {j} are both {arr[i].tolist()}"
            )
        if not (isinstance(window, (int, np.integer)) and window >= 1):
            raise ValueError(f"window must be an integer >= 1 (episodes), got {window!r}")
        if not (np.isfinite(beta) and beta >= 0):
            raise ValueError(f"beta must be a finite number >= 0, got {beta!r}")
        if not (0.0 <= epsilon <= 1.0):
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon!r}")
        self._arms = arr
        self.window, self.beta, self.epsilon = int(window), float(beta), float(epsilon)
        self.index_names = check_index_names(index_names, arr.shape[1])
        self._config = {
            "arms": tuple(map(tuple, arr.tolist())),
            "window": self.window,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "index_names": self.index_names,
        }
        self._rng = make_rng(seed)
        self._hist_arm = np.full(self.window, -1, dtype=np.int64)  # ring buffer, -1 = empty
        self._hist_ret = np.zeros(self.window)
        self._updates = 0
        self._samples = 0

    @property
    def dim(self) -> int:
        return self._arms.shape[1]

    @property
    def arms(self) -> np.ndarray:
        return self._arms.copy()

    @property
    def lambda_ranges(self) -> np.ndarray:
        return np.stack([self._arms.min(axis=0), self._arms.max(axis=0)], axis=1)

    def window_stats(self) -> tuple[np.ndarray, np.ndarray]:
        """(N(a), μ̂(a)) over the window, ``[n_arms]`` each; μ̂ is NaN where N(a) = 0."""
        filled = self._hist_arm >= 0
        n_arms = self._arms.shape[0]
        counts = np.bincount(self._hist_arm[filled], minlength=n_arms)
        sums = np.bincount(self._hist_arm[filled], weights=self._hist_ret[filled], minlength=n_arms)
        means = np.divide(sums, counts, out=np.full(n_arms, np.nan), where=counts > 0)
        return counts, means

    def scores(self) -> np.ndarray:
        """μ̂(a) + β·sqrt(1 / N(a)) per arm; +inf where N(a) = 0."""
        counts, means = self.window_stats()
        bonus = self.beta * np.sqrt(1.0 / np.maximum(counts, 1))
        return np.where(counts > 0, means + bonus, np.inf)

    def sample_arm(self) -> int:
        """The index of the next arm (the rule in the module docstring)."""
        n_arms = self._arms.shape[0]
        if self._samples < n_arms:
            arm = self._samples
        elif self._rng.random() < self.epsilon:
            arm = int(self._rng.integers(n_arms))
        else:
            arm = int(np.argmax(self.scores()))
        self._samples += 1
        return arm

    def sample(self) -> np.ndarray:
        return self._arms[self.sample_arm()].copy()

    def greedy(self) -> np.ndarray:
        """The arm with the highest mean return in the window (no bonus, no ε): Agent57's
        greedy evaluation arm. Ties go to the lowest index; arms absent from the window are
        skipped. ValueError before the first update (no arm has a mean yet)."""
        _, means = self.window_stats()
        if np.isnan(means).all():
            raise ValueError("no episode has updated this controller yet: no arm has a mean "
                             "return, so there is no greedy λ")
        return self._arms[int(np.nanargmax(means))].copy()

    def sample_many(self, n: int) -> np.ndarray:
        """``n`` draws one after another: the initial sweep and ε are counted per draw."""
        return np.stack([self.sample() for _ in range(check_count(n))])

    def arm_index(self, lam: np.ndarray) -> int:
        """The arm equal to ``lam``; ValueError naming the closest arm if none is."""
        return match_arm(self._arms, check_lambda(lam, self.dim, self.index_names))

    def update(self, lam: np.ndarray, episode_return: float) -> None:
        arm = self.arm_index(lam)
        g = check_return(episode_return)
        pos = self._updates % self.window
        self._hist_arm[pos] = arm
        self._hist_ret[pos] = g
        self._updates += 1

    def state_dict(self) -> dict:
        return {
            "controller": self.kind,
            "config": dict(self._config),
            "history_arm": self._hist_arm.copy(),
            "history_return": self._hist_ret.copy(),
            "updates": self._updates,
            "samples": self._samples,
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict) -> None:
        check_state(state, self.kind, self._config)
        arms, rets = np.asarray(state["history_arm"]), np.asarray(state["history_return"])
        if arms.shape != (self.window,) or rets.shape != (self.window,):
            raise ValueError(f"state history must have shape ({self.window},), got {arms.shape}")
        self._hist_arm = arms.astype(np.int64, copy=True)
        self._hist_ret = rets.astype(np.float64, copy=True)
        self._updates = int(state["updates"])
        self._samples = int(state["samples"])
        self._rng.bit_generator.state = state["rng"]
