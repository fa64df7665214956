"""Named readings of T, the operator that improves θ (``gdi train --learning NAME``): the
paper's, and the settings that learned Breakout sooner per frame (docs/learning-per-frame.md).

A preset row names the algorithm (Λ, π_λ, P_Λ, E, the families of T); a scale names where it
runs; a learning names how T steps the network. The paper's T reads π_λ's logits off A, the
same head that Retrace's Q loss regresses onto the Q-advantages, and on Breakout at the
``ale-cpu`` scale that pairing plays at random for its first ~2M frames. ``policy-head`` gives
π_λ a head L of its own beside A and V (ACER keeps one beside its Q head), trained by the
policy gradient with PPO's clip and an entropy term, with Sample Factory's Atari APPO's γ and
no auxiliary losses: the Q loss keeps A (Q = Ā + V, Retrace), E keeps its λ, and the learning
rate is the scale's (the paper's 5e-4 on the ALE and MinAtar). ``policy-head-ale`` adds
Sample Factory's standardized inputs (APPO's frames to 5 on Breakout, Boxing out of random
play), its advantages standardized per batch (APPO's frames to 10) and a floor on π_λ's
entropy (no stalls short of 15); on MinAtar the inputs end lower, so ``policy-head`` stays
without them. ``policy-head-ale-scaled``, the ``ale-cpu`` scale's default, adds value heads read
in the returns' running units and a policy head started near zero (Battle Zone at APPO's
return at 1M frames where ``policy-head-ale`` had half of it, two seeds; Double Dunk's and Space
Invaders' below-random starts shortened or gone, one seed each; Breakout's pace kept, five
seeds; docs/atari10-screens.md).
None of it is in the paper; each choice and its evidence is in docs/paper-choices.md.
"""

from __future__ import annotations

from typing import Any

from gdi.presets.scales import SCALE_KINDS

#: The paper's T: every field as the scale and the preset resolve it (π_λ = softmax(A/τ), no
#: entropy term, no clip; γ, learning rate and auxiliary tasks as the table or the scale).
PAPER = "paper"

#: Each learning's Config fields, applied over the scale's and the preset's.
LEARNINGS: dict[str, dict[str, Any]] = {
    PAPER: {},
    "policy-head": {
        # π_λ = softmax(L/τ) (E's soft-entropy mixture of L₁, L₂), L a third head; A stays the
        # Q-advantage of Retrace's loss, Ā = A − E_π[A] under that π_λ.
        "policy_head": "separate",
        # PPO's clipped surrogate of the V-trace advantage (Sample Factory's APPO: ε = 0.1).
        "pg_clip": 0.1,
        # APPO's entropy coefficient 0.01, relative to the paper's policy-gradient scale β = 10.
        "entropy_scale": 0.1,
        # APPO's horizon on Atari. Not its learning rate (2.5e-4): at the scale's 5e-4 the head
        # learned sooner on MinAtar and on Breakout (docs/learning-per-frame.md).
        "discount": 0.99,
        # No auxiliary dynamics losses (APPO has none).
        "aux_tasks": False,
    },
}
#: The head on the ALE, with two more of Sample Factory's Atari APPO's settings. Kept apart from
#: ``policy-head`` because on MinAtar Breakout the standardized inputs end lower (final return
#: 9.4 [7.8, 10.9] against 12.1 [8.6, 15.6], five seeds); the advantages' standardization has
#: not run on MinAtar.
LEARNINGS["policy-head-ale"] = {
    **LEARNINGS["policy-head"],
    # Each input element standardized by running statistics (its normalize_input).
    "input_norm": "running",
    # The policy gradient's advantages standardized over each batch, as its learner always
    # does: the entropy term's 0.1 (its 0.01 beside β = 10) then weighs against advantages of
    # spread 1, not the raw ones' ~0.3, which held π_λ near uniform.
    "pg_advantage_norm": "standardize",
    # Not APPO's: a floor on π_λ's entropy at 0.5 nats. With the two settings above π_λ
    # sharpens to 0.2-1.1 nats, and the Breakout runs that fell to 0.15-0.20 stalled at 10-13
    # (two of five seeds); with the floor π_λ stayed at 0.6-1.1 nats and no seed stalled.
    "entropy_floor": 0.5,
}

