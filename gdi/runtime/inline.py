"""The ``inline`` backend: every role in this process, stepped in a fixed order, so a seeded
run is exactly reproducible and a checkpoint holds everything needed to resume it exactly
(environments included, where they can be pickled: MinAtar and Gymnasium's can, ALE's cannot).
"""

from __future__ import annotations

from collections.abc import Callable

from gdi.config import Config
from gdi.runtime.actor import Actor
from gdi.runtime.components import actor_seed, build_controller, build_network
from gdi.runtime.parameter_server import InlineParameterServer
from gdi.runtime.trainer import Trainer


class InlineBackend:
    def __init__(self, config: Config, env_config, shapes, learner) -> None:
        self.config = config
        self.server = InlineParameterServer(learner.net)
        self.actors = []
        for i in range(config.num_actors):
            seed = actor_seed(config, i)
            self.actors.append(Actor(i, config, env_config,
                                     build_network(config, shapes),
                                     build_controller(config, seed), seed))

    def run(self, trainer: Trainer, payload: dict | None, stop: Callable[[int], bool],
            report: Callable[[], None]) -> None:
        config, actors = self.config, self.actors
        if payload is not None:
            for actor, state in zip(actors, payload["actors"], strict=True):
                if not actor.load_state_dict(state):
                    trainer.messages.append(
                        f"actor {actor.actor_id}: its environments cannot be saved "
                        f"({config.env}); their episodes restart on resume"
                    )
        trainer.controller_state = actors[0].controller.state_dict
        trainer.checkpoint_extra = lambda: {
            "actors": [a.state_dict() for a in actors],
            "collector": trainer.collector.state_dict(),
        }
        while trainer.frames < config.frames:
            for actor in actors:
                if actor.steps % config.pull_every == 0:
                    actor.pull(trainer.server)
                window, episodes = actor.step()
                trainer.frames += actor.num_envs * actor.frames_per_step
                trainer.add_actor_times(actor.take_phase_seconds())
                trainer.record_episodes(episodes)
                if window is not None:
                    trainer.ingest(window)
            if trainer.learn_and_keep_books(stop, report):
                return

    def close(self) -> None:
        for actor in self.actors:
            actor.close()
