"""Blocks, tiles and Eqs. (bandit_eval), (bandit_score) on cases worked by hand.

Paper: App. "Adaptive Controller Formalism". Units are explained in gdi/meta/tile_coding.py:
blocks of width acc; tile widths (ta) and offsets (to) in blocks.
"""

import math

import numpy as np
import pytest

from gdi.meta.tile_coding import (
    bandit_values,
    block_index,
    block_to_tiles,
    num_blocks,
    num_tiles,
    tile_index,
    tile_intervals,
    to_block_units,
    ucb_scores,
)
from tests.tolerance import assert_close


def test_num_blocks_matches_the_table():
    assert num_blocks(0.0, 50.0, 1.0) == 50  # 1/τ: [0, 50] at accuracy 1.0
    assert num_blocks(0.0, 1.0, 0.1) == 10  # ε: [0, 1] at 0.1 (1 / 0.1 = 10.000000000000002)
    assert num_blocks(0.0, 50.0, 3.0) == 17  # ⌈50 / 3⌉: the last block [48, 50] is shorter


def test_block_index_by_hand():
    # ⌊(min{max{x, l}, r} − l) / acc⌋ on [0, 1] with acc = 0.1
    x = np.array([-0.5, 0.0, 0.05, 0.3, 0.99, 1.0, 7.0])
    #   clipped:  0.0  0.0  0.05  0.3  0.99  1.0  1.0
    #   /0.1:     0    0    0.5   3    9.9   10   10  -> floor, r in the last block (9)
    np.testing.assert_array_equal(block_index(x, 0.0, 1.0, 0.1), [0, 0, 0, 3, 9, 9, 9])
    # a shifted range: [10, 60] at 1.0; x = 12.5 -> (12.5 − 10) / 1 = 2.5 -> block 2
    assert block_index(12.5, 10.0, 60.0, 1.0) == 2


def test_num_tiles_and_intervals_by_hand():
    # 6 blocks, ta = 2, to = 0: tiles [0,2) [2,4) [4,6]
    assert num_tiles(6, 2, 0.0) == 3
    lo, hi = tile_intervals(6, 2, 0.0)
    np.testing.assert_array_equal(lo, [0, 2, 4])
    np.testing.assert_array_equal(hi, [2, 4, 6])
    # 6 blocks, ta = 3, to = 1.5 (50 % of the tile): ⌈(6 − 1.5) / 3⌉ = ⌈1.5⌉ = 2 tiles;
    # tile 0 reaches down to 0 (max{x − to, l}): [0, 4.5), then [4.5, 6]
    assert num_tiles(6, 3, 1.5) == 2
    lo, hi = tile_intervals(6, 3, 1.5)
    np.testing.assert_array_equal(lo, [0, 4.5])
    np.testing.assert_array_equal(hi, [4.5, 6])
    # 50 blocks, ta = 3, to = 0: ⌈50 / 3⌉ = 17 (the paper's ⌊50 / 3⌋ = 16 misses x ∈ [48, 50])
    assert num_tiles(50, 3, 0.0) == 17
    assert tile_index(49.0, 3, 0.0, 17) == 16


def test_tile_index_by_hand():
    # j = ⌊max{z − to, 0} / ta⌋ with ta = 3, to = 1.5, 2 tiles over 6 blocks
    z = np.array([0.0, 1.0, 4.4, 4.5, 6.0])
    #  z − to:   −1.5 −0.5 2.9  3.0  4.5 -> max 0: 0 0 2.9 3.0 4.5 -> /3 floor: 0 0 0 1 1
    np.testing.assert_array_equal(tile_index(z, 3, 1.5, 2), [0, 0, 0, 1, 1])
    # x in the coordinate's units: ε = 0.47 on [0, 1] at acc 0.1 is z = 4.7 blocks
    assert_close(to_block_units(0.47, 0.0, 1.0, 0.1), 4.7)
    assert tile_index(to_block_units(0.47, 0.0, 1.0, 0.1), 2, 0.0, 5) == 2  # ⌊4.7 / 2⌋


