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


class EnvironmentFault(RunFailure):
    """The environment gave a non-finite reward: restarting the actor would only meet it again,
    so the run stops, naming the environment, the actor and the step. Backends whose actors run
    elsewhere recognize it in the actor's failure by :data:`ENVIRONMENT_FAULT`."""


#: How an EnvironmentFault's traceback ends (its last line), in a local or Ray actor's failure.
ENVIRONMENT_FAULT = f"{EnvironmentFault.__module__}.{EnvironmentFault.__qualname__}: "