#: ``policy-head-ale`` with two levers of the ten-game screens (docs/atari10-screens.md), both
#: about scale, neither in the paper.
LEARNINGS["policy-head-ale-scaled"] = {
    **LEARNINGS["policy-head-ale"],
    # V and A in units of the returns' running mean and deviation (Sample Factory's
    # normalize_returns). Battle Zone, two seeds: 13,795 at 1M frames against 6,950 (APPO
    # 14,730); on Road Runner no change.
    "value_norm": "running",
    # L's output layer started 100 times smaller, so π_λ starts uniform at E's inverse
    # temperatures of up to 50 (PPO's policy layer starts at gain 0.01). Double Dunk's
    # below-random start shortened to 0.25M frames, Space Invaders' gone (one seed each).
    "policy_init_scale": 0.01,
}

#: What each learning is, for ``gdi presets`` and ``gdi config``.
LEARNING_NOTES: dict[str, str] = {
    PAPER: "the paper's T: π_λ = softmax(A/τ) reads the Q-advantage head A; no entropy term, "
           "no clip; γ, learning rate and auxiliary tasks as the scale has them",
    "policy-head": "π_λ reads a policy head L of its own beside A and V (Retrace's Q loss keeps "
                   "A); PPO's clip 0.1, an entropy term 0.1 (APPO's 0.01 beside β = 10), "
                   "γ = 0.99, no auxiliary losses, the scale's learning rate; not in the paper "
                   "(docs/learning-per-frame.md)",
    "policy-head-ale": "policy-head with each input element standardized by running "
                       "statistics and the policy gradient's advantages standardized per batch "
                       "(Sample Factory's Atari APPO does both), and a floor of 0.5 nats on "
                       "π_λ's entropy (its collapses stalled Breakout at 10-13); not in the paper",
    "policy-head-ale-scaled": "policy-head-ale with V and A in units of the returns' running "
                              "statistics (Sample Factory's normalize_returns) and the policy "
                              "head's output layer started at 0.01 of its scale (π_λ starts "
                              "uniform, as PPO's); not in the paper",
}

#: The learning each scale takes when none is named. The paper's everywhere the evidence has
#: not said otherwise: the ``ale`` scale is the paper's table, and on MinAtar the head is level
#: with the paper's T, not above it. On ``ale-cpu`` the paper's T plays at random on Boxing and
#: needs three times the head's frames on Breakout (docs/learning-per-frame.md);
#: ``policy-head-ale`` was its default until the ten-game screens (docs/atari10-screens.md).
DEFAULT_LEARNINGS: dict[str, str] = {"ale-cpu": "policy-head-ale-scaled"}


def learning_for(scale: str, learning: str | None = None) -> str:
    """The learning a run on ``scale`` takes: ``learning`` when given (checked), else the
    scale's default (``DEFAULT_LEARNINGS``, the paper's where it names none)."""
    if learning is None:
        return DEFAULT_LEARNINGS.get(scale, PAPER)
    if learning not in LEARNINGS:
        raise ValueError(f"learning: unknown value {learning!r}; allowed: "
                         f"{', '.join(LEARNINGS)}")
    return learning


def learning_table() -> list[dict[str, str]]:
    """One row per learning for ``gdi presets``: its name, the scales that take it by default,
    the fields it sets and what it is."""
    return [
        {
            "learning": name,
            "default on scales": ", ".join(scale for scale in SCALE_KINDS
                                           if learning_for(scale) == name) or "—",
            "sets": ", ".join(f"{k}={v!r}" for k, v in fields.items()) or "— (the scale's)",
            "what it is": LEARNING_NOTES[name],
        }
        for name, fields in LEARNINGS.items()
    ]
