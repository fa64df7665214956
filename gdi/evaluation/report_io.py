"""The files a report writes: CSV tables (every number a table or figure shows) and the
running list of written paths. Every file is written atomically (figures through
``gdi.atomic.save_figure``), and a folder that cannot take them is said before any work."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

from gdi.atomic import probe_writable, write_text


class ReportFiles:
    """Writes a report's files into one folder and remembers them in order."""

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        probe_writable(self.out_dir, "the report")  # made, with room, before any figure
        self.paths: list[Path] = []

    def path(self, name: str) -> Path:
        """Path of a file in the report folder, recorded as written."""
        path = self.out_dir / name
        if path not in self.paths:
            self.paths.append(path)
        return path

    def csv(self, name: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Path:
        """Write a CSV; floats at full precision, NaN as an empty cell."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in row])
        return self.text(name, buffer.getvalue())

    def text(self, name: str, text: str) -> Path:
        """Write a text file (UTF-8) atomically; a one-line StorageError when it cannot be."""
        return write_text(self.path(name), text)
