"""Test-wide settings. CI runs pytest with two workers on two cores: one torch thread per
worker keeps PyTorch from oversubscribing the cores (which makes it many times slower)."""

import torch

torch.set_num_threads(1)
