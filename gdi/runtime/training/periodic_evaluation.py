"""The evaluations a run plays while it trains (``TrainingEvaluation``, a part the trainer
calls): every ``eval_every`` frames and at the end, each recorded in ``eval/`` and as a metrics
row, and heard by the user's callbacks. λ comes from a copy of actor 0's E as last reported;
evaluation never updates E.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch

from gdi.meta.config import MetaConfig
from gdi.run_files import EVAL_DIR
from gdi.runtime import seeds
from gdi.runtime.acting.evaluator import POLICY_DESCRIPTION, Evaluation, play_episodes
from gdi.runtime.callbacks import Callbacks
from gdi.runtime.components import build_controller
from gdi.runtime.run_folder.run_dir import MetricsWriter
from gdi.runtime.training.log import TrainingLog
from gdi.runtime_config import OutputConfig
from gdi.scores import periodic_eval_name, write_eval_file


def final_evaluation_recorded(run_dir: Path, frames: int) -> bool:
    """Whether the run's evaluation at ``frames`` was recorded (a stop during the final
    evaluation records nothing: a resume plays it)."""
    return (Path(run_dir) / EVAL_DIR / f"{periodic_eval_name(frames)}.json").is_file()


class TrainingEvaluation:
    """The evaluations a run plays while it trains: every ``eval_every`` frames (``due``) and
    at its end (``final``), each written to ``eval/`` and as a metrics row
    (``eval/mean_return``), then handed to the callbacks (``on_evaluation``); its time counts
    as the run's ``eval`` phase in ``log``. The policy is the population's: λ drawn from a
    copy of actor 0's E as last reported, never updated by evaluation. ``should_stop`` is
    asked during the episodes, so that a stop request does not wait for them."""

    def __init__(self, output: OutputConfig, meta: MetaConfig, policy_space: str, env_config,
                 env: str, run_seed: int, run_dir: Path, writer: MetricsWriter,
                 log: TrainingLog | None = None, callbacks: Callbacks | None = None,
                 should_stop: Callable[[], bool] = lambda: False) -> None:
        self.every, self.episodes_each = output.eval_every, output.eval_episodes
        self.meta, self.policy_space, self.run_seed = meta, policy_space, run_seed
        self.env_config, self.env, self.run_dir, self.writer = env_config, env, run_dir, writer
        self.log = log
        self.callbacks = callbacks if callbacks is not None else Callbacks()
        self.should_stop = should_stop
        #: The frames at which the next periodic evaluation is due (None: none are).
        self.next_due: int | None = self.every if self.every > 0 else None
        #: The last evaluation's record (its frames, mean return and episodes), or None.
        self.latest: dict | None = None

    def due(self, frames: int) -> bool:
        return self.next_due is not None and frames >= self.next_due

    def controller(self, controller_state: dict | None):
        """A copy of an actor's E (its reported state; a fresh E before any report) to draw
        evaluation λ from."""
        controller = build_controller(self.meta,
                                      seeds.periodic_evaluation_lambda(self.run_seed))
        if controller_state is not None:
            controller.load_state_dict(controller_state)
        return controller

    def run(self, net: torch.nn.Module, frames: int, controller_state: dict | None
            ) -> dict | None:
        """Play and record an evaluation of ``net`` at ``frames`` now, λ from
        ``controller_state`` (actor 0's E), timed, and heard by the callbacks; None when a
        stop request interrupted it (recording nothing)."""
        with self.log.timed("eval") if self.log is not None else nullcontext():
            played = self.play(net, frames, controller_state, self.should_stop)
        if played is not None:
            self.callbacks.evaluation(Evaluation(tuple(played["episodes"]), played["frames"]))
        return played

    def final(self, net: torch.nn.Module, frames: int, controller_state: dict | None
              ) -> dict | None:
        """The run's closing evaluation: the periodic one when it was made at these very
        frames (a budget that is a multiple of ``eval_every``; playing it again would give the
        same episodes, same network and seed), else a new one (``run``)."""
        if self.latest is not None and self.latest["frames"] == frames:
            return self.latest
        return self.run(net, frames, controller_state)

    def play(self, net: torch.nn.Module, frames: int, controller_state: dict | None,
             should_stop: Callable[[], bool]) -> dict | None:
        """Play the evaluation episodes of ``net`` at ``frames`` and record them
        (eval/<frames>.json, eval/mean_return); the next periodic one is then due
        ``eval_every`` frames on. None, recording nothing (and still due), when
        ``should_stop`` interrupted them."""
        device = next(net.parameters()).device
        if device.type != "cpu":
            import copy

            net = copy.deepcopy(net).cpu()
        controller = self.controller(controller_state)
        seed = seeds.periodic_evaluation(self.run_seed)
        results = play_episodes(
            net, self.env_config, self.policy_space, controller.sample,
            self.episodes_each, seed, should_stop=should_stop,
        )
        if results is None:
            return None
        name = periodic_eval_name(frames)
        write_eval_file(
            self.run_dir, name, checkpoint=name, frames=frames, env=self.env,
            policy=POLICY_DESCRIPTION, seed=seed, episodes=results,
        )
        mean_return = float(np.mean([r["return"] for r in results]))
        self.writer.write(frames, {"eval/mean_return": mean_return,
                                   "eval/episodes": len(results)})
        self.latest = {"frames": frames, "mean_return": mean_return, "episodes": results}
        while self.next_due is not None and self.next_due <= frames:
            self.next_due += self.every
        return self.latest
