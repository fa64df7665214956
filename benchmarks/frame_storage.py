"""Each step stored once, against the stacked sequences it replaced, measured in one run:
bytes per new environment frame in an actor's window, data-collector bytes at the preset's
``replay_capacity``, the time to ship one window through a pipe (as the local backend does),
and batch assembly time per learner step (stored once: as training samples a batch, its
stacked observations left as frames for the learner to rebuild on its device).

The stacked form is what the learner reads (``SequenceBatch``) and what windows and the
collector held before: every window a copy of its ``burn_in + seq_len`` steps with their
stacked observations, every sequence a copy of its own. Both forms here hold the same random
steps of the preset's shapes (bytes and copy times do not depend on the pixels):

    .venv/bin/python -m benchmarks.frame_storage [--env ale:Breakout] [--preset gdi-i3]
"""

from __future__ import annotations

import argparse
import pickle
import time

import numpy as np
import torch
import torch.multiprocessing as torch_mp

from benchmarks.throughput import random_chunk
from gdi.envs import resolve_env
from gdi.presets import resolve_config
from gdi.runtime.components import env_shapes
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.sequences import SequenceBatch


def _echo(there, back) -> None:
    while (item := there.recv()) is not None:
        back.send(item)


def _tensors(payload):
    """What the local backend sends: the big array as a torch tensor (shared memory)."""
    if isinstance(payload, SequenceBatch):
        data = payload.as_dict()
        data["obs"] = torch.from_numpy(data["obs"])
        return data
    import dataclasses

    return dataclasses.replace(payload, frames=torch.from_numpy(payload.frames))


def best_ms(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def measure(env: str, preset: str, repeats: int) -> dict:
    config = resolve_config(preset, env)
    env_config = resolve_env(env)
    shapes = env_shapes(env_config, 0)
    stack = env_config.stacked_frames
    rng = np.random.default_rng(0)
    collector = ReplayCollector(config.batch_size, config.replay, config.replay_capacity,
                                config.batch_size, seed=0, frame_stack=stack)
    # Fill the collector to its capacity as the actors do, each actor's stream in turn.
    starts = [0] * config.num_actors
    actor = 0
    while collector.free_slots >= 2 * config.envs_per_actor or starts[0] == 0:
        chunk = random_chunk(config, shapes, rng, starts[actor], stack)
        collector.add(chunk, actor=actor)
        starts[actor] = chunk.end
        actor = (actor + 1) % config.num_actors
    # The last window: a later one of actor 0 (`seq_stride` new steps), as in steady state.
    later = random_chunk(config, shapes, rng, starts[0], stack)
    collector.add(later, actor=0)
    stacked_window = collector.newest(later.num_envs)  # the same sequences, stacked
    frames_per_window = later.steps * later.num_envs * env_config.frames_per_step
    held = {id(a): a.nbytes for item in collector._items for c, _, _ in item.pieces
            for a in c.as_dict().values() if isinstance(a, np.ndarray)}
    one_sequence = sum(a.nbytes for a in stacked_window.column(0).as_dict().values())
    columns = [stacked_window.column(i % later.num_envs) for i in range(config.batch_size)]

    ctx = torch_mp.get_context("spawn")
    there_out, there_in = ctx.Pipe(duplex=False)
    back_out, back_in = ctx.Pipe(duplex=False)
    echo = ctx.Process(target=_echo, args=(there_out, back_in), daemon=True)
    echo.start()

    def round_trip(payload):
        there_in.send(_tensors(payload))
        back_out.recv()

    try:
        round_trip(later)  # warm-up
        ship = {"stacked": best_ms(lambda: round_trip(stacked_window), repeats),
                "stored once": best_ms(lambda: round_trip(later), repeats)}
    finally:
        there_in.send(None)
        echo.join()

    def sample_once() -> None:
        collector._uses_left = [10**9] * len(collector)  # sampling never empties it here
        collector.sample(stacked=False)  # as training does: the learner rebuilds the stacks

    return {
        "env": env, "preset": preset, "frame_stack": stack,
        "window_steps": later.steps, "envs": later.num_envs,
        "window_bytes": {"stacked": len(pickle.dumps(stacked_window)),
                         "stored once": len(pickle.dumps(later))},
        "bytes_per_frame": {"stacked": len(pickle.dumps(stacked_window)) / frames_per_window,
                            "stored once": len(pickle.dumps(later)) / frames_per_window},
        "collector_bytes": {"stacked": one_sequence * len(collector),
                            "stored once": sum(held.values())},
        "sequences_held": len(collector),
        "ship_ms": ship,
        "assembly_ms": {
            "stacked": best_ms(lambda: SequenceBatch.concatenate(columns), repeats),
            "stored once": best_ms(sample_once, repeats)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="ale:Breakout")
    parser.add_argument("--preset", default="gdi-i3")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    result = measure(args.env, args.preset, args.repeats)
    print(f"{result['env']} ({result['preset']}): windows of {result['window_steps']} new steps "
          f"× {result['envs']} environments, stack {result['frame_stack']}; the collector at "
          f"{result['sequences_held']} sequences")
    rows = [("bytes per new frame in a window", "bytes_per_frame", "{:,.0f} B"),
            ("one window", "window_bytes", "{:,.0f} B"),
            ("collector at replay_capacity", "collector_bytes", "{:,.0f} B"),
            ("ship one window (pipe round trip)", "ship_ms", "{:.1f} ms"),
            ("batch assembly per learner step", "assembly_ms", "{:.1f} ms")]
    for label, key, fmt in rows:
        before, after = result[key]["stacked"], result[key]["stored once"]
        print(f"  {label:<36} stacked {fmt.format(before):>16}   stored once "
              f"{fmt.format(after):>16}   ratio {before / after:5.1f}x")


if __name__ == "__main__":
    main()
