"""Markdown tables and number formatting shared by the paper table and the run reports."""

from __future__ import annotations

import math
from collections.abc import Sequence


def fmt(value: float, decimals: int = 2) -> str:
    """A number as the reports print it: fixed decimals, "N/A" for NaN (the paper's N/A)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "N/A"
    return f"{value:.{decimals}f}"


def fmt_interval(point: float, low: float, high: float, decimals: int = 2) -> str:
    """``point [low, high]``."""
    return f"{fmt(point, decimals)} [{fmt(low, decimals)}, {fmt(high, decimals)}]"


def table(header: Sequence[str], rows: Sequence[Sequence[object]], align_left: int = 1) -> str:
    """A GitHub Markdown table; the first ``align_left`` columns are left-aligned, the rest
    (numbers) right-aligned."""
    lines = ["| " + " | ".join(str(h) for h in header) + " |"]
    lines.append(
        "| " + " | ".join(":---" if i < align_left else "---:" for i in range(len(header))) + " |"
    )
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {row!r} has {len(row)} cells for {len(header)} columns")
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"
