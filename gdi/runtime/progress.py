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

#: Characters of the run's name the progress bar shows (a long name squeezed the bar).
TITLE_WIDTH = 28


def short_title(title: str, width: int = TITLE_WIDTH) -> str:
    """The run's name cut to ``width`` characters, its end kept (it holds the seed and time)."""
    return title if len(title) <= width else "…" + title[-(width - 1):]


class TrainingProgress:
    """Fields: frames done of the budget; frames/s since the first window of experience
    arrived (start-up excluded: until a second update there is no rate, shown as - in a log,
    0 on the bar, whose own time-left column waits for a rate too); the time
    left at that rate; the mean return of the last 100 training episodes (as the actors play,
    λ ~ P_Λ); the policy lag, how many learner updates older the parameters that acted a
    batch's data were than those that learn from it (docs/getting-started.md)."""

    def __init__(self, total_frames: int, start_frames: int, title: str) -> None:
        self.total = total_frames
        self.interactive = sys.stderr.isatty()
        self.console = Console(stderr=True)
        self._rate_from: tuple[float, int] | None = None  # (time, frames) at the first update
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
                short_title(title), total=total_frames, completed=start_frames, fps=0.0,
                ret="-", lag=0.0,
            )
            self._progress.start()
        else:
            self.console.print(f"{title}: training to {total_frames:,} frames")

    def update(self, frames: int, recent_returns: list[float], lag: float) -> None:
        now = time.perf_counter()
        if self._rate_from is None:  # the first window: its wait was start-up, not training
            self._rate_from = (now, frames)
        since, at = self._rate_from
        fps = (frames - at) / (now - since) if now > since and frames > at else None
        ret = f"{np.mean(recent_returns):.1f}" if recent_returns else "-"
        if self._progress is not None:
            self._progress.update(self._task, completed=frames, fps=fps or 0.0, ret=ret,
                                  lag=lag)
        elif now - self._last_line >= 30.0 or frames >= self.total:
            self._last_line = now
            rate = f"{fps:,.0f}" if fps is not None else "-"
            self.console.print(
                f"frames {frames:,}/{self.total:,}  {rate} f/s  "
                f"eta {_eta(self.total - frames, fps or 0.0)}  return {ret}  lag {lag:.1f}",
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
