"""The algorithm rows of the presets: the paper's Tab. "Summary of Algorithms of Ablation
Study" (GDI-I³, GDI-H³, GDI-I¹, GDI-I⁰ and the E-ablation control) and the methods of its Sec.
"An Operator View of RL Methods" (``*-like``).

A row fixes what makes an algorithm itself — the policy space Λ and π_λ, the initial P_Λ, the
operator E and the parameter families of T. Boxes, index names, fixed selections and the texts
of Λ and π_λ are read from the policy spaces (``gdi.policy_space``; E's arguments through
``gdi.meta.meta_kwargs_over``); the scale comes from ``gdi.presets.scales``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gdi.meta.registry import meta_kwargs_over
from gdi.policy_space import get_policy_space
from gdi.presets.scales import INV_TEMPERATURE_SEARCHES, search_text
from gdi.registry import Registry


def _space(name: str):
    return get_policy_space(name)


def _one_point(space: str) -> str:
    """Λ of a "w/o E" row: the space's fixed selection, its only point."""
    chosen = _space(space)
    return f"|Λ| = 1: {chosen.point_text(chosen.fixed_selection)}"


@dataclass(frozen=True)
class Preset:
    name: str
    category: str
    """The paper's classification (GDI-Iⁿ / GDI-Hⁿ, "w/o E" where E is the identity)."""
    policy: str
    """π_λ, as the paper writes it."""
    index_set: str
    """Λ."""
    initial_distribution: str
    """P_Λ⁽⁰⁾."""
    meta: str
    """Operator E."""
    learning: str
    """Operator T."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Config fields that define the algorithm (independent of the environment)."""
    notes: str = ""
    """What the preset is and is not of the method it is named after."""
    from_paper: bool = False
    """One of the paper's own agents and ablations (Tab. "Summary of Algorithms of Ablation
    Study": GDI-I³, GDI-H³, GDI-I¹, GDI-I⁰), which reports label by their class alone."""


_T_ONE_FAMILY = "V-trace V, Retrace Q = Ā + V, policy gradient; one family θ, log reward shape"
_T_TWO_FAMILIES = "as GDI-I³ per family: θ₁ on log-shaped, θ₂ on root-shaped rewards"
_T_K_FAMILIES = "as GDI-I³ per family θ_i, each on all actors' data (log reward shape)"

#: LASER-like: K learners (parameter families) sharing all data; K >= 2.
LASER_FAMILIES = 4

#: Agent57-like arms: Agent57's 32 arms as an 8 × 4 grid over (ε, 1/τ) of the
#: ``epsilon_boltzmann`` space, ε from none to mostly uniform (Agent57's β_j, the
#: intrinsic-reward weight, from 0 to its most exploratory), 1/τ within the paper's search
#: range (``INV_TEMPERATURE_SEARCH``; Agent57's γ_j). ε stops short of 1: at ε = 1 every 1/τ
#: is the same uniform policy, and four of the 32 arms would be one.
AGENT57_EPSILONS = (0.0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.8)
AGENT57_INV_TEMPERATURES = (1.0, 5.0, 20.0, 50.0)
AGENT57_ARMS = tuple((b, e) for e in AGENT57_EPSILONS for b in AGENT57_INV_TEMPERATURES)

_OPERATOR_VIEW_NOTE = ("The *-like presets (paper Sec. \"An Operator View of RL Methods\"): Λ, P_Λ, "
                       "E and families as the paper describes the method; T, the network and "
                       "the scale stay GDI-I³'s.")

#: What every *-like preset takes from GDI rather than from its namesake.
_FROM_GDI = ("From GDI, not from the namesake: T (V-trace for V, Retrace for Q = Ā + V, the "
             "policy gradient on log π_λ, AdamW), the LSTM network with burn-in and the scale; "
             "no target network, no n-step double Q-learning, no value rescaling h(x), no "
             "entropy bonus.")
_NO_PG_FOR_GREEDY = ("With an ε-greedy π_λ the policy-gradient term carries no gradient to A "
                     "(greedy(A) is piecewise constant in A): A learns through Retrace's "
                     "Q = Ā + V alone.")