def test_block_to_tile_maps_by_hand():
    # Tile codings A (ta = 2, to = 0): columns 0, 1, 2 = [0,2) [2,4) [4,6]
    #              B (ta = 3, to = 1.5): columns 3, 4 = [0,4.5) [4.5,6]
    inc = block_to_tiles(6, [(2, 0.0), (3, 1.5)])
    m_btt = [np.flatnonzero(row).tolist() for row in inc]
    assert m_btt == [
        [0, 3],  # block 0 = [0,1): A0, B0
        [0, 3],  # block 1
        [1, 3],  # block 2 = [2,3): A1, B0
        [1, 3],  # block 3
        [2, 3, 4],  # block 4 = [4,5) straddles B's edge at 4.5: A2, B0 and B1
        [2, 4],  # block 5 = [5,6]: A2, B1
    ]
    m_ttb = [np.flatnonzero(col).tolist() for col in inc.T]
    assert m_ttb == [[0, 1], [2, 3], [4, 5], [0, 1, 2, 3, 4], [4, 5]]


def test_bandit_eval_by_hand():
    inc = block_to_tiles(6, [(2, 0.0), (3, 1.5)])
    w = np.array([-0.25, 0.0, 4 / 3, 0.75, 1 / 3])
    expected = [
        (-0.25 + 0.75) / 2,  # block 0: w0, w3
        (-0.25 + 0.75) / 2,
        (0.0 + 0.75) / 2,  # block 2: w1, w3
        (0.0 + 0.75) / 2,
        (4 / 3 + 0.75 + 1 / 3) / 3,  # block 4: w2, w3, w4 -> len(M_btt) = 3
        (4 / 3 + 1 / 3) / 2,  # block 5: w2, w4
    ]
    assert_close(bandit_values(w, inc), expected)
    # batched over a leading axis, and a block without tiles (padding) is 0
    padded = np.concatenate([inc, np.zeros((1, 5), bool)])
    both = bandit_values(np.stack([w, 2 * w]), np.stack([padded, padded]))
    assert_close(both[1, :6], 2 * np.array(expected))
    assert both[0, 6] == 0.0  # exact: an empty sum


def test_ucb_score_by_hand():
    values = np.array([1.0, 2.0, 3.0])
    counts = np.array([0.0, 1.0, 3.0])
    # μ = 2, σ = sqrt(((−1)² + 0² + 1²) / 3) = sqrt(2/3); ΣN = 4, c = 2
    sigma = math.sqrt(2 / 3)
    expected = [
        -1 / sigma + 2 * math.sqrt(math.log(5) / 1),
        0 / sigma + 2 * math.sqrt(math.log(5) / 2),
        1 / sigma + 2 * math.sqrt(math.log(5) / 4),
    ]
    assert_close(ucb_scores(values, counts, 4, 2.0), expected)


def test_ucb_score_equal_values_and_mask():
    # All V equal (before any update): the standardized term is 0, only the bonus remains;
    # with ΣN = 0 the bonus is c·sqrt(log 1) = 0 too.
    np.testing.assert_array_equal(ucb_scores(np.zeros(4), np.zeros(4), 0, 1.0), np.zeros(4))
    # Masked blocks (padding) score −inf and do not enter μ and σ.
    values = np.array([1.0, 3.0, 1000.0])
    score = ucb_scores(values, np.zeros(3), 0, 1.0, mask=np.array([True, True, False]))
    assert_close(score[:2], [-1.0, 1.0])  # μ = 2, σ = 1
    assert score[2] == -np.inf


@pytest.mark.parametrize(
    "call",
    [
        lambda: num_blocks(1.0, 1.0, 0.1),  # empty range
        lambda: num_blocks(2.0, 1.0, 0.1),  # l > r
        lambda: num_blocks(0.0, 1.0, 0.0),  # accuracy 0
        lambda: num_blocks(0.0, np.inf, 1.0),
        lambda: num_tiles(10, 0, 0.0),
        lambda: num_tiles(10, 2, -1.0),
        lambda: block_to_tiles(10, []),
        lambda: bandit_values(np.zeros(3), np.zeros((2, 4), bool)),
        lambda: ucb_scores(np.zeros(3), np.zeros(4), 1, 1.0),
    ],
)
def test_bad_arguments(call):
    with pytest.raises(ValueError):
        call()
