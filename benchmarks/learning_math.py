"""Time the learner math of gdi.learning at the paper's learner shape (not a test).

T = 80 learning steps, B = 64 sequences, |A| = 18 (full ALE action set), F = 1 (GDI-I³) and
F = 2 (GDI-H³). Measures, in one process and on the CPU:

* ``vtrace`` and ``retrace`` against plain Python loops over (t, b) computing the same
  recursions on floats;
* ``loss`` forward + backward with respect to random leaf tensors ``adv`` and ``value``, against
  the same loss with its V-trace and Retrace targets computed by those Python loops;
* when ``gdi.nets.build`` exists, one forward + backward of the network (with its auxiliary
  losses) at the same T, |A|, F, against the loss at that same shape: the MinAtar network at
  B = 64 and, because a CPU forward + backward of the Atari IMPALA-deep network at B = 64
  takes about a minute, the Atari network at B = 4 by default (``--networks``).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/learning_math.py [--threads N]``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import statistics
import time
from collections.abc import Callable
from unittest import mock

import torch

from gdi.learning import LossBatch, LossConfig, LossOutputs, loss, retrace, vtrace
from gdi.learning.auxiliary import dynamics_losses
from gdi.learning.vtrace import VTraceReturns

NUM_STEPS, BATCH_SIZE, NUM_ACTIONS = 80, 64, 18
# The module itself: ``gdi.learning.loss`` as an attribute is the re-exported function.
LOSS_MODULE = importlib.import_module("gdi.learning.loss")


def python_loop_vtrace(
    log_rhos,
    discounts,
    rewards,
    values,
    bootstrap_value,
    clip_rho=1.05,
    clip_c=1.05,
    clip_pg_rho=None,
) -> VTraceReturns:
    """V-trace's backward recursion, one (t, b) at a time on Python floats."""
    clip_pg_rho = clip_rho if clip_pg_rho is None else clip_pg_rho
    lr, g, r, v = (x.tolist() for x in (log_rhos, discounts, rewards, values))
    boot = bootstrap_value.tolist()
    num_steps, batch_size = len(lr), len(boot)
    vs = [[0.0] * batch_size for _ in range(num_steps)]
    pg = [[0.0] * batch_size for _ in range(num_steps)]
    for b in range(batch_size):
        correction, v_next, vs_next = 0.0, boot[b], boot[b]
        for t in reversed(range(num_steps)):
            weight = math.exp(lr[t][b])
            delta = min(clip_rho, weight) * (r[t][b] + g[t][b] * v_next - v[t][b])
            correction = delta + g[t][b] * min(clip_c, weight) * correction
            vs[t][b] = v[t][b] + correction
            pg[t][b] = min(clip_pg_rho, weight) * (r[t][b] + g[t][b] * vs_next - v[t][b])
            v_next, vs_next = v[t][b], vs[t][b]
    like = dict(dtype=values.dtype, device=values.device)
    return VTraceReturns(torch.tensor(vs, **like), torch.tensor(pg, **like))


def python_loop_retrace(
    log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value, clip_c=1.05
) -> torch.Tensor:
    """Retrace's backward recursion, one (t, b) at a time on Python floats."""
    lr, g, r, q, e = (x.tolist() for x in (log_rhos, discounts, rewards, q_taken, expected_q))
    boot = bootstrap_value.tolist()
    num_steps, batch_size = len(lr), len(boot)
    targets = [[0.0] * batch_size for _ in range(num_steps)]
    for b in range(batch_size):
        target = r[-1][b] + g[-1][b] * boot[b]
        targets[-1][b] = target
        for t in reversed(range(num_steps - 1)):
            c = min(clip_c, math.exp(lr[t + 1][b]))
            target = r[t][b] + g[t][b] * (e[t + 1][b] + c * (target - q[t + 1][b]))
            targets[t][b] = target
    return torch.tensor(targets, dtype=q_taken.dtype, device=q_taken.device)


