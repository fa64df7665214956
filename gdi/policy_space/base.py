"""What a policy space {π_λ | λ ∈ Λ} is, and the registry that names them.

A space is one class in one file of this package: its torch log-probabilities (the learner's
target policy), its NumPy acting probabilities next to them (the actor's and evaluator's
path: no autograd, faster for one small batch per step; docs/benchmarks.md), its index names,
the box λ may take, the box E searches by default, and how tables write λ, Λ and π_λ.
``@register`` adds it to ``POLICY_SPACES``; the package imports every module in it, so a new Λ
touches its own file, nothing else (a preset may name it).

Advantages arrive family-major: ``advs`` is ``[F, ..., A]`` (a tensor or a sequence of F
tensors), one entry per parameter family (GDI-I: F = 1; GDI-H³: F = 2; LASER-like: K).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import torch

from gdi.registry import Registry

__all__ = [
    "EPSILON_SEARCH",
    "INV_TEMPERATURE_SEARCH",
    "POLICY_SPACES",
    "PolicySpace",
    "get_policy_space",
    "register",
]

#: Every policy space by name (an instance of each), filled by ``@register`` as the package
#: imports its modules.
POLICY_SPACES = Registry("policy space")

#: Where the paper's bandit searches an inverse temperature 1/τ, and its block size there (App.
#: "Hyperparameters": [0, 50] with blocks of 1.0); every space with a 1/τ coordinate searches it.
INV_TEMPERATURE_SEARCH = ((0.0, 50.0), 1.0)
#: The same for a mixture weight ε: [0, 1] with blocks of 0.1.
EPSILON_SEARCH = ((0.0, 1.0), 0.1)


class PolicySpace:
    """One family of behavior policies indexed by λ ∈ R^k. Subclasses set the class variables
    and implement ``_log_probs`` (torch) and ``_acting_probs`` (NumPy) for the same π_λ."""

    name: ClassVar[str]
    index_names: ClassVar[tuple[str, ...]]
    """The λ coordinates' names in code, configs and logs (``inv_tau1``, ``eps``)."""
    symbols: ClassVar[tuple[str, ...] | None] = None
    """The same coordinates as the paper writes them (``1/τ₁``, ``ε``), for tables and notes;
    None: the index names."""
    description: ClassVar[str]
    """π_λ as the paper writes it (``ε·softmax(A₁/τ₁) + (1−ε)·softmax(A₂/τ₂)``); A₁, A₂ are
    the first and last family's advantages, as ``policy_text`` says."""
    bounds: ClassVar[tuple[tuple[float, float | None], ...]]
    """Where each λ coordinate must lie, (low, high); high None: unbounded."""
    search_box: ClassVar[tuple[tuple[float, float], ...]]
    """The box E searches by default, one (low, high) per coordinate (λ-space units); a space
    whose box depends on the number of families overrides ``default_box``."""
    search_accuracies: ClassVar[tuple[float, ...]]
    """The bandit's block size per coordinate in that box (App. "Hyperparameters")."""
    inverse_temperatures: ClassVar[tuple[bool, ...]]
    """Which coordinates are inverse temperatures 1/τ (searched as x = log(1 + 1/τ) on gym:)."""
    fixed_selection: ClassVar[tuple[float, ...] | None] = None
    """The one λ of this space's "w/o E" point (|Λ| = 1), where the paper or the method it
    stands for names one; None where it names none."""
    families: ClassVar[tuple[int, ...]] = (1, 2)
    """Parameter-family counts this space acts with; ``check_families`` may widen it."""

    @property
    def dim(self) -> int:
        return len(self.index_names)

    def __repr__(self) -> str:
        return f"<policy space {self.name!r} λ = ({', '.join(self.index_names)})>"

    # --- what configs and E read ----------------------------------------------------------
    def check_families(self, families: int) -> None:
        """ValueError unless this space can act with ``families`` parameter families."""
        if families not in self.families:
            allowed = ", ".join(map(str, self.families))
            raise ValueError(
                f"policy space {self.name!r} acts with {allowed} parameter famil(ies), "
                f"got families={families}"
            )

    def lambda_bounds(self, families: int) -> tuple[tuple[float, float | None], ...]:
        """Where λ must lie with ``families`` parameter families (a family index depends on it)."""
        return self.bounds

    def outside_bounds(self, box: np.ndarray, families: int
                       ) -> tuple[str, float, float, str] | None:
        """The first coordinate of ``box`` ``[k, 2]`` (low, high per coordinate of λ) that
        leaves the space's bounds with ``families`` families, as (its name, its low, its high,
        what the space allows); None when the whole box is valid."""
        for name, (lo, hi), (low, high) in zip(
            self.index_names, np.asarray(box, np.float64), self.lambda_bounds(families),
            strict=True,
        ):
            if lo < low or (high is not None and hi > high):
                allowed = f"[{low:g}, {high:g}]" if high is not None else f">= {low:g}"
                return name, float(lo), float(hi), allowed
        return None

    def check_lambda_box(self, box: np.ndarray, families: int) -> None:
        """ValueError unless every λ in ``box`` ``[k, 2]`` (E's reach) is a valid index."""
        outside = self.outside_bounds(box, families)
        if outside is not None:
            name, lo, hi, allowed = outside
            raise ValueError(f"E reaches {name} in [{lo:g}, {hi:g}], but policy space "
                             f"{self.name!r} takes {name} in {allowed}")

    def default_box(self, families: int) -> tuple[tuple[float, float], ...]:
        """The box E searches by default with ``families`` parameter families."""
        return self.search_box

    def values(self, families: int) -> np.ndarray | None:
        """The finite Λ as λ vectors ``[n, k]`` for a discrete space; None for a box."""
        return None

    # --- how tables and notes write it (``gdi presets``, ``gdi config``) --------------------
    def lambda_text(self) -> str:
        """λ in the paper's notation: ``λ = (1/τ₁, 1/τ₂, ε)``, ``λ = 1/τ``."""
        symbols = self.symbols or self.index_names
        return "λ = " + (symbols[0] if len(symbols) == 1 else f"({', '.join(symbols)})")

    def point_text(self, value) -> str:
        """One λ with its value: ``λ = (1/τ₁, 1/τ₂, ε) = (1, 0, 1)``, ``λ = ε = 0.1``."""
        numbers = [f"{float(v):g}" for v in value]
        shown = numbers[0] if len(numbers) == 1 else f"({', '.join(numbers)})"
        return f"{self.lambda_text()} = {shown}"

    def index_set_text(self, families: int = 1) -> str:
        """Λ as E searches it by default: ``λ = (1/τ₁, 1/τ₂, ε) ∈ [0, 50]×[0, 50]×[0, 1]``;
        a discrete space overrides it to list its points."""
        box = "×".join(f"[{low:g}, {high:g}]" for low, high in self.default_box(families))
        return f"{self.lambda_text()} ∈ {box}"

    def policy_text(self, families: int) -> str:
        """π_λ with ``families`` parameter families: the description, where with one family
        A₁ and A₂ are the same advantages A."""
        if families == 1:
            return self.description.replace("A₁", "A").replace("A₂", "A")
        return self.description

    # --- π_λ ------------------------------------------------------------------------------
    def log_probs(
        self, advs: torch.Tensor | Sequence[torch.Tensor], lam: torch.Tensor, *,
        validate: bool = True,
    ) -> torch.Tensor:
        """log π_λ ``[..., A]`` for advantages ``[F, ..., A]`` and λ ``[..., k]``;
        ``validate=False`` skips λ's range check (λ drawn from an E controller)."""
        advs = list(advs)
        if not advs:
            raise ValueError("advs must hold the advantages of at least one parameter family")
        if lam.dim() < 1 or lam.shape[-1] != self.dim:
            raise ValueError(
                f"λ for the {self.name!r} policy space must have shape [..., {self.dim}] "
                f"({', '.join(self.index_names)}), got {tuple(lam.shape)}"
            )
        parts = list(lam.to(advs[0].dtype).unbind(-1))
        return self._log_probs(advs, parts, validate)

    def probs(self, advs: torch.Tensor | Sequence[torch.Tensor], lam: torch.Tensor) -> torch.Tensor:
        return self.log_probs(advs, lam).exp()

    def acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """π_λ as float64 probabilities ``[N, A]`` for advantages ``[F, N, A]`` and λ
        ``[N, k]``: no autograd, no range check (λ comes from E), mixtures formed in
        probability space (a component's underflow to 0 only removes actions of probability
        < 1e-300). Rows sum to 1 up to rounding."""
        advs = np.asarray(advs, np.float64)
        lam = np.asarray(lam, np.float64)
        if advs.ndim != 3 or lam.ndim != 2 or lam.shape[1] != self.dim or advs.shape[1] != lam.shape[0]:
            raise ValueError(
                f"acting_probs needs advantages [F, N, A] and λ [N, {self.dim}] "
                f"({', '.join(self.index_names)}), got {advs.shape} and {lam.shape}"
            )
        return self._acting_probs(advs, lam)

    def _log_probs(self, advs: list[torch.Tensor], parts: list[torch.Tensor],
                   validate: bool) -> torch.Tensor:
        raise NotImplementedError

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def register(cls: type[PolicySpace]) -> type[PolicySpace]:
    """Class decorator: add one instance of ``cls`` to ``POLICY_SPACES`` under ``cls.name``,
    after checking that its declarations agree with each other (read from the instance, so a
    declaration may be a property computed from other class attributes)."""
    space = cls()
    k = space.dim
    for attr in ("bounds", "search_box", "search_accuracies", "inverse_temperatures"):
        if len(getattr(space, attr)) != k:
            raise TypeError(f"{cls.__name__}.{attr} needs one entry per index name ({k})")
    if space.symbols is not None and len(space.symbols) != k:
        raise TypeError(f"{cls.__name__}.symbols needs one entry per index name ({k})")
    POLICY_SPACES.add(cls.name, space)
    return cls


def get_policy_space(name: str) -> PolicySpace:
    """The policy space registered as ``name``; ValueError naming what is allowed."""
    return POLICY_SPACES.lookup(name)
