"""``gdi report --video``: a GIF of each run's agent at its last evaluation, embedded in the
report. The video is made when the report is written (training never renders): one episode,
played by the network of the checkpoint behind the run's final evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gdi.evaluation.report_io import ReportFiles
from gdi.run_files import CHECKPOINT_DIR, CHECKPOINT_SUFFIX, checkpoint_name, latest_checkpoint
from gdi.scores import RunEvals

VIDEO_MAX_STEPS = 1000
"""Agent steps a report's video shows at most (a GIF of a long Atari episode runs to tens of
MB); the caption says when an episode was cut."""


def evaluated_checkpoint(run: RunEvals) -> tuple[Path, str]:
    """The checkpoint whose network the run's last evaluation played, and a note: the one saved
    at the evaluation's frames, or the one ``gdi evaluate`` named; the latest checkpoint (and
    a note saying so) when that one was not kept."""
    final = run.final
    folder = Path(run.run_dir) / CHECKPOINT_DIR
    for candidate in (folder / checkpoint_name(final.frames), folder / f"{final.checkpoint}{CHECKPOINT_SUFFIX}"):
        if candidate.is_file():
            return candidate, ""
    latest = latest_checkpoint(run.run_dir)
    return latest, (f" (the checkpoint of the last evaluation, {final.frames:,} frames, was not "
                    f"kept: this is {latest.name})")


def videos_section(runs: Sequence[RunEvals], files: ReportFiles,
                   max_steps: int = VIDEO_MAX_STEPS) -> list[str]:
    from gdi.video.enjoy import enjoy

    text = [
        "## Videos",
        "",
        "One episode per run, played by the network of its last evaluation with λ ~ P_Λ (the "
        "evaluated policy); each frame shows the return so far and λ. At most "
        f"{max_steps:,} agent steps.",
        "",
    ]
    for run in runs:
        checkpoint, note = evaluated_checkpoint(run)
        path = files.path(f"video_{run.name}.gif")
        result = enjoy(run.run_dir, episodes=1, video=path, checkpoint=checkpoint,
                       max_steps=max_steps)
        cut = f", cut at {max_steps:,} steps" if result.cut else ""
        text += [
            f"**{run.name}** ({checkpoint.name}{note}): return {result.returns[0]:g} in "
            f"{result.steps[0]:,} steps{cut}.",
            "",
            f"![{run.name}]({path.name})",
            "",
        ]
    return text
