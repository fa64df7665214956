"""Operator E's own configuration (``MetaConfig``): which E and its arguments, declared and
checked here, where the controllers are registered. The run's ``gdi.config.Config`` is composed
of it; whether E's λ fits the policy space Λ is a check across parts, made by Config."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gdi.checks import one_of
from gdi.meta.base import MetaController
from gdi.meta.registry import CONTROLLERS, make_controller


@dataclass(frozen=True)
class MetaConfig:
    """Operator E by name and its arguments. Checked on creation (``check_meta``): the name is
    registered and the controller builds from the arguments."""

    meta_controller: str = "bandit"
    """Operator E over P_Λ: a controller of gdi.meta.CONTROLLERS by its name (bandit is the
    paper's); its λ dimension must be the policy space's."""
    meta_kwargs: dict[str, Any] = field(default_factory=dict)
    """Arguments of the E controller (ranges, accuracies, fixed value, arms, ...)."""

    def __post_init__(self) -> None:
        self.check_meta()

    def check_meta(self, seed: int = 0) -> MetaController:
        """The controller these fields name, built with ``seed`` (what a check across parts
        reads: its λ's dimension and box); ValueError of one line when no E is registered as
        ``meta_controller`` or it does not build from ``meta_kwargs`` (an unknown or missing
        argument, a bad range)."""
        one_of("meta_controller", self.meta_controller, list(CONTROLLERS))
        try:
            return make_controller(self.meta_controller, seed, **self.meta_kwargs)
        except (TypeError, ValueError) as err:
            raise ValueError(f"meta_kwargs of E {self.meta_controller!r}: {err}") from None
