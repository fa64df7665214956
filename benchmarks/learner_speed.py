"""Learner speed levers (issue "time to score"), measured as ratios in one run.

Each variant is a ``gdi.runtime.training.learner.Learner`` stepping on the same random batch (the
shapes of the preset on the env, or the paper's network and batch with ``--paper-shape``:
impala_deep, LSTM 256, 64 sequences of burn-in 40 + 80 learning steps), on one device, in the
form training hands it over (stacked observations as frames, so that each step rebuilds its
stacks on the device, as in training):

* ``eager-N``: today's learner with N torch threads (N from ``--threads``);
* ``compile-N``: the same with ``learner_compile=true`` (torch.compile of each family's torso
  and heads; the LSTM and the loss stay eager), N threads;
* ``pageable-N``: eager, copying every batch from pageable memory, as before pinned staging
  (the difference shows on CUDA with ``--with-collector``, where batches come from a data
  collector as in training);
* a ``/keep`` suffix: with denormal floats computed as such instead of flushed to zero
  (``--denormals flush,keep``; training flushes them, ``gdi.runtime.components``).

``--checkpoint RUN/checkpoints/ckpt_*.pt`` also times the AdamW step alone from the trained
optimizer state, denormals flushed and kept, and starts every variant from the trained learner
(network and AdamW state) on a batch the trained network acted. A fresh optimizer has no
denormal moments, a trained one does; in the timed blocks, which repeat one batch, they decay
to zero within a few hundred steps, so only the AdamW line shows what they cost in a run.

It also times the data collector's assembly of one batch as training samples it
(``ReplayCollector.sample(stacked=False)``: of an ALE batch the frames, each once, 56.0 MB at
the paper's batch against its 218.6 MB of stacked observations) and the learner's tensors made
from it (``batch_to_tensors``: copied to the device and stacked there), and on CUDA the
batch's host-to-device copy alone (pageable memory as the learner's first step does it, and
pinned memory with non-blocking copies). ``--profile`` prints where the first variant's steps
spend their time (torch.profiler) and how many operator calls a step makes.

The variants alternate in blocks of ``--steps`` learner steps so that load from other
processes hits each alike; the best block of each is reported, as samples/s (sequences × their
T) and as a ratio to the first variant. Compilation happens before timing and its time is
printed apart (it is paid once per run).

    .venv/bin/python -m benchmarks.learner_speed --env minatar:breakout --threads 1,2
    .venv/bin/python -m benchmarks.learner_speed --paper-shape --set batch_size=8 --steps 1
    python -m benchmarks.learner_speed --paper-shape --device cuda --steps 5 --profile  # GPU
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from benchmarks.throughput import random_batch, random_chunk
from gdi.config import apply_overrides
from gdi.envs import resolve_env
from gdi.presets import resolve_config
from gdi.runtime.components import build_learner, build_network, env_shapes, flush_denormals
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.training.learner import Learner, batch_to_tensors

#: The paper's network and sequence shape (App. "Hyperparameters"): burn-in 40 + 80 learning.
PAPER_SHAPE = ["burn_in=40", "seq_len=80", "batch_size=64", "lstm_units=256",
               "torso=impala_deep"]


def make_learner(config, shapes, device: str) -> Learner:
    torch.manual_seed(0)
    return build_learner(config, build_network(config, shapes), device=device)


class CollectorFeed:
    """Batches as training makes them: each step samples a data collector, refilled with
    windows of random steps of one actor's stream as it empties (each step stored once, the
    stacks of frames left to the learner to rebuild on its device), into the learner's staging
    buffers when it has them."""

    def __init__(self, config, shapes):
        self.config, self.shapes, self.refills = config, shapes, 0
        self.stack = resolve_env(config.env).stacked_frames
        self.collector = ReplayCollector(config.batch_size, config.replay,
                                         config.batch_size + 2 * config.envs_per_actor,
                                         config.batch_size, 0, frame_stack=self.stack)
        self.rng = np.random.default_rng(100)
        self.start = 0  # the stream index of the next window

    def refill(self) -> None:
        """Enough sequences in the collector for the next batch."""
        while len(self.collector) < self.config.batch_size:
            chunk = random_chunk(self.config, self.shapes, self.rng, self.start, self.stack)
            self.collector.add(chunk, actor=0)
            self.start = chunk.end
            self.refills += 1

    def next(self, learner: Learner):
        self.refill()
        return self.collector.sample(out=learner.staging, stacked=False)


def timed_block(learner: Learner, batch, steps: int, device: str) -> float:
    """``steps`` learner steps on ``batch``, or on batches from a ``CollectorFeed``."""
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        learner.step(batch.next(learner) if isinstance(batch, CollectorFeed) else batch, 0.5)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def profile_steps(learner: Learner, batch, steps: int, device: str) -> None:
    """torch.profiler over ``steps`` learner steps: the operators by self time (CUDA time on a
    GPU), and how many kernels or operator calls a step makes."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        timed_block(learner, batch, steps, device)
    key = "self_cuda_time_total" if device == "cuda" else "self_cpu_time_total"
    averages = prof.key_averages()
    print(averages.table(sort_by=key, row_limit=20))
    calls = sum(event.count for event in averages if not event.key.startswith("autograd::"))
    print(f"  {calls / steps:,.0f} operator calls per step")


