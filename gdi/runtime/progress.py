"""What the user watches while a run trains: a rich progress bar on a terminal (frames,
frames/s, ETA, recent mean return, policy lag), or one plain line per metrics row when the
output is a file or a pipe (``nohup gdi train ... > log``)."""

from __future__ import annotations

import sys
import time

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class TrainingProgress:
    def __init__(self, total_frames: int, start_frames: int, title: str) -> None:
        self.total = total_frames
        self.interactive = sys.stderr.isatty()
        self.console = Console(stderr=True)
        self._start_time = time.perf_counter()
        self._start_frames = start_frames
        self._last_line = 0.0
        self._progress = None
        if self.interactive:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("frames"),
                TextColumn("{task.fields[fps]:>7.0f} f/s"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("return {task.fields[ret]}"),
                TextColumn("lag {task.fields[lag]:.1f}"),
                console=self.console,
                refresh_per_second=4,
            )
            self._task = self._progress.add_task(
                title, total=total_frames, completed=start_frames, fps=0.0, ret="-", lag=0.0
            )
            self._progress.start()
        else:
            self.console.print(f"{title}: training to {total_frames:,} frames")

    def update(self, frames: int, recent_returns: list[float], lag: float) -> None:
        elapsed = max(time.perf_counter() - self._start_time, 1e-9)
        fps = (frames - self._start_frames) / elapsed
        ret = f"{np.mean(recent_returns):.1f}" if recent_returns else "-"
        if self._progress is not None:
            self._progress.update(self._task, completed=frames, fps=fps, ret=ret, lag=lag)
        elif time.perf_counter() - self._last_line >= 30.0 or frames >= self.total:
            self._last_line = time.perf_counter()
            self.console.print(
                f"frames {frames:,}/{self.total:,}  {fps:,.0f} f/s  "
                f"eta {_eta(self.total - frames, fps)}  return {ret}  lag {lag:.1f}",
                highlight=False, soft_wrap=True,  # one line per update in a log, however long
            )

    def message(self, text: str) -> None:
        self.console.print(text, highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _eta(frames_left: int, fps: float) -> str:
    """Time left at the current rate, as h:mm:ss (rich's bar shows the same on a terminal)."""
    if frames_left <= 0:
        return "0:00:00"
    if fps <= 0:
        return "-:--:--"
    seconds = round(frames_left / fps)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
