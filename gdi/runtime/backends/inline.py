"""The ``inline`` backend: every role in this process, in a fixed order, so a seeded run is
exactly reproducible and a checkpoint holds everything needed to resume it exactly
(environments included, as data, where their state is all in Python attributes: MinAtar's and
Gymnasium's classic control are, the ALE's emulator is not; ``gdi.runtime.acting.env_state``).

Requested windows are acted when the driver next calls ``receive``, one actor after another,
always in actor order: the actor acts exactly when the learner has run out of data.
"""

from __future__ import annotations

import torch

from gdi.runtime.acting.actor import Window
from gdi.runtime.backends.base import ControllerStates
from gdi.runtime.components import ActorRecipe
from gdi.runtime.training.parameter_server import InlineParameterServer
from gdi.runtime_config import PlacementConfig


class InlineBackend:
    parallel_actors = 1  # the actors take turns with the learner in this process
    acts_in_loop = True  # in the driver's loop, when it next calls receive
    restarts = 0  # an actor failure here is the learner's failure: nothing to restart

    def __init__(self, recipe: ActorRecipe, placement: PlacementConfig, stop=None) -> None:
        self.env_spec = recipe.env_config.spec
        self.num_actors = recipe.num_actors
        self.actors = [recipe.build(i) for i in range(recipe.num_actors)]
        self._requested: list[int] = []  # actor ids, in the order asked

    def parameter_server(self, module: torch.nn.Module) -> InlineParameterServer:
        return InlineParameterServer(module)

    def pull_from(self, server: InlineParameterServer) -> None:
        self.server = server

    def start(self, controller_state: ControllerStates, checkpoint: dict | None,
              stop=None) -> list[str]:
        warnings = []
        exact = checkpoint.get("actors") if checkpoint is not None else None
        for actor, state in zip(self.actors, exact or [None] * self.num_actors, strict=True):
            if state is not None:
                if not actor.load_state_dict(state):
                    warnings.append(f"actor {actor.actor_id}: its environments cannot be saved "
                                    f"({self.env_spec}); their episodes restart on resume")
            elif (controller := controller_state(actor.actor_id)) is not None:
                actor.controller.load_state_dict(controller)
        if checkpoint is not None and exact is None:
            warnings.append("the checkpoint was written by a parallel backend: environments, "
                            "recurrent states and the data collector start afresh (E and the "
                            "learner are restored)")
        return warnings

    @property
    def in_flight(self) -> int:
        return len(self._requested)

    def idle_actors(self) -> list[int]:
        return [i for i in range(self.num_actors) if i not in self._requested]

    def request(self, actor_id: int) -> None:
        self._requested.append(actor_id)

    def receive(self, block: bool) -> list[Window]:
        windows = [self.actors[i].act_window(self.server) for i in sorted(self._requested)]
        self._requested.clear()
        return windows

    def take_warnings(self) -> list[str]:
        return []

    def actor_states(self) -> list[dict]:
        # Exact resume: every actor mid-episode (environments, LSTM states, partial sequences,
        # RNG); the Trainer adds the collector's contents.
        return [actor.state_dict() for actor in self.actors]

    def close(self) -> None:
        for actor in self.actors:
            actor.close()
