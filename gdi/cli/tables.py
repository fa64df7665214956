"""Tables a ``gdi`` command prints: rich tables that keep every word whole at the terminal's
width, and paths shown relative to where the command runs."""

from __future__ import annotations

import os
from pathlib import Path


def keeps_words(console, renderable, texts: list[str]) -> bool:
    """Whether ``renderable``, printed at ``console``'s width, shows every word of ``texts``
    whole on one line (rich breaks a word that is wider than its column)."""
    import io

    from rich.console import Console

    plain = Console(file=io.StringIO(), width=console.width, color_system=None)
    plain.print(renderable)
    lines = plain.file.getvalue().splitlines()
    return all(any(word in line for line in lines) for text in texts for word in text.split())


def fitted_table(console, rows: list[dict[str, str]], **title_and_caption: str):
    """``rows`` (one dict per row, the same keys) as a rich table that keeps every word whole
    at ``console``'s width: a column per key where that fits, else a block per row (its first
    value, then each other key and its value on a line of their own), which fits 80 columns.
    The values are shown as they are, never read as rich's markup (``pip install
    'gdi-rl[wandb]'`` keeps its ``[wandb]``)."""
    from rich.table import Table
    from rich.text import Text

    texts = [text for row in rows for text in row.values()]
    wide = Table(**title_and_caption, caption_justify="left")
    for column in rows[0]:
        wide.add_column(column, overflow="fold")
    for row in rows:
        wide.add_row(*map(Text, row.values()))
    if keeps_words(console, wide, texts):
        return wide
    from rich.table import Column

    first, *others = rows[0]
    longest = max(len(word) for key in others for word in key.split())
    table = Table(first, Column("", max_width=max(longest, 16)), "", **title_and_caption,
                  caption_justify="left")
    for row in rows:
        for i, key in enumerate(others):
            table.add_row(Text(row[first] if i == 0 else ""), key, Text(row[key]),
                          end_section=i == len(others) - 1)
    return table


def shown_path(path: Path) -> str:
    """``path`` relative to the current folder when it lies inside it, else as it is."""
    relative = os.path.relpath(os.path.abspath(path))
    return str(path) if relative.startswith("..") else relative
