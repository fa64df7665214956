"""The promise of docs/extending/index.md, kept: a new policy space Λ is one class and its ``@register``; a new
operator E is one class and its ``@register_controller``. Both are defined in this file, and with
no other edit anywhere they are validated and listed like the built-in ones, pass the
registry-driven tests of ``tests/test_policy_space.py`` and ``tests/meta/``, and train an inline
run together. The registrations are undone after each test (``tests.registries``)."""

import json

import numpy as np
import pytest
import torch

from gdi.config import field_docs
from gdi.meta import CONTROLLERS, meta_kwargs_over
from gdi.meta.base import (
    check_count,
    check_index_names,
    check_lambda,
    check_return,
    check_state,
    match_arm,
    register_controller,
)
from gdi.policy_space import POLICY_SPACES, PolicySpace, register, softmax_np
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint
from gdi.runtime.wiring import train
from tests import test_policy_space as space_contract
from tests.meta import test_meta_controllers as controller_contract
from tests.registries import restored_registries
from tests.runtime.helpers import tiny_config


class UniformMixedSoftmax(PolicySpace):
    """π_λ = (1−w)·softmax(A) + w·uniform, λ = w: softmax exploration with a uniform floor."""

    name = "test_uniform_mixed_softmax"
    index_names = ("w",)
    description = "(1−w)·softmax(A) + w·uniform"
    bounds = ((0.0, 1.0),)
    search_box = ((0.0, 1.0),)
    search_accuracies = (0.25,)
    inverse_temperatures = (False,)
    fixed_selection = (0.0,)
    families = (1,)

    def _log_probs(self, advs, parts, validate):
        weight = parts[0]
        if validate and weight.numel() and not bool(((weight >= 0) & (weight <= 1)).all()):
            raise ValueError(f"w must be in [0, 1], got {weight.min()}…{weight.max()}")
        adv = advs[0]
        uniform = 1.0 / adv.shape[-1]
        return torch.log((1 - weight[..., None]) * torch.softmax(adv, -1) + weight[..., None]
                         * uniform)

    def _acting_probs(self, advs: np.ndarray, lam: np.ndarray) -> np.ndarray:
        weight = lam[:, 0:1]
        return (1 - weight) * softmax_np(advs[0]) + weight / advs.shape[-1]


class RoundRobin:
    """An E that plays its arms in turn and keeps each arm's mean return (its greedy λ: the
    best mean so far). It learns nothing about what to play: the smallest E with state."""

    kind = "test_round_robin"

    def __init__(self, arms, index_names=None, seed=0):
        self._arms = np.asarray(arms, dtype=np.float64)
        self.index_names = check_index_names(index_names, self._arms.shape[1])
        self._config = {"arms": self._arms.tolist(), "index_names": self.index_names}
        self._next = 0
        self._sums = np.zeros(len(self._arms))
        self._counts = np.zeros(len(self._arms))

    @property
    def dim(self) -> int:
        return self._arms.shape[1]

    @property
    def lambda_ranges(self) -> np.ndarray:
        return np.stack([self._arms.min(axis=0), self._arms.max(axis=0)], axis=1)

    def sample_many(self, n: int) -> np.ndarray:
        picks = (self._next + np.arange(check_count(n))) % len(self._arms)
        self._next = int(picks[-1] + 1) % len(self._arms)
        return self._arms[picks].copy()

    def sample(self) -> np.ndarray:
        return self.sample_many(1)[0]

    def greedy(self) -> np.ndarray:
        if not self._counts.any():
            raise ValueError("no episode has been reported yet, so there is no greedy λ")
        means = np.where(self._counts > 0, self._sums / np.maximum(self._counts, 1), -np.inf)
        return self._arms[int(np.argmax(means))].copy()

    def update(self, lam, episode_return: float) -> None:
        lam = check_lambda(lam, self.dim, self.index_names)
        g = check_return(episode_return)
        arm = match_arm(self._arms, lam)  # to float32's precision, as λ travels
        self._counts[arm] += 1
        self._sums[arm] += g

    def state_dict(self) -> dict:
        return {"controller": self.kind, "config": dict(self._config), "next": self._next,
                "sums": self._sums.tolist(), "counts": self._counts.tolist()}

    def load_state_dict(self, state: dict) -> None:
        check_state(state, self.kind, self._config)
        self._next = int(state["next"])
        self._sums = np.array(state["sums"], dtype=np.float64)
        self._counts = np.array(state["counts"], dtype=np.float64)


ARMS = ((0.0,), (0.5,), (1.0,))


@pytest.fixture
def new_parts(registries):
    """The two registrations a contributor writes: the decorators."""
    register(UniformMixedSoftmax)
    register_controller(RoundRobin)
    return UniformMixedSoftmax.name, RoundRobin.kind


def test_a_new_space_and_a_new_e_pass_the_registry_driven_tests(new_parts):
    space, controller = new_parts
    # The policy-space contract: λ's width is checked, the NumPy and torch π_λ agree.
    for extra in (-1, 1):
        space_contract.test_wrong_lambda_width_rejected(space, extra)
    space_contract.test_acting_probs_equal_the_log_space_policy(space)
    # The E contract, on the demo's 1-D and 3-D spaces: state round trips, checked updates,
    # draws inside its reach, a restored state continuing identically.
    for dims in (1, 3):
        controller_contract.test_protocol_and_state_round_trip(controller, dims)
        controller_contract.test_sample_many_draws_rows_of_lambda_in_range(controller, dims)
    controller_contract.test_every_controller_validates_updates(controller)
    controller_contract.test_sample_many_continues_from_a_restored_state_identically(controller)
    controller_contract.test_every_registered_controller_is_built_by_name(controller)


def test_a_new_space_and_a_new_e_are_listed_validated_and_trained(new_parts, tmp_path):
    space, controller = new_parts
    docs = field_docs()  # what gdi config and the configuration page show
    assert f"{space} (λ = w, π_λ = (1−w)·softmax(A) + w·uniform)" in docs["policy_space"]
    assert controller in docs["meta_controller"]

    meta_kwargs = meta_kwargs_over(controller, space, arms=ARMS)
    assert meta_kwargs == {"arms": ARMS, "index_names": ("w",)}
    config = tiny_config(frames=2400, policy_space=space, meta_controller=controller,
                         meta_kwargs=json.dumps(meta_kwargs))
    # A new part is checked like a built-in one when the config is built.
    with pytest.raises(ValueError, match=r"E reaches w in \[0, 2\].*takes w in \[0, 1\]"):
        config.replace(meta_kwargs={"arms": [[0.0], [2.0]]})
    with pytest.raises(ValueError, match="dimension 2"):
        config.replace(meta_kwargs={"arms": [[0.0, 1.0]]})

    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    assert result.frames >= config.frames and np.isfinite(result.final_eval_return)
    rows = [json.loads(line) for line in (result.run_dir / "meta.jsonl").read_text().splitlines()]
    played = [row["lambda"][0] for row in rows]
    assert set(played) == {arm[0] for arm in ARMS}  # every arm, and nothing else, was played
    saved = load_checkpoint(latest_checkpoint(result.run_dir))["controllers"][0]
    assert saved["controller"] == controller and sum(saved["counts"]) == len(rows)


def test_the_registrations_are_undone():
    before = dict(POLICY_SPACES), dict(CONTROLLERS)
    with restored_registries():
        register(UniformMixedSoftmax)
        register_controller(RoundRobin)
        assert UniformMixedSoftmax.name in POLICY_SPACES and RoundRobin.kind in CONTROLLERS
    assert (dict(POLICY_SPACES), dict(CONTROLLERS)) == before
