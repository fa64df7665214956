"""Test-wide settings and fixtures. CI runs pytest with two workers on two cores: one torch
thread per worker keeps PyTorch from oversubscribing the cores (which makes it many times
slower)."""

import pytest
import torch

from tests.registries import restored_registries

torch.set_num_threads(1)


@pytest.fixture
def registries():
    """Registrations a test makes — a policy space, an operator E, a preset — are undone after
    it, so that no other test sees them."""
    with restored_registries():
        yield
