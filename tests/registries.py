"""Registrations made inside a test, undone after it: the ``registries`` fixture of
``tests/conftest.py`` and the tests that check the undoing use this."""

import contextlib


@contextlib.contextmanager
def restored_registries():
    """Within the block, policy spaces, operators E and presets may be registered; on leaving
    it every registry holds what it held on entering it, so no other test sees them."""
    from gdi.meta.registry import CONTROLLERS
    from gdi.policy_space import POLICY_SPACES
    from gdi.presets import PRESETS

    saved = [(registry, dict(registry)) for registry in (POLICY_SPACES, CONTROLLERS, PRESETS)]
    try:
        yield
    finally:
        for registry, entries in saved:
            registry.clear()
            registry.update(entries)
