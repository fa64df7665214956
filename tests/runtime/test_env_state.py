"""An inline actor's environments saved as data (gdi.runtime.acting.env_state, issue 72): after
a capture, a round trip through a data file and a restore into a freshly built environment,
the restored one steps exactly as the original goes on stepping."""

import numpy as np
import pytest

from gdi import data_file
from gdi.envs import make_vector_env
from gdi.runtime.acting import env_state

EXACT = ["gym:CartPole-v1", "gym:Acrobot-v1", "minatar:breakout", "minatar:asterix",
         "minatar:freeway", "minatar:seaquest", "minatar:space_invaders"]


def _play(env, rng, steps):
    """Random actions for ``steps`` steps: every observation, reward and end flag."""
    out = []
    for _ in range(steps):
        actions = rng.integers(0, env.single_action_space.n, env.num_envs)
        obs, reward, terminated, truncated, _ = env.step(actions)
        out.append((obs.copy(), reward.copy(), terminated.copy(), truncated.copy()))
    return out


@pytest.mark.parametrize("spec", EXACT)
def test_a_restored_environment_steps_as_the_original_goes_on(spec):
    original = make_vector_env(spec, 3, seed=5)
    original.reset()
    _play(original, np.random.default_rng(0), 150)  # mid-episode, some episodes ended
    saved = data_file.loads(data_file.dumps({"env": env_state.capture(original)}))["env"]
    fresh = make_vector_env(spec, 3, seed=99)  # another seed: everything must come from `saved`
    fresh.reset()
    env_state.restore(fresh, saved)
    expected = _play(original, np.random.default_rng(1), 300)
    actual = _play(fresh, np.random.default_rng(1), 300)
    for (eo, er, et, eu), (ao, ar, at, au) in zip(expected, actual, strict=True):
        # Exact: the same environment code from the same state gives the same numbers.
        np.testing.assert_array_equal(ao, eo)
        np.testing.assert_array_equal(ar, er)
        np.testing.assert_array_equal(at, et)
        np.testing.assert_array_equal(au, eu)


def test_the_ale_is_not_data_and_says_where():
    env = make_vector_env("ale:Pong", 1, seed=0)
    try:
        with pytest.raises(env_state.NotData, match="outside Python attributes"):
            env_state.capture(env)
    finally:
        env.close()


def test_a_structure_that_differs_is_refused_by_name():
    cartpole = make_vector_env("gym:CartPole-v1", 1, seed=0)
    cartpole.reset()
    minatar = make_vector_env("minatar:breakout", 1, seed=0)
    minatar.reset()
    with pytest.raises(env_state.NotData, match=r"saved as a gdi\.envs\.gym_env\.GymVectorEnv"):
        env_state.restore(minatar, env_state.capture(cartpole))


def test_shared_objects_stay_shared():
    env = make_vector_env("minatar:breakout", 2, seed=1)
    env.reset()
    fresh = make_vector_env("minatar:breakout", 2, seed=2)
    env_state.restore(fresh, data_file.loads(data_file.dumps(
        {"env": env_state.capture(env)}))["env"])
    for game in fresh.games:  # minatar draws sticky actions and the game from one generator
        assert game.random is game.env.random
