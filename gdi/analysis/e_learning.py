"""What operator E learned during a run, measured from the run folder: does P_Λ move away from
uniform, what return does E estimate per λ region, and is that the return observed there.

Paper: Algorithm 1's line "P_Λ ← E(P_Λ, {X_λ})" and App. "Adaptive Controller Formalism". The
run keeps one row per training episode in ``meta.jsonl`` (actor, λ, return), in the order its
actor reported them to E. E's update (Eq. (bandit_update)) draws no random numbers, so
feeding those rows, actor by actor, into a controller built as the run built it gives E's
estimates at any frame of the run, exactly (``replayed_estimates``; a test checks the replay
against the controller state a checkpoint saved).

Everything here is per coordinate of λ, as the paper's bandit is (one ensemble per
coordinate): the sampled distribution is compared with uniform by the KL divergence of its
histogram over the coordinate's search range, in the coordinate's bandit units x (λ itself on
ALE and MinAtar).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.analysis.e_headroom import bin_means
from gdi.runtime import seeds
from gdi.runtime.components import build_controller
from gdi.runtime.run_folder.meta_log import load_meta_rows
from gdi.runtime.run_folder.run_dir import read_config

__all__ = [
    "EpisodeLog",
    "kl_to_uniform",
    "load_episode_log",
    "log_scaled_coordinates",
    "observed_returns",
    "replayed_estimates",
    "sampled_kl_over_time",
    "share_above_over_time",
    "uniform_kl_floor",
]

#: Bins of each coordinate's range for the sampled histograms.
BINS = 10


@dataclass(frozen=True)
class EpisodeLog:
    """A run's training episodes (``meta.jsonl``) with what is needed to read them."""

    frames: np.ndarray
    """Frames of the run when the episode was recorded ``[N]``."""
    actors: np.ndarray
    """Actor that played it ``[N]``."""
    lambdas: np.ndarray
    """Its λ ``[N, dim]``."""
    returns: np.ndarray
    """Its undiscounted return ``[N]``."""
    index_names: tuple[str, ...]
    ranges: np.ndarray
    """Where E may sample each coordinate, in λ ``[dim, 2]``."""
    budget: int
    """The run's frame budget."""


def load_episode_log(run_dir: Path) -> EpisodeLog:
    config, _ = read_config(Path(run_dir))
    rows = load_meta_rows(run_dir)
    controller = build_controller(config, config.seed)
    return EpisodeLog(
        frames=np.array([r["frames"] for r in rows], dtype=np.int64),
        actors=np.array([r["actor"] for r in rows], dtype=np.int64),
        lambdas=np.array([r["lambda"] for r in rows], dtype=np.float64),
        returns=np.array([r["return"] for r in rows], dtype=np.float64),
        index_names=tuple(controller.index_names),
        ranges=np.asarray(controller.lambda_ranges, dtype=np.float64),
        budget=config.frames,
    )


def _to_x(values: np.ndarray, low: float, high: float, log_scale: bool) -> np.ndarray:
    """Position in [0, 1] of each value within [low, high] (log1p units when ``log_scale``)."""
    if log_scale:
        values, low, high = np.log1p(values), np.log1p(low), np.log1p(high)
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def kl_to_uniform(positions: np.ndarray, bins: int = BINS) -> float:
    """KL(p̂ ‖ uniform) in nats of the histogram p̂ of ``positions`` in [0, 1] over ``bins``
    equal bins: Σ p̂ log(p̂ · bins). 0 for a flat histogram, log(bins) when all fall in one bin.

    An estimate from n draws is biased up by about (bins − 1) / (2n) even when the draws are
    uniform (``uniform_kl_floor``)."""
    positions = np.asarray(positions, dtype=np.float64)
    if positions.size == 0:
        return float("nan")
    counts = np.histogram(positions, bins=bins, range=(0.0, 1.0))[0]
    p = counts[counts > 0] / positions.size
    return float(np.sum(p * np.log(p * bins)))


