"""Operators E over the behavior distribution P_Λ (GDI, Algorithm 1: P_Λ ← E(P_Λ, {X_λ})).

The paper's tile-coded UCB bandit ensemble (App. "Adaptive Controller Formalism"), the
identity operators of its ablations and baselines (a fixed λ; uniform over a set or a box),
and Agent57's sliding-window UCB, each registered where it is defined
(``@register_controller``; the package imports every module it holds, so a new E is one
file). Every controller follows ``MetaController``: ``sample()`` gives λ for the next episode,
``update(λ, G)`` reports its return, and ``state_dict`` / ``load_state_dict`` save and restore
it exactly. Numpy only.
"""

from gdi.meta.bandit import MODES, BanditEnsemble
from gdi.meta.base import MetaController, default_index_names, register_controller
from gdi.meta.config import MetaConfig
from gdi.meta.fixed import FixedIndex, UniformIndex
from gdi.meta.plotting import plot_meta_history
from gdi.meta.registry import CONTROLLERS, make_controller, meta_kwargs_over
from gdi.meta.sliding_window_ucb import SlidingWindowUCB
from gdi.meta.synthetic import (
    DemoResult,
    SyntheticSurface,
    demo_controller,
    demo_summary,
    demo_surface,
    run_controller,
    run_demo,
    save_demo_plot,
)
from gdi.meta.tile_coding import (
    bandit_values,
    block_index,
    block_to_tiles,
    num_blocks,
    num_tiles,
    tile_index,
    tile_intervals,
    to_block_units,
    ucb_scores,
)
from gdi.registry import import_package_modules

__all__ = [
    "CONTROLLERS",
    "MODES",
    "BanditEnsemble",
    "DemoResult",
    "FixedIndex",
    "MetaConfig",
    "MetaController",
    "SlidingWindowUCB",
    "SyntheticSurface",
    "UniformIndex",
    "bandit_values",
    "block_index",
    "block_to_tiles",
    "default_index_names",
    "demo_controller",
    "demo_summary",
    "demo_surface",
    "make_controller",
    "meta_kwargs_over",
    "num_blocks",
    "num_tiles",
    "plot_meta_history",
    "register_controller",
    "run_controller",
    "run_demo",
    "save_demo_plot",
    "tile_index",
    "tile_intervals",
    "to_block_units",
    "ucb_scores",
]

# Every module of the package, so that an E in a file of its own registers itself
# (``@register_controller``): a new E is one file.
import_package_modules(__name__, __path__)
