"""Time operator E: microseconds per sample() + update() for every controller (not a test).

Actors call ``sample`` at every episode start and ``update`` at every episode end, so this is
E's whole per-episode cost. Each controller is built as ``gdi meta-demo`` builds it
(``gdi.meta.demo_controller``): the paper's bandit ensemble (7 bandits × 2-4 tile codings per
coordinate, 3 candidates), Agent57's sliding-window UCB over 16 arms (1-D) or 32 arms (3-D),
uniform over the search box, and the fixed index. Returns come from the demo surface, drawn
before timing; one process, one thread.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/meta.py [--episodes N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from gdi.meta import CONTROLLERS, demo_controller, demo_surface


def time_controller(
    name: str, dims: int, episodes: int, repeats: int, chunk: int = 100
) -> tuple[float, float]:
    """(median, best) µs per sample + update over chunks of ``chunk`` episodes.

    ``repeats`` fresh controllers each play ``episodes`` episodes (after one warm-up run), timed
    per chunk; on a shared machine the best chunk is the closest to an idle CPU.
    """
    surface = demo_surface(dims)
    rng = np.random.default_rng(0)
    # Returns drawn ahead from uniform λ, so the surface's cost is not timed.
    box = np.asarray(surface.ranges)
    lams = rng.uniform(box[:, 0], box[:, 1], size=(episodes, dims))
    returns = [surface.sample_return(lam, rng) for lam in lams]
    chunks = []
    for r in range(repeats + 1):
        controller = demo_controller(name, dims, seed=r)
        for begin in range(0, episodes, chunk):
            part = returns[begin : begin + chunk]
            start = time.perf_counter()
            for g in part:
                controller.update(controller.sample(), g)
            if r:  # the first run warms caches and imports
                chunks.append((time.perf_counter() - start) / len(part) * 1e6)
    return statistics.median(chunks), min(chunks)


def numpy_call_us() -> float:
    """µs of one small numpy call (a + a on 150 floats): the unit E's cost is made of."""
    a = np.ones(150)
    best = float("inf")
    for _ in range(20):
        start = time.perf_counter()
        for _ in range(1000):
            np.add(a, a)
        best = min(best, (time.perf_counter() - start) / 1000 * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"µs per sample() + update(): median (best) over chunks of 100 episodes, "
        f"{args.repeats} runs of {args.episodes} episodes"
    )
    print(f"calibration: one small numpy call (a + a, 150 floats) = {numpy_call_us():.2f} µs")
    print("| controller | dim 3 | dim 1 |")
    print("| --- | ---: | ---: |")
    for name in CONTROLLERS:
        cells = []
        for dims in (3, 1):
            med, low = time_controller(name, dims, args.episodes, args.repeats)
            cells.append(f"{med:.1f} ({low:.1f})")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