def uniform_kl_floor(n: int, bins: int = BINS, reps: int = 2000, seed: int = 0) -> float:
    """Mean ``kl_to_uniform`` of ``n`` truly uniform draws: what a P_Λ that never moved shows."""
    rng = np.random.default_rng(seed)
    return float(np.mean([kl_to_uniform(rng.uniform(size=n), bins) for _ in range(reps)]))


def log_scaled_coordinates(log: EpisodeLog) -> list[bool]:
    """Per coordinate of λ, whether it is binned in log1p units: those whose range spans orders
    of magnitude (upper bound above 100: the gym 1/τ search); ALE's and MinAtar's [0, 50] and
    ε's [0, 1] are binned linearly. Every reading of λ by blocks shares this rule."""
    return [bool(hi > 100.0) for _, hi in log.ranges]


def sampled_kl_over_time(log: EpisodeLog, windows: int = 10,
                         bins: int = BINS) -> dict[int, np.ndarray]:
    """Per actor: ``[windows, dim]`` KL to uniform of the λ sampled in each of ``windows``
    equal slices of the frame budget (NaN where a slice has fewer than ``2 · bins`` episodes)."""
    edges = np.linspace(0, log.budget, windows + 1)
    scaled = log_scaled_coordinates(log)
    out = {}
    for actor in np.unique(log.actors):
        mine = log.actors == actor
        table = np.full((windows, len(log.index_names)), np.nan)
        for w in range(windows):
            inside = mine & (log.frames > edges[w]) & (log.frames <= edges[w + 1])
            if inside.sum() < 2 * bins:
                continue
            for i, (low, high) in enumerate(log.ranges):
                if high <= low:
                    continue
                table[w, i] = kl_to_uniform(_to_x(log.lambdas[inside, i], low, high, scaled[i]),
                                            bins)
        out[int(actor)] = table
    return out


def share_above_over_time(log: EpisodeLog, coordinate: int, threshold: float,
                          windows: int = 10) -> np.ndarray:
    """``[windows]``: the share of the episodes in each of ``windows`` equal slices of the frame
    budget (every actor's) whose λ has coordinate ``coordinate`` above ``threshold`` (NaN where
    a slice has no episode): how much of P_Λ's mass E leaves in a region, over the run."""
    edges = np.linspace(0, log.budget, windows + 1)
    above = log.lambdas[:, coordinate] > threshold
    out = np.full(windows, np.nan)
    for w in range(windows):
        inside = (log.frames > edges[w]) & (log.frames <= edges[w + 1])
        if inside.any():
            out[w] = float(above[inside].mean())
    return out


def observed_returns(log: EpisodeLog, edges: np.ndarray, coordinate: int,
                     since: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean return and episode count per block (``edges`` in λ) of one coordinate, over the
    episodes recorded after ``since`` frames."""
    late = log.frames > since
    return bin_means(log.lambdas[late, coordinate], log.returns[late], edges)


def replayed_estimates(run_dir: Path, at_frames: float | None = None, actor: int = 0,
                       log: EpisodeLog | None = None) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """E's estimated return per block of each coordinate (``BanditEnsemble.estimated_returns``)
    after the updates actor ``actor`` made up to ``at_frames`` (the end when None), rebuilt by
    feeding its ``meta.jsonl`` rows to a controller built as the run built it. None for an E
    that keeps no estimate (uniform, fixed). ``log``: the run's ``load_episode_log``, when the
    caller has read it already."""
    run_dir = Path(run_dir)
    config, _ = read_config(run_dir)
    controller = build_controller(config, seeds.actor(config.seed, actor))
    if not hasattr(controller, "estimated_returns"):
        return None
    replay_updates(controller, log or load_episode_log(run_dir), actor, at_frames)
    return controller.estimated_returns()


def replay_updates(controller, log: EpisodeLog, actor: int, at_frames: float | None) -> int:
    """Feed ``controller`` the (λ, return) of ``actor``'s episodes up to ``at_frames``, in the
    order they were reported; returns how many."""
    mine = log.actors == actor
    if at_frames is not None:
        mine &= log.frames <= at_frames
    for lam, episode_return in zip(log.lambdas[mine], log.returns[mine], strict=True):
        controller.update(lam, float(episode_return))
    return int(mine.sum())
