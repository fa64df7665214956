"""A preset that trains with the normalized Boltzmann space: the paper's bandit E over its
default search box, everything else as GDI-I¹. In gdi this is one more entry of
``gdi.presets.PRESETS``; here it is added to the dictionary at run time. The π_λ and Λ columns
of ``gdi presets`` are the space's own texts."""

from gdi.meta import meta_kwargs_over
from gdi.policy_space import get_policy_space
from gdi.presets import PRESETS, Preset

space = get_policy_space("normalized_boltzmann")
PRESETS["gdi-i1-normalized"] = Preset(
    name="gdi-i1-normalized",
    category="GDI-I¹",
    policy=space.policy_text(1),
    index_set=space.index_set_text(),
    initial_distribution="uniform",
    meta="bandit ensemble (MAB, App. Adaptive Controller)",
    learning=PRESETS["gdi-i1"].learning,
    fields={
        "policy_space": "normalized_boltzmann",
        "meta_controller": "bandit",
        "meta_kwargs": meta_kwargs_over("bandit", space),
        "families": 1,
        "reward_shapes": ("log",),
    },
)
