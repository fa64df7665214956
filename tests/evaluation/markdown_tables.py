"""Read the Markdown tables the tests compare with data: the rows of the first table after a
heading (or any line starting with a given text)."""

from __future__ import annotations


def table_after(text: str, marker: str) -> list[list[str]]:
    """Body rows of the first Markdown table after the line that starts with ``marker``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(marker))
    rows: list[list[str]] = []
    in_table = False
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            in_table = True
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif in_table:
            break
    if len(rows) < 2:
        raise ValueError(f"no table after {marker!r}")
    return rows[2:]  # drop the header and the alignment row
