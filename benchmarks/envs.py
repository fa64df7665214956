"""Raw environment throughput of ``gdi.envs``, against the layer each kind is built on.

For each spec (``ale:Breakout``, ``minatar:breakout``, ``gym:CartPole-v1``) and each number of
environments, uniformly random actions (drawn before timing) are stepped through
``gdi.envs.make_vector_env`` and, in the same run, directly through the layer underneath, on
the *same* environment instances (so settings, seeds, threads and emulator states are the same
by construction):

- ``ale:``     ale-py's ``AtariVectorEnv.step`` (``env.ale_env``, built with
  ``ale_vector_env_kwargs(config)``: every keyword explicit, SAME_STEP autoreset);
- ``gym:``     Gymnasium's ``SyncVectorEnv.step`` (``env.sync_env``, SAME_STEP);
- ``minatar:`` a bare Python loop of ``minatar.Environment.act`` / ``state`` / ``reset`` over
  ``env.games``, its states stacked into one array (MinAtar's own bool ``[N, 10, 10, C]``
  layout): the least any batched MinAtar environment does.

The two alternate in short blocks (which goes first alternates too) and each side's time is
summed, so that load from other processes on a shared machine hits both alike. ``ratio`` is
gdi's rate over the direct rate; ``cost`` = 1 − ratio is what the gdi layer costs (the ALE
target is < 5 %). Frames/s are agent steps/s × ``config.frames_per_step`` (4 on the ALE).

Usage::

    .venv/bin/python -m benchmarks.envs                 # all kinds, 16 and 32 environments
    .venv/bin/python -m benchmarks.envs --specs ale:Breakout --num-envs 32 --steps 2000
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numpy as np

from gdi.envs import make_vector_env, resolve_env

DEFAULT_STEPS = {"ale": 1_000, "minatar": 20_000, "gym": 20_000}  # vector steps per side
BLOCK = {"ale": 10, "minatar": 200, "gym": 200}  # vector steps per timed block


def _direct_step(env) -> Callable[[np.ndarray], object]:
    """The step of the layer under ``env``, acting on the same environment instances."""
    kind = env.config.kind
    if kind == "ale":
        return env.ale_env.step
    if kind == "gym":
        return env.sync_env.step
    games = env.games

    def step(actions: np.ndarray) -> np.ndarray:
        states = []
        for game, a in zip(games, actions.tolist(), strict=True):
            _, done = game.act(a)
            if done:
                game.reset()
            states.append(game.state())
        return np.array(states)

    return step


def _time_steps(step: Callable[[np.ndarray], object], actions: np.ndarray) -> float:
    start = time.perf_counter()
    for a in actions:
        step(a)
    return time.perf_counter() - start


def bench(spec: str, num_envs: int, steps: int, block: int, seed: int = 0) -> dict:
    config = resolve_env(spec)
    env = make_vector_env(config, num_envs, seed)
    env.reset()
    direct = _direct_step(env)
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, env.single_action_space.n, (steps, num_envs), dtype=np.int64)
    _time_steps(env.step, actions[:block])  # warm-up
    _time_steps(direct, actions[:block])
    gdi_time = direct_time = 0.0
    for k, start in enumerate(range(0, steps, block)):
        chunk = actions[start : start + block]
        if k % 2:
            direct_time += _time_steps(direct, chunk)
            gdi_time += _time_steps(env.step, chunk)
        else:
            gdi_time += _time_steps(env.step, chunk)
            direct_time += _time_steps(direct, chunk)
    env.close()
    gdi_rate, direct_rate = steps * num_envs / gdi_time, steps * num_envs / direct_time
    return {
        "spec": spec,
        "num_envs": num_envs,
        "steps_per_s": gdi_rate,
        "frames_per_s": gdi_rate * config.frames_per_step,
        "direct_steps_per_s": direct_rate,
        "ratio": gdi_rate / direct_rate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--specs", nargs="+", default=["ale:Breakout", "minatar:breakout", "gym:CartPole-v1"]
    )
    parser.add_argument("--num-envs", nargs="+", type=int, default=[16, 32])
    parser.add_argument(
        "--steps", type=int, default=0, help="vector steps per side (0: the per-kind default)"
    )
    args = parser.parse_args()
    print(
        f"{platform.machine()}, {os.cpu_count()} CPUs visible, random actions, gdi and direct "
        f"alternating on the same instances"
    )
    print()
    print("| spec | envs | agent steps/s | frames/s | direct steps/s | ratio gdi/direct | cost |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for spec in args.specs:
        kind = spec.split(":", 1)[0]
        for num_envs in args.num_envs:
            r = bench(spec, num_envs, args.steps or DEFAULT_STEPS[kind], BLOCK[kind])
            print(
                f"| {r['spec']} | {num_envs} | {r['steps_per_s']:,.0f} | {r['frames_per_s']:,.0f} "
                f"| {r['direct_steps_per_s']:,.0f} | {r['ratio']:.3f} "
                f"| {100 * (1 - r['ratio']):+.1f} % |",
                flush=True,
            )


if __name__ == "__main__":
    main()
