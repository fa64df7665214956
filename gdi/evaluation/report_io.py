"""The files a report writes: CSV tables (every number a table or figure shows) and the
running list of written paths."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path


class ReportFiles:
    """Writes a report's files into one folder and remembers them in order."""

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.paths: list[Path] = []

    def path(self, name: str) -> Path:
        """Path of a file in the report folder, recorded as written."""
        path = self.out_dir / name
        if path not in self.paths:
            self.paths.append(path)
        return path

    def csv(self, name: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
        """Write a CSV; floats at full precision, NaN as an empty cell."""
        path = self.path(name)
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(header)
            for row in rows:
                writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in row])
        return path
