"""A synthetic bandit problem for operators E: a smooth return surface over λ plus noise.

Used by ``gdi meta-demo``, the behaviour tests and the benchmark. No environment: the "episode
return" of λ is a smooth function of λ with a unique maximum λ*, a lower decoy bump elsewhere,
and Gaussian noise, so one can watch where a controller's samples go.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.meta.base import MetaController, make_rng
from gdi.meta.registry import make_controller, meta_kwargs_over

__all__ = [
    "DemoResult",
    "SyntheticSurface",
    "demo_controller",
    "demo_summary",
    "demo_surface",
    "run_controller",
    "run_demo",
    "save_demo_plot",
]


@dataclass(frozen=True)
class SyntheticSurface:
    """Mean return peak·exp(−½‖(λ − λ*)/(width·range)‖²) + decoy bump, plus N(0, noise²).

    Returns are ``scale · (mean + noise) + shift`` so tests can check that a controller does not
    care about the scale of raw game scores. ``radius`` (a fraction of each range) defines
    "near the optimum": within radius·(r − l) of λ* in every coordinate.
    """

    ranges: tuple[tuple[float, float], ...]
    optimum: tuple[float, ...]
    decoy: tuple[float, ...]
    width: float = 0.2
    decoy_height: float = 0.6
    decoy_width: float = 0.15
    noise: float = 0.1
    scale: float = 1.0
    shift: float = 0.0
    radius: float = 0.1

    def _span(self) -> np.ndarray:
        r = np.asarray(self.ranges, dtype=np.float64)
        return r[:, 1] - r[:, 0]

    def mean(self, lam: np.ndarray) -> np.ndarray:
        """Noise-free return at λ ``[..., k]`` → ``[...]``."""
        span = self._span()
        lam = np.asarray(lam, dtype=np.float64)
        main = np.exp(-0.5 * (((lam - self.optimum) / (self.width * span)) ** 2).sum(-1))
        decoy = np.exp(-0.5 * (((lam - self.decoy) / (self.decoy_width * span)) ** 2).sum(-1))
        return self.scale * (main + self.decoy_height * decoy) + self.shift

    def sample_return(self, lam: np.ndarray, rng: np.random.Generator) -> float:
        return float(self.mean(lam) + self.scale * self.noise * rng.standard_normal())

    def near(self, lams: np.ndarray) -> np.ndarray:
        """Whether each λ of ``[N, k]`` is within ``radius`` of the range from λ* everywhere."""
        dist = np.abs(np.asarray(lams, dtype=np.float64) - self.optimum) / self._span()
        return (dist <= self.radius).all(-1)

    def uniform_near_probability(self) -> float:
        """P(near) for λ uniform over the ranges: Π_k |[λ*_k ± radius·span] ∩ range| / span."""
        r = np.asarray(self.ranges, dtype=np.float64)
        span = self._span()
        lo = np.maximum(np.asarray(self.optimum) - self.radius * span, r[:, 0])
        hi = np.minimum(np.asarray(self.optimum) + self.radius * span, r[:, 1])
        return float(np.prod((hi - lo) / span))


def _demo_space(dims: int):
    """The policy space whose search box the demo uses: Boltzmann (1-D) or soft entropy (3-D)."""
    from gdi.policy_space import get_policy_space  # torch: only when a demo is built

    if dims == 1:
        return get_policy_space("boltzmann")
    if dims == 3:
        return get_policy_space("soft_entropy")
    raise ValueError(f"dims must be 1 or 3, got {dims!r}")


def demo_surface(dims: int, noise: float = 0.1, **kwargs) -> SyntheticSurface:
    """The demo's problem over GDI's search box (the policy space's): 1-D (1/τ ∈ [0, 50], the
    Boltzmann space) or 3-D (1/τ₁, 1/τ₂, ε, the soft-entropy space).

    λ* = 1/τ = 13.3 (1-D) or (13.3, 34.6, 0.27) (3-D), deliberately off block centres; the decoy
    (height 0.6 of the peak) sits at 1/τ = 42 or (40, 8, 0.8). The decoy's tail moves the true
    maximum by 4e-4 of the range in 1-D (to 13.32) and by less than 1e-8 in 3-D.
    """
    box = _demo_space(dims).search_box
    if dims == 1:
        return SyntheticSurface(box, (13.3,), (42.0,), noise=noise, **kwargs)
    return SyntheticSurface(box, (13.3, 34.6, 0.27), (40.0, 8.0, 0.8), noise=noise, **kwargs)


def demo_controller(name: str, dims: int, seed: int | np.random.Generator) -> MetaController:
    """A controller of kind ``name`` set up for ``demo_surface(dims)``'s search box, as
    ``meta_kwargs_over`` sets any registered E over the space: the paper's bandit on its box and
    block sizes, uniform over the box, fixed at its fixed selection; an E that plays arms (as
    Agent57's sliding-window UCB) over a grid of cell centres (16 values of 1/τ in 1-D;
    4 × 4 × 2 = 32 arms in 3-D, Agent57's arm count).
    """
    space = _demo_space(dims)
    levels = [16] if dims == 1 else [4, 4, 2]
    axes = [lo + (np.arange(n) + 0.5) * (hi - lo) / n
            for (lo, hi), n in zip(space.search_box, levels, strict=True)]
    arms = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, dims)
    return make_controller(name, seed, **meta_kwargs_over(name, space, arms=arms))


def run_controller(
    controller: MetaController,
    surface: SyntheticSurface,
    episodes: int,
    rng: int | np.random.Generator = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``episodes`` rounds of sample → return → update; (λ ``[N, k]``, returns ``[N]``)."""
    if not (isinstance(episodes, (int, np.integer)) and episodes >= 1):
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
    rng = make_rng(rng)
    lams = np.empty((episodes, controller.dim))
    rets = np.empty(episodes)
    for t in range(episodes):
        lam = controller.sample()
        g = surface.sample_return(lam, rng)
        controller.update(lam, g)
        lams[t], rets[t] = lam, g
    return lams, rets


@dataclass(frozen=True)
class DemoResult:
    """What ``gdi meta-demo`` shows: the run, and how often the last samples were near λ*."""

    controller: str
    surface: SyntheticSurface
    index_names: tuple[str, ...]
    lambdas: np.ndarray
    returns: np.ndarray
    tail: int
    near_fraction: float
    uniform_near_fraction: float
    uniform_near_probability: float


def run_demo(
    controller: str = "bandit",
    dims: int = 3,
    episodes: int = 3000,
    noise: float = 0.1,
    seed: int = 0,
    tail: int = 500,
) -> DemoResult:
    """Run ``controller`` and, for reference, uniform sampling on ``demo_surface(dims, noise)``.

    Fractions near λ* are over the last ``tail`` samples (all of them if fewer).
    """
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    surface = demo_surface(dims, noise)
    ctrl = demo_controller(controller, dims, seed)
    lams, rets = run_controller(ctrl, surface, episodes, rng=seed + 1)
    uniform = demo_controller("uniform", dims, seed)
    u_lams, _ = run_controller(uniform, surface, episodes, rng=seed + 1)
    tail = min(tail, episodes)
    return DemoResult(
        controller=controller,
        surface=surface,
        index_names=ctrl.index_names,
        lambdas=lams,
        returns=rets,
        tail=tail,
        near_fraction=float(surface.near(lams[-tail:]).mean()),
        uniform_near_fraction=float(surface.near(u_lams[-tail:]).mean()),
        uniform_near_probability=surface.uniform_near_probability(),
    )


def demo_summary(result: DemoResult) -> str:
    """One line: how concentrated the last samples are around λ*, against uniform sampling."""
    s = result.surface
    opt = ", ".join(f"{n}={v:g}" for n, v in zip(result.index_names, s.optimum, strict=True))
    return (
        f"{result.controller} ({len(s.ranges)}-D, {len(result.returns)} episodes, noise "
        f"{s.noise:g}): {result.near_fraction:.1%} of the last {result.tail} samples lie within "
        f"±{s.radius:.0%} of the range of λ* ({opt}); uniform sampling: "
        f"{result.uniform_near_fraction:.1%} (expected {result.uniform_near_probability:.1%})"
    )


def save_demo_plot(result: DemoResult, path: str | Path) -> Path:
    """``plot_meta_history`` of a demo run, λ* dashed, the summary in the title."""
    from gdi.meta.plotting import plot_meta_history

    s = result.surface
    title = (
        f"gdi meta-demo: {result.controller} on a synthetic {len(s.ranges)}-D return surface "
        f"(noise {s.noise:g})\n{result.near_fraction:.1%} of the last {result.tail} samples near "
        f"λ* vs {result.uniform_near_fraction:.1%} for uniform sampling"
    )
    return plot_meta_history(
        np.arange(1, len(result.returns) + 1),
        result.lambdas,
        result.returns,
        result.index_names,
        s.ranges,
        path,
        title,
        optimum=s.optimum,
        xlabel="episode",
    )
