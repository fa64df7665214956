"""Random, human-average and human-world-record scores of the 57 games, and normalization by
game name.

The values are the paper's (App. "Atari Games Table of Scores Based on Human Average Records"
and "... Human World Records": random and human average from Agent57, world records from
DreamerV2 and Toromanoff et al.), shipped in ``data/games.csv`` by
``scripts/extract_paper_tables.py``; docs/paper-errata.md lists where the paper's copies of
them disagree with its own normalized cells.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import NamedTuple

import numpy as np

from gdi.evaluation import metrics
from gdi.evaluation.games import atari_games, canonical_game

NORMALIZATIONS = ("hns", "chns", "hwrns", "saber")


class Baselines(NamedTuple):
    """Per-game reference scores, aligned with ``games``."""

    games: tuple[str, ...]
    random: np.ndarray
    human_average: np.ndarray
    human_world_record: np.ndarray


@cache
def _rows() -> dict[str, tuple[float, float, float]]:
    with resources.files(__package__).joinpath("data/games.csv").open(encoding="utf-8") as f:
        return {
            row["game"]: (
                float(row["random"]),
                float(row["human_average"]),
                float(row["human_world_record"]),
            )
            for row in csv.DictReader(f)
        }


def baselines(games: Sequence[str] | None = None) -> Baselines:
    """Baselines for ``games`` (names or ``ale:`` specs; default: all 57 in paper order)."""
    names = atari_games() if games is None else tuple(canonical_game(g) for g in games)
    rows = _rows()
    values = np.array([rows[g] for g in names], dtype=float).reshape(len(names), 3)
    return Baselines(names, values[:, 0].copy(), values[:, 1].copy(), values[:, 2].copy())


def normalize(scores, games: Sequence[str], metric: str) -> np.ndarray:
    """Raw scores (last axis = ``games``) -> ``metric`` in {"hns", "chns", "hwrns", "saber"}."""
    if metric not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {metric!r}; expected one of {NORMALIZATIONS}")
    base = baselines(games)
    reference = base.human_average if metric in ("hns", "chns") else base.human_world_record
    return getattr(metrics, metric)(scores, base.random, reference)
