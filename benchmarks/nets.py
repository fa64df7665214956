"""Throughput of gdi.nets on this machine: the denominators of the runtime's overhead ratios.

Two workloads per torso and family count (1 = GDI-I, 2 = GDI-H):

* acting: one step (T = 1) for N ∈ {16, 32} environments under ``torch.no_grad``, as the
  actor runs it; samples/s = N / time per step;
* learning: the learner's unroll (gdi.runtime.training.learner): burn-in of 40 observations from the
  stored state without gradient, then 80 + 1 (bootstrap) observations with gradient, both
  auxiliary losses, backward; samples/s = B · 120 / time per update, for B ∈ {8, 64}. For
  impala_deep at B = 64 one update is timed (tens of seconds on 2 cores) and it is skipped
  when the machine has too little free memory for its activations.

``--compare`` also times the design choices of gdi.nets: the chunked ``nn.LSTM`` core vs a
per-step ``LSTMCell`` loop, the two families in a loop vs batched with ``torch.func.vmap``,
and channels-last vs contiguous convolutions.

Usage: ``python benchmarks/nets.py [--threads N] [--compare] [--torsos impala_deep minatar mlp]``.
Prints markdown tables.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import resource
import time
from collections.abc import Callable

import torch
from torch import nn

from gdi.learning.auxiliary import dynamics_losses
from gdi.nets import LSTMCore, build

#: torso → (obs_shape, obs dtype, num_actions) of the environments each is meant for.
SETTINGS = {
    "impala_deep": ((4, 84, 84), torch.uint8, 18),  # ALE: 4 stacked 84×84 frames, full actions
    "minatar": ((4, 10, 10), torch.uint8, 6),  # MinAtar Breakout-like, channels first
    "mlp": ((8,), torch.float32, 4),  # a vector-observation control task
}
BURN_IN, SEQ_LEN = 40, 80
#: Bytes of saved activations per observation and family in a gradient unroll of impala_deep
#: on 84×84 frames (measured: ~1.5 MB), to skip sizes that would exhaust memory.
IMPALA_GRAD_BYTES = 2.0e6


def mem_available_bytes() -> float:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float("inf")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timeit(fn: Callable[[], object], *, warmup: int, iters: int, rounds: int = 1) -> float:
    """Seconds per call: the best of ``rounds`` rounds of ``iters`` calls each. On a shared
    machine other processes only ever slow a round down, so the best round is the estimate of
    the code's own speed."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - start) / iters)
    return best


