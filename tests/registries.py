"""Registrations made inside a test, undone after it: the ``registries`` fixture of
``tests/conftest.py`` and the tests that check the undoing use this."""

import contextlib


@contextlib.contextmanager
def restored_registries():
    """Within the block, policy spaces, operators E, torsos, backends and presets may be
    registered; on leaving it every registry holds what it held on entering it, so no other
    test sees them."""
    from gdi.backend_registry import BACKENDS
    from gdi.meta import CONTROLLERS
    from gdi.nets import TORSOS
    from gdi.policy_space import POLICY_SPACES
    from gdi.presets import PRESETS

    with contextlib.ExitStack() as stack:
        for registry in (POLICY_SPACES, CONTROLLERS, TORSOS, BACKENDS, PRESETS):
            stack.enter_context(registry.restored())
        yield
