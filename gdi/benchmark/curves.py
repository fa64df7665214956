"""Learning curves of a grid's runs and its peers', on one footing: each training episode's raw
return at the frames when it ended, and the mean of the last ``window`` of them (gdi's
progress line and ``benchmarks/appo_peer.py``'s curve alike). Both systems are measured by
what their behaviour policy scores while it learns, because a peer such as Sample Factory
records nothing else; gdi's separate evaluations stay in each run's own report.

gdi runs are read from ``meta.jsonl`` (or ``meta.jsonl.gz``: every training episode, its
frames and return); a peer's run from ``curve_episodes.csv`` (``wall_s,frames,return,...``)
and, for the frames it trained, ``curve.csv`` beside it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.evaluation.baselines import baselines
from gdi.evaluation.games import is_atari57
from gdi.evaluation.metrics import hns
from gdi.runtime.run_folder.meta_log import load_meta_rows

#: Points of the frame grid on which the area under a curve is taken.
AUC_POINTS = 100


@dataclass(frozen=True)
class RunCurve:
    """One run's training episodes, in the order they ended."""

    system: str
    env: str
    seed: int
    frames: np.ndarray  # frames trained when each episode ended
    returns: np.ndarray  # its raw (undiscounted, unclipped) return
    trained: int  # frames the run has trained in all
    source: Path

    def trailing(self, window: int) -> np.ndarray:
        """At each episode, the mean return of it and the ``window - 1`` before it."""
        # A sum of at most ``window`` terms each (not a difference of running totals, whose
        # rounding grows with the whole run).
        sums = np.convolve(self.returns, np.ones(window))[:self.returns.size]
        return sums / np.minimum(np.arange(1, self.returns.size + 1), window)

    def at(self, x: np.ndarray, window: int) -> np.ndarray:
        """The trailing mean as a step function of frames: at each ``x``, its value at the
        last episode that ended by then; before the first episode, the first episode's."""
        if not self.returns.size:
            raise ValueError(f"{self.source}: no training episode finished")
        index = np.searchsorted(self.frames, np.asarray(x, dtype=float), side="right") - 1
        return self.trailing(window)[np.maximum(index, 0)]

    def score_at(self, frames: int, window: int) -> float:
        """The mean return of the last ``window`` episodes that ended by ``frames``."""
        return float(self.at(np.array([frames]), window)[0])

    def frames_to(self, level: float, window: int, by: int) -> int | None:
        """The frames at which the trailing mean of a full ``window`` of episodes first reached
        ``level`` by ``by`` frames; None when it did not. The mean of the first few episodes
        does not count: on Double Dunk APPO's first two (−18 and −12) would put it at a level
        of −15.2 after 40,960 frames, a level its mean of 100 episodes reached at 1.72M."""
        full = np.arange(self.returns.size) >= window - 1
        reached = np.flatnonzero((self.trailing(window) >= level) & full & (self.frames <= by))
        return None if not reached.size else int(self.frames[reached[0]])


@dataclass(frozen=True)
class Normalizer:
    """How an environment's scores are put on one scale across games: the paper's human
    normalization on the Atari-57 games, raw scores elsewhere."""

    name: str  # "HNS" or "raw"
    random: float = 0.0
    human: float = 1.0

    def __call__(self, scores):
        if self.name == "raw":
            return np.asarray(scores, dtype=float)
        return hns(np.atleast_1d(scores), [self.random] * np.size(scores),
                   [self.human] * np.size(scores)).reshape(np.shape(scores))


def normalizer(env: str) -> Normalizer:
    if env.startswith("ale:") and is_atari57(env):
        scores = baselines([env])
        return Normalizer("HNS", float(scores.random[0]), float(scores.human_average[0]))
    return Normalizer("raw")


def normalized_auc(curve: RunCurve, frames: int, window: int, norm: Normalizer) -> float:
    """The area under the normalized curve over [0, ``frames``] divided by ``frames``: the
    mean normalized training score over the budget (1.0 on the ALE: human level all along),
    on ``AUC_POINTS`` equally spaced frame counts."""
    x = frames * np.arange(1, AUC_POINTS + 1) / AUC_POINTS
    return float(np.mean(norm(curve.at(x, window))))


def read_gdi_curve(folder: Path, system: str, env: str, seed: int, trained: int) -> RunCurve:
    rows = load_meta_rows(folder)
    order = sorted(range(len(rows)), key=lambda i: rows[i]["frames"])  # stable for ties
    return RunCurve(system, env, seed,
                    np.array([rows[i]["frames"] for i in order], dtype=float),
                    np.array([rows[i]["return"] for i in order], dtype=float),
                    trained, folder)


def peer_frames(folder: Path) -> int:
    """The most frames a peer run's ``curve.csv`` records (0 without one)."""
    path = folder / "curve.csv"
    if not path.is_file():
        return 0
    with path.open(newline="") as f:
        return max((int(float(row["frames"])) for row in csv.DictReader(f)
                    if row.get("frames")), default=0)


def read_peer_curve(folder: Path, system: str, env: str, seed: int) -> RunCurve:
    """A peer run's curve from its ``curve_episodes.csv`` (FileNotFoundError when missing)."""
    path = folder / "curve_episodes.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (a benchmarks/appo_peer.py experiment "
                                "folder holds one)")
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("frames") and r.get("return")]
    frames = np.array([float(r["frames"]) for r in rows])
    returns = np.array([float(r["return"]) for r in rows])
    order = np.argsort(frames, kind="stable")
    trained = max(int(frames.max()) if frames.size else 0, peer_frames(folder))
    return RunCurve(system, env, seed, frames[order], returns[order], trained, folder)
