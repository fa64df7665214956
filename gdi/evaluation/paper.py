"""The paper's "Full Performance Comparison" table, recomputed from its per-game scores.

App. "Experimental Results", Tab. "Full performance comparison on Atari" summarizes each
algorithm by training scale, playtime, HWRB and mean / median HNS, HWRNS and SABER (in %).
:func:`full_comparison` recomputes every entry from the shipped per-game raw scores with
:mod:`gdi.evaluation.metrics`; :func:`summary_mismatches` lists the entries that differ from
the printed ``\\def`` values at the printed precision (each one is explained in
docs/paper-errata.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from gdi.evaluation import markdown, metrics
from gdi.evaluation.baselines import baselines
from gdi.evaluation.paper_scores import Algorithm, paper_algorithms, paper_scores, paper_summary

STATISTICS = (
    "training_frames",
    "playtime_days",
    "hwrb",
    "mean_hns",
    "median_hns",
    "mean_hwrns",
    "median_hwrns",
    "mean_saber",
    "median_saber",
)
HEADERS = {
    "training_frames": "Training Scale",
    "playtime_days": "Playtime (day)",
    "hwrb": "HWRB",
    "mean_hns": "Mean HNS (%)",
    "median_hns": "Median HNS (%)",
    "mean_hwrns": "Mean HWRNS (%)",
    "median_hwrns": "Median HWRNS (%)",
    "mean_saber": "Mean SABER (%)",
    "median_saber": "Median SABER (%)",
}


class SummaryRow(NamedTuple):
    """One algorithm's row of the comparison table; normalized statistics in percent."""

    algorithm: Algorithm
    values: dict[str, float]


class Mismatch(NamedTuple):
    """A recomputed summary entry that differs from the paper's at the printed precision."""

    algorithm: str
    statistic: str
    printed: str
    recomputed: str


def summarize(raw, games: Sequence[str], training_frames: float) -> dict[str, float]:
    """The table's statistics for one score vector over ``games`` (NaN = not reported)."""
    base = baselines(games)
    raw = np.asarray(raw, dtype=float)
    hns = metrics.hns(raw, base.random, base.human_average)
    hwrns = metrics.hwrns(raw, base.random, base.human_world_record)
    saber = metrics.saber(raw, base.random, base.human_world_record)
    return {
        "training_frames": float(training_frames),
        "playtime_days": float(metrics.playtime_days(training_frames)),
        "hwrb": float(metrics.hwrb(hwrns)),
        "mean_hns": 100 * float(metrics.mean_over_games(hns)),
        "median_hns": 100 * float(metrics.median_over_games(hns)),
        "mean_hwrns": 100 * float(metrics.mean_over_games(hwrns)),
        "median_hwrns": 100 * float(metrics.median_over_games(hwrns)),
        "mean_saber": 100 * float(metrics.mean_over_games(saber)),
        "median_saber": 100 * float(metrics.median_over_games(saber)),
    }


def full_comparison(games: Sequence[str] | None = None) -> list[SummaryRow]:
    """Every algorithm's row, recomputed over ``games`` (default: all 57, as the paper)."""
    scores = paper_scores(games=games)
    return [
        SummaryRow(algo, summarize(scores.raw[i], scores.games, algo.training_frames))
        for i, algo in enumerate(paper_algorithms())
    ]


def _decimals(printed: str) -> int:
    return len(printed.split(".")[1]) if "." in printed else 0


def as_printed(statistic: str, value: float, printed: str) -> str:
    """``value`` written as the paper writes ``printed``: same decimals, rounded, except the
    playtime, which the paper truncates (200M frames = 38.58 days, printed 38.5)."""
    if statistic == "training_frames":
        return f"{value:.2E}"
    decimals = _decimals(printed)
    if statistic == "playtime_days":
        value = math.floor(value * 10**decimals) / 10**decimals
    return f"{value:.{decimals}f}"


def summary_mismatches() -> list[Mismatch]:
    """Entries of the recomputed table that differ from the printed ones."""
    printed = paper_summary()
    out = []
    for row in full_comparison():
        for statistic in STATISTICS:
            text = printed[(row.algorithm.id, statistic)]
            mine = as_printed(statistic, row.values[statistic], text)
            if (float(mine) != float(text)) if statistic == "training_frames" else mine != text:
                out.append(Mismatch(row.algorithm.id, statistic, text, mine))
    return out


def format_full_comparison() -> str:
    """The comparison table as Markdown, values at the paper's precision (playtime to two
    decimals), followed by the entries that differ from the paper."""
    printed = paper_summary()
    rows = []
    for row in full_comparison():
        cells = [row.algorithm.label]
        for statistic in STATISTICS:
            value = row.values[statistic]
            if statistic == "playtime_days":
                cells.append(markdown.fmt(value, 2))
            else:
                cells.append(as_printed(statistic, value, printed[(row.algorithm.id, statistic)]))
        rows.append(cells)
    text = "Full performance comparison on Atari (57 games), recomputed from the paper's per-game scores\n"
    text += '(App. "Full Performance Comparison"; training scale in frames, playtime in days).\n\n'
    text += markdown.table(["Algorithm", *(HEADERS[s] for s in STATISTICS)], rows)
    mismatches = summary_mismatches()
    if mismatches:
        text += "\nEntries that differ from the printed table (see docs/paper-errata.md):\n\n"
        text += markdown.table(
            ["Algorithm", "Statistic", "Printed", "Recomputed"],
            [[m.algorithm, HEADERS[m.statistic], m.printed, m.recomputed] for m in mismatches],
            align_left=2,
        )
    return text