def make_inputs(num_families: int, batch_size: int = BATCH_SIZE, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    shape = (NUM_STEPS, batch_size)
    adv = torch.randn(num_families, NUM_STEPS + 1, batch_size, NUM_ACTIONS, generator=generator)
    value = torch.randn(num_families, NUM_STEPS + 1, batch_size, generator=generator)
    lambdas = torch.rand(*shape, 3, generator=generator) * torch.tensor([50.0, 50.0, 1.0])
    actions = torch.randint(0, NUM_ACTIONS, shape, generator=generator)
    batch = LossBatch(
        actions=actions,
        rewards=10 * torch.randn(shape, generator=generator),
        discounts=0.997 * (torch.rand(shape, generator=generator) > 0.01).float(),
        behavior_log_probs=torch.log_softmax(
            torch.randn(*shape, NUM_ACTIONS, generator=generator), -1
        ).gather(-1, actions[..., None])[..., 0],
        lambdas=lambdas,
    )
    return adv, value, batch


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def loss_forward_backward(adv, value, batch, config) -> Callable[[], None]:
    def run() -> None:
        adv_leaf = adv.clone().requires_grad_(True)
        value_leaf = value.clone().requires_grad_(True)
        total, _ = loss(LossOutputs(adv_leaf, value_leaf, {}), batch, config)
        total.backward()

    return run


#: Observation shape, dtype and torso options of each network the script can time.
NETWORK_INPUTS = {
    "minatar": ((10, 10, 4), torch.float32, {"layout": "HWC"}),
    "impala_deep": ((4, 84, 84), torch.uint8, {}),
}


def network_forward_backward(build, torso: str, num_families: int, batch_size: int):
    """One forward + backward of ``gdi.nets.build``'s network over T + 1 observations of
    ``batch_size`` sequences, with the auxiliary losses, as the learner runs it."""
    obs_shape, obs_dtype, torso_kwargs = NETWORK_INPUTS[torso]
    net = build(
        obs_shape, NUM_ACTIONS, torso=torso, families=num_families, torso_kwargs=torso_kwargs
    )
    shape = (NUM_STEPS + 1, batch_size)
    obs = torch.randint(0, 2, (*shape, *obs_shape)).to(obs_dtype)
    inputs = (
        obs,
        torch.zeros(shape, dtype=torch.int64),
        torch.zeros(shape),
        torch.zeros(shape, dtype=torch.bool),
        net.initial_state(batch_size),
    )
    actions = torch.randint(0, NUM_ACTIONS, (NUM_STEPS, batch_size))
    valid = torch.ones(NUM_STEPS, batch_size)

    def run() -> None:
        net.zero_grad(set_to_none=True)
        outputs, _ = net(*inputs)
        aux = dynamics_losses(*net.dynamics_predictions(outputs, actions, valid), actions, valid)
        (outputs.adv.sum() + outputs.value.sum() + sum(aux.values())).backward()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--repeats", type=int, default=20, help="timed runs of the math")
    parser.add_argument(
        "--networks",
        nargs="*",
        default=["minatar:64", "impala_deep:4"],
        help="TORSO:BATCH networks to compare the loss with at the same [T, B, A, F] "
        "(impala_deep at B=64 takes about a minute per CPU forward+backward)",
    )
    parser.add_argument("--network-repeats", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, CPU, {args.threads} thread(s), median of {args.repeats}; "
        f"T={NUM_STEPS} B={BATCH_SIZE} |A|={NUM_ACTIONS}, float32"
    )

    adv, value, batch = make_inputs(1)
    log_rhos = torch.randn(NUM_STEPS, BATCH_SIZE) * 0.3
    v, boot = value[0, :-1], value[0, -1]
    q_taken = v + torch.randn_like(v)
    vtrace_args = (log_rhos, batch.discounts, batch.rewards, v, boot)
    retrace_args = (log_rhos, batch.discounts, batch.rewards, q_taken, v, boot)
    # The vectorized and loop versions agree before they are timed.
    torch.testing.assert_close(
        vtrace(*vtrace_args), python_loop_vtrace(*vtrace_args), rtol=1e-4, atol=1e-3
    )
    torch.testing.assert_close(
        retrace(*retrace_args), python_loop_retrace(*retrace_args), rtol=1e-4, atol=1e-3
    )

    rows = [
        (
            "vtrace",
            median_ms(lambda: vtrace(*vtrace_args), args.repeats),
            median_ms(lambda: python_loop_vtrace(*vtrace_args), args.repeats),
        ),
        (
            "retrace",
            median_ms(lambda: retrace(*retrace_args), args.repeats),
            median_ms(lambda: python_loop_retrace(*retrace_args), args.repeats),
        ),
    ]
    for num_families in (1, 2):
        adv, value, batch = make_inputs(num_families)
        config = LossConfig(reward_shapes=("log", "root")[:num_families])
        fast = median_ms(loss_forward_backward(adv, value, batch, config), args.repeats)
        with (
            mock.patch.object(LOSS_MODULE, "vtrace", python_loop_vtrace),
            mock.patch.object(LOSS_MODULE, "retrace", python_loop_retrace),
        ):
            slow = median_ms(loss_forward_backward(adv, value, batch, config), args.repeats)
        rows.append((f"loss fwd+bwd F={num_families}", fast, slow))
    print(f"{'function':<20} {'ms':>9} {'python-loop ms':>15} {'speed-up':>9}")
    for name, fast, slow in rows:
        print(f"{name:<20} {fast:>9.3f} {slow:>15.3f} {slow / fast:>8.1f}x")

    if not args.networks:
        return
    try:
        from gdi.nets import build
    except ImportError:
        print("network: not measured (gdi.nets.build does not exist)")
        return
    print(f"{'network (obs)':<32} {'F':>2} {'B':>3} {'net ms':>9} {'loss ms':>8} {'loss/net':>9}")
    for spec in args.networks:
        torso, batch_size = spec.split(":")[0], int(spec.split(":")[1])
        for num_families in (1, 2):
            adv, value, batch = make_inputs(num_families, batch_size)
            config = LossConfig(reward_shapes=("log", "root")[:num_families])
            loss_ms = median_ms(loss_forward_backward(adv, value, batch, config), args.repeats)
            net_ms = median_ms(
                network_forward_backward(build, torso, num_families, batch_size),
                args.network_repeats,
            )
            obs = "x".join(map(str, NETWORK_INPUTS[torso][0]))
            print(
                f"{torso + ' (' + obs + ')':<32} {num_families:>2} {batch_size:>3} "
                f"{net_ms:>9.1f} {loss_ms:>8.2f} {loss_ms / net_ms:>9.3f}"
            )


if __name__ == "__main__":
    main()
