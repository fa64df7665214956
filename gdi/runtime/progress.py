"""What the user watches while a run trains: a rich progress bar on a terminal (two lines that
fit 80 columns: the run, the bar and the frames; then frames/s, the time elapsed and left, the
recent mean return and the policy lag, each labelled), or one plain line per metrics row when
the output is a file or a pipe (``nohup gdi train ... > log``)."""

from __future__ import annotations

import sys
import time

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

#: Characters of the run's name the progress bar shows (a long name squeezed the bar).
TITLE_WIDTH = 28


def short_title(title: str, width: int = TITLE_WIDTH) -> str:
    """The run's name cut to ``width`` characters, its end kept (it holds the seed and time)."""
    return title if len(title) <= width else "…" + title[-(width - 1):]


class TwoLineProgress(Progress):
    """A rich Progress that shows each task on two lines: ``columns`` (the bar) on the first,
    ``details`` on the second, so that a bar and its labelled figures fit 80 columns."""

    def __init__(self, *columns: ProgressColumn, details: tuple[ProgressColumn, ...],
                 **kwargs) -> None:
        super().__init__(*columns, **kwargs)
        self.details = details

    def get_renderables(self):
        yield self.make_tasks_table(self.tasks)
        table = Table.grid(padding=(0, 1))
        for task in self.tasks:
            if task.visible:
                table.add_row(*(column(task) for column in self.details))
        yield table


def progress_bar(console: Console) -> TwoLineProgress:
    """The bar on a terminal: the run's name, the bar and the frames; below them frames/s, the
    time elapsed, the time left (eta), the recent return and the policy lag. Its task's fields:
    ``fps``, ``eta`` and ``ret`` (text) and ``lag`` (a number)."""
    return TwoLineProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        TextColumn("{task.completed:,.0f}/{task.total:,.0f} frames"),
        details=(
            TextColumn("{task.fields[fps]} f/s "),
            TextColumn("elapsed"), TimeElapsedColumn(),
            TextColumn(" eta {task.fields[eta]} "),
            TextColumn("return {task.fields[ret]} "),
            TextColumn("lag {task.fields[lag]:.1f}"),
        ),
        console=console,
        refresh_per_second=4,
        expand=True,
    )


class Warnings:
    """Warnings for the user, queued by the parts of a run as they arise and shown with the
    next progress report (``take``)."""

    def __init__(self) -> None:
        self._queued: list[str] = []

    def warn(self, *messages: str) -> None:
        self._queued.extend(messages)

    def take(self) -> list[str]:
        """The warnings since the last call."""
        taken, self._queued = self._queued, []
        return taken


class TrainingProgress:
    """Fields: frames done of the budget; frames/s since the first window of experience
    arrived (start-up excluded: until a second update there is no rate, shown as -, nor a time
    left); on the bar, the time elapsed since the run started in this process; the time left
    at that rate (eta); the mean return of the last 100 training episodes (as the actors play,
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
            self._progress = progress_bar(self.console)
            self._task = self._progress.add_task(
                short_title(title), total=total_frames, completed=start_frames, fps="-",
                eta=_eta(total_frames - start_frames, 0.0), ret="-", lag=0.0,
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
        rate = f"{fps:,.0f}" if fps is not None else "-"
        eta = _eta(self.total - frames, fps or 0.0)
        if self._progress is not None:
            self._progress.update(self._task, completed=frames, fps=rate, eta=eta, ret=ret,
                                  lag=lag)
        elif now - self._last_line >= 30.0 or frames >= self.total:
            self._last_line = now
            self.console.print(
                f"frames {frames:,}/{self.total:,}  {rate} f/s  "
                f"eta {eta}  return {ret}  lag {lag:.1f}",
                highlight=False, soft_wrap=True,  # one line per update in a log, however long
            )

    def message(self, text: str) -> None:
        self.console.print(text, highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _eta(frames_left: int, fps: float) -> str:
    """Time left at the current rate, as h:mm:ss (the bar and the plain line alike)."""
    if frames_left <= 0:
        return "0:00:00"
    if fps <= 0:
        return "-:--:--"
    seconds = round(frames_left / fps)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
