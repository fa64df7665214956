"""The backends a run can choose, by name: the one registry of them.

The config reads the names (the ``backend`` field's choices), the command line reads them
(``gdi train --backend``), and the runtime imports the chosen one's class
(``gdi.runtime.backends.base.backend_class``). Importing nothing of gdi but the registry
(``gdi.registry``, standard library only), so that the config, which every layer imports, may
read it without importing the runtime.
"""

from __future__ import annotations

from gdi.registry import Registry

__all__ = ["BACKENDS"]

#: Backend name → "module:class", imported only when chosen (``Registry.load``; Ray is an
#: optional extra, so a backend cannot register itself by being imported).
BACKENDS = Registry("backend", {
    "inline": "gdi.runtime.backends.inline:InlineBackend",
    "local": "gdi.runtime.backends.local:LocalBackend",
    "ray": "gdi.runtime.backends.ray_backend:RayBackend",
})
