"""benchmarks/initial_entropy.py: π_λ's entropy at initialization, on a small environment."""

import numpy as np
import torch

from benchmarks.initial_entropy import entropies
from tests.tolerance import assert_close


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
