"""``gdi analyze richness``: the data richness of two runs' visited states, as the paper's
ablation study shows it (Sec. "Ablation Study" and Fig. "ablation study" (b), (c); App.
"Ablation Study", subsection "t-SNE": states of GDI-I³, A_i, and of GDI-I¹, B_i, sampled from
three stages i of training, embedded jointly by t-SNE, each run's states highlighted).

The paper defines data richness only as "Seen Conditions / All Conditions" and shows it as
pictures. gdi makes it a number, three ways, with one rule: split the state space into
*conditions*, count the conditions each run visited, and divide by the conditions either run
visited (the union stands in for "all conditions", which no finite sample can enumerate)::

    richness(X) = |C(X)| / |C(A) ∪ C(B)|,   X ∈ {A, B}

on the same number of states from each run (per stage: min(--states, |A_i|, |B_i|), drawn
uniformly), so that neither run wins by sample size. The three partitions into conditions:

* ``tsne_grid``: the cells of a ``grid × grid`` grid laid over the bounding box of the joint
  t-SNE embedding (every state of both runs and all stages in one embedding, so cells have the
  same size in every stage); what the paper's figures show by eye.
* ``kmeans``: the clusters of k-means fitted on the joint states in the PCA space the t-SNE
  starts from: the same idea without t-SNE's distortions, so the number does not hinge on one
  embedding. Its resolution matters: with few clusters both runs hit every one (richness 1 for
  both), so by default k is one cluster per 5 distinct states of the joint sample
  (``clusters = 0``); a fixed k can be given.
* ``distinct``: exact observations (equal arrays); meaningful where states repeat exactly
  (MinAtar's 10×10 binary grids), near 1 for both runs on pixel observations.

Per stage the union is that stage's A_i ∪ B_i; "all stages" pools every stage's states.
t-SNE and k-means see each distinct observation once (PCA to 50 dimensions first), and repeats
of a state share its point and cluster: otherwise t-SNE spreads copies of one state over a blob
of cells, and a run that revisits few states would look rich.

This module measures; ``gdi.analysis.richness_report`` writes the figure and the files.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gdi.run_files import OBSERVATIONS_FILE

PCA_DIMS = 50
STATES_PER_CLUSTER = 5  # distinct states per k-means cluster when k is not given
MAX_PERPLEXITY = 30.0
DEFINITIONS = {
    "rule": "richness(X) = |conditions X visited| / |conditions A or B visited|, on equally many "
            "states of A and B (paper: Seen Conditions / All Conditions)",
    "tsne_grid": "a condition is a cell of a grid×grid grid over the bounding box of the joint "
                 "t-SNE embedding (both runs, all stages)",
    "kmeans": "a condition is a k-means cluster fitted on the joint distinct states (PCA space "
              "the t-SNE starts from); default k = distinct states / 5",
    "distinct": "a condition is one exact observation",
}
METHODS = ("tsne_grid", "kmeans", "distinct")


def stage_names(stages: int) -> list[str]:
    """The paper's "early", "middle", "later" for three stages; else percent ranges."""
    if stages == 3:
        return ["early", "middle", "later"]
    return [f"{100 * k // stages}–{100 * (k + 1) // stages} %" for k in range(stages)]


@dataclass(frozen=True)
class RunObservations:
    """A run's kept observations, regrouped into the analysis stages."""

    run_dir: Path
    label: str
    env: str
    preset: str
    seed: int
    stages: tuple[np.ndarray, ...]
    """Per stage, ``[n_k, *obs_shape]``."""
    frames: tuple[np.ndarray, ...]
    """Per stage, the frame count at which each observation was visited, ``[n_k]``."""

    @property
    def obs_shape(self) -> tuple[int, ...] | None:
        shapes = {s.shape[1:] for s in self.stages if len(s)}
        return shapes.pop() if shapes else None


def run_label(config: dict) -> str:
    """The paper's name of the run's preset (GDI-I³, GDI-I¹, ...), else the preset id."""
    from gdi.presets import PRESETS

    preset = str(config.get("preset", "?"))
    return PRESETS[preset].category if preset in PRESETS else preset


