"""benchmarks/initial_entropy.py: π_λ's entropy at initialization, on a small environment."""

import numpy as np
import torch

from benchmarks.initial_entropy import entropies
from tests.tolerance import assert_close, is_close


def test_entropies_are_those_of_distributions_over_the_actions_and_seeded():
    ent, actions = entropies("gym:CartPole-v1", "gdi-i3", None, None, envs=4, steps=6, seed=0)
    assert actions == 2 and ent.shape == (24,)
    # Each is a distribution's entropy: between a sure action's 0 and the uniform log |A|
    # (reached up to the rounding of a two-term sum).
    assert np.all(ent >= 0)
    over = ent[ent > np.log(2)]
    assert_close(over, np.full_like(over, np.log(2)), dtype=torch.float64, terms=2)
    again, _ = entropies("gym:CartPole-v1", "gdi-i3", None, None, envs=4, steps=6, seed=0)
    np.testing.assert_array_equal(ent, again)  # the same seed, the same network and play


def test_a_set_reaches_the_network_a_near_zero_policy_head_starts_uniform():
    """``sets`` are ``gdi train --set`` assignments: with a policy head whose initial output
    layer is scaled by 1e-9, π_λ is the uniform policy at any τ of E's box (CartPole's 1/τ up
    to 1,000: logits within ~1e-7 of each other) up to rounding; at PyTorch's scale it is not."""
    head = ("policy_head=separate",)
    plain, _ = entropies("gym:CartPole-v1", "gdi-i3", None, None, envs=4, steps=6, seed=0,
                         sets=head)
    small, _ = entropies("gym:CartPole-v1", "gdi-i3", None, None, envs=4, steps=6, seed=0,
                         sets=(*head, "policy_init_scale=1e-9"))
    uniform = np.full_like(small, np.log(2))
    assert_close(small, uniform, dtype=torch.float64, terms=2)
    assert not is_close(plain, uniform, dtype=torch.float64, terms=2)
