"""The training episodes the actors' windows bring (``EpisodeRecorder``, a part the trainer
calls): each one a row of meta.jsonl (λ and G, what E learned from), an ``on_episode_end``
callback, a return for the progress bar and an entry of the next metrics row.
"""

from __future__ import annotations

from gdi.runtime.acting.actor import EpisodeRecord
from gdi.runtime.callbacks import Callbacks
from gdi.runtime.progress import Warnings
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.training.log import TrainingLog

#: An episode return this large (in magnitude) is warned about: far beyond any game's score, it
#: is most likely an environment's bug, and float32 values lose all precision around it.
ABSURD_RETURN = 1e10
#: Training returns the progress bar averages.
RECENT_RETURNS = 100


class EpisodeRecorder:
    """Records each ended episode where the run keeps it, counts them, and warns once when a
    return reaches ``ABSURD_RETURN`` (``env`` names the environment in that warning)."""

    def __init__(self, writer: MetricsWriter, log: TrainingLog, callbacks: Callbacks,
                 warnings: Warnings, env: str) -> None:
        self.writer, self.log, self.callbacks, self.warnings = writer, log, callbacks, warnings
        self.env = env
        self.episodes = 0
        """Episodes recorded over the whole run (resumes included)."""
        self.recent_returns: list[float] = []
        """The last ``RECENT_RETURNS`` returns, for the progress bar."""
        self._warned_absurd = False  # said once a run: every later episode is likely alike

    def record(self, episodes: list[EpisodeRecord], frames: int) -> None:
        """The episodes a window brought, ``frames`` being the run's once it was counted."""
        for ep in episodes:
            self.writer.write_episode(frames, ep.actor, ep.lam, ep.episode_return, ep.length)
            self.callbacks.episode_end(ep, frames)
            self.recent_returns.append(ep.episode_return)
            if abs(ep.episode_return) >= ABSURD_RETURN and not self._warned_absurd:
                self._warned_absurd = True
                self.warnings.warn(
                    f"an episode returned {ep.episode_return:.3g} (actor {ep.actor}, "
                    f"environment {ep.env}, at {frames:,} frames) in {self.env}: returns of "
                    f"|G| >= {ABSURD_RETURN:.0e} swamp E's statistics and float32 values; "
                    "check the environment's reward scale (this is said once)")
        self.log.add_episodes(episodes)
        self.episodes += len(episodes)
        del self.recent_returns[:-RECENT_RETURNS]