PRESETS = Registry("preset", {
    "gdi-i3": Preset(
        name="gdi-i3",
        from_paper=True,
        category="GDI-I³",
        policy=_space("soft_entropy").policy_text(1),
        index_set=_space("soft_entropy").index_set_text(),
        initial_distribution="uniform",
        meta="bandit ensemble (MAB, App. Adaptive Controller)",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "soft_entropy",
            "meta_controller": "bandit",
            "meta_kwargs": meta_kwargs_over("bandit", "soft_entropy"),
            "families": 1,
            "reward_shapes": ("log",),
        },
    ),
    "gdi-h3": Preset(
        name="gdi-h3",
        from_paper=True,
        category="GDI-H³",
        policy=_space("soft_entropy").policy_text(2),
        index_set=_space("soft_entropy").index_set_text(2),
        initial_distribution="uniform",
        meta="bandit ensemble (MAB, App. Adaptive Controller)",
        learning=_T_TWO_FAMILIES,
        fields={
            "policy_space": "soft_entropy",
            "meta_controller": "bandit",
            "meta_kwargs": meta_kwargs_over("bandit", "soft_entropy"),
            "families": 2,
            "reward_shapes": ("log", "root"),
        },
    ),
    "gdi-i1": Preset(
        name="gdi-i1",
        from_paper=True,
        category="GDI-I¹",
        policy=_space("boltzmann").policy_text(1),
        index_set=_space("boltzmann").index_set_text(),
        initial_distribution="uniform",
        meta="bandit ensemble (MAB, App. Adaptive Controller)",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "boltzmann",
            "meta_controller": "bandit",
            "meta_kwargs": meta_kwargs_over("bandit", "boltzmann"),
            "families": 1,
            "reward_shapes": ("log",),
        },
    ),
    "gdi-i0": Preset(
        name="gdi-i0",
        from_paper=True,
        category="GDI-I⁰ (w/o E)",
        policy=_space("soft_entropy").policy_text(1),
        index_set=_one_point("soft_entropy"),
        initial_distribution="P_Λ(λ₀) = 1",
        meta="identity (fixed selection)",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "soft_entropy",
            "meta_controller": "fixed",
            "meta_kwargs": meta_kwargs_over("fixed", "soft_entropy"),
            "families": 1,
            "reward_shapes": ("log",),
        },
    ),
    # --- the control of the E ablation: GDI-I³ with E = identity -------------------------
    "gdi-i3-uniform": Preset(
        name="gdi-i3-uniform",
        category="GDI-I³ (w/o E)",
        policy=_space("soft_entropy").policy_text(1),
        index_set=_space("soft_entropy").index_set_text(),
        initial_distribution="uniform",
        meta="identity (P_Λ stays uniform over Λ)",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "soft_entropy",
            "meta_controller": "uniform",
            "meta_kwargs": meta_kwargs_over("uniform", "soft_entropy"),
            "families": 1,
            "reward_shapes": ("log",),
        },
        notes=("The control of the E ablation: GDI-I³ in every part (Λ, π_λ, T, the bandit's "
               "box and its P_Λ⁽⁰⁾) except that E is the identity, so each episode's λ is drawn "
               "uniformly over the box for the whole run. GDI-I³ against it measures what "
               "optimizing P_Λ adds; GDI-I⁰ w/o E also changes Λ to one soft point."),
    ),
    # --- the operator view: other methods as points of GDI --------------------------------------
    "impala-like": Preset(
        name="impala-like",
        category="GDI-I⁰ (w/o E)",
        policy=_space("boltzmann").policy_text(1),
        index_set=_one_point("boltzmann"),
        initial_distribution="P_Λ(λ₀) = 1",
        meta="identity",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "boltzmann",
            "meta_controller": "fixed",
            "meta_kwargs": meta_kwargs_over("fixed", "boltzmann"),
            "families": 1,
            "reward_shapes": ("log",),
        },
        notes=("From IMPALA: Λ, P_Λ and E — its actors sample from the softmax policy "
               "(1/τ = 1), one point, never changed. " + _FROM_GDI + " IMPALA's policy is a "
               "head of its own; here it is softmax(A)."),
    ),
    "dqn-like": Preset(
        name="dqn-like",
        category="GDI-I⁰ (w/o E)",
        policy=_space("epsilon_greedy").policy_text(1),
        index_set=_one_point("epsilon_greedy"),
        initial_distribution="P_Λ(λ₀) = 1",
        meta="identity",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "epsilon_greedy",
            "meta_controller": "fixed",
            "meta_kwargs": meta_kwargs_over("fixed", "epsilon_greedy"),
            "families": 1,
            "reward_shapes": ("log",),
        },
        notes=("From DQN: Λ, P_Λ and E — ε-greedy with ε = 0.1 (once annealed), one point, "
               "never changed. " + _FROM_GDI + " " + _NO_PG_FOR_GREEDY),
    ),
    "r2d2-like": Preset(
        name="r2d2-like",
        category="GDI-I¹ (w/o E)",
        policy=_space("epsilon_ladder").policy_text(1),
        index_set=_space("epsilon_ladder").index_set_text(),
        initial_distribution="uniform, |Λ|⁻¹",
        meta="identity (P_Λ stays uniform)",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "epsilon_ladder",
            "meta_controller": "uniform",
            "meta_kwargs": meta_kwargs_over("uniform", "epsilon_ladder"),
            "families": 1,
            "reward_shapes": ("log",),
        },
        notes=("From Ape-X and R2D2: Λ, P_Λ and E — the actors' 256 ε, each episode drawing "
               "one uniformly (Ape-X fixes one per actor: the same P_Λ over actors), never "
               "changed. " + _FROM_GDI + " " + _NO_PG_FOR_GREEDY),
    ),
    "agent57-like": Preset(
        name="agent57-like",
        category="GDI-I²",
        policy=_space("epsilon_boltzmann").policy_text(1),
        index_set=("Λ = " + " × ".join(f"{{{s}}}" for s in _space("epsilon_boltzmann").symbols)
                   + f", {len(AGENT57_INV_TEMPERATURES)} × {len(AGENT57_EPSILONS)} = "
                   f"{len(AGENT57_ARMS)} arms"),
        initial_distribution="each arm once, in order",
        meta="sliding-window UCB (window 90, β = 1, ε_UCB = 0.5), Agent57's meta-controller",
        learning=_T_ONE_FAMILY,
        fields={
            "policy_space": "epsilon_boltzmann",
            "meta_controller": "sliding_window_ucb",
            "meta_kwargs": meta_kwargs_over("sliding_window_ucb", "epsilon_boltzmann",
                                            arms=AGENT57_ARMS),
            "families": 1,
            "reward_shapes": ("log",),
        },
        notes=("From Agent57: E (its sliding-window UCB over 32 discrete arms) on a 2-D Λ gdi "
               "can act with. " + _FROM_GDI + " NOT Agent57: its arms are (β, γ), the weight of an intrinsic (NGU) reward "
               "and the discount of a network conditioned on them; gdi has no intrinsic reward "
               "and no γ-conditioned network, so here the arms are (ε, 1/τ): ε mixes in the "
               "uniform (exploratory) policy as β mixes in exploration, 1/τ sets how sharply "
               "the policy follows A. Nor are Agent57's separate extrinsic and intrinsic value "
               "heads here."),
    ),
    "laser-like": Preset(
        name="laser-like",
        category="GDI-H¹ (w/o E)",
        policy=_space("family_softmax").policy_text(LASER_FAMILIES),
        index_set=_space("family_softmax").index_set_text(LASER_FAMILIES),
        initial_distribution="uniform, P_Λ(i) = 1/K",
        meta="identity (P_Λ stays uniform)",
        learning=_T_K_FAMILIES,
        fields={
            "policy_space": "family_softmax",
            "meta_controller": "uniform",
            "meta_kwargs": meta_kwargs_over("uniform", "family_softmax", LASER_FAMILIES),
            "families": LASER_FAMILIES,
            "reward_shapes": ("log",) * LASER_FAMILIES,
        },
        notes=("K parameter families sharing nothing but the replay: each actor episode acts "
               "with one family drawn uniformly, and every family learns from all episodes. "
               "The family index travels in λ, so a step's target policy is the family that "
               "acted (LASER evaluates each learner's own policy on every sample). From LASER: "
               "Λ, P_Λ, E and the K families. " + _FROM_GDI),
    ),
})

