"""Policy spaces {π_λ | λ ∈ Λ}: how an index λ and the network's advantages give a behavior policy.

``functions`` holds the math as pure torch functions (and the bandit's λ ↔ x transforms);
``base`` defines what a space is, the registry and the paper's search ranges; every other
module here is one space, one class, registered by ``@register``. This package imports all its
modules, so adding a Λ is adding a file: configs name it as ``policy_space``, and a preset may
name it too.
"""

from gdi.policy_space.base import (
    EPSILON_SEARCH,
    INV_TEMPERATURE_SEARCH,
    POLICY_SPACES,
    PolicySpace,
    get_policy_space,
    register,
)
from gdi.policy_space.functions import (
    INDEX_TRANSFORMS,
    boltzmann_log_policy,
    boltzmann_policy,
    epsilon_greedy_np,
    epsilon_greedy_policy,
    inv_temperature_to_x,
    soft_entropy_log_policy,
    soft_entropy_policy,
    softmax_np,
    x_to_inv_temperature,
)
from gdi.registry import import_package_modules

import_package_modules(__name__, __path__)  # each space registers itself: one file per Λ

__all__ = [
    "EPSILON_SEARCH",
    "INDEX_TRANSFORMS",
    "INV_TEMPERATURE_SEARCH",
    "POLICY_SPACES",
    "PolicySpace",
    "boltzmann_log_policy",
    "boltzmann_policy",
    "epsilon_greedy_np",
    "epsilon_greedy_policy",
    "get_policy_space",
    "inv_temperature_to_x",
    "register",
    "soft_entropy_log_policy",
    "soft_entropy_policy",
    "softmax_np",
    "x_to_inv_temperature",
]
