"""The paper's Bandits Controller: an ensemble of tile-coded UCB bandits over the index set.

Paper: App. "Adaptive Controller Formalism" (definition of Bandit(mode, l, r, lr, d, acc, ta,
to, w, N), Eqs. (bandit_eval), (bandit_update), (bandit_score), Algorithm "Bandits
Controller") and App. "Hyperparameters" (Num. Bandits 7, Bandit Learning Rate
Uniform([0.05, 0.1, 0.2]), Bandit Tiling Width Uniform([2, 3, 4]), Num. Bandit Candidates 3,
Offset of Tile coding Uniform([0, 60]), Accuracy of Tile coding Uniform([2, 3, 4]), accuracy of
search range [1.0, 1.0, 0.1], search ranges [0, 50], [0, 50], [0, 1]).

One sample, per λ coordinate:

1. every bandit m evaluates its blocks by Eq. (bandit_eval) and scores them by
   Eq. (bandit_score);
2. a bandit in ``argmax`` mode takes its d best blocks; one in ``random`` mode draws d blocks
   without replacement with the scores as logits (Gumbel-top-d, which is exactly successive
   softmax draws without replacement);
3. each chosen block gives one candidate, uniform within the block; x is uniform over the
   M × d candidates and is mapped to λ by the coordinate's transform.

One update, per coordinate: every bandit moves the weights of the tiles that hold x by
lr·(g − V_block(x)) (Eq. (bandit_update)) and counts them.

The tile arithmetic lives in ``gdi.meta.tile_coding``; this module batches it over
coordinates and bandits (arrays ``[dim, M, ...]``) so that ``sample`` and ``update`` are a
fixed number of numpy calls whatever M is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gdi.meta.base import (
    check_count,
    check_index_names,
    check_lambda,
    check_ranges,
    check_return,
    check_state,
    make_rng,
    paper_space,
    register_controller,
)
from gdi.meta.coordinates import CoordinateTransforms
from gdi.meta.tile_coding import (
    block_index,
    block_to_tiles,
    num_blocks,
    num_tiles,
    tile_index,
    to_block_units,
    ucb_scores,
)

__all__ = ["MODES", "BanditEnsemble"]

#: The two sampling modes of the appendix's bandit definition.
MODES = ("argmax", "random")


def _check_choices(name: str, values, positive: bool = True, integer: bool = False) -> tuple:
    vals = tuple(values) if isinstance(values, Sequence) and not isinstance(values, str) else None
    if not vals:
        raise ValueError(f"{name} must be a non-empty sequence of choices, got {values!r}")
    for v in vals:
        ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        ok = ok and np.isfinite(v) and (v > 0 if positive else v >= 0)
        if integer:
            ok = ok and float(v) == int(v)
        if not ok:
            kind = "integers" if integer else "numbers"
            raise ValueError(f"{name} must hold finite {kind} > 0, got {v!r} in {vals}")
    return tuple(int(v) if integer else float(v) for v in vals)


@register_controller
class BanditEnsemble:
    """The paper's Bandits Controller (App. "Adaptive Controller Formalism").

    **One ensemble per λ coordinate.** The appendix defines a bandit on one interval [l, r]
    with one block accuracy, one tile width and one offset, and the hyperparameter table gives
    a separate search range and accuracy per coordinate of (1/τ₁, 1/τ₂, ε); it defines no
    multi-dimensional tile coding. So each coordinate has its own M bandits, sampled and
    updated with the same episode return G: a factored (additive) model of the return surface.
    A joint grid would have 50 · 50 · 10 = 25 000 blocks to estimate from a few thousand
    episodes. Each coordinate picks its own x uniformly among its own M × d candidates.

    **Per bandit, drawn at construction** (the table's "Uniform([...])" entries): the mode
    (``argmax`` or ``random``), the learning rate (``learning_rates``), the number of tile
    codings (``num_tilings``, the table's "Bandit Tiling Width" {2, 3, 4}: Eq. (bandit_update)
    indexes "the j-th tile of the k-th tile_coding", so a bandit holds several), and for each
    tile coding a tile width in blocks (``tile_widths``, "Accuracy of Tile coding" {2, 3, 4})
    and an offset (``offset_percent``, "Offset of Tile coding" [0, 60]) read as a *percentage
    of that tile coding's tile width*: tile codings of one bandit, and of different bandits,
    are then shifted against each other by up to 60 % of a tile, so that their tile edges
    fall in different places and the average of Eq. (bandit_eval) resolves single blocks.
    Read in the coordinate's units instead, an offset up to 60 would push every x of the ε
    range (width 1) and most of the 1/τ range (width 50) into tile 0.

    **Eq. (bandit_score).** N_i of a block is the mean count of the tiles of M_btt(block_i)
    (the same average as Eq. (bandit_eval) takes of w), and ΣN is the number of updates the
    bandit has received (each update counts one tile of each of its tile codings). ``ucb_c``
    defaults to 1.0: the value term is standardized to unit spread, so c = 1 weighs one
    standard deviation of estimated return against the classical UCB1 bonus; it is not given
    in the paper.

    **Returns.** The update uses the raw return g, as the appendix writes it; the weights
    start at 0, so they are linear in the returns seen, and the score standardizes V: scaling
    every return by s > 0 leaves every sample unchanged. Episode returns may be raw game scores
    of any scale.

    **Coordinates.** ``ranges`` and ``accuracies`` are in bandit coordinates x; ``transforms``
    maps x to λ per coordinate (``gdi.policy_space``: "identity", the default, searches 1/τ
    itself as the table reads; "log1p" is the appendix's x = log(1 + 1/τ)). ``sample`` returns
    λ and ``update`` takes λ. An x outside [l, r] in an update is clipped, as the appendix says.

    Ties (all blocks equal before the first update, for example) are broken uniformly at
    random, so the first samples are uniform over the range rather than piled on block 0.

    ``tilings`` fixes the tile codings instead of drawing them: for each of the M bandits a
    list of (width, offset) in blocks, the same for every coordinate (tests, reproductions).
    """

    kind = "bandit"

    def __init__(
        self,
        ranges: Sequence[Sequence[float]] | None = None,
        accuracies: Sequence[float] | None = None,
        index_names: Sequence[str] | None = None,
        transforms: Sequence[str] | None = None,
        num_bandits: int = 7,
        num_candidates: int = 3,
        ucb_c: float = 1.0,
        seed: int | np.random.Generator = 0,
        *,
        modes: Sequence[str] = MODES,
        learning_rates: Sequence[float] = (0.05, 0.1, 0.2),
        num_tilings: Sequence[int] = (2, 3, 4),
        tile_widths: Sequence[float] = (2, 3, 4),
        offset_percent: tuple[float, float] = (0.0, 60.0),
        tilings: Sequence[Sequence[tuple[float, float]]] | None = None,
    ):
        if ranges is None:  # the paper's search box, with its block sizes and names
            space = paper_space()
            ranges = space.search_box
            accuracies = space.search_accuracies if accuracies is None else accuracies
            index_names = space.index_names if index_names is None else index_names
        if accuracies is None:
            raise ValueError("accuracies (one block size per range) are needed with ranges")
        self._ranges = check_ranges(ranges)
        dim = self._ranges.shape[0]
        acc = np.asarray(accuracies, dtype=np.float64)
        if acc.shape != (dim,):
            raise ValueError(
                f"accuracies must have one entry per range ({dim}), got {accuracies!r}"
            )
        if not (np.isfinite(acc).all() and (acc > 0).all()):
            raise ValueError(f"accuracies must be finite and > 0, got {tuple(acc.tolist())}")
        self.index_names = check_index_names(index_names, dim)
        transforms = ("identity",) * dim if transforms is None else tuple(transforms)
        if len(transforms) != dim:
            raise ValueError(
                f"transforms must have one entry per range ({dim}), got {transforms!r}"
            )
        self._transforms = CoordinateTransforms(transforms, self._ranges)
        if not (isinstance(num_bandits, (int, np.integer)) and num_bandits >= 1):
            raise ValueError(f"num_bandits must be an integer >= 1, got {num_bandits!r}")
        self._nb = np.array(
            [num_blocks(lo, hi, a) for (lo, hi), a in zip(self._ranges, acc, strict=True)]
        )
        if not (
            isinstance(num_candidates, (int, np.integer)) and 1 <= num_candidates <= self._nb.min()
        ):
            raise ValueError(
                f"num_candidates must be an integer in [1, {self._nb.min()}] (candidates are "
                f"distinct blocks; the coarsest coordinate has {self._nb.min()}), got {num_candidates!r}"
            )
        if not (np.isfinite(ucb_c) and ucb_c >= 0):
            raise ValueError(f"ucb_c must be a finite number >= 0, got {ucb_c!r}")
        modes = (modes,) if isinstance(modes, str) else tuple(modes)
        bad = [m for m in modes if m not in MODES]
        if not modes or bad:
            raise ValueError(
                f"unknown bandit mode(s) {bad or modes!r}; allowed: {', '.join(MODES)}"
            )
        lrs = _check_choices("learning_rates", learning_rates)
        if max(lrs) > 1:
            raise ValueError(f"learning_rates must be in (0, 1], got {lrs}")
        tiling_counts = _check_choices("num_tilings", num_tilings, integer=True)
        widths = _check_choices("tile_widths", tile_widths)
        off = tuple(float(v) for v in offset_percent)
        if len(off) != 2 or not (0.0 <= off[0] <= off[1] <= 100.0):
            raise ValueError(
                f"offset_percent must be (low, high) with 0 <= low <= high <= 100 (percent of a "
                f"tile width), got {offset_percent!r}"
            )

        if tilings is not None:
            tilings = tuple(tuple((float(w), float(o)) for w, o in bandit) for bandit in tilings)
            if len(tilings) != num_bandits or not all(tilings):
                raise ValueError(
                    f"tilings must give at least one (width, offset) per bandit for all "
                    f"{num_bandits} bandits, got {tilings!r}"
                )
            if not all(w > 0 and o >= 0 for bandit in tilings for w, o in bandit):
                raise ValueError(
                    f"tile widths must be > 0 and offsets >= 0 (blocks), got {tilings!r}"
                )

        self._acc = acc
        self.num_bandits = int(num_bandits)
        self.num_candidates = int(num_candidates)
        self.ucb_c = float(ucb_c)
        self._config = {
            "ranges": tuple(map(tuple, self._ranges.tolist())),
            "accuracies": tuple(acc.tolist()),
            "index_names": self.index_names,
            "transforms": transforms,
            "num_bandits": self.num_bandits,
            "num_candidates": self.num_candidates,
            "ucb_c": self.ucb_c,
            "modes": modes,
            "learning_rates": lrs,
            "num_tilings": tiling_counts,
            "tile_widths": widths,
            "offset_percent": off,
            "tilings": tilings,
        }
        self._rng = make_rng(seed)

        # Per (coordinate, bandit): mode, learning rate, tile codings (width, offset in blocks).
        rng, m_count = self._rng, self.num_bandits
        k_max = max(len(t) for t in tilings) if tilings is not None else max(tiling_counts)
        self._is_random = np.zeros((dim, m_count), dtype=bool)
        self._lr = np.zeros((dim, m_count))
        self._width = np.ones((dim, m_count, k_max))
        self._offset = np.zeros((dim, m_count, k_max))
        self._valid = np.zeros((dim, m_count, k_max), dtype=bool)
        for d in range(dim):
            for m in range(m_count):
                self._is_random[d, m] = modes[rng.integers(len(modes))] == "random"
                self._lr[d, m] = lrs[rng.integers(len(lrs))]
                if tilings is not None:
                    k = len(tilings[m])
                    self._width[d, m, :k], self._offset[d, m, :k] = np.array(tilings[m]).T
                else:
                    k = tiling_counts[rng.integers(len(tiling_counts))]
                    w = np.array([widths[i] for i in rng.integers(len(widths), size=k)])
                    self._width[d, m, :k] = w
                    self._offset[d, m, :k] = rng.uniform(off[0], off[1], size=k) / 100.0 * w
                self._valid[d, m, :k] = True
        self._build_tiles()
        self._w = np.zeros((dim, m_count, self._n_cols))
        self._n = np.zeros((dim, m_count, self._n_cols), dtype=np.int64)
        self._updates = 0

    # -- structure --------------------------------------------------------------------------

    def _build_tiles(self) -> None:
        """Flatten every bandit's tiles into columns and precompute M_btt as gather indices.

        Columns 0..T−1 are tiles (tile coding 0 first), column T takes the writes of padded
        tile codings (never read) and column T+1 is always 0 (the padding of M_btt lists).
        """
        dim, m_count, k_max = self._valid.shape
        b_max = int(self._nb.max())
        ntiles = np.ones((dim, m_count, k_max), dtype=np.int64)
        start = np.zeros((dim, m_count, k_max), dtype=np.int64)
        incidences, total = {}, 0
        for d in range(dim):
            for m in range(m_count):
                codings = [
                    (self._width[d, m, k], self._offset[d, m, k])
                    for k in range(k_max)
                    if self._valid[d, m, k]
                ]
                sizes = [num_tiles(int(self._nb[d]), w, o) for w, o in codings]
                ntiles[d, m, : len(sizes)] = sizes
                start[d, m, : len(sizes)] = np.cumsum([0, *sizes[:-1]])
                incidences[d, m] = block_to_tiles(int(self._nb[d]), codings)
                total = max(total, sum(sizes))
        trash, zero = total, total + 1
        slots = max(int(inc.sum(axis=1).max()) for inc in incidences.values())
        btt = np.full((dim, m_count, b_max, slots), zero, dtype=np.int64)
        count = np.ones((dim, m_count, b_max))
        for (d, m), inc in incidences.items():
            for i in range(inc.shape[0]):
                cols = np.flatnonzero(inc[i])
                btt[d, m, i, : cols.size] = cols
                count[d, m, i] = cols.size
        self._ntiles, self._start, self._trash, self._n_cols = ntiles, start, trash, total + 2
        self._incidences = incidences
        base = (np.arange(dim * m_count) * self._n_cols).reshape(dim, m_count)
        self._base = base
        self._btt_flat = btt + base[:, :, None, None]
        self._btt_count = count
        self._block_mask = np.arange(b_max)[None, :] < self._nb[:, None]
        self._noise_scale = np.where(self._is_random, 1.0, 1e-9)  # Gumbel weight per bandit

    # -- the protocol -----------------------------------------------------------------------

    @property
    def dim(self) -> int:
        return self._ranges.shape[0]

    @property
    def ranges(self) -> np.ndarray:
        """Search ranges in bandit coordinates x, ``[dim, 2]``."""
        return self._ranges.copy()

    @property
    def lambda_ranges(self) -> np.ndarray:
        """Search ranges mapped to λ-space, ``[dim, 2]`` (for plots)."""
        return np.stack(
            [
                self._transforms.to_lambda(self._ranges[:, 0]),
                self._transforms.to_lambda(self._ranges[:, 1]),
            ],
            axis=1,
        )

    def sample(self) -> np.ndarray:
        """Draw λ: scores → d blocks per bandit → M × d candidates → one uniformly → λ."""
        return self.sample_many(1)[0]

    def sample_many(self, n: int) -> np.ndarray:
        """``n`` independent draws of λ, ``[n, dim]``, from the current state.

        Only the bandit that owns a draw's candidate needs its d blocks: picking the candidate
        slot (bandit m, rank s) uniformly first and then drawing bandit m's d blocks gives the
        same distribution as drawing all M × d and picking one. The scores depend only on the
        state: for fewer draws than bandits only the owners' blocks are scored (half the cost
        of one draw at M = 7), otherwise every bandit's, once for all draws; the draws are the
        same either way.
        """
        m_count, d = self.num_bandits, self.num_candidates
        u = self._rng.random((2, check_count(n), self.dim))
        pick = (u[0] * (m_count * d)).astype(np.int64)  # uniform slot: bandit pick // d
        coords, owner = np.arange(self.dim), pick // d
        if n < m_count:  # an episode end draws one λ: score just the bandits that own the draws
            score = self._scores((coords, owner))  # [n, dim, blocks]
        else:
            score = self._scores((slice(None),))[coords, owner]
        blocks = self._top_blocks(score, self._noise_scale[coords, owner])  # [n, dim, d]
        block = np.take_along_axis(blocks, (pick % d)[..., None], axis=-1)[..., 0]
        return self._transforms.to_lambda(self._uniform_in_block(block, u[1]))

    def update(self, lam: np.ndarray, episode_return: float) -> None:
        """Eq. (bandit_update) for every bandit of every coordinate, with x = f⁻¹(λ)."""
        lam = check_lambda(lam, self.dim, self.index_names)
        g = check_return(episode_return)
        x = self._transforms.to_x(lam)
        lo, hi = self._ranges[:, 0], self._ranges[:, 1]
        z = to_block_units(x, lo, hi, self._acc)  # [dim]
        block = block_index(x, lo, hi, self._acc)  # [dim]
        j = tile_index(z[:, None, None], self._width, self._offset, self._ntiles)  # [dim, M, K]
        cols = np.where(self._valid, self._start + j, self._trash) + self._base[:, :, None]
        # V_i at x's block, before any weight moves (one target for all tile codings).
        dims = np.arange(self.dim)
        v_at = (
            self._w.reshape(-1)[self._btt_flat[dims, :, block]].sum(-1)
            / self._btt_count[dims, :, block]
        )
        delta = self._lr * (g - v_at)  # [dim, M]
        # Within one bandit the columns are distinct (one tile per tile coding), except the
        # trash column of padded tile codings, which nothing reads.
        w, n = self._w.reshape(-1), self._n.reshape(-1)
        w[cols] += delta[:, :, None]
        n[cols] += 1
        self._updates += 1

    def state_dict(self) -> dict:
        return {
            "controller": self.kind,
            "config": dict(self._config),
            "is_random": self._is_random.copy(),
            "learning_rate": self._lr.copy(),
            "tile_width": self._width.copy(),
            "tile_offset": self._offset.copy(),
            "tile_valid": self._valid.copy(),
            "weights": self._w.copy(),
            "counts": self._n.copy(),
            "updates": self._updates,
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict) -> None:
        check_state(state, self.kind, self._config)
        self._is_random = np.array(state["is_random"], dtype=bool)
        self._lr = np.array(state["learning_rate"], dtype=np.float64)
        self._width = np.array(state["tile_width"], dtype=np.float64)
        self._offset = np.array(state["tile_offset"], dtype=np.float64)
        self._valid = np.array(state["tile_valid"], dtype=bool)
        self._build_tiles()
        weights, counts = np.asarray(state["weights"]), np.asarray(state["counts"])
        expected = (self.dim, self.num_bandits, self._n_cols)
        if weights.shape != expected or counts.shape != expected:
            raise ValueError(
                f"state weights/counts must have shape {expected}, got {weights.shape}"
            )
        self._w = weights.astype(np.float64, copy=True)
        self._n = counts.astype(np.int64, copy=True)
        self._updates = int(state["updates"])
        self._rng.bit_generator.state = state["rng"]

    # -- inspection (tests, plots, logs) ------------------------------------------------------

    @property
    def num_updates(self) -> int:
        return self._updates

    @property
    def modes(self) -> np.ndarray:
        """Mode of each bandit, ``[dim, M]`` strings."""
        return np.where(self._is_random, "random", "argmax")

    def tile_codings(self, coordinate: int, bandit: int) -> list[tuple[float, float]]:
        """(tile width, offset) in blocks of each tile coding of one bandit."""
        valid = self._valid[coordinate, bandit]
        return list(
            zip(
                self._width[coordinate, bandit, valid].tolist(),
                self._offset[coordinate, bandit, valid].tolist(),
                strict=True,
            )
        )

    def incidence(self, coordinate: int, bandit: int) -> np.ndarray:
        """M_btt of one bandit as ``[n_blocks, n_tiles]`` (``tile_coding.block_to_tiles``)."""
        return self._incidences[coordinate, bandit].copy()

    def tile_weights(self, coordinate: int, bandit: int) -> np.ndarray:
        """w of one bandit, ``[n_tiles]``, tile codings one after another."""
        return self._w[coordinate, bandit, : self._incidences[coordinate, bandit].shape[1]].copy()

    def tile_counts(self, coordinate: int, bandit: int) -> np.ndarray:
        """N of one bandit, ``[n_tiles]``."""
        return self._n[coordinate, bandit, : self._incidences[coordinate, bandit].shape[1]].copy()

    def _rows(self, bandits: np.ndarray | None) -> tuple:
        """Index of every bandit (``bandits`` None) or of one bandit per coordinate."""
        if bandits is None:
            return (slice(None),)
        bandits = np.asarray(bandits)
        if bandits.shape != (self.dim,) or not np.isin(bandits, np.arange(self.num_bandits)).all():
            raise ValueError(
                f"bandits must be {self.dim} indices in [0, {self.num_bandits}), got {bandits}"
            )
        return (np.arange(self.dim), bandits)

    def block_values(self, bandits: np.ndarray | None = None) -> np.ndarray:
        """Eq. (bandit_eval) for every block: V ``[dim, M, n_blocks_max]`` (padding 0).

        With ``bandits`` (one index per coordinate): ``[dim, n_blocks_max]`` of those bandits.
        """
        rows = self._rows(bandits)
        return self._w.reshape(-1)[self._btt_flat[rows]].sum(-1) / self._btt_count[rows]

    def block_counts(self, bandits: np.ndarray | None = None) -> np.ndarray:
        """N_i of every block (mean count over M_btt(block_i)); shapes as ``block_values``."""
        rows = self._rows(bandits)
        return self._n.reshape(-1)[self._btt_flat[rows]].sum(-1) / self._btt_count[rows]

    def scores(self, bandits: np.ndarray | None = None) -> np.ndarray:
        """Eq. (bandit_score) for every block (padding −inf); shapes as ``block_values``."""
        return self._scores(self._rows(bandits))

    def candidate_blocks(self, bandits: np.ndarray | None = None) -> np.ndarray:
        """The d blocks each bandit proposes, ``[dim, M, d]`` (``[dim, d]`` with ``bandits``).

        argmax mode: the d highest scores; random mode: d draws without replacement from
        softmax(score), as the d largest of score + Gumbel noise. In argmax mode the same noise
        scaled by 1e-9 breaks exact ties at random. Consumes randomness; the order of the d
        blocks is unspecified.
        """
        return self._candidates(self._rows(bandits))

    def _scores(self, rows: tuple) -> np.ndarray:
        index = self._btt_flat[rows]
        count = self._btt_count[rows]
        values = self._w.reshape(-1)[index].sum(-1) / count
        counts = self._n.reshape(-1)[index].sum(-1) / count
        mask = self._block_mask if len(rows) == 2 else self._block_mask[:, None, :]
        return ucb_scores(values, counts, float(self._updates), self.ucb_c, mask=mask)

    def _candidates(self, rows: tuple) -> np.ndarray:
        return self._top_blocks(self._scores(rows), self._noise_scale[rows])

    def _top_blocks(self, score: np.ndarray, noise_scale: np.ndarray) -> np.ndarray:
        """The d largest of score + Gumbel noise · ``noise_scale`` (one scale per bandit)."""
        gumbel = self._rng.gumbel(size=score.shape)
        key = score + gumbel * noise_scale[..., None]
        return np.argpartition(-key, self.num_candidates - 1, axis=-1)[..., : self.num_candidates]

    def estimated_returns(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """What E believes of the return surface, per coordinate: (block edges in λ
        ``[n_blocks + 1]``, ensemble-mean V of Eq. (bandit_eval) per block ``[n_blocks]``).

        The mean over the M bandits is the value ``greedy`` maximizes; the sampling itself
        goes through each bandit's UCB score (Eq. (bandit_score)), not through this mean.
        """
        means = self.block_values().mean(axis=1)  # [dim, n_blocks_max]
        out = []
        for i in range(self.dim):
            n = int(self._nb[i])
            lo, hi = self._ranges[i]
            x_edges = np.minimum(lo + np.arange(n + 1) * self._acc[i], hi)
            out.append((self._transforms.coordinate_to_lambda(x_edges, i), means[i, :n].copy()))
        return out

    def greedy(self) -> np.ndarray:
        """λ at the centre of the block with the highest ensemble-mean V per coordinate.

        Not part of the sampling: a summary of where the bandits think the best λ is (the
        analogue of Agent57's greedy evaluator arm), for logs, plots and
        ``gdi evaluate --policy greedy``.
        """
        v = np.where(self._block_mask, self.block_values().mean(axis=1), -np.inf)
        best = v.argmax(axis=1)
        return self._transforms.to_lambda(self._uniform_in_block(best, np.full(self.dim, 0.5)))

    def _uniform_in_block(self, block: np.ndarray, u: np.ndarray) -> np.ndarray:
        """x = l + (i + u·width_i)·acc; the last block is shorter when acc does not divide r − l."""
        lo, hi = self._ranges[:, 0], self._ranges[:, 1]
        start = lo + block * self._acc
        return np.minimum(start + u * np.minimum(self._acc, hi - start), hi)
