"""Frames as arrays: MinAtar's channel planes in the colours of MinAtar's own GUI, nearest
upscaling, and a caption bar. Pure functions of their inputs (the palette reads seaborn, as
MinAtar does)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np


@functools.cache
def minatar_palette(n_channels: int) -> np.ndarray:
    """``uint8 [n_channels + 1, 3]``: black for an empty cell, then seaborn's "cubehelix"
    palette of ``n_channels`` colours, one per channel: the palette ``minatar/gui.py`` and
    ``minatar/environment.py`` (``display_state``) draw with."""
    import seaborn

    colours = [(0.0, 0.0, 0.0), *seaborn.color_palette("cubehelix", n_channels)]
    return np.round(np.asarray(colours) * 255).astype(np.uint8)


def minatar_rgb(planes: np.ndarray) -> np.ndarray:
    """MinAtar channel planes ``[C, H, W]`` (gdi's channels-first observation) → ``uint8
    [H, W, 3]``. Like MinAtar's GUI, a cell shows the colour of its highest set channel
    (``amax(state * (arange(C) + 1))``) and black where no channel is set."""
    planes = np.asarray(planes)
    channels = planes.shape[0]
    index = np.max((planes != 0) * np.arange(1, channels + 1)[:, None, None], axis=0)
    return minatar_palette(channels)[index]


def upscale(frame: np.ndarray, factor: int) -> np.ndarray:
    """Each pixel of ``[H, W, 3]`` as a ``factor`` × ``factor`` block (nearest neighbour: no
    blur on MinAtar's 10 × 10 cells or Atari pixels)."""
    if factor == 1:
        return frame
    return np.repeat(np.repeat(frame, factor, axis=0), factor, axis=1)


def scale_for(height: int, width: int, target: int = 320) -> int:
    """The integer factor that brings the shorter side closest to ``target`` pixels (at
    least 1)."""
    return max(1, round(target / min(height, width)))


@functools.cache
def _font(size: int):
    """DejaVu Sans from matplotlib's data (it has λ, τ and subscripts); Pillow's default
    otherwise."""
    from pathlib import Path

    import matplotlib
    from PIL import ImageFont

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    try:
        return ImageFont.truetype(str(path), size)
    except OSError:
        return ImageFont.load_default()


def caption(frame: np.ndarray, lines: Sequence[str], font_size: int = 14) -> np.ndarray:
    """``frame`` below a black bar with ``lines`` of white text; the result's height and width
    are even (what H.264's yuv420p needs)."""
    from PIL import Image, ImageDraw

    line_height = font_size + 4
    bar = line_height * len(lines) + 6
    height, width = frame.shape[:2]
    out_h, out_w = height + bar + (height + bar) % 2, width + width % 2
    image = Image.new("RGB", (out_w, out_h))
    image.paste(Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8)), (0, bar))
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((4, 3 + i * line_height), line, fill=(255, 255, 255), font=_font(font_size))
    return np.asarray(image)


def format_lambda(lam: Sequence[float], names: Sequence[str]) -> str:
    """``λ: 1/τ₁=0.52  1/τ₂=3.1  ε=0.014`` (3 significant digits)."""
    return "λ: " + "  ".join(f"{n}={float(v):.3g}" for n, v in zip(names, lam, strict=True))
