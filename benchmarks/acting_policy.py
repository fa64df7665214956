"""Cost of turning one acting step's advantages into actions, per step of N environments.

Three ways, timed side by side in one run (best of 5 repeats, one torch thread):
  torch log-space   log π_λ with the learner's torch function + Gumbel-max sampling (what the
                    actor did before it sampled in NumPy)
  plain Categorical ``torch.distributions.Categorical(logits=A).sample()``: the plain loop of
                    ``benchmarks/throughput.py``, which has no λ
  numpy (gdi)       ``PolicySpace.acting_probs`` + ``gdi.runtime.acting.step.sample_actions``

    .venv/bin/python -m benchmarks.acting_policy [--envs 32] [--actions 6]
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
import torch

from gdi.policy_space import get_policy_space
from gdi.runtime.acting.step import sample_actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=32)
    parser.add_argument("--actions", type=int, default=6)
    args = parser.parse_args()
    torch.set_num_threads(1)
    n, a = args.envs, args.actions
    space = get_policy_space("soft_entropy")
    rng = np.random.default_rng(0)
    adv_np = rng.normal(0, 1, (n, a)).astype(np.float32)
    lam_np = np.column_stack([rng.uniform(0, 50, n), rng.uniform(0, 50, n),
                              rng.uniform(0, 1, n)]).astype(np.float32)
    adv, lam = torch.from_numpy(adv_np), torch.from_numpy(lam_np)
    generator = torch.Generator().manual_seed(0)

    def torch_log_space():
        log_pi = space.log_probs([adv], lam, validate=False)
        uniform = torch.rand(log_pi.shape, generator=generator).clamp_(1e-20, 1.0)
        actions = torch.argmax(log_pi - torch.log(-torch.log(uniform)), dim=-1)
        return actions.numpy(), log_pi.gather(-1, actions[:, None])[:, 0].numpy()

    def plain_categorical():
        return torch.distributions.Categorical(logits=adv).sample().numpy()

    def numpy_gdi():
        return sample_actions(space.acting_probs(adv_np[None], lam_np), rng)

    times = {}
    for name, fn in [("torch log-space", torch_log_space), ("plain Categorical", plain_categorical),
                     ("numpy (gdi)", numpy_gdi)]:
        times[name] = min(timeit.repeat(fn, number=2000, repeat=5)) / 2000 * 1e6
    print(f"π_λ (soft entropy) → actions for {n} environments × {a} actions, µs per step:")
    for name, us in times.items():
        print(f"  {name:18s} {us:7.1f} µs   ({us / times['numpy (gdi)']:.2f}× numpy)")


if __name__ == "__main__":
    main()