def get_preset(name: str) -> Preset:
    """The preset registered as ``name``; ValueError naming the closest and the allowed."""
    return PRESETS.lookup(name)


def index_set_note() -> str:
    """What ``gdi presets`` shows under its table: how Λ differs by environment kind, and what
    each operator-view preset is and is not of the method it is named after."""
    searches = "; ".join(f"at scale {scale} E searches each {search_text(search)}"
                         for scale, search in INV_TEMPERATURE_SEARCHES.items())
    lines = [f"Λ as listed (the paper's table), but {searches} (docs/paper-choices.md)."]
    operator_view = [p for p in PRESETS.values() if p.name.endswith("-like")]
    lines += [f"{p.name}: {p.notes}" for p in PRESETS.values()
              if p.notes and p not in operator_view]
    lines.append(_OPERATOR_VIEW_NOTE)
    lines += [f"{p.name}: {p.notes}" for p in operator_view if p.notes]
    return "\n".join(lines)


def preset_table() -> list[dict[str, str]]:
    """Rows of ``gdi presets``: the paper's ablation-summary columns for each preset."""
    return [
        {
            "name": p.name,
            "category": p.category,
            "π_λ": p.policy,
            "Λ": p.index_set,
            "P_Λ⁽⁰⁾": p.initial_distribution,
            "E": p.meta,
            "T": p.learning,
        }
        for p in PRESETS.values()
    ]
