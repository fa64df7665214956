"""How far the paper's bandit E moves P_Λ away from uniform, as a function of the noise of
episode returns, of their drift while the network improves, and of the number of episodes —
on a synthetic return surface over GDI-I³'s box, where the best λ is known.

The surface is ``gdi.meta.synthetic``'s 3-D one (peak 1 at λ* = (13.3, 34.6, 0.27), a decoy
of 0.6, width 0.2 of each range): a return is mean(λ) + N(0, noise²) + drift · t / episodes.
``noise`` is in units of the surface's peak-to-floor height; ``drift`` adds what a network
that improves during the run adds to every return, whatever its λ (MinAtar Breakout: returns
go from ~1 to ~8 over a run while λ changes them by ~3; their standard deviation at one fixed λ
is 2-4 late in a run: noise ≈ 1 and drift ≈ 2 in these units; docs/ablation-e-notes.md).

For each setting and seed it runs the bandit (the paper's ensemble, the table's block sizes)
and uniform sampling over the same box, and reports over the last ``--tail`` episodes:

* ``near``: the share of sampled λ within 10 % of each range from λ* (uniform: ~0.8 %);
* ``KL``: the KL divergence of each coordinate's sampled histogram (10 bins) to uniform, in
  nats (``gdi.analysis.e_learning.kl_to_uniform``), and the uniform sampler's for comparison
  (the estimator's floor for that many draws);
* ``gain``: the mean noise-free return of the sampled λ over that of uniform sampling.

    .venv/bin/python -m benchmarks.e_resolving_power --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence

import numpy as np

from gdi.analysis.e_learning import kl_to_uniform
from gdi.meta.synthetic import demo_controller, demo_surface


def play(controller: str, noise: float, drift: float, episodes: int, seed: int):
    """λ sampled ``[episodes, 3]`` by ``controller`` on the drifting noisy surface."""
    surface = demo_surface(3, noise=0.0)
    e = demo_controller(controller, 3, seed)
    rng = np.random.default_rng(seed + 10_000)
    lams = np.empty((episodes, 3))
    for t in range(episodes):
        lam = e.sample()
        g = float(surface.mean(lam)) + noise * rng.standard_normal() + drift * t / episodes
        e.update(lam, g)
        lams[t] = lam
    return lams, surface


def measure(noise: float, drift: float, episodes: int, tail: int, seed: int) -> dict:
    bandit, surface = play("bandit", noise, drift, episodes, seed)
    uniform, _ = play("uniform", noise, drift, episodes, seed)
    box = np.asarray(surface.ranges)

    def kl(lams):
        pos = (lams[-tail:] - box[:, 0]) / (box[:, 1] - box[:, 0])
        return [kl_to_uniform(pos[:, i]) for i in range(3)]

    return {
        "near": float(surface.near(bandit[-tail:]).mean()),
        "near_uniform": float(surface.near(uniform[-tail:]).mean()),
        "kl": kl(bandit), "kl_uniform": kl(uniform),
        "gain": float(surface.mean(bandit[-tail:]).mean() / surface.mean(uniform[-tail:]).mean()),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e_resolving_power",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--noises", default="0.1,0.5,1,2")
    parser.add_argument("--drifts", default="0,2")
    parser.add_argument("--episodes", default="2000,8000")
    parser.add_argument("--tail", type=int, default=1000)
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args(argv)

    def floats(text):
        return [float(v) for v in text.split(",")]

    seeds = [int(s) for s in args.seeds.split(",")]
    print("| noise | drift | episodes | near (uniform) | KL 1/τ₁, 1/τ₂, ε (uniform) | gain |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for noise, drift, episodes in itertools.product(floats(args.noises), floats(args.drifts),
                                                    [int(e) for e in floats(args.episodes)]):
        rows = [measure(noise, drift, episodes, min(args.tail, episodes), s) for s in seeds]
        near = np.mean([r["near"] for r in rows])
        near_u = np.mean([r["near_uniform"] for r in rows])
        kl = np.mean([r["kl"] for r in rows], axis=0)
        kl_u = np.mean([r["kl_uniform"] for r in rows], axis=0)
        gain = np.mean([r["gain"] for r in rows])
        print(f"| {noise:g} | {drift:g} | {episodes} | {near:.3f} ({near_u:.3f}) | "
              f"{', '.join(f'{v:.3f}' for v in kl)} ({', '.join(f'{v:.3f}' for v in kl_u)}) "
              f"| {gain:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
