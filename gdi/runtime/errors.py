"""Failures that stop a run after a checkpoint. The CLI prints them as one line (they say what
happened and what was kept); ``gdi train --resume`` continues once the cause is fixed."""

from __future__ import annotations


class RunFailure(RuntimeError):
    """A run stopped because continuing would produce no valid result."""


class ActorFailure(RunFailure):
    """Actors failed more often than ``actor_failures_max`` within ``actor_failure_window_s``:
    the run stops instead of restarting them again."""


class LearnerDiverged(RunFailure):
    """The learner skipped ``skipped_updates_max`` consecutive updates (non-finite loss or
    gradient): parameters no longer change, so training on would only spend frames."""
