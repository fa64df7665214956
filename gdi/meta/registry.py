"""Operators E by name: what a preset or the command line names, and how they are built."""

from __future__ import annotations

import difflib
import inspect

import numpy as np

from gdi.meta.bandit import BanditEnsemble
from gdi.meta.base import MetaController
from gdi.meta.fixed import FixedIndex, UniformIndex
from gdi.meta.sliding_window_ucb import SlidingWindowUCB

__all__ = ["CONTROLLERS", "make_controller"]

#: Every operator E: the paper's bandit ensemble, the identity E of the "w/o E" ablation
#: (fixed λ) and of Ape-X/R2D2 (uniform), and Agent57's sliding-window UCB.
CONTROLLERS: dict[str, type] = {
    "bandit": BanditEnsemble,
    "fixed": FixedIndex,
    "uniform": UniformIndex,
    "sliding_window_ucb": SlidingWindowUCB,
}


def make_controller(name: str, seed: int | np.random.Generator, **kwargs) -> MetaController:
    """Build the controller registered as ``name`` with ``seed`` and its keyword arguments.

    Unknown names and unknown keyword arguments raise ValueError listing what is allowed.
    """
    if name not in CONTROLLERS:
        close = difflib.get_close_matches(str(name), CONTROLLERS, n=2)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise ValueError(
            f"unknown meta-controller {name!r}{hint}; allowed: {', '.join(CONTROLLERS)}"
        )
    cls = CONTROLLERS[name]
    params = inspect.signature(cls).parameters
    unknown = sorted(set(kwargs) - set(params))
    if unknown or "seed" in kwargs:
        allowed = ", ".join(p for p in params if p != "seed")
        bad = unknown or ["seed (pass it as the second argument)"]
        raise ValueError(
            f"{name!r} got unexpected argument(s) {', '.join(bad)}; allowed: {allowed}"
        )
    return cls(seed=seed, **kwargs)
