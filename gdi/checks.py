"""The value checks every layer's config shares: each a ValueError of one line naming the field,
the value given and what is allowed. Below every package (it imports nothing of gdi), so that
a layer's config (``gdi.nets.config``, ``gdi.learning.loss``, ...) checks its own fields with
the same words as the run's ``gdi.config.Config`` does its own."""

from __future__ import annotations

import difflib
import math
import typing
from collections.abc import Iterable
from typing import Any


def positive(obj: Any, *names: str) -> None:
    """Each field ``names`` of ``obj`` is a finite number > 0."""
    for name in names:
        positive_number(name, getattr(obj, name))


def positive_number(name: str, value: Any) -> None:
    """``value`` (of the field or argument ``name``) is a finite number > 0."""
    if isinstance(value, bool) or not (isinstance(value, int | float) and value > 0
                                       and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive number, got {value!r}")


def non_negative(obj: Any, *names: str) -> None:
    """Each field ``names`` of ``obj`` is a finite number >= 0."""
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not (isinstance(value, int | float) and value >= 0
                                           and math.isfinite(value)):
            raise ValueError(f"{name} must be >= 0, got {value!r}")


def one_of(field_name: str, value: Any, allowed: Iterable[str]) -> None:
    """``value`` is one of ``allowed`` (a registry's names); else the error suggests the
    closest."""
    allowed = list(allowed)
    if value not in allowed:
        close = difflib.get_close_matches(str(value), allowed, n=2)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise ValueError(
            f"{field_name}: unknown value {value!r}{hint}; allowed: {', '.join(allowed)}"
        )


def literal_choice(obj: Any, *names: str) -> None:
    """Each field ``names`` of ``obj`` holds one of the values its ``Literal[...]`` annotation
    allows (a dataclass does not check annotations itself)."""
    hints = typing.get_type_hints(type(obj))
    for name in names:
        allowed = typing.get_args(hints[name])
        if getattr(obj, name) not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, got "
                             f"{getattr(obj, name)!r}")
