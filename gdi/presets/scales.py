"""Environment scales of the presets: what a preset takes from the kind of environment it runs
on, not from the algorithm it names.

``ale:`` specs get the paper's Atari hyperparameters (App. "Hyperparameters") unchanged;
``minatar:`` and ``gym:`` specs get documented small-scale defaults (docs/paper-choices.md),
and on ``gym:`` specs E searches each inverse temperature in the appendix's x = log(1 + 1/τ)
coordinates (``GYM_INV_TEMPERATURE_SEARCH``).
"""

from __future__ import annotations

import math
from typing import Any

#: Where E searches 1/τ on Gymnasium ids: [0, 1000] in the appendix's x = log(1 + 1/τ)
#: coordinates, blocks of 0.1 in x, instead of the table's [0, 50] in 1/τ itself. The table's
#: range is sized for Atari's advantages; CartPole's are small (one wrong action is recovered
#: from), and π_λ = softmax(A/τ) needs 1/τ far past 50 to act on them reliably. What it
#: changed on CartPole: docs/paper-choices.md, "the 1/τ search range on Gymnasium".
GYM_INV_TEMPERATURE_SEARCH = {"transform": "log1p", "range": (0.0, math.log1p(1000.0)),
                              "accuracy": 0.1}


# Scale by environment kind. "ale" is the paper's table (Config's defaults); the others are
# small-scale defaults, documented in docs/paper-choices.md.
SCALES: dict[str, dict[str, Any]] = {
    "ale": {
        "torso": "impala_deep",
        # The table's "Num. Environments 160": 5 actors of 32, each with its own E (Alg. ACTOR).
        "num_actors": 5,
        "envs_per_actor": 32,
        "eval_every": 1_000_000,
        "log_every": 500_000,
    },
    "minatar": {
        "torso": "minatar",
        "lstm_units": 128,
        "envs_per_actor": 32,
        "burn_in": 10,
        "seq_len": 20,
        "seq_stride": 10,  # half overlap, as the paper's 40 + 80 with R2D2's stride 40
        # Same replay ratio as the paper (each sequence twice), twice the updates per frame of
        # batch 32, which learned more per frame (docs/paper-choices.md, "small-scale presets").
        "batch_size": 16,
        "min_replay": 64,
        "replay_capacity": 512,
        "discount": 0.99,
        "warmup_steps": 100,
        "pull_every": 4,
        "push_every": 1,
        "eval_every": 100_000,
        "eval_episodes": 16,
        # About half a minute of a run, which a checkpoint costs a fraction of a percent of
        # (docs/benchmarks.md, "Checkpoints").
        "checkpoint_every_frames": 100_000,
    },
    "gym": {
        "torso": "mlp",
        "lstm_units": 64,
        # Hidden ReLU layers in the A and V heads (R2D2's dueling heads): CartPole's values at
        # γ = 0.99 are larger than linear heads on the bounded LSTM output fit without saturating
        # it (docs/paper-choices.md, "small-scale presets", has what it changed).
        "head_hidden": 256,
        "envs_per_actor": 16,
        "burn_in": 10,
        "seq_len": 20,
        "seq_stride": 10,
        "batch_size": 32,
        "min_replay": 64,
        "replay_capacity": 256,
        "discount": 0.99,
        "warmup_steps": 100,
        "pull_every": 4,
        "push_every": 1,
        "eval_every": 50_000,
        "log_every": 10_000,
        "eval_episodes": 16,
        "checkpoint_every_frames": 100_000,
    },
}

DEFAULT_FRAMES = {"ale": 200_000_000, "minatar": 1_000_000, "gym": 1_000_000}


def env_kind(spec: str) -> str:
    kind = spec.split(":", 1)[0].strip().lower() if ":" in spec else ""
    if kind not in SCALES:
        raise ValueError(
            f"environment spec {spec!r} must start with one of "
            f"{', '.join(k + ':' for k in SCALES)} (e.g. minatar:breakout, ale:Breakout)"
        )
    return kind


def gym_inv_temperature_search(meta_kwargs: dict[str, Any], space) -> dict[str, Any]:
    """The arguments of an E over a box (the bandit, or the uniform E of its control) with every
    coordinate the policy space declares an inverse temperature searched as
    ``GYM_INV_TEMPERATURE_SEARCH`` says; the others (ε) keep the paper's range."""
    search = GYM_INV_TEMPERATURE_SEARCH
    is_inv_tau = space.inverse_temperatures
    searched = {
        **meta_kwargs,
        "transforms": tuple(search["transform"] if t else "identity" for t in is_inv_tau),
        "ranges": tuple(search["range"] if t else tuple(r)
                        for t, r in zip(is_inv_tau, meta_kwargs["ranges"], strict=True)),
    }
    if "accuracies" in meta_kwargs:  # the bandit's blocks; a uniform E has none
        searched["accuracies"] = tuple(
            search["accuracy"] if t else a
            for t, a in zip(is_inv_tau, meta_kwargs["accuracies"], strict=True))
    return searched
