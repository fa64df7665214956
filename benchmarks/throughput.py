"""Framework overhead of the runtime, measured as ratios in one run on one machine.

(a) actor: frames/s of ``gdi.runtime.acting.actor.Actor.step`` (π_λ per environment, λ from E,
    sequence building, E updates) ÷ frames/s of a plain loop doing only what any agent must —
    vector-env step + one batched forward pass + sampling from softmax(A) with the actor's own
    sampler — with the same network and environments. Target ≥ 0.9.
(b) learner: samples/s of ``gdi.runtime.training.learner.Learner.step`` (numpy → torch, burn-in,
    V-trace, Retrace, the GDI loss, AdamW with schedule and clipping) ÷ samples/s of a plain
    forward + backward + AdamW step of the same network at the same batch shape (burn-in also
    without gradient) with a trivial loss. Target ≥ 0.9.

The two sides alternate in short blocks so that load from other processes hits both alike;
the best block of each side is compared. One torch thread (as each runtime process uses).

    .venv/bin/python -m benchmarks.throughput [--env minatar:breakout] [--preset gdi-i3]
        [--checkpoint runs/<run>/checkpoints/ckpt_<frames>.pt]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from gdi.envs import make_vector_env, resolve_env
from gdi.learning.auxiliary import dynamics_losses
from gdi.presets import resolve_config
from gdi.runtime.acting.actor import Actor
from gdi.runtime.acting.step import sample_actions
from gdi.runtime.components import build_controller, build_learner, build_network, env_shapes
from gdi.runtime.storage.sequences import SequenceBatch
from gdi.runtime.storage.steps import StepChunk
from gdi.runtime_config import ActorsConfig, ReplayConfig


def best_rate(run_block, blocks: int) -> float:
    rates = []
    for _ in range(blocks):
        start = time.perf_counter()
        work = run_block()
        rates.append(work / (time.perf_counter() - start))
    return max(rates)


def actor_ratio(config, blocks: int, steps: int, weights: dict | None
                ) -> tuple[float, float, float]:
    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, 0)
    net = build_network(config, shapes)
    if weights is not None:
        net.load_state_dict(weights)
    actor = Actor(0, config.layer(ActorsConfig), config.layer(ReplayConfig), config.policy_space,
                  env_config, net, build_controller(config, 1), seed=1)
    n, fps = config.envs_per_actor, env_config.frames_per_step

    def gdi_block() -> int:
        for _ in range(steps):
            actor.step()
        return steps * n * fps

    env = make_vector_env(env_config, n, seed=2)
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=2)
    state = net.initial_state(n)
    prev_a = torch.zeros(1, n, dtype=torch.long)
    prev_r = torch.zeros(1, n)
    reset = torch.zeros(1, n, dtype=torch.bool)

    def plain_block() -> int:
        nonlocal obs, state
        for _ in range(steps):
            with torch.no_grad():
                out, state = net(torch.from_numpy(obs)[None], prev_a, prev_r, reset, state)
            # softmax(A) sampled by the actor's own sampler: the cheapest sampling measured
            # (benchmarks/acting_policy.py), so the ratio holds only what gdi adds.
            logits = out.adv[0, 0].numpy().astype(np.float64)
            probs = np.exp(logits - logits.max(-1, keepdims=True))
            actions, _ = sample_actions(probs / probs.sum(-1, keepdims=True), rng)
            obs, *_ = env.step(actions)
        return steps * n * fps

    gdi_rates, plain_rates = [], []
    meta_before = actor.meta_seconds
    for _ in range(blocks):
        plain_rates.append(best_rate(plain_block, 1))
        gdi_rates.append(best_rate(gdi_block, 1))
    gdi_seconds = blocks * steps * n * fps / np.mean(gdi_rates)
    meta_share = (actor.meta_seconds - meta_before) / gdi_seconds
    actor.close()
    env.close()
    return max(gdi_rates), max(plain_rates), meta_share


def random_batch(config, shapes, rng) -> SequenceBatch:
    length, b = config.burn_in + config.seq_len, config.batch_size
    obs_dtype = np.uint8 if shapes.obs_scale != 1.0 or len(shapes.obs_shape) == 3 else np.float32
    obs = rng.integers(0, 2, (length + 1, b, *shapes.obs_shape)).astype(obs_dtype)
    return SequenceBatch(
        obs=obs, resets=rng.random((length + 1, b)) < 0.01,
        prev_actions=rng.integers(0, shapes.num_actions, (length + 1, b)),
        prev_rewards=rng.random((length + 1, b)).astype(np.float32),
        actions=rng.integers(0, shapes.num_actions, (length, b)),
        rewards=rng.random((length, b)).astype(np.float32), dones=rng.random((length, b)) < 0.01,
        behavior_log_probs=np.log(np.full((length, b), 1.0 / shapes.num_actions, np.float32)),
        lambdas=np.tile(np.array([5.0, 5.0, 0.5], np.float32), (length, b, 1)),
        versions=np.zeros((length, b), np.int64),
        truncation_values=np.zeros((length, b, config.families), np.float32),
        initial_state=np.zeros((b, config.families, 2, config.lstm_units), np.float32),
    )


def random_chunk(config, shapes, rng, start: int, stack: int) -> StepChunk:
    """An actor's window of random steps in the stored-once form: its first (``start`` 0,
    ``sequence_length`` steps, every environment starting an episode) or a later one
    (``seq_stride`` steps), with the newest frame of each ``stack``-frame observation."""
    length, n = config.sequence_length, config.envs_per_actor
    steps = length if start == 0 else config.seq_stride
    frame_shape = shapes.obs_shape[1:] if stack > 1 else shapes.obs_shape
    dtype = np.uint8 if shapes.obs_scale != 1.0 or len(shapes.obs_shape) == 3 else np.float32
    resets = rng.random((steps, n)) < 0.01
    resets[0] |= start == 0
    return StepChunk(
        start=start, sequence_length=length, frame_stack=stack,
        frames=rng.integers(0, 2, (steps, n, *frame_shape)).astype(dtype), resets=resets,
        prev_actions=rng.integers(0, shapes.num_actions, (steps, n)),
        prev_rewards=rng.random((steps, n)).astype(np.float32),
        actions=rng.integers(0, shapes.num_actions, (steps, n)),
        rewards=rng.random((steps, n)).astype(np.float32), dones=rng.random((steps, n)) < 0.01,
        behavior_log_probs=np.log(np.full((steps, n), 1.0 / shapes.num_actions, np.float32)),
        lambdas=np.tile(np.array([5.0, 5.0, 0.5], np.float32), (steps, n, 1)),
        versions=np.zeros((steps, n), np.int64),
        truncation_values=np.zeros((steps, n, config.families), np.float32),
        next_frames=rng.integers(0, 2, (n, *frame_shape)).astype(dtype),
        next_resets=np.zeros(n, bool), next_prev_actions=np.zeros(n, np.int64),
        next_prev_rewards=np.zeros(n, np.float32),
        initial_state=np.zeros((n, config.families, 2, config.lstm_units), np.float32),
    )


def learner_ratio(config, blocks: int, steps: int) -> tuple[float, float]:
    shapes = env_shapes(resolve_env(config.env), 0)
    batch = random_batch(config, shapes, np.random.default_rng(0))
    learner = build_learner(config, build_network(config, shapes), device="cpu")
    plain_net = build_network(config, shapes)
    optimizer = torch.optim.AdamW(plain_net.parameters(), lr=1e-4)
    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in batch.as_dict().items()}
    burn = config.burn_in

    def gdi_block() -> int:
        for _ in range(steps):
            learner.step(batch, 0.5)
        return steps * config.batch_size

    def plain_block() -> int:
        for _ in range(steps):
            with torch.no_grad():
                _, state = plain_net(t["obs"][:burn], t["prev_actions"][:burn],
                                     t["prev_rewards"][:burn], t["resets"][:burn],
                                     t["initial_state"])
            out, _ = plain_net(t["obs"][burn:], t["prev_actions"][burn:],
                               t["prev_rewards"][burn:], t["resets"][burn:], state)
            # The same network includes the auxiliary dynamics heads (paper table: yes).
            actions, valid = t["actions"][burn:], 1.0 - t["dones"][burn:].float()
            aux = dynamics_losses(*plain_net.dynamics_predictions(out, actions, valid), actions,
                                  valid)
            loss = out.adv.square().mean() + out.value.square().mean() + sum(aux.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return steps * config.batch_size

    gdi_rates, plain_rates = [], []
    for _ in range(blocks):
        plain_rates.append(best_rate(plain_block, 1))
        gdi_rates.append(best_rate(gdi_block, 1))
    return max(gdi_rates), max(plain_rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="minatar:breakout")
    parser.add_argument("--preset", default="gdi-i3")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--actor-steps", type=int, default=200)
    parser.add_argument("--learner-steps", type=int, default=10)
    parser.add_argument("--set", nargs="*", default=[], help="config overrides field=value")
    parser.add_argument("--checkpoint", default=None,
                        help="act with a trained network (a run's checkpoint file): episodes "
                             "as long as a learned agent's, so E runs as often as in training")
    args = parser.parse_args()
    torch.set_num_threads(1)
    from gdi.config import apply_overrides

    config = apply_overrides(resolve_config(args.preset, args.env, backend="inline"), args.set)
    print(f"{args.preset} on {args.env}: {config.envs_per_actor} envs/actor, batch "
          f"{config.batch_size} × ({config.burn_in} + {config.seq_len}), torch threads 1")
    weights = None
    if args.checkpoint:
        from gdi.runtime.run_folder.checkpoint import load_checkpoint

        weights = load_checkpoint(args.checkpoint)["learner"]["net"]
        print(f"acting with the trained network of {args.checkpoint}")
    gdi_fps, plain_fps, meta_share = actor_ratio(config, args.blocks, args.actor_steps, weights)
    print(f"(a) actor   gdi {gdi_fps:9,.0f} frames/s   plain {plain_fps:9,.0f} frames/s   "
          f"ratio {gdi_fps / plain_fps:.3f}   (target >= 0.9)")
    print(f"    of the actor's time, operator E (λ sample + bandit update at each episode end) "
          f"took {meta_share:.0%}; without it the ratio would be "
          f"{gdi_fps / (1 - meta_share) / plain_fps:.3f}")
    gdi_sps, plain_sps = learner_ratio(config, args.blocks, args.learner_steps)
    print(f"(b) learner gdi {gdi_sps:9,.1f} seq/s      plain {plain_sps:9,.1f} seq/s      "
          f"ratio {gdi_sps / plain_sps:.3f}   (target >= 0.9)")


if __name__ == "__main__":
    main()
