"""MinAtar and Gymnasium ids: observation layout, the SAME_STEP stream against the plain
single environments (``minatar.Environment``, ``gymnasium.make``) reset by hand, seeding."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from gdi.envs import env_seeds, make_vector_env, resolve_env
from tests.envs.contract import assert_matches_reference, assert_same_rollout, rollout


class _MinAtarReference:
    """``minatar.Environment`` stepped by hand: reset at episode ends, the cap counted here."""

    def __init__(self, config, seed: int) -> None:
        self.config, self.seed = config, seed

    def _obs(self):
        return self.env.state().transpose(2, 0, 1).astype(np.uint8)

    def reset(self):
        import minatar

        self.env = minatar.Environment(
            self.config.name,
            sticky_action_prob=self.config.sticky_action_prob,
            difficulty_ramping=self.config.difficulty_ramping,
        )
        self.env.seed(self.seed)
        return self.reset_next()

    def step(self, action):
        reward, done = self.env.act(action)
        self.t += 1
        truncated = not done and self.t >= self.config.max_episode_steps
        return self._obs(), float(reward), bool(done), truncated

    def reset_next(self):
        self.env.reset()
        self.t = 0
        return self._obs()


class _GymReference:
    def __init__(self, config, seed: int) -> None:
        self.env = gymnasium.make(config.name, max_episode_steps=config.max_episode_steps)
        self.seed = seed

    def reset(self):
        return self.env.reset(seed=self.seed)[0]

    def step(self, action):
        obs, reward, terminated, truncated, _ = self.env.step(action)
        return obs, float(np.float32(reward)), terminated, truncated

    def reset_next(self):
        return self.env.reset()[0]


@pytest.mark.parametrize(
    ("spec", "cap", "reference"),
    [("minatar:breakout", 12, _MinAtarReference), ("gym:CartPole-v1", 15, _GymReference)],
)
def test_same_step_stream_equals_the_single_env_reset_by_hand(spec, cap, reference):
    env = make_vector_env(spec, 3, seed=4, max_episode_steps=cap)
    ours = rollout(env, steps=120, action_seed=1)
    assert np.any(ours.terminated) and np.any(ours.truncated)
    for i, seed in enumerate(env_seeds(4, 3)):
        assert_matches_reference(ours, i, reference(env.config, int(seed)))
    env.close()


@pytest.mark.parametrize(
    ("game", "channels"),
    [("asterix", 4), ("breakout", 4), ("freeway", 7), ("seaquest", 10), ("space_invaders", 6)],
)
def test_minatar_observations_are_channels_first_binary_uint8(game, channels):
    env = make_vector_env(f"minatar:{game}", 2, seed=0)
    assert env.single_observation_space.shape == (channels, 10, 10)
    assert env.single_action_space.n == 6
    run = rollout(env, steps=20, action_seed=0)
    obs = np.stack(run.obs)
    assert obs.dtype == np.uint8 and obs.shape == (21, 2, channels, 10, 10)
    assert set(np.unique(obs).tolist()) == {0, 1}
    env.close()


def test_minatar_keeps_its_own_defaults():
    config = resolve_env("minatar:seaquest")
    assert config.sticky_action_prob == 0.1 and config.difficulty_ramping is True
    assert config.max_episode_steps is None and config.frames_per_step == 1
    env = make_vector_env(config, 1, seed=0)
    assert env.games[0].sticky_action_prob == 0.1
    assert env.games[0].env.ramping is True
    env.close()


def test_gym_observations_and_spaces():
    env = make_vector_env("gym:CartPole-v1", 4, seed=0)
    obs, _ = env.reset()
    assert obs.shape == (4, 4) and obs.dtype == np.float32
    assert env.single_action_space.n == 2
    env.close()


@pytest.mark.parametrize("spec", ["minatar:asterix", "gym:CartPole-v1"])
def test_same_seed_same_observations_and_env_indices_differ(spec):
    first = make_vector_env(spec, 3, seed=9, max_episode_steps=25)
    second = make_vector_env(spec, 3, seed=9, max_episode_steps=25)
    a = rollout(first, steps=30, action_seed=3)
    assert_same_rollout(a, rollout(second, steps=30, action_seed=3))
    # Reseeding a used environment replays it exactly.
    assert_same_rollout(a, rollout(first, steps=30, action_seed=3, seed=9))
    # Another seed, another stream; the same actions in every index, yet different streams.
    assert not np.array_equal(np.stack(a.obs), np.stack(rollout(second, 30, 3, seed=10).obs))
    same_actions = np.zeros(3, dtype=np.int64)
    first.reset(seed=9)
    streams = np.stack([first.step(same_actions)[0] for _ in range(30)], axis=1)
    assert not np.array_equal(streams[0], streams[1]) and not np.array_equal(streams[1], streams[2])
    first.close()
    second.close()


def test_gym_ids_need_discrete_actions_and_box_observations():
    with pytest.raises(ValueError, match="Discrete"):
        make_vector_env("gym:Pendulum-v1", 1, seed=0)
    with pytest.raises(ValueError, match="Box"):
        make_vector_env("gym:Blackjack-v1", 1, seed=0)


def test_bad_actions_and_step_before_reset_are_refused():
    env = make_vector_env("gym:CartPole-v1", 2, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset()
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        env.step(np.array([0, -1]))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros((2, 1), dtype=np.int64))
    env.close()
