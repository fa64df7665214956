"""Operator T while the data collector is ready (``LearnerUpdates``, a part the trainer calls):
collector → learner → parameter server, with a watch on updates the learner had to skip
(``DivergenceWatch``).
"""

from __future__ import annotations

from collections.abc import Callable

from gdi.runtime.backends.base import ParameterServer
from gdi.runtime.errors import LearnerDiverged
from gdi.runtime.progress import Warnings
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.training.learner import Learner
from gdi.runtime.training.log import TrainingLog


class DivergenceWatch:
    """Watches the learner's skipped updates (a non-finite loss or gradient leaves θ as it
    was): one warning per streak, and ``LearnerDiverged`` once a streak reaches
    ``skipped_updates_max``, naming the environment when its data was what was not finite."""

    def __init__(self, learner: Learner, warnings: Warnings, env: str,
                 skipped_updates_max: int) -> None:
        self.learner, self.warnings, self.env = learner, warnings, env
        self.limit = skipped_updates_max
        self.in_a_row = 0

    def check(self, skipped: bool, frames: int) -> None:
        """After each learner step: ``skipped``, whether it skipped its update."""
        if not skipped:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        learner = self.learner
        cause = learner.skip_cause  # non-finite data: the environment, not the learner
        if self.in_a_row == 1:
            self.warnings.warn(
                f"learner step {learner.steps}: non-finite loss or gradient, update skipped "
                "(parameters unchanged"
                + (f"; in the batch from {self.env}: {cause}" if cause else "")
                + f"); the run stops after skipped_updates_max={self.limit} in a row")
        if self.in_a_row < self.limit:
            return
        if cause:
            raise LearnerDiverged(
                f"the learner skipped {self.in_a_row} consecutive updates after step "
                f"{learner.steps}, at {frames:,} frames: the environment {self.env} gives "
                f"non-finite data ({cause}); fix or wrap the environment (the learning rate "
                "is not the cause)")
        config = learner.optimizer_config
        raise LearnerDiverged(
            f"the learner skipped {self.in_a_row} consecutive updates (non-finite loss or "
            f"gradient) after step {learner.steps}, at {frames:,} frames; no update can be "
            f"applied (learning_rate={config.learning_rate:g}, "
            f"max_grad_norm={config.max_grad_norm:g})")


class LearnerUpdates:
    """Learner steps while the data collector holds enough sequences: each samples a batch,
    steps the learner, gives the log its metrics, its policy lag and its time, and pushes θ
    to the parameter server every ``push_every`` learner steps."""

    def __init__(self, collector: ReplayCollector, learner: Learner,
                 server: ParameterServer, log: TrainingLog, watch: DivergenceWatch,
                 burn_in: int, push_every: int) -> None:
        self.collector, self.learner, self.server, self.log = collector, learner, server, log
        self.watch = watch
        self.burn_in, self.push_every = burn_in, push_every
        self.intact = True
        """False while a learner step is under way: an exception inside it may leave θ and
        its optimizer half-updated, not worth a checkpoint."""

    def while_ready(self, frames: int, progress: float,
                    before_step: Callable[[], None] | None = None) -> int:
        """Learner steps while the collector is ready, at ``frames`` (``progress``: of the
        budget); returns how many. ``before_step`` runs before each step (the driver asks
        actors for data there)."""
        done = 0
        learner = self.learner
        while self.collector.ready():
            if before_step is not None:
                before_step()
            with self.log.timed("learner"):
                # Stacked observations as frames: the learner rebuilds the stacks on its
                # device (a quarter of the bytes to assemble here and to copy to a GPU).
                batch = self.collector.sample(out=learner.staging, stacked=False)
                self.intact = False
                metrics = learner.step(batch, progress)
                self.intact = True
                self.watch.check("losses/skipped_nonfinite" in metrics, frames)
                lag = learner.steps - batch.versions[self.burn_in:].mean()
                self.log.add_step(metrics, float(lag))
            if learner.steps % self.push_every == 0:
                with self.log.timed("push"):
                    self.server.push(learner.net, learner.steps)
            done += 1
        return done
