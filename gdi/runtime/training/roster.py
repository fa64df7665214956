"""What the learner side keeps of each actor (``ActorRoster``): its E as last reported, whose
turn it is to act, and how many times the backend restarted one.
"""

from __future__ import annotations

from gdi.runtime.backends.base import ActorTurns


class ActorRoster:
    """Each actor's E as last reported (``None`` until it reports): saved in checkpoints,
    given to an actor the backend restarts, and actor 0's copied to draw evaluation λ from.
    ``turns`` says which idle actor the driver asks next; ``restarts`` counts the actors a
    backend restarted after failures over the whole run, resumes included
    (perf/actor_restarts)."""

    def __init__(self, num_actors: int) -> None:
        self.controller_states: list[dict | None] = [None] * num_actors
        self.turns = ActorTurns(num_actors)
        self.restarts = 0

    def reported(self, actor_id: int, controller_state: dict) -> None:
        """Actor ``actor_id``'s E after its latest window."""
        self.controller_states[actor_id] = controller_state

    def controller_state(self, actor_id: int) -> dict | None:
        """Actor ``actor_id``'s E as last reported (None before its first window): what a
        backend starts or restarts that actor with."""
        return self.controller_states[actor_id]

    def count_restarts(self, restarts: int) -> None:
        self.restarts += restarts