def time_batch_assembly(config, shapes, device: str, repeats: int = 3) -> None:
    """The data collector's ``sample()`` of one batch as training does it before each step
    (stacked observations left as frames), from windows of random sequences of the config's
    shape, then the learner's tensors made from it on ``device`` (copied, stacks rebuilt)."""
    feed = CollectorFeed(config, shapes)
    best = float("inf")
    for _ in range(repeats):
        feed.refill()
        start = time.perf_counter()
        batch = feed.collector.sample(stacked=False)
        best = min(best, time.perf_counter() - start)
    observations = batch.as_dict()["frames" if "frames" in batch.as_dict() else "obs"]
    total = sum(a.nbytes for a in batch.as_dict().values())
    print(f"  batch assembly (ReplayCollector.sample, {config.batch_size} sequences, "
          f"{observations.nbytes / 1e6:.1f} MB of observations, {total / 1e6:.1f} MB in all): "
          f"{best * 1000:.0f} ms")
    seconds = []
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        tensors = batch_to_tensors(batch, torch.device(device))
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    print(f"  the learner's tensors from it on {device} (batch_to_tensors: copied, stacks "
          f"rebuilt; {tensors['obs'].nbytes / 1e6:.1f} MB of observations): "
          f"{min(seconds) * 1000:.0f} ms")


def as_trained(batch, stack: int):
    """``batch`` in the form training hands the learner: for stacked observations a
    ``FrameBatch`` of its sequences (each stack's newest frame, the first stack's older
    frames, as the data collector keeps sequences added whole)."""
    if stack == 1:
        return batch
    collector = ReplayCollector(batch.size, 1, batch.size, batch.size, seed=0,
                                frame_stack=stack)
    collector.add(batch)
    return collector.newest(batch.size, stacked=False)


def time_copies(batch, device: str, repeats: int = 5) -> None:
    """The batch to the GPU: pageable (what ``batch_to_tensors`` does) against pinned."""
    arrays = {name: np.ascontiguousarray(a) for name, a in batch.as_dict().items()}
    megabytes = sum(a.nbytes for a in arrays.values()) / 1e6

    def pageable() -> None:
        batch_to_tensors(batch, torch.device(device))

    pinned_host = {name: torch.from_numpy(a).pin_memory() for name, a in arrays.items()}

    def pinned() -> None:
        for tensor in pinned_host.values():
            tensor.to(device, non_blocking=True)

    for name, copy in (("pageable", pageable), ("pinned (already pinned)", pinned)):
        seconds = []
        for _ in range(repeats):
            torch.cuda.synchronize()
            start = time.perf_counter()
            copy()
            torch.cuda.synchronize()
            seconds.append(time.perf_counter() - start)
        print(f"  batch to {device}, {name}: {min(seconds) * 1000:.1f} ms for {megabytes:.1f} MB")
    start = time.perf_counter()
    for a in arrays.values():
        torch.from_numpy(a).pin_memory()
    print(f"  pinning the batch itself: {(time.perf_counter() - start) * 1000:.1f} ms")


def acted_batch(config, shapes, weights: dict):
    """A batch of sequences acted by the trained network (one window of one actor, sampled as
    the data collector samples)."""
    from gdi.runtime.acting.actor import Actor
    from gdi.runtime.components import build_controller
    from gdi.runtime_config import ActorsConfig, ReplayConfig

    net = build_network(config, shapes)
    net.load_state_dict(weights)
    actor = Actor(0, config.layer(ActorsConfig), config.layer(ReplayConfig), config.policy_space,
                  resolve_env(config.env), net, build_controller(config, 1), seed=1)
    chunk = None
    while chunk is None:
        chunk, _ = actor.step()
    actor.close()
    collector = ReplayCollector(config.batch_size, 1, chunk.num_envs, config.batch_size,
                                seed=0, frame_stack=actor.recorder.frame_stack)
    collector.add(chunk, actor=0)
    return collector.sample(stacked=False)


