"""How far each learner step moves π_λ from the actors' μ, on a run's own play.

A batch is learned from k learner steps after the actors acted on it (``perf/policy_lag``: ~9.5
steps on ``ale-cpu``, most of it waiting in the replay), and the importance ratio ρ = π/μ of its
steps measures how far those k steps moved π_λ where the actors acted. PPO's clip (``pg_clip``
ε) leaves a step without a policy gradient once ρ is past 1 ± ε in the direction its advantage
pushes (``stats/pg_clipped_frac``), and V-trace's ρ̄ truncates it past 1.05. This report holds
the actors still and lets the learner move:

    python -m benchmarks.policy_drift --run runs/screen/breakout-head-e-inputnorm-0 --lags 10 \\
        [--set learning_rate=1.25e-4 ...]

The run's newest checkpoint gives the network, E's state and the learner's optimizer (Adam's
moments as training left them: a fresh Adam's first step is the largest it takes) and its
schedule position. One actor plays with the checkpoint's network, never updated; a learner
with a copy of it learns from the newest window of sequences each step, so the batch of step k
was acted k updates behind. Each row is the learner's own statistics of that batch, before its
update (``gdi.learning.loss``): the mean ρ, the share of steps with ρ > ρ̄, the share the clip
leaves without gradient, and π_λ's entropy; means over ``--repeats`` independent repeats (each
a fresh learner and new play). ``--set`` changes the learner's settings (the learning rate,
the clip), not the checkpoint. With ``input_norm=running`` the learner folds each batch
into the input statistics before reading it (as Sample Factory's learner does), so even lag 0
moves ρ a little while the statistics are young; late in a run a batch moves them by ~10⁻⁴.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

#: The learner statistics of each row: (metrics key, column title).
COLUMNS = (
    ("stats/rho_mean", "mean ρ"),
    ("stats/rho_clipped_frac", "share ρ > ρ̄"),
    ("stats/pg_clipped_frac", "share clipped (no PG)"),
    ("losses/entropy", "entropy of π_λ"),
)


def drift(run: Path, lags: int, repeats: int, overrides: Sequence[str], seed: int = 0,
          warmup_windows: int = 1) -> list[dict[str, float]]:
    """Per lag 0 … ``lags``: the mean over ``repeats`` of each ``COLUMNS`` statistic (NaN where
    the run's loss does not log it: no clip, no clipped share)."""
    from gdi.agent import resolve_checkpoint
    from gdi.config import apply_overrides
    from gdi.runtime.acting.actor import Actor
    from gdi.runtime.components import (
        build_controller,
        build_learner,
        build_network,
        env_shapes,
        resolve_run_env,
    )
    from gdi.runtime.run_folder.checkpoint import checkpoint_controller_state
    from gdi.runtime.storage.collector import ReplayCollector
    from gdi.runtime_config import ActorsConfig, ReplayConfig

    config, _, payload = resolve_checkpoint(run, "latest", False)
    config = apply_overrides(config, list(overrides))
    env_config = resolve_run_env(config)
    shapes = env_shapes(env_config, config.seed)
    progress = min(1.0, payload["frames"] / config.frames)
    rows: list[list[dict[str, float]]] = [[] for _ in range(lags + 1)]
    for repeat in range(repeats):
        acting = build_network(config, shapes)
        acting.load_state_dict(payload["learner"]["net"])
        controller = build_controller(config, seed + repeat)
        state = checkpoint_controller_state(payload)
        if state is not None:
            controller.load_state_dict(state)
        actor = Actor(0, config.layer(ActorsConfig), config.layer(ReplayConfig),
                      config.policy_space, env_config, acting, controller, seed=seed + repeat)
        collector = ReplayCollector(1, 1, 1 << 30, 1, seed=seed + repeat,
                                    frame_stack=actor.recorder.frame_stack)
        learner = build_learner(config, copy.deepcopy(acting), device="cpu")
        learner.optimizer.load_state_dict(payload["learner"]["optimizer"])
        learner.steps = int(payload["learner"]["steps"])
        windows = 0
        try:
            while windows < warmup_windows + lags + 1:
                chunk, _ = actor.step()
                if chunk is None:
                    continue
                collector.add(chunk, actor=0)
                windows += 1
                if windows <= warmup_windows:  # episodes under way, recurrent states warm
                    continue
                batch = collector.newest(chunk.num_envs, stacked=False)
                metrics = learner.step(batch, progress)  # measured before its own update
                rows[windows - warmup_windows - 1].append(
                    {key: float(metrics.get(key, float("nan"))) for key, _ in COLUMNS})
        finally:
            actor.close()
    return [{key: float(np.mean([r[key] for r in lag_rows])) for key, _ in COLUMNS}
            for lag_rows in rows]


def table(rows: list[dict[str, float]]) -> str:
    head = ["lag (learner steps)", *(title for _, title in COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lag, row in enumerate(rows):
        cells = [str(lag)] + ["—" if np.isnan(row[key]) else f"{row[key]:.3f}"
                              for key, _ in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, type=Path, help="a run folder with a checkpoint")
    parser.add_argument("--lags", type=int, default=10, help="the largest lag measured")
    parser.add_argument("--repeats", type=int, default=3, help="independent repeats per lag")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first repeat's play")
    parser.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                        help="learner settings changed from the run's config")
    args = parser.parse_args(argv)
    if args.lags < 0 or args.repeats < 1:
        print(f"error: --lags must be >= 0 and --repeats >= 1, got {args.lags} and "
              f"{args.repeats}", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    try:
        rows = drift(args.run, args.lags, args.repeats, args.set, args.seed)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{args.run} (newest checkpoint), {args.repeats} repeats, settings changed: "
          f"{' '.join(args.set) or 'none'}\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
