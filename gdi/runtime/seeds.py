"""Every random stream of a run, derived from the run's one seed (``Config.seed``).

One function per stream, so that each offset is stated once and no two streams draw the same
numbers: the offsets are distinct primes (or, for actors, a stride per actor and per restart),
far enough apart that neighbouring run seeds do not collide either. The learner's own torch
RNG is seeded with the run's seed itself (``gdi.runtime.wiring``).
"""

from __future__ import annotations


def actor(run_seed: int, actor_id: int, incarnation: int = 0) -> int:
    """Actor ``actor_id``'s environments, action sampling and E. An actor restarted after a
    failure (``incarnation`` ≥ 1) gets seeds of its own, so that it does not replay the
    episodes its predecessor played."""
    return run_seed * 1000 + 17 + actor_id * 101 + incarnation * 7_919_003


def collector(run_seed: int) -> int:
    """The data collector's choice of sequences for each batch."""
    return run_seed + 7919


def reservoir(run_seed: int) -> int:
    """Which visited states the observation reservoir keeps (``gdi analyze richness``)."""
    return run_seed + 15_485_863


def periodic_evaluation(run_seed: int) -> int:
    """The evaluation during training: its environments and action sampling, never an actor's."""
    return run_seed + 1_000_003


def periodic_evaluation_lambda(run_seed: int) -> int:
    """The copy of actor 0's E that draws the λ of the evaluation during training."""
    return run_seed + 104_729


def checkpoint_evaluation(run_seed: int) -> int:
    """``gdi evaluate`` and ``gdi.load_agent``: environments, actions and λ draws."""
    return run_seed + 2_000_003


def video(run_seed: int) -> int:
    """``gdi enjoy``: the episodes it plays and records, apart from training's and evaluation's."""
    return run_seed + 3_000_017
