"""One way to register a part: a :class:`Registry` per kind of part (policy spaces Λ,
operators E, torsos, backends, presets), each a dict from name to part.

A part registers itself where it is defined, with the registry's decorator, and the package
that holds its kind imports every module in it, so a new part is one file::

    @register_controller
    class ThompsonArms:
        kind = "thompson"

What a part can do is declared by the part (a torso's ``residual``, an E's constructor
parameters), never by checks of its name elsewhere. A lookup of an unknown name is one
ValueError that names it, the closest registered names and every allowed one. A registry may
hold ``"module:attribute"`` text for a part imported only when it is chosen (``load``): the
backends, since Ray is an optional extra. Standard library only and importing nothing of gdi,
so that every layer, the config's included, may use it.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["Registry", "import_package_modules"]

T = TypeVar("T")


class Registry(dict):
    """Name → part for one ``kind`` of part (the word its messages use: "policy space")."""

    def __init__(self, kind: str, entries: dict[str, Any] | None = None,
                 name_attribute: str = "name") -> None:
        super().__init__()
        self.kind = kind
        #: The class attribute that names a part registered without a name (``register``).
        self.name_attribute = name_attribute
        for name, part in (entries or {}).items():
            self.add(name, part)

    def add(self, name: str, part: T) -> T:
        """Register ``part`` as ``name``; a TypeError when the name is taken (two parts with
        one name would make which one a run gets depend on import order)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind}'s name must be a non-empty string, got {name!r}")
        if name in self:
            raise TypeError(f"{self.kind} {name!r} is registered twice")
        self[name] = part
        return part

    def register(self, part: Any = None, *, name: str | None = None) -> Any:
        """Class decorator, bare (``@registry.register``: the class is registered under its
        ``name_attribute``) or with a name (``@registry.register(name="x")``)."""

        def decorate(cls: T) -> T:
            self.add(name if name is not None else getattr(cls, self.name_attribute, None),
                     cls)
            return cls

        return decorate if part is None else decorate(part)

    def lookup(self, name: str) -> Any:
        """The part registered as ``name``; a one-line ValueError naming the closest names and
        every allowed one otherwise."""
        if isinstance(name, str) and name in self:
            return self[name]
        close = difflib.get_close_matches(str(name), list(self), n=2)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise ValueError(f"unknown {self.kind} {name!r}{hint}; allowed: {', '.join(self)}")

    def load(self, name: str) -> Any:
        """``lookup``, importing a part registered as ``"module:attribute"`` text."""
        part = self.lookup(name)
        if isinstance(part, str):
            module, _, attribute = part.partition(":")
            return getattr(importlib.import_module(module), attribute)
        return part

    @contextmanager
    def restored(self) -> Iterator[None]:
        """Within the block parts may be registered (a test's); on leaving it the registry
        holds what it held on entering it."""
        saved = dict(self)
        try:
            yield
        finally:
            self.clear()
            self.update(saved)


def import_package_modules(package_name: str, package_path) -> None:
    """Import every module of a package (its ``__name__`` and ``__path__``), so that each
    part registers itself: a new part is one new file."""
    import pkgutil

    for module in pkgutil.iter_modules(package_path):
        importlib.import_module(f"{package_name}.{module.name}")
