"""End-to-end frames/s of the inline, local and ray backends at 1 and 2 actors, measured in one
run on one machine, and what one window costs to ship (bytes, latency) through a local
pipe and through Ray.

Each training run is the default preset on ``--env`` (MinAtar Breakout: the one `make train`
runs) for ``--frames`` frames with periodic evaluation off, so that frames/s is that of
training alone; the figure is frames ÷ wall seconds from the first learner step to the end
(start-up, Ray's included, is reported apart). Ray's cost is its frames/s against local's at
equal actors (target: ≥ 0.9).

    .venv/bin/python -m benchmarks.backends [--env minatar:breakout] [--frames 200000]
        [--backends inline,local,ray] [--actors 1,2] [--repeats 1]
        [--ship-envs minatar:breakout,ale:Breakout] [--ship-only]
"""

from __future__ import annotations

import argparse
import json
import pickle
import tempfile
import time
from pathlib import Path

import numpy as np

from gdi.presets import resolve_config
from gdi.runtime.wiring import train


def training_rate(env: str, backend: str, actors: int, frames: int, root: Path) -> dict:
    # One learner thread on every backend (the local default on 2 cores): the comparison is
    # of how windows and parameters travel, not of the learner's threads (which also thrash
    # when another process holds a core).
    config = resolve_config("gdi-i3", env, frames=frames, backend=backend).replace(
        num_actors=actors, eval_every=0, eval_episodes=1, torch_threads=1)
    run_dir = root / f"{backend}-{actors}"
    start = time.perf_counter()
    train(config, run_dir, show_progress=False, tensorboard=False)
    wall = time.perf_counter() - start
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    # Rows after the first: the learner is running (the first row includes start-up and
    # filling the collector to min_replay).
    timed = [r for r in rows[1:] if "perf/fps" in r]
    fps = float(np.mean([r["perf/fps"] for r in timed])) if timed else float("nan")
    return {"backend": backend, "actors": actors, "fps": fps, "wall_s": wall,
            "policy_lag": float(np.mean([r["perf/policy_lag"] for r in timed])) if timed
            else float("nan")}


def window_shipping(env: str, trials: int = 50) -> list[dict]:
    """Bytes of one window (an actor's second: steady state) and the round-trip time to move it
    between processes: through a pipe (as the local backend ships windows) and as a Ray
    actor's return value."""
    import torch.multiprocessing as torch_mp

    from gdi.envs import resolve_env
    from gdi.runtime.acting.actor import Actor
    from gdi.runtime.backends.local import _pack, _unpack
    from gdi.runtime.components import build_controller, build_network, env_shapes
    from gdi.runtime.training.parameter_server import InlineParameterServer
    from gdi.runtime_config import ActorsConfig, ReplayConfig

    config = resolve_config("gdi-i3", env)
    env_config = resolve_env(env)
    shapes = env_shapes(env_config, 0)
    net = build_network(config, shapes)
    actor = Actor(0, config.layer(ActorsConfig), config.layer(ReplayConfig), config.policy_space,
                  env_config, net, build_controller(config, 0), 0)
    server = InlineParameterServer(net)
    actor.act_window(server)  # the first window of a stream holds burn_in + seq_len steps
    window = actor.act_window(server)  # later ones seq_stride new steps: the steady state
    actor.close()
    size = len(pickle.dumps(window))
    results = []

    ctx = torch_mp.get_context("spawn")  # a pipe each way, as the local backend's actors use
    there_out, there_in = ctx.Pipe(duplex=False)
    back_out, back_in = ctx.Pipe(duplex=False)
    echo = ctx.Process(target=_echo, args=(there_out, back_in), daemon=True)
    echo.start()
    there_in.send(_pack(window))
    _unpack(back_out.recv())  # warm-up
    start = time.perf_counter()
    for _ in range(trials):
        there_in.send(_pack(window))
        _unpack(back_out.recv())
    results.append({"path": "local pipe (round trip)", "bytes": size,
                    "ms": (time.perf_counter() - start) / trials * 1e3})
    there_in.send(None)
    echo.join()

    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        holder = ray.remote(_WindowHolder).remote(window)
        ray.get(holder.window.remote())  # warm-up
        start = time.perf_counter()
        for _ in range(trials):
            ray.get(holder.window.remote())
        results.append({"path": "Ray actor → driver", "bytes": size,
                        "ms": (time.perf_counter() - start) / trials * 1e3})
        start = time.perf_counter()
        for _ in range(trials):
            ray.get(holder.nothing.remote())
        results.append({"path": "Ray empty call (latency floor)", "bytes": 0,
                        "ms": (time.perf_counter() - start) / trials * 1e3})
    finally:
        ray.shutdown()
    return results


def _echo(there, back) -> None:
    while (item := there.recv()) is not None:
        back.send(item)


class _WindowHolder:
    def __init__(self, window) -> None:
        self._window = window

    def window(self):
        return self._window

    def nothing(self) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="minatar:breakout")
    parser.add_argument("--frames", type=int, default=200_000)
    parser.add_argument("--backends", default="inline,local,ray")
    parser.add_argument("--actors", default="1,2")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--ship-envs", default=None,
                        help="environments whose window is shipped (default: --env)")
    parser.add_argument("--ship-only", action="store_true", help="skip the training runs")
    args = parser.parse_args()
    if not args.ship_only:
        compare_backends(args)
    for env in (args.ship_envs or args.env).split(","):
        print("\none window of", env)
        for item in window_shipping(env):
            print(f"  {item['path']:<32} {item['bytes'] / 1e6:7.3f} MB  {item['ms']:7.3f} ms")


def compare_backends(args) -> None:
    rates = []
    with tempfile.TemporaryDirectory() as root:
        for repeat in range(args.repeats):
            for actors in (int(a) for a in args.actors.split(",")):
                for backend in args.backends.split(","):
                    rate = training_rate(args.env, backend, actors, args.frames,
                                         Path(root) / str(repeat))
                    rates.append(rate)
                    print(f"{backend:>6} × {actors} actors: {rate['fps']:7.0f} frames/s "
                          f"(policy lag {rate['policy_lag']:.1f}; whole run {rate['wall_s']:.1f} "
                          "s with start-up)", flush=True)
    print("\nratios at equal actors (mean frames/s over repeats):")
    for actors in sorted({r["actors"] for r in rates}):
        mean = {b: np.mean([r["fps"] for r in rates if r["backend"] == b and r["actors"] == actors])
                for b in {r["backend"] for r in rates}}
        if "local" in mean:
            for backend in sorted(mean):
                print(f"  {actors} actors: {backend}/local = {mean[backend] / mean['local']:.3f}")


if __name__ == "__main__":
    main()