def make_inputs(net, num_steps: int, batch: int, obs_dtype: torch.dtype, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    shape = (num_steps, batch, *net.obs_shape)
    if obs_dtype == torch.uint8:
        obs = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    else:
        obs = torch.randn(shape, generator=gen)
    prev_action = torch.randint(0, net.num_actions, (num_steps, batch), generator=gen)
    prev_reward = torch.randn(num_steps, batch, generator=gen)
    reset = torch.zeros(num_steps, batch, dtype=torch.bool)
    reset[0] = True
    actions = torch.randint(0, net.num_actions, (num_steps - 1, batch), generator=gen)
    return obs, prev_action, prev_reward, reset, actions


def bench_acting(torso: str, families: int, num_envs: int) -> float:
    obs_shape, obs_dtype, num_actions = SETTINGS[torso]
    net = build(obs_shape, num_actions, torso=torso, families=families)
    obs, prev_action, prev_reward, reset, _ = make_inputs(net, 1, num_envs, obs_dtype)
    state = net.initial_state(num_envs)

    def step():
        with torch.no_grad():
            net(obs, prev_action, prev_reward, reset, state)

    seconds = timeit(step, warmup=5, iters=20, rounds=5)
    return num_envs / seconds


def bench_learning(torso: str, families: int, batch: int, iters: int) -> float:
    obs_shape, obs_dtype, num_actions = SETTINGS[torso]
    net = build(obs_shape, num_actions, torso=torso, families=families)
    total = BURN_IN + SEQ_LEN + 1
    obs, prev_action, prev_reward, reset, actions = make_inputs(net, total, batch, obs_dtype)
    state0 = net.initial_state(batch)
    b = BURN_IN
    valid = torch.ones(SEQ_LEN, batch)

    def update():
        net.zero_grad(set_to_none=True)
        with torch.no_grad():
            _, state = net(obs[:b], prev_action[:b], prev_reward[:b], reset[:b], state0)
        outputs, _ = net(obs[b:], prev_action[b:], prev_reward[b:], reset[b:], state)
        aux = dynamics_losses(*net.dynamics_predictions(outputs, actions[b:], valid), actions[b:],
                              valid)
        # A stand-in for the GDI loss (cheap next to the network): every output gets gradient.
        loss = outputs.adv.square().mean() + outputs.value.square().mean() + sum(aux.values())
        loss.backward()

    # One round of one update (no warm-up) for the slowest size; otherwise the best of `iters`.
    seconds = timeit(update, warmup=0 if iters == 1 else 1, iters=1, rounds=iters)
    return batch * (BURN_IN + SEQ_LEN) / seconds


def run_throughput(torsos: list[str]) -> None:
    print("\n### Acting: one step, no gradient (samples/s = env steps/s)\n")
    print("| torso | F | N=16 | N=32 |")
    print("| --- | --- | --- | --- |")
    for torso in torsos:
        for families in (1, 2):
            rates = [bench_acting(torso, families, n) for n in (16, 32)]
            print(f"| {torso} | {families} | {rates[0]:,.0f} | {rates[1]:,.0f} |", flush=True)

    print(
        f"\n### Learning: burn-in {BURN_IN} (no grad) + {SEQ_LEN}+1 with grad, aux losses, "
        "backward (samples/s = B·120 transitions / s per update)\n"
    )
    print("| torso | F | B=8 | B=64 |")
    print("| --- | --- | --- | --- |")
    for torso in torsos:
        for families in (1, 2):
            cells = []
            for batch in (8, 64):
                heavy = torso == "impala_deep"
                if heavy and batch == 64:
                    need = IMPALA_GRAD_BYTES * families * batch * (SEQ_LEN + 1)
                    free = mem_available_bytes()
                    if need > 0.7 * free:
                        cells.append(f"skipped (needs ~{need / 1e9:.0f} GB, {free / 1e9:.0f} GB free)")
                        continue
                iters = 1 if heavy and batch == 64 else (2 if heavy else 4)
                rate = bench_learning(torso, families, batch, iters)
                cells.append(f"{rate:,.0f}" + (" (1 update)" if iters == 1 else ""))
            print(f"| {torso} | {families} | {cells[0]} | {cells[1]} |", flush=True)


def compare_core() -> None:
    """gdi.nets.core (chunked nn.LSTM or lstm_cell loop, by mean chunk length) vs always one
    nn.LSTM call per reset-free chunk vs a per-step nn.LSTMCell loop; T=120, B=64, H=256."""
    num_steps, batch, hidden, in_size = BURN_IN + SEQ_LEN, 64, 256, 256 + 18 + 1
    torch.manual_seed(0)
    core = LSTMCore(in_size, hidden)
    chunked_only = copy.deepcopy(core)
    chunked_only.min_mean_chunk = 1  # never the per-step loop
    cell = nn.LSTMCell(in_size, hidden)

    def cell_loop(x, reset, state):
        keep = (~reset).float().unsqueeze(-1)
        h, c = state[:, 0], state[:, 1]
        outs = []
        for t, x_t in enumerate(x.unbind(0)):
            h, c = cell(x_t, (h * keep[t], c * keep[t]))
            outs.append(h)
        return torch.stack(outs)

    def timed(fn, x, reset, state, grad):
        def call():
            with torch.set_grad_enabled(grad):
                out = fn(x, reset, state)
                if grad:
                    out.sum().backward()

        return timeit(call, warmup=1, iters=1, rounds=5) * 1e3

    gen = torch.Generator().manual_seed(0)
    patterns = {
        "no reset": torch.zeros(num_steps, batch, dtype=torch.bool),
        # Atari-like: episodes of ~2000 steps → a few distinct reset steps per batch of 64.
        "p=1/2000 per step": torch.rand(num_steps, batch, generator=gen) < 1 / 2000,
        "p=1/50 per step": torch.rand(num_steps, batch, generator=gen) < 1 / 50,
        "every step": torch.ones(num_steps, batch, dtype=torch.bool),
    }
    x = torch.randn(num_steps, batch, in_size, requires_grad=True)
    state = torch.zeros(batch, 2, hidden)
    variants = (
        lambda x, r, s: core(x, r, s)[0],
        lambda x, r, s: chunked_only(x, r, s)[0],
        cell_loop,
    )
    print("\n### Core: gdi vs nn.LSTM per chunk vs LSTMCell loop (T=120, B=64, H=256), ms\n")
    print("| resets | chunks | gdi fwd | gdi fwd+bwd | nn.LSTM per chunk fwd+bwd "
          "| LSTMCell loop fwd+bwd |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, reset in patterns.items():
        chunks = 1 + int(reset[1:].any(dim=1).sum())
        row = [timed(variants[0], x, reset, state, False)]
        row += [timed(fn, x, reset, state, True) for fn in variants]
        print(f"| {name} | {chunks} | {row[0]:.0f} | {row[1]:.0f} | {row[2]:.0f} "
              f"| {row[3]:.0f} |", flush=True)
    # Acting: one step for 32 environments, no gradient, µs.
    x1, r1, s1 = torch.randn(1, 32, in_size), torch.zeros(1, 32, dtype=torch.bool), state[:32]
    with torch.no_grad():
        act = [timeit(lambda fn=fn: fn(x1, r1, s1), warmup=20, iters=100, rounds=5) * 1e6
               for fn in variants]
    print(f"\nActing step (T=1, B=32, no grad): gdi {act[0]:.0f} µs, nn.LSTM {act[1]:.0f} µs, "
          f"LSTMCell {act[2]:.0f} µs")


def compare_families_and_layout() -> None:
    """Two impala_deep torsos: a loop vs torch.func.vmap over stacked parameters (grouped
    convolutions); and one torso with channels-last vs contiguous memory, N = 32 frames."""
    from torch.func import functional_call, stack_module_state, vmap

    torch.manual_seed(0)
    net = build((4, 84, 84), 18, families=2, aux=False)
    torsos = [family.torso for family in net.family_nets]
    params, buffers = stack_module_state(torsos)
    base = copy.deepcopy(torsos[0]).to("meta")
    num = 32
    x = torch.rand(num, 4, 84, 84)

    def loop():
        return torch.stack([torso(x) for torso in torsos])

    def batched():
        return vmap(lambda p, b: functional_call(base, (p, b), (x,)))(params, buffers)

    def contiguous_conv():
        return torsos[0].linear(torch.relu(torsos[0].stages(x.contiguous())).flatten(1))

    def channels_last_conv():
        return torsos[0](x)

    print("\n### Families and layout: impala_deep torso, N=32 frames, ms per call\n")
    print("| variant | fwd | fwd+bwd |")
    print("| --- | --- | --- |")
    for name, fn in (("2 families, loop (gdi)", loop), ("2 families, vmap", batched),
                     ("1 family, channels-last (gdi)", channels_last_conv),
                     ("1 family, contiguous NCHW", contiguous_conv)):
        row = []
        for grad in (False, True):
            def call(fn=fn, grad=grad):
                with torch.set_grad_enabled(grad):
                    out = fn()
                    if grad:
                        out.sum().backward()

            row.append(timeit(call, warmup=1, iters=1, rounds=5) * 1e3)
        print(f"| {name} | {row[0]:.0f} | {row[1]:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--threads", type=int, default=1,
        help="torch intra-op threads (default 1: on a shared 2-core machine two threads thrash "
        "when another process holds a core, e.g. an acting step went from 1.3 ms to 18 ms)",
    )
    parser.add_argument("--torsos", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--compare", action="store_true", help="also time the design choices")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}, "
          f"CPU: {cpu_name()} ({os.cpu_count()} logical CPUs)")
    start = time.perf_counter()
    run_throughput(args.torsos)
    if args.compare:
        compare_core()
        compare_families_and_layout()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"\nwall time {time.perf_counter() - start:.0f} s, peak RSS {peak:.1f} GB")


if __name__ == "__main__":
    main()
