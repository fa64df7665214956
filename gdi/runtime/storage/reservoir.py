"""A uniform sample of the states the actors visited, per training stage, for the paper's
data-richness analysis (App. "Ablation Study", subsection "t-SNE": states of GDI-I³ and GDI-I¹
drawn from three stages of training, A_i and B_i, i = 1, 2, 3).

Training is cut into ``stages`` equal spans of progress (frames / frame budget); stage k holds
the observations visited while ``floor(progress · stages) = k`` (the last stage also takes
progress 1). Each stage keeps a reservoir of at most ``per_stage`` observations filled by
Algorithm R (Vitter 1985): the n-th observation of a stage is kept with probability
``per_stage / n``, replacing a uniformly chosen one, so at every moment each observation the
stage has seen is in the reservoir with the same probability, whatever the stream's length.
Memory is ``stages · per_stage`` observations; the cost per observation is one random integer.

``save`` writes ``observations.npz`` (what ``gdi analyze richness`` reads)::

    stage_<k>   [n_k, *obs_shape]  the kept observations of stage k (n_k ≤ per_stage)
    frames_<k>  [n_k] int64        the run's frame count when each was visited
    seen        [stages] int64     observations stage k has seen (n_k = min(seen_k, per_stage))
    stages, per_stage              scalars
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from gdi.atomic import atomic_write


class StageReservoir:
    """Per-stage uniform reservoirs of observations (Algorithm R), seeded and checkpointable."""

    def __init__(self, stages: int, per_stage: int, seed: int) -> None:
        if not isinstance(stages, int) or stages < 1:
            raise ValueError(f"stages must be a positive integer, got {stages!r}")
        if not isinstance(per_stage, int) or per_stage < 0:
            raise ValueError(f"per_stage must be a non-negative integer, got {per_stage!r}")
        self.stages, self.per_stage = stages, per_stage
        self._rng = np.random.default_rng(seed)
        self.seen = np.zeros(stages, dtype=np.int64)
        # Allocated at the first observation, when the shape and dtype are known.
        self._obs: list[np.ndarray] | None = None
        self._frames = np.zeros((stages, per_stage), dtype=np.int64)

    def stage_of(self, progress: float) -> int:
        """``floor(progress · stages)`` clamped to ``[0, stages − 1]``."""
        if not math.isfinite(progress):
            raise ValueError(f"progress must be finite, got {progress!r}")
        return min(self.stages - 1, max(0, math.floor(progress * self.stages)))

    @property
    def obs_shape(self) -> tuple[int, ...] | None:
        return None if self._obs is None else tuple(self._obs[0].shape[1:])

    def kept(self, stage: int) -> np.ndarray:
        """The observations stage ``stage`` holds now, ``[n_k, *obs_shape]`` (a view)."""
        n = int(min(self.seen[stage], self.per_stage))
        if self._obs is None:
            return np.zeros((0,), dtype=np.uint8)
        return self._obs[stage][:n]

    def kept_frames(self, stage: int) -> np.ndarray:
        return self._frames[stage, : int(min(self.seen[stage], self.per_stage))]

    def add(self, observations: np.ndarray, progress: float, frames: int = 0) -> None:
        """Offer ``observations`` ``[N, *obs_shape]``, visited at training ``progress`` (in
        [0, 1]) when the run had ``frames`` frames; they all go to one stage."""
        if self.per_stage == 0:
            return
        observations = np.asarray(observations)
        if observations.ndim < 1:
            raise ValueError(
                f"observations must be [N, *obs_shape], got shape {observations.shape}"
            )
        if self._obs is None:
            self._obs = [np.zeros((self.per_stage, *observations.shape[1:]),
                                  dtype=observations.dtype) for _ in range(self.stages)]
        elif observations.shape[1:] != self.obs_shape:
            raise ValueError(
                f"observations have shape {observations.shape[1:]} per observation, the "
                f"reservoir holds {self.obs_shape}"
            )
        n = observations.shape[0]
        if n == 0:
            return
        stage = self.stage_of(progress)
        store, stamps = self._obs[stage], self._frames[stage]
        k, before = self.per_stage, int(self.seen[stage])
        # Positions 1..n of this batch in the stage's stream are before+1 .. before+n.
        fill = max(0, min(n, k - before))  # the reservoir is not full yet: keep them all
        if fill:
            store[before : before + fill] = observations[:fill]
            stamps[before : before + fill] = frames
        if fill < n:
            # Algorithm R: the t-th observation draws j uniform in [0, t) and replaces slot j
            # when j < k. Draws are made in stream order; where several land on one slot, the
            # last one wins, exactly as one-at-a-time replacement would leave it.
            t = np.arange(before + fill + 1, before + n + 1, dtype=np.int64)
            j = self._rng.integers(0, t)
            hit = np.flatnonzero(j < k)
            if hit.size:
                slots = j[hit]
                reversed_first = np.unique(slots[::-1], return_index=True)[1]
                last = hit[hit.size - 1 - reversed_first]
                store[j[last]] = observations[fill + last]
                stamps[j[last]] = frames
        self.seen[stage] += n

    # --- checkpoints and the run folder ----------------------------------------------------------
    def add_new_states(self, sequences, burn_in: int, stride: int, progress: float,
                       frames: int) -> None:
        """The states the behavior policies visited in the learning part of ``sequences`` (a
        ``SequenceBatch`` of the sequences just collected), each once: consecutive sequences
        of an environment overlap by length − ``stride`` steps, so only their last
        ``stride`` observations are new."""
        start = max(burn_in, sequences.length - stride)
        visited = sequences.obs[start : sequences.length]
        self.add(visited.reshape(-1, *visited.shape[2:]), progress, frames)

    def state_dict(self) -> dict:
        return {
            "stages": self.stages,
            "per_stage": self.per_stage,
            "seen": self.seen.copy(),
            "obs": None if self._obs is None else [o.copy() for o in self._obs],
            "frames": self._frames.copy(),
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict) -> None:
        if (state["stages"], state["per_stage"]) != (self.stages, self.per_stage):
            raise ValueError(
                f"the saved reservoir has {state['stages']} stages × {state['per_stage']}, "
                f"this one {self.stages} × {self.per_stage}"
            )
        self.seen = np.array(state["seen"], dtype=np.int64)
        self._obs = None if state["obs"] is None else [np.array(o) for o in state["obs"]]
        self._frames = np.array(state["frames"], dtype=np.int64)
        self._rng.bit_generator.state = state["rng"]

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``save`` writes (see the module docstring)."""
        out: dict[str, np.ndarray] = {
            "stages": np.int64(self.stages),
            "per_stage": np.int64(self.per_stage),
            "seen": self.seen.copy(),
        }
        for k in range(self.stages):
            out[f"stage_{k}"] = self.kept(k)
            out[f"frames_{k}"] = self.kept_frames(k)
        return out

    def save(self, path: str | os.PathLike) -> Path:
        """Write the kept observations to ``path`` (``RUN/observations.npz``) atomically:
        a temporary file in the same folder, then ``os.replace``."""
        return atomic_write(path, lambda handle: np.savez_compressed(handle, **self.arrays()))