def adamw_step_times(config, shapes, trained: dict, repeats: int = 15) -> None:
    """The fused AdamW step alone, from the checkpoint's optimizer state each time, with
    denormals flushed and kept, on one thread (the setting is per thread). Gradients: small
    random values, none for every third tensor (as for parameters a batch does not reach), the
    same for both."""
    import copy

    torch.set_num_threads(1)
    learner = build_learner(config, build_network(config, shapes), device="cpu")
    learner.load_state_dict(trained)
    generator = torch.Generator().manual_seed(0)
    grads = [torch.randn(p.shape, generator=generator) * 1e-3 * (i % 3 != 0)
             for i, p in enumerate(learner.net.parameters())]
    state = copy.deepcopy(learner.optimizer.state_dict())

    def one(flush: bool) -> float:
        flush_denormals(flush)
        learner.optimizer.load_state_dict(copy.deepcopy(state))
        for parameter, grad in zip(learner.net.parameters(), grads, strict=True):
            parameter.grad = grad.clone()
        start = time.perf_counter()
        learner.optimizer.step()
        return time.perf_counter() - start

    best = {True: float("inf"), False: float("inf")}
    for _ in range(repeats):
        for flush in best:
            best[flush] = min(best[flush], one(flush))
    flush_denormals(False)
    print(f"  AdamW step alone from the checkpoint's state: {best[True] * 1000:.2f} ms with "
          f"denormals flushed, {best[False] * 1000:.2f} ms kept (best of {repeats})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="minatar:breakout")
    parser.add_argument("--preset", default="gdi-i3")
    parser.add_argument("--paper-shape", action="store_true",
                        help="the paper's network and batch: " + " ".join(PAPER_SHAPE))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", default="1", help="comma-separated torch thread counts")
    parser.add_argument("--variants", default="eager,compile",
                        help="comma-separated: eager, compile")
    parser.add_argument("--denormals", default="flush",
                        help="comma-separated: flush (as training does), keep")
    parser.add_argument("--checkpoint", default=None,
                        help="a run's checkpoint: start from its trained network and AdamW state")
    parser.add_argument("--profile", action="store_true",
                        help="print torch.profiler's table of the first variant's steps: where "
                             "a step's time goes (by self CUDA time on a GPU)")
    parser.add_argument("--with-collector", action="store_true",
                        help="each step samples its batch from a data collector, as training "
                             "does (into a CUDA learner's pinned staging buffers)")
    parser.add_argument("--steps", type=int, default=10, help="learner steps per block")
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--set", nargs="*", default=[], help="config overrides field=value")
    args = parser.parse_args()
    flush_denormals()  # before torch starts its worker threads, which inherit it (as training)

    env = "ale:Breakout" if args.paper_shape and args.env == "minatar:breakout" else args.env
    config = resolve_config(args.preset, env, backend="inline")
    config = apply_overrides(config, (PAPER_SHAPE if args.paper_shape else []) + args.set)
    shapes = env_shapes(resolve_env(config.env), 0)
    batch = as_trained(random_batch(config, shapes, np.random.default_rng(0)),
                       resolve_env(config.env).stacked_frames)
    samples = config.batch_size * (config.burn_in + config.seq_len)
    print(f"{args.preset} on {env}: torso {config.torso}, LSTM {config.lstm_units}, batch "
          f"{config.batch_size} × ({config.burn_in} + {config.seq_len}), device {args.device}")

    trained = None
    if args.checkpoint:
        from gdi.runtime.run_folder.checkpoint import load_checkpoint

        trained = load_checkpoint(args.checkpoint)["learner"]
        batch = acted_batch(config, shapes, trained["net"])
        print(f"  from the trained learner of {args.checkpoint}, on a batch it acted")
        adamw_step_times(config, shapes, trained)
    variants: dict[str, tuple[Learner, int, bool]] = {}
    for threads in (int(n) for n in args.threads.split(",")):
        for kind in args.variants.split(","):
            if kind not in ("eager", "compile", "pageable"):
                raise SystemExit(f"--variants: unknown variant {kind!r}; allowed: eager, "
                                 "compile, pageable")
            for denormals in args.denormals.split(","):
                if denormals not in ("flush", "keep"):
                    raise SystemExit(f"--denormals: unknown {denormals!r}; allowed: flush, keep")
                torch.set_num_threads(threads)
                flush = denormals == "flush"
                flush_denormals(flush)
                cfg = apply_overrides(config, ["learner_compile=true"]) if kind == "compile" \
                    else config
                learner = make_learner(cfg, shapes, args.device)
                if kind == "pageable":  # the learner before pinned staging: every batch
                    learner._to_device = lambda b, lrn=learner: batch_to_tensors(b, lrn.device)
                if trained is not None:
                    learner.load_state_dict(trained)
                name = f"{kind}-{threads}" + ("" if flush else "/keep")
                warm = timed_block(learner, batch, 2, args.device)  # compiles, if it will
                print(f"  {name}: first 2 steps {warm:.1f} s (compilation included)")
                variants[name] = (learner, threads, flush)

    feed = CollectorFeed(config, shapes) if args.with_collector else batch
    best = {name: float("inf") for name in variants}
    for _ in range(args.blocks):
        for name, (learner, threads, flush) in variants.items():
            torch.set_num_threads(threads)
            flush_denormals(flush)
            best[name] = min(best[name], timed_block(learner, feed, args.steps, args.device))
    flush_denormals(False)
    time_batch_assembly(config, shapes, args.device)
    if args.device.startswith("cuda"):
        time_copies(batch, args.device)
    if args.profile:
        profile_steps(next(iter(variants.values()))[0], batch, args.steps, args.device)
    first = next(iter(best))
    for name, seconds in best.items():
        step = seconds / args.steps
        print(f"{name:>12}: {step * 1000:9.1f} ms/step  {samples / step:10,.0f} samples/s  "
              f"ratio {best[first] / seconds:5.2f}")


if __name__ == "__main__":
    main()
