"""Bandit coordinates x ↔ λ, per coordinate of Λ.

Paper: App. "Adaptive Controller Formalism": the bandit searches coordinates x and acts with
λ = f(x). For inverse temperatures f is a ``transform`` of ``gdi.policy_space`` ("identity":
x = 1/τ; "log1p": x = log(1 + 1/τ)); other coordinates (ε) are always the identity. Every E
that samples a box in those coordinates (the bandit, and the uniform E that is its control)
maps them to λ here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CoordinateTransforms"]


class CoordinateTransforms:
    """x ↔ λ per coordinate with ``gdi.policy_space``'s transforms ("identity", "log1p")."""

    def __init__(self, transforms: tuple[str, ...], ranges: np.ndarray):
        self.names = transforms
        self._to_x = self._to_lam = None
        if any(t != "identity" for t in transforms):
            # Imported only when needed: gdi.policy_space imports torch, gdi.meta is numpy only.
            from gdi.policy_space import inv_temperature_to_x, x_to_inv_temperature

            for t in transforms:
                inv_temperature_to_x(0.0, t)  # raises ValueError naming the allowed transforms
            self._to_x, self._to_lam = inv_temperature_to_x, x_to_inv_temperature
            for i, t in enumerate(transforms):
                if t != "identity" and ranges[i, 0] < 0:
                    raise ValueError(
                        f"transform {t!r} needs a range with l >= 0 in bandit coordinates, "
                        f"got [{ranges[i, 0]}, {ranges[i, 1]}] for coordinate {i}"
                    )

    def to_lambda(self, x: np.ndarray) -> np.ndarray:
        """x ``[..., dim]`` → λ ``[..., dim]``."""
        if self._to_lam is None:
            return x.copy()
        return np.stack([self._to_lam(x[..., i], t) for i, t in enumerate(self.names)], axis=-1)

    def coordinate_to_lambda(self, x: np.ndarray, coordinate: int) -> np.ndarray:
        """x of one coordinate (any shape) → its λ."""
        if self._to_lam is None:
            return np.array(x, dtype=np.float64)
        return self._to_lam(x, self.names[coordinate])

    def to_x(self, lam: np.ndarray) -> np.ndarray:
        if self._to_x is None:
            return lam.copy()
        return np.array([float(self._to_x(v, t)) for v, t in zip(lam, self.names, strict=True)])
