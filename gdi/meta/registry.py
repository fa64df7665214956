"""Operators E by name: what a preset or the command line names, and how they are built."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

# CONTROLLERS holds every E: each registers itself where it is defined (@register_controller),
# and the package (imported before any of its modules) imports every module it holds.
from gdi.meta.base import CONTROLLERS, MetaController

__all__ = ["CONTROLLERS", "make_controller", "meta_kwargs_over"]


def _registered(name: str) -> type:
    """The class registered as ``name``; ValueError listing the registered names otherwise."""
    return CONTROLLERS.lookup(name)


def make_controller(name: str, seed: int | np.random.Generator, **kwargs) -> MetaController:
    """Build the controller registered as ``name`` with ``seed`` and its keyword arguments.

    Unknown names and unknown keyword arguments raise ValueError listing what is allowed.
    """
    cls = _registered(name)
    params = inspect.signature(cls).parameters
    unknown = sorted(set(kwargs) - set(params))
    if unknown or "seed" in kwargs:
        allowed = ", ".join(p for p in params if p != "seed")
        bad = unknown or ["seed (pass it as the second argument)"]
        raise ValueError(
            f"{name!r} got unexpected argument(s) {', '.join(bad)}; allowed: {allowed}"
        )
    return cls(seed=seed, **kwargs)


def meta_kwargs_over(name: str, space, families: int = 1, arms=None) -> dict[str, Any]:
    """The arguments (``meta_kwargs``) that set E ``name`` over a policy space's default search.

    They are read off the names of the E's constructor parameters, so an E whose parameters
    use these names needs nothing here: ``index_names``, the space's; ``values``, the points of
    a discrete Λ (``space.values``); ``arms``, the ``arms`` given here, else those points;
    ``ranges`` and ``accuracies``, its default box and the bandit's block sizes
    (when no points were given); ``value``, its fixed selection (the "w/o E" point). Keys
    follow the constructor's order.

    ``space`` is a ``gdi.policy_space.PolicySpace`` or its registered name (looked up only
    then: gdi.meta itself stays NumPy-only). ValueError when the E needs what Λ does not
    declare: arms over a box, a fixed λ where Λ names none.
    """
    if isinstance(space, str):
        from gdi.policy_space import get_policy_space

        space = get_policy_space(space)
    params = inspect.signature(_registered(name)).parameters
    points = space.values(families)
    if "arms" in params and points is None and arms is None:
        raise ValueError(f"E {name!r} plays a finite set of arms, and policy space "
                         f"{space.name!r} is a box: give the arms")
    # An E given points (a discrete Λ's, or arms) gets no box besides.
    gives_points = "arms" in params or ("values" in params and points is not None)
    chosen: dict[str, Any] = {}
    for param in params:
        if param == "index_names":
            chosen[param] = tuple(space.index_names)
        elif param == "values" and points is not None:
            chosen[param] = _rows(points)
        elif param == "arms":
            chosen[param] = _rows(arms if arms is not None else points)
        elif param == "ranges" and not gives_points:
            chosen[param] = tuple(tuple(r) for r in space.default_box(families))
        elif param == "accuracies" and not gives_points and "ranges" in params:
            chosen[param] = tuple(space.search_accuracies)
        elif param == "value":
            if space.fixed_selection is None:
                raise ValueError(f"E {name!r} plays one fixed λ, and policy space "
                                 f"{space.name!r} names none: give meta_kwargs.value")
            chosen[param] = tuple(space.fixed_selection)
    return chosen


def _rows(points) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in np.asarray(points, dtype=np.float64).tolist())
