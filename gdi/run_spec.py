"""What a run is (``RunSpec``): its preset and scale, environment, seed, budget and backend,
the first fields of every run's ``gdi.config.Config``. A module of its own, light to import
(no torch): the command line reads its defaults from here, while ``gdi.config`` composes the
layers' configs, which import the network and the loss."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from gdi import backend_registry

#: The backend names, read from the one registry (``gdi.backend_registry.BACKENDS``).
BACKENDS = tuple(backend_registry.BACKENDS)


@dataclass(frozen=True)
class RunSpec:
    """What a run is: its preset and scale, its environment, seed, budget and backend. The
    first fields of every :class:`Config` (a base of it, so that they come first in
    ``config.json`` and ``gdi config``); checked by Config."""

    preset: str = "gdi-i3"
    """Name of the preset this config was resolved from (see `gdi presets`)."""
    scale: str = "ale"
    """Name of the scale this config was resolved from (see `gdi scales`): its environment
    kind's default (ale: the paper's table; minatar, gym: small-scale) or a named one
    (ale-cpu)."""
    learning: str = "paper"
    """Name of the reading of T this config was resolved from (see `gdi presets`): paper (its
    T: π_λ reads A) or policy-head (π_λ reads a head of its own; docs/learning-per-frame.md)."""
    env: str = "minatar:breakout"
    """Environment spec: ale:<Game>, minatar:<game> or gym:<id>, stored in its canonical form
    (ale:breakout → ale:Breakout, minatar:Breakout → minatar:breakout)."""
    seed: int = 0
    """Seed of every random generator in the run (envs, actions, E, network init)."""
    frames: int = 1_000_000
    """Training budget in environment frames (ALE: agent steps × 4 action repeats)."""
    backend: Literal[BACKENDS] = "local"
    """inline: one deterministic process (tests, debugging); local: actor processes + learner on
    this machine; ray: actors as Ray actors on a Ray cluster (any number of nodes)."""
    env_overrides: dict[str, Any] = field(default_factory=dict)
    """Overrides of the environment's preprocessing stages (see gdi.envs), e.g. sticky actions."""
    protocol: str = "paper"
    """ALE evaluation protocol, a name for a set of environment settings: paper (its table,
    the defaults of gdi.envs.AtariConfig) or machado (Machado et al. 2018: sticky actions 0.25,
    no reset no-ops, the full action set, no life-loss signal); env_overrides may add to it,
    never contradict it. Recorded in config.json and in every report."""