def load_observations(run_dir: str | Path, stages: int = 3) -> RunObservations:
    """``RUN/observations.npz`` regrouped into ``stages`` stages: the saved stages must be a
    multiple of ``stages``; consecutive saved stages are merged (equal spans of frames, so the
    union of their uniform samples is uniform over the merged span)."""
    from gdi.scores import read_config

    run_dir = Path(run_dir)
    config = read_config(run_dir)
    path = run_dir / OBSERVATIONS_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{run_dir} has no {OBSERVATIONS_FILE}: the run kept no visited states. Train with "
            "`gdi train ... --set observation_reservoir=1000` (states kept per training stage) "
            "to record them"
        )
    if stages < 1:
        raise ValueError(f"--stages must be >= 1, got {stages}")
    try:
        with np.load(path) as data:
            saved = int(data["stages"])
            kept = [data[f"stage_{k}"] for k in range(saved)]
            frames = [data[f"frames_{k}"] for k in range(saved)]
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a readable observations file ({err})") from None
    if saved % stages:
        raise ValueError(
            f"{path} holds {saved} training stages, which cannot be merged into {stages}; "
            f"use --stages with a divisor of {saved}"
        )
    group = saved // stages
    merged, merged_frames = [], []
    for k in range(stages):
        parts = [kept[j] for j in range(k * group, (k + 1) * group) if kept[j].size]
        shapes = {p.shape[1:] for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"{path}: stages hold observations of different shapes {shapes}")
        merged.append(np.concatenate(parts) if parts else np.zeros((0,), dtype=np.uint8))
        merged_frames.append(np.concatenate(
            [frames[j] for j in range(k * group, (k + 1) * group) if kept[j].size]
        ) if parts else np.zeros(0, dtype=np.int64))
    return RunObservations(
        run_dir, run_label(config), str(config["env"]), str(config["preset"]),
        int(config["seed"]), tuple(merged), tuple(merged_frames),
    )


class Coverage(NamedTuple):
    """Conditions visited by A and by B, their union, and each run's richness."""

    a: float
    b: float
    conditions_a: int
    conditions_b: int
    conditions_union: int


def label_coverage(ids_a: np.ndarray, ids_b: np.ndarray) -> Coverage:
    """Richness of A and B when each state's condition is an integer id."""
    seen_a, seen_b = set(np.unique(ids_a).tolist()), set(np.unique(ids_b).tolist())
    union = len(seen_a | seen_b)
    if union == 0:
        raise ValueError("no states to measure: both runs are empty")
    return Coverage(len(seen_a) / union, len(seen_b) / union, len(seen_a), len(seen_b), union)


