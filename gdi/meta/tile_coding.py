"""Blocks, tile codings and the three equations of the paper's bandit, as pure numpy functions.

Paper: App. "Adaptive Controller Formalism": the definition of a bandit
B = Bandit(mode, l, r, lr, d, acc, ta, to, w, N), Eq. (bandit_eval), Eq. (bandit_update) and
Eq. (bandit_score). ``gdi.meta.bandit.BanditEnsemble`` calls these functions (batched over
dimensions and bandits); the tests check them on cases worked by hand.

Units. The search space of one coordinate is [l, r] in bandit coordinates x. It is cut into
*blocks* of width ``acc`` (the "accuracy of search range": 1.0 for 1/τ, 0.1 for ε), and every
tile coding is expressed in *block units* z = (clip(x, l, r) − l) / acc ∈ [0, n_blocks]:

* block i covers z ∈ [i, i + 1) (the last block also holds z = n_blocks; when (r − l) / acc is
  not an integer the last block is the shorter remainder, so every x in [l, r] is reachable);
* a tile coding has a tile width ``ta`` in blocks (the table's "Accuracy of Tile coding",
  Uniform([2, 3, 4])) and an offset ``to`` in blocks; its tile j covers z ∈ [to + j·ta,
  to + (j + 1)·ta), except that tile 0 reaches down to z = 0 (the paper's max{x − to, l}) and the
  last tile reaches up to z = n_blocks. This is the paper's
  j = ⌊(min{max{x − to, l}, r} − l) / ta⌋ with x, to and ta measured in blocks.

Why block units: the table's tile accuracies {2, 3, 4} and offsets [0, 60] are shared by 1/τ
(range 50) and ε (range 1); read in the coordinate's own units a tile of width 2 would not fit
in ε's range at all. In blocks, a tile always spans 2 to 4 blocks of any coordinate.

Floors are taken with a tolerance of 1e-9 block, so that boundaries written in decimal land
where they read: x = 0.3 with acc = 0.1 is in block 3 (0.3 / 0.1 = 2.9999999999999996).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "bandit_values",
    "block_index",
    "block_to_tiles",
    "num_blocks",
    "num_tiles",
    "tile_index",
    "tile_intervals",
    "to_block_units",
    "ucb_scores",
]

#: Tolerance, in block units, of every floor and ceiling below.
_TOL = 1e-9


def num_blocks(low: float, high: float, accuracy: float) -> int:
    """Number of blocks of width ``accuracy`` covering [low, high]: ⌈(r − l) / acc⌉.

    The paper writes ⌊(r − l) / acc⌋; the two agree for every range of the hyperparameter table
    (50 / 1.0 = 50, 1 / 0.1 = 10). Where they differ, the ceiling keeps [r − remainder, r]
    reachable instead of dropping it.
    """
    if not (np.isfinite(low) and np.isfinite(high) and high > low):
        raise ValueError(f"a search range needs finite l < r, got [{low}, {high}]")
    if not (np.isfinite(accuracy) and accuracy > 0):
        raise ValueError(f"accuracy must be a finite number > 0, got {accuracy}")
    return max(1, int(np.ceil((high - low) / accuracy - _TOL)))


def to_block_units(x: np.ndarray | float, low, high, accuracy) -> np.ndarray:
    """z = (min{max{x, l}, r} − l) / acc: x clipped to [l, r] (the paper's clipping), in blocks.

    ``low``, ``high``, ``accuracy`` broadcast against ``x``.
    """
    x = np.asarray(x, dtype=np.float64)
    return (np.clip(x, low, high) - low) / accuracy


def block_index(x: np.ndarray | float, low, high, accuracy) -> np.ndarray:
    """The block of x: ⌊(min{max{x, l}, r} − l) / acc⌋, with x = r in the last block."""
    z = to_block_units(x, low, high, accuracy)
    n = np.ceil((np.asarray(high, np.float64) - low) / accuracy - _TOL)
    return np.minimum(np.floor(z + _TOL), np.maximum(n, 1) - 1).astype(np.int64)


def num_tiles(n_blocks: int, width: float, offset: float) -> int:
    """Tiles of one tile coding over [0, n_blocks] (block units): ⌈(n_blocks − to) / ta⌉, ≥ 1.

    The paper sizes w and N as ⌊(r − l) / ta⌋, which misses the tile that holds x near r when
    (r − l) / ta is not an integer (e.g. 50 blocks, ta = 3: x ∈ [48, 50] falls in tile 16 of
    16); the ceiling over the offset range counts exactly the tiles its index formula reaches.
    """
    if not width > 0:
        raise ValueError(f"tile width must be > 0 blocks, got {width}")
    if offset < 0:
        raise ValueError(f"tile offset must be >= 0 blocks, got {offset}")
    return max(1, int(np.ceil((n_blocks - offset) / width - _TOL)))


def tile_index(z: np.ndarray | float, width, offset, n_tiles) -> np.ndarray:
    """Eq. (bandit_update), first line, in block units: j = ⌊max{z − to, 0} / ta⌋.

    ``z`` is x in block units (``to_block_units``); ``width`` (ta), ``offset`` (to) and
    ``n_tiles`` broadcast against it. z = n_blocks lies in the last tile.
    """
    z = np.asarray(z, dtype=np.float64)
    j = np.floor(np.maximum(z - offset, 0.0) / width + _TOL)
    return np.minimum(j, np.asarray(n_tiles) - 1).astype(np.int64)


def tile_intervals(n_blocks: int, width: float, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """[lo_j, hi_j) of every tile j of one tile coding, in block units.

    Tile 0 starts at 0 (the paper clips x − to at l) and the last tile ends at n_blocks.
    """
    n = num_tiles(n_blocks, width, offset)
    j = np.arange(n, dtype=np.float64)
    lo = offset + j * width
    hi = offset + (j + 1) * width
    lo[0] = 0.0
    hi[-1] = float(n_blocks)
    return lo, hi


def block_to_tiles(n_blocks: int, tilings: Sequence[tuple[float, float]]) -> np.ndarray:
    """The maps M_btt and M_ttb of the appendix as one incidence matrix ``[n_blocks, n_tiles]``.

    ``tilings`` lists (ta, to) per tile coding, in block units; the tiles of all tile codings
    are numbered one after another (tile coding 0 first). Entry [i, t] is True when tile t
    overlaps block i on an interval of positive length: row i is M_btt(block_i), the tiles whose
    weights Eq. (bandit_eval) averages, and column t is M_ttb(tile_t).

    A block may straddle a tile edge when the offset is not a whole number of blocks; it then
    maps to both tiles of that tile coding, which is why the paper divides by len(M_btt(block_i))
    rather than by the number of tile codings.
    """
    if not tilings:
        raise ValueError("a bandit needs at least one tile coding")
    b_lo = np.arange(n_blocks, dtype=np.float64)
    b_hi = b_lo + 1.0
    columns = []
    for width, offset in tilings:
        lo, hi = tile_intervals(n_blocks, width, offset)
        overlap = np.minimum(b_hi[:, None], hi[None, :]) - np.maximum(b_lo[:, None], lo[None, :])
        columns.append(overlap > _TOL)
    return np.concatenate(columns, axis=1)


def bandit_values(weights: np.ndarray, incidence: np.ndarray) -> np.ndarray:
    """Eq. (bandit_eval): V_i = Σ_{k ∈ M_btt(block_i)} w_k / len(M_btt(block_i)).

    ``weights`` ``[..., n_tiles]``, ``incidence`` ``[..., n_blocks, n_tiles]`` (leading axes
    broadcast). Returns ``[..., n_blocks]``; a block with no tile (padding) gets 0.
    """
    weights = np.asarray(weights, dtype=np.float64)
    incidence = np.asarray(incidence)
    if weights.ndim < 1 or incidence.ndim < 2 or incidence.shape[-1] != weights.shape[-1]:
        raise ValueError(
            f"weights [..., n_tiles] and incidence [..., n_blocks, n_tiles] disagree: "
            f"{weights.shape} vs {incidence.shape}"
        )
    total = np.matmul(incidence.astype(np.float64), weights[..., None])[..., 0]
    count = incidence.sum(axis=-1)
    return np.divide(total, count, out=np.zeros_like(total), where=count > 0)


def ucb_scores(
    values: np.ndarray,
    counts: np.ndarray,
    total: np.ndarray | float,
    c: float,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Eq. (bandit_score): (V_i − μ(V)) / σ(V) + c·sqrt(log(1 + ΣN) / (1 + N_i)).

    ``values`` and ``counts`` are ``[..., n_blocks]``; μ and σ (population standard deviation)
    are taken over the last axis, over the blocks where ``mask`` (broadcast against ``values``)
    is True, all when None; masked-out blocks score −inf. ``total`` (ΣN) broadcasts against
    ``values[..., 0]``. Where all values are equal (σ = 0, e.g. before the first update) the
    standardized term is 0.
    """
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if values.shape != counts.shape:
        raise ValueError(
            f"values and counts must have the same shape, got {values.shape} and {counts.shape}"
        )
    if mask is None:
        n = values.shape[-1]
        mean = values.mean(axis=-1, keepdims=True)
        dev = values - mean
    else:
        n = mask.sum(axis=-1, keepdims=True)
        mean = np.where(mask, values, 0.0).sum(axis=-1, keepdims=True) / n
        dev = np.where(mask, values - mean, 0.0)
    std = np.sqrt((dev * dev).sum(axis=-1, keepdims=True) / n)
    # σ below float resolution of the values means "all equal": the standardized term is 0.
    flat = std <= 1e-12 * np.maximum(np.abs(mean), 1.0)
    z = dev / np.where(flat, np.inf, std)
    total = np.asarray(total, dtype=np.float64)[..., None]
    score = z + c * np.sqrt(np.log1p(total) / (1.0 + counts))
    return score if mask is None else np.where(mask, score, -np.inf)
