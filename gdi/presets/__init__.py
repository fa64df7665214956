"""Presets named after the rows of the paper's Tab. "Summary of Algorithms of Ablation Study",
and after the methods of its Sec. "An Operator View of RL Methods" (``*-like``).

A preset fixes what makes an algorithm itself — the policy space Λ and π_λ, the initial P_Λ, the
operator E and the parameter families of T — and takes its scale from the environment. Boxes,
index names and fixed selections are read from the policy spaces (``gdi.policy_space``):

* ``ale:`` specs get the paper's Atari hyperparameters (App. "Hyperparameters") unchanged.
* ``minatar:`` and ``gym:`` specs get documented small-scale defaults (a smaller torso and
  LSTM, shorter sequences and warm-up, γ = 0.99) so that the same preset names train in minutes
  on a laptop CPU. Everything that defines the algorithm stays as in the paper, except where E
  searches 1/τ on ``gym:`` specs (``GYM_INV_TEMPERATURE_SEARCH``).

The rows live in ``gdi.presets.algorithms``, the scales in ``gdi.presets.scales``, the named
readings of T in ``gdi.presets.learnings``; this package re-exports them, and
``resolve_config(preset, env, ...)`` joins a row, a scale and a learning into a full ``Config``.
"""

from __future__ import annotations

from typing import Any

from gdi.config import Config
from gdi.envs.spec import canonical_spec
from gdi.policy_space import get_policy_space
from gdi.presets.algorithms import (
    AGENT57_ARMS,
    AGENT57_EPSILONS,
    AGENT57_INV_TEMPERATURES,
    LASER_FAMILIES,
    PRESETS,
    Preset,
    get_preset,
    index_set_note,
    preset_table,
)
from gdi.presets.learnings import (
    DEFAULT_LEARNINGS,
    LEARNING_NOTES,
    LEARNINGS,
    learning_for,
    learning_table,
)
from gdi.presets.scales import (
    DEFAULT_FRAMES,
    GYM_INV_TEMPERATURE_SEARCH,
    INV_TEMPERATURE_SEARCHES,
    KINDS,
    SCALE_KINDS,
    SCALE_NOTES,
    SCALES,
    SEARCHES,
    env_kind,
    inv_temperature_search,
    scale_differences,
    scale_for,
    search_text,
)

__all__ = [
    "AGENT57_ARMS",
    "AGENT57_EPSILONS",
    "AGENT57_INV_TEMPERATURES",
    "DEFAULT_FRAMES",
    "DEFAULT_LEARNINGS",
    "GYM_INV_TEMPERATURE_SEARCH",
    "INV_TEMPERATURE_SEARCHES",
    "KINDS",
    "LASER_FAMILIES",
    "LEARNINGS",
    "LEARNING_NOTES",
    "PRESETS",
    "SCALES",
    "SCALE_KINDS",
    "SCALE_NOTES",
    "SEARCHES",
    "Preset",
    "env_kind",
    "get_preset",
    "index_set_note",
    "inv_temperature_search",
    "learning_for",
    "learning_table",
    "preset_table",
    "resolve_config",
    "scale_differences",
    "scale_for",
    "search_text",
]


def resolve_config(preset: str, env: str, scale: str | None = None, search: str | None = None,
                   learning: str | None = None, **fields: Any) -> Config:
    """The full config of ``preset`` on ``env``: Config defaults ← the scale (``scale``, or the
    env kind's default) ← the preset's algorithm fields ← the learning's (``learning``, or the
    scale's default: ``LEARNINGS``) ← ``fields`` (explicit choices win). ``search`` names how
    E searches each inverse temperature (``SEARCHES``), in place of the scale's; only an E over
    a box has one to change."""
    chosen = get_preset(preset)
    scale = scale_for(env, scale)
    learning = learning_for(scale, learning)
    env = canonical_spec(env)  # ale:breakout → ale:Breakout (raises for unknown games)
    values: dict[str, Any] = {"frames": DEFAULT_FRAMES[scale], "scale": scale}
    values.update(SCALES[scale])
    values.update(chosen.fields)
    # An E that searches a box is given one as ``ranges`` (gdi.meta.meta_kwargs_over), whatever
    # its name: the bandit, the uniform control over the same box, an E added later.
    searches_box = "ranges" in values["meta_kwargs"]
    if search is not None:
        if search not in SEARCHES:
            raise ValueError(f"search: unknown value {search!r}; allowed: "
                             f"{', '.join(SEARCHES)}")
        if not searches_box:
            raise ValueError(f"search {search!r}: preset {preset!r}'s E "
                             f"({values['meta_controller']}) searches no box of λ; a search "
                             "applies to the bandit E or the uniform E of its control")
    if search is None:
        chosen_search = INV_TEMPERATURE_SEARCHES.get(scale)
    elif search == "table" and scale not in INV_TEMPERATURE_SEARCHES:
        chosen_search = None  # the presets' boxes are the table's: nothing to change
    else:
        chosen_search = SEARCHES[search]
    if chosen_search is not None and searches_box:
        space = get_policy_space(values["policy_space"])
        values["meta_kwargs"] = inv_temperature_search(values["meta_kwargs"], space,
                                                       chosen_search)
    values.update(LEARNINGS[learning])
    values.update({k: v for k, v in fields.items() if v is not None})
    values["meta_kwargs"] = dict(values["meta_kwargs"])
    return Config(preset=preset, env=env, learning=learning, **values)