class Grid(NamedTuple):
    """A ``bins × bins`` grid over ``[x0, x1] × [y0, y1]``."""

    x0: float
    x1: float
    y0: float
    y1: float
    bins: int

    @staticmethod
    def around(points: np.ndarray, bins: int) -> Grid:
        """The grid over the bounding box of ``points`` ``[N, 2]``."""
        points = np.asarray(points, dtype=np.float64)
        if points.ndim != 2 or points.shape[1] != 2 or len(points) == 0:
            raise ValueError(f"points must be a non-empty [N, 2] array, got {points.shape}")
        if bins < 1:
            raise ValueError(f"grid bins must be >= 1, got {bins}")
        (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
        return Grid(float(x0), float(x1), float(y0), float(y1), int(bins))

    def cells(self, points: np.ndarray) -> np.ndarray:
        """Cell id ``row · bins + column`` of each point; the box's upper edges belong to the
        last row and column, and points outside are clamped into the box."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 2)

        def index(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
            width = (hi - lo) or 1.0
            return np.clip(np.floor((v - lo) / width * self.bins), 0, self.bins - 1).astype(int)

        return index(points[:, 1], self.y0, self.y1) * self.bins + \
            index(points[:, 0], self.x0, self.x1)


def grid_coverage(points_a: np.ndarray, points_b: np.ndarray, grid: Grid) -> Coverage:
    """Richness of A and B as the share of the union's occupied grid cells each occupies."""
    return label_coverage(grid.cells(points_a), grid.cells(points_b))


# --- the analysis --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RichnessResult:
    """Everything the figure, the JSON and the CSV of ``gdi.analysis.richness_report`` show."""

    runs: tuple[RunObservations, RunObservations]
    stage_names: tuple[str, ...]
    states: tuple[int, ...]
    """States drawn from each run per stage (0: the stage is missing in a run)."""
    embedding: np.ndarray
    """``[N, 2]`` t-SNE coordinates of every drawn state."""
    run: np.ndarray
    """``[N]``: 0 for A, 1 for B."""
    stage: np.ndarray
    """``[N]``: the stage index."""
    frames: np.ndarray
    """``[N]``: the frame count at which the state was visited."""
    cluster: np.ndarray
    """``[N]``: its k-means cluster."""
    distinct: np.ndarray
    """``[N]``: id of its exact observation."""
    grid: Grid
    per_stage: tuple[dict[str, Coverage] | None, ...]
    overall: dict[str, Coverage]
    settings: dict


def coverages(embedding: np.ndarray, run: np.ndarray, cluster: np.ndarray,
              distinct: np.ndarray, grid: Grid) -> dict[str, Coverage]:
    """The three richness numbers of the states given (``run`` 0 for A, 1 for B)."""
    a, b = run == 0, run == 1
    return {
        "tsne_grid": grid_coverage(embedding[a], embedding[b], grid),
        "kmeans": label_coverage(cluster[a], cluster[b]),
        "distinct": label_coverage(distinct[a], distinct[b]),
    }


def _features(observations: np.ndarray, seed: int) -> np.ndarray:
    """Flattened states, reduced by PCA to ``PCA_DIMS`` dimensions when they have more (the
    usual preprocessing before t-SNE; the k-means conditions are fitted here too)."""
    from sklearn.decomposition import PCA

    flat = observations.reshape(len(observations), -1).astype(np.float32)
    dims = min(PCA_DIMS, flat.shape[0] - 1)
    if flat.shape[1] <= dims:
        return flat
    return PCA(n_components=dims, random_state=seed).fit_transform(flat)


def tsne(features: np.ndarray, seed: int, perplexity: float = MAX_PERPLEXITY) -> np.ndarray:
    """2-D t-SNE (scikit-learn, PCA initialization, automatic learning rate) with a fixed seed;
    the perplexity is lowered to (N − 1) / 3 for small samples."""
    from sklearn.manifold import TSNE

    n = len(features)
    if n < 5:
        raise ValueError(f"t-SNE needs at least 5 distinct states, the runs gave {n}")
    return TSNE(
        n_components=2, perplexity=min(perplexity, (n - 1) / 3), init="pca",
        learning_rate="auto", random_state=seed,
    ).fit_transform(features).astype(np.float64)


def _exact_ids(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(id of each observation's distinct value ``[N]``, index of each value's first
    occurrence ``[D]``)."""
    flat = np.ascontiguousarray(observations.reshape(len(observations), -1))
    _, first, inverse = np.unique(flat, axis=0, return_index=True, return_inverse=True)
    return inverse.reshape(-1), first


def compute_richness(
    run_a: RunObservations,
    run_b: RunObservations,
    *,
    states: int = 1000,
    seed: int = 0,
    grid: int = 20,
    clusters: int = 0,
    threads: int = 1,
    embed=tsne,
) -> RichnessResult:
    """Draw up to ``states`` states per stage from each run (equally many from both), embed
    them jointly, and measure each run's richness per stage and overall. ``embed(features,
    seed) -> [N, 2]`` is t-SNE; tests may pass another map. ``threads`` caps the OpenMP and
    BLAS threads of PCA, t-SNE and k-means."""
    # Loaded before the limit is set: threadpoolctl limits only the libraries already loaded.
    import sklearn.cluster
    import sklearn.decomposition
    import sklearn.manifold  # noqa: F401
    from threadpoolctl import threadpool_limits

    if threads < 1:
        raise ValueError(f"--threads must be >= 1, got {threads}")
    with threadpool_limits(limits=threads):
        return _compute(run_a, run_b, states, seed, grid, clusters, embed)


def _compute(run_a: RunObservations, run_b: RunObservations, states: int, seed: int, grid: int,
             clusters: int, embed) -> RichnessResult:
    from sklearn.cluster import KMeans

    if states < 1 or grid < 1 or clusters < 0:
        raise ValueError(
            f"--states and --grid must be >= 1 and --clusters >= 0, got {states}, {grid}, "
            f"{clusters}"
        )
    if run_a.env != run_b.env:
        raise ValueError(
            f"the runs are on different environments ({run_a.env} and {run_b.env}); data "
            "richness compares the states of one environment"
        )
    if len(run_a.stages) != len(run_b.stages):
        raise ValueError("both runs must be regrouped into the same number of stages")
    if None not in (run_a.obs_shape, run_b.obs_shape) and run_a.obs_shape != run_b.obs_shape:
        raise ValueError(
            f"observation shapes differ: {run_a.run_dir} has {run_a.obs_shape}, "
            f"{run_b.run_dir} has {run_b.obs_shape}"
        )
    rng = np.random.default_rng(seed)
    chosen, run_ids, stage_ids, frame_ids, counts = [], [], [], [], []
    for k, (obs_a, obs_b) in enumerate(zip(run_a.stages, run_b.stages, strict=True)):
        n = min(states, len(obs_a), len(obs_b))
        counts.append(n)
        for r, (obs, frames) in enumerate(((obs_a, run_a.frames[k]), (obs_b, run_b.frames[k]))):
            if n == 0:
                continue
            pick = np.sort(rng.choice(len(obs), size=n, replace=False))
            chosen.append(obs[pick])
            frame_ids.append(frames[pick])
            run_ids.append(np.full(n, r))
            stage_ids.append(np.full(n, k))
    if not chosen:
        raise ValueError(
            f"no stage has observations in both {run_a.run_dir} and {run_b.run_dir}"
        )
    observations = np.concatenate(chosen)
    # One point per distinct observation, shared by its repeats: t-SNE would spread copies of
    # one state over a blob of grid cells, and k-means would place its centres by visit counts.
    distinct, first = _exact_ids(observations)
    features = _features(observations[first], seed)
    embedding = np.asarray(embed(features, seed), dtype=np.float64)[distinct]
    k = min(clusters or max(2, len(first) // STATES_PER_CLUSTER), len(first))
    cluster = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(features)[distinct]
    run = np.concatenate(run_ids)
    stage = np.concatenate(stage_ids)
    bounds = Grid.around(embedding, grid)

    def measure(mask: np.ndarray) -> dict[str, Coverage]:
        return coverages(embedding[mask], run[mask], cluster[mask], distinct[mask], bounds)

    per_stage = tuple(measure(stage == s) if counts[s] else None for s in range(len(counts)))
    settings = {"states": states, "seed": seed, "grid": grid, "clusters": int(k),
                "distinct_states_embedded": len(first), "pca_dims": int(features.shape[1]),
                "perplexity": min(MAX_PERPLEXITY, (len(features) - 1) / 3)}
    return RichnessResult(
        (run_a, run_b), tuple(stage_names(len(run_a.stages))), tuple(counts), embedding, run,
        stage, np.concatenate(frame_ids), cluster, distinct, bounds, per_stage,
        measure(np.ones(len(run), dtype=bool)), settings,
    )


def summary_lines(result: RichnessResult) -> list[str]:
    """One line per stage and one for all stages: each definition's A and B richness."""
    lines = []
    rows: Sequence = (*zip(result.stage_names, result.per_stage, strict=True),
                      ("all stages", result.overall))
    for name, coverage in rows:
        if coverage is None:
            lines.append(f"{name:>10}: no states in one of the runs")
            continue
        parts = [f"{m} A {coverage[m].a:.2f} B {coverage[m].b:.2f}" for m in METHODS]
        lines.append(f"{name:>10}: " + " | ".join(parts))
    return lines
