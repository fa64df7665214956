"""Environment scales of the presets: what a preset takes from the kind of environment it runs
on, not from the algorithm it names.

``ale:`` specs get the paper's Atari hyperparameters (App. "Hyperparameters") unchanged;
``minatar:`` and ``gym:`` specs get documented small-scale defaults (docs/paper-choices.md),
and on ``gym:`` specs E searches each inverse temperature in the appendix's x = log(1 + 1/τ)
coordinates (``GYM_INV_TEMPERATURE_SEARCH``; a scale's search, where it has one, is in
``INV_TEMPERATURE_SEARCHES``). A named scale (``ale-cpu``) is another set of
scale knobs for one kind, chosen with ``gdi train --scale NAME``; each kind's default scale has
the kind's name.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from gdi.policy_space.base import INV_TEMPERATURE_SEARCH

#: Where E searches 1/τ on Gymnasium ids: [0, 1000] in the appendix's x = log(1 + 1/τ)
#: coordinates, blocks of 0.1 in x, instead of the table's [0, 50] in 1/τ itself. The table's
#: range is sized for Atari's advantages; CartPole's are small (one wrong action is recovered
#: from), and π_λ = softmax(A/τ) needs 1/τ far past 50 to act on them reliably. What it
#: changed on CartPole: docs/paper-choices.md, "the 1/τ search range on Gymnasium".
GYM_INV_TEMPERATURE_SEARCH = {"transform": "log1p", "range": (0.0, math.log1p(1000.0)),
                              "accuracy": 0.1}

#: The paper's table (App. "Hyperparameters"): 1/τ itself over [0, 50], blocks of 1.0.
TABLE_INV_TEMPERATURE_SEARCH = {"transform": "identity", "range": INV_TEMPERATURE_SEARCH[0],
                                "accuracy": INV_TEMPERATURE_SEARCH[1]}

#: The inverse-temperature searches a run may name (``gdi train --search NAME``), each applied to
#: an E over a box whatever the scale: the paper's table, the appendix's log(1 + 1/τ)
#: coordinates over the table's range, and over the range the Gymnasium scale searches.
SEARCHES: dict[str, dict[str, Any]] = {
    "table": TABLE_INV_TEMPERATURE_SEARCH,
    "log1p-50": {"transform": "log1p", "range": (0.0, math.log1p(50.0)), "accuracy": 0.1},
    "log1p-1000": GYM_INV_TEMPERATURE_SEARCH,
}

#: Scales whose E searches each inverse temperature otherwise than the paper's table (1/τ
#: itself over [0, 50], blocks of 1.0): the search (its transform, its range and block size in
#: the transform's coordinates) by scale. Applied to an E over a box (the bandit, or the
#: uniform E of its control) by ``resolve_config``; ε keeps the table's range.
INV_TEMPERATURE_SEARCHES: dict[str, dict[str, Any]] = {"gym": GYM_INV_TEMPERATURE_SEARCH}


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

#: Environment kinds; each kind's default scale has the kind's name.
KINDS = ("ale", "minatar", "gym")

# Named scales beyond each kind's default, chosen with ``gdi train --scale NAME``: the same
# algorithm (Λ, P_Λ, E, T, the replay ratio, the preprocessing) at other scale knobs.
SCALES["ale-cpu"] = {
    **SCALES["ale"],
    # DQN's torso: a learner step costs several times less than impala_deep's at this batch
    # on one core, and LSTM 128 would save little more, so the paper's 256 stays
    # (docs/paper-choices.md, "the ale-cpu scale", has the times).
    "torso": "nature",
    # One actor process beside the learner: the two cores of a small machine. The learner
    # bounds the run and the actor idles most of its time, so the learner takes both cores
    # (docs/paper-choices.md, "the ale-cpu scale", has the frames/s of each).
    "num_actors": 1,
    "envs_per_actor": 16,
    "torch_threads": 2,
    # The MinAtar scale's sequences and batch (docs/paper-choices.md, "small-scale presets").
    "burn_in": 10,
    "seq_len": 20,
    "seq_stride": 10,
    "batch_size": 16,
    "min_replay": 64,
    "replay_capacity": 512,
    # 4,000 warm-up steps would be half an hour at ~2 learner steps/s.
    "warmup_steps": 100,
    "pull_every": 4,
    "push_every": 1,
    # An evaluation episode whose λ never launches the ball runs to the 108k-frame cap, and the
    # others step on until it ends: with the defaults, evaluations took over half of the wall
    # time (docs/paper-choices.md, "the ale-cpu scale"). Half the episodes, half as
    # often.
    "eval_every": 500_000,
    "eval_episodes": 8,
    "log_every": 50_000,
    "checkpoint_every_frames": 250_000,
}

#: The kind of environment each scale is for.
SCALE_KINDS = {**{kind: kind for kind in KINDS}, "ale-cpu": "ale"}

#: What each scale is, for ``gdi config`` and ``gdi scales``.
SCALE_NOTES = {
    "ale": "the paper's Atari table (App. \"Hyperparameters\"), unchanged",
    "minatar": "small-scale defaults for MinAtar (docs/paper-choices.md, \"small-scale "
               "presets\")",
    "gym": "small-scale defaults for Gymnasium ids (docs/paper-choices.md, \"small-scale "
           "presets\")",
    "ale-cpu": "the paper's Atari preset and preprocessing on a 2-core CPU: DQN's torso, "
               "one actor of 16 environments, a learner of 2 threads, batch 16 of 10 + 20 steps "
               "(docs/paper-choices.md, \"the ale-cpu scale\"); T is --learning "
               "policy-head-ale-scaled unless named",
}

DEFAULT_FRAMES = {"ale": 200_000_000, "minatar": 1_000_000, "gym": 1_000_000,
                  # A few hours on a 2-core machine; the learning rate anneals to 0 over the
                  # budget, so it should end with the run.
                  "ale-cpu": 6_000_000}


def env_kind(spec: str) -> str:
    kind = spec.split(":", 1)[0].strip().lower() if ":" in spec else ""
    if kind not in KINDS:
        raise ValueError(
            f"environment spec {spec!r} must start with one of "
            f"{', '.join(k + ':' for k in KINDS)} (e.g. minatar:breakout, ale:Breakout)"
        )
    return kind


def scale_for(spec: str, scale: str | None = None) -> str:
    """The scale a config of environment ``spec`` takes: ``scale`` when given (it must be one
    for the environment's kind), else the kind's default."""
    kind = env_kind(spec)
    if scale is None:
        return kind
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; allowed: {', '.join(SCALES)}")
    if SCALE_KINDS[scale] != kind:
        allowed = [name for name, k in SCALE_KINDS.items() if k == kind]
        raise ValueError(f"scale {scale!r} is for {SCALE_KINDS[scale]}: environments, not "
                         f"{spec!r}; allowed for {kind}: {', '.join(allowed)}")
    return scale


def scale_differences(scale: str) -> dict[str, tuple[Any, Any]]:
    """Field → (the kind's default scale's value, this scale's value), for each field the named
    scale changes (empty for a kind's default scale)."""
    from gdi.config import Config

    base = {**{f.name: f.default for f in dataclasses.fields(Config)},
            **SCALES[SCALE_KINDS[scale]]}
    changed = {k: (base[k], v) for k, v in SCALES[scale].items() if base[k] != v}
    if DEFAULT_FRAMES[scale] != DEFAULT_FRAMES[SCALE_KINDS[scale]]:
        changed["frames"] = (DEFAULT_FRAMES[SCALE_KINDS[scale]], DEFAULT_FRAMES[scale])
    searches = [INV_TEMPERATURE_SEARCHES.get(name) for name in (SCALE_KINDS[scale], scale)]
    if searches[0] != searches[1]:
        changed["E's 1/τ search"] = tuple(
            "the table's: " + search_text(TABLE_INV_TEMPERATURE_SEARCH) if s is None
            else search_text(s) for s in searches)
    return changed


def search_text(search: dict[str, Any]) -> str:
    """How an inverse-temperature search reads, e.g. "1/τ ∈ [0, 1000] in x = log(1 + 1/τ),
    blocks of 0.1 in x"."""
    low, high = search["range"]
    if search["transform"] == "log1p":
        return (f"1/τ ∈ [{math.expm1(low):g}, {math.expm1(high):.4g}] in x = log(1 + 1/τ), "
                f"blocks of {search['accuracy']:g} in x")
    return f"1/τ ∈ [{low:g}, {high:g}], blocks of {search['accuracy']:g}"


def inv_temperature_search(meta_kwargs: dict[str, Any], space,
                           search: dict[str, Any]) -> dict[str, Any]:
    """The arguments of an E over a box (the bandit, or the uniform E of its control) with every
    coordinate the policy space declares an inverse temperature searched as ``search`` says
    (one of ``INV_TEMPERATURE_SEARCHES``); the others (ε) keep the paper's range."""
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
