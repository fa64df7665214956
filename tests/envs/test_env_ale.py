"""The ALE environment: the paper's pre-processing table is what ale-py runs, rewards are raw,
life losses are not episode ends, the episode cap is a truncation, and the SAME_STEP stream
equals ale-py's own NEXT_STEP stream with its reset steps taken out."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv
from gymnasium.vector import AutoresetMode

from gdi.envs import env_seeds, make_vector_env
from tests.envs.contract import assert_matches_reference, assert_same_rollout, check_step, rollout

# App. "Hyperparameters", Tab. "Atari pre-processing hyperparameters", in ale-py's keywords; plus
# the settings the contract of gdi.envs fixes (raw rewards, SAME_STEP) and the documented
# standard stages (max-pool, no fire reset).
PAPER_TABLE = {
    "repeat_action_probability": 0.0,  # Sticky action probability 0.0
    "episodic_life": False,  # Life information: not allowed
    "life_loss_info": False,  # Life information: not allowed
    "img_height": 84,  # Image size (84, 84)
    "img_width": 84,
    "frameskip": 4,  # Num. action repeats 4
    "stack_num": 4,  # Num. frame stacks 4
    "full_action_space": True,  # Action space: full
    "noop_max": 30,  # Random noops range 30
    "grayscale": True,  # Grayscaled
    "max_num_frames_per_episode": 108_000,  # 30 minutes at 60 Hz (docs/paper-choices.md)
    "maxpool": True,
    "use_fire_reset": False,
    "reward_clipping": False,
    "autoreset_mode": AutoresetMode.SAME_STEP,
}


@pytest.fixture(scope="module")
def breakout():
    env = make_vector_env("ale:Breakout", num_envs=2, seed=3, num_threads=1)
    yield env
    env.close()


def test_paper_table_is_what_ale_py_receives(breakout):
    for key, value in PAPER_TABLE.items():
        assert breakout.ale_kwargs[key] == value, key
    # No keyword of ale-py's constructor is left to its (dangerous) defaults.
    accepted = set(inspect.signature(AtariVectorEnv.__init__).parameters)
    not_data = {"self", "game", "num_envs", "thread_affinity_offset", "continuous_action_threshold"}
    assert accepted - not_data == set(breakout.ale_kwargs)


def test_paper_table_read_back_from_the_running_env(breakout):
    config = breakout.config
    # Full action space: all 18 joystick actions, also for Breakout's minimal set of 4.
    assert breakout.single_action_space.n == 18 == len(breakout.ale_env.ale.get_action_set())
    # 4 stacked grayscale 84×84 frames.
    assert breakout.single_observation_space.shape == (4, 84, 84)
    assert breakout.single_observation_space.dtype == np.uint8
    obs, info = breakout.reset(seed=3)
    assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8
    # At a reset, the frames before the first are zeros.
    assert (obs[:, :3] == 0).all() and obs[:, 3].any()
    # Reset no-ops: between 0 and 29 emulator frames before the first observation.
    assert ((info["episode_frame_number"] >= 0) & (info["episode_frame_number"] < 30)).all()
    frames = info["episode_frame_number"]
    for _ in range(5):
        obs, _, terminated, truncated, info = breakout.step(np.zeros(2, dtype=np.int64))
        assert not (terminated | truncated).any()
        # Action repeat: each agent step is `frames_per_step` = 4 emulator frames.
        np.testing.assert_array_equal(info["episode_frame_number"] - frames, 4)
        assert config.frames_per_step == 4
        frames = info["episode_frame_number"]


def test_noop_max_zero_starts_every_episode_at_frame_zero():
    env = make_vector_env("ale:Pong", 2, seed=0, noop_max=0, num_threads=1)
    _, info = env.reset()
    np.testing.assert_array_equal(info["episode_frame_number"], 0)
    env.close()


def test_rewards_are_raw_game_scores():
    """Space Invaders' aliens are worth 5 to 30 points: a clipped reward would be 1."""
    env = make_vector_env("ale:SpaceInvaders", 1, seed=0, num_threads=1)
    env.reset()
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(2_000):
        _, reward, *_ = env.step(rng.integers(0, 18, 1))
        if reward[0] != 0:
            seen.append(float(reward[0]))
            if reward[0] > 1:
                break
    env.close()
    assert seen and max(seen) > 1, f"no reward above 1 in 2000 random steps: {seen}"
    assert all(r % 5 == 0 for r in seen)


def test_losing_a_life_is_not_an_episode_end(breakout):
    breakout.reset(seed=0)
    rng = np.random.default_rng(1)
    lives = None
    for _ in range(2_000):
        _, _, terminated, truncated, info = breakout.step(rng.integers(0, 18, 2))
        assert not (terminated | truncated).any()
        if lives is not None and (info["lives"] < lives).any():
            break
        lives = info["lives"]
    else:
        pytest.fail("no life lost in 2000 random steps")
    assert (info["lives"] >= 4).all()  # a life lost, the episode goes on


def test_episode_cap_is_a_truncation_with_same_step_reset():
    """max_episode_frames=40 is 10 agent steps: every episode ends on its 10th step, truncated,
    and the same step already returns the next episode's first observation."""
    env = make_vector_env("ale:Breakout", 2, seed=5, max_episode_frames=40, num_threads=1)
    env.reset()
    for t in range(1, 31):
        step = env.step(np.full(2, 3, dtype=np.int64))
        check_step(env, step)
        obs, _, terminated, truncated, info = step
        assert not terminated.any()
        if t % 10:
            assert not truncated.any()
        else:
            assert truncated.all()
            # A new episode: no more than the reset no-op frames played, empty frame history.
            assert (info["episode_frame_number"] < 30).all()
            assert (obs[:, :3] == 0).all()
            assert (info["final_obs"][:, :3] != 0).any(axis=(1, 2, 3)).all()
    env.close()


class _NextStepReference:
    """One ale-py environment in its NEXT_STEP mode, the same settings otherwise."""

    def __init__(self, env, seed: int) -> None:
        kwargs = {**env.ale_kwargs, "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.env = AtariVectorEnv(env.config.rom_id, 1, **kwargs)
        self.seed = seed

    def reset(self):
        return self.env.reset(seed=np.array([self.seed]))[0][0]

    def step(self, action):
        obs, reward, terminated, truncated, _ = self.env.step(np.array([action]))
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0])

    def reset_next(self):
        # NEXT_STEP's extra step: the action is ignored and the episode restarts.
        obs, reward, terminated, truncated, _ = self.env.step(np.array([0]))
        assert reward[0] == 0 and not terminated[0] and not truncated[0]
        return obs[0]


def test_same_step_stream_equals_ale_py_next_step_without_reset_steps():
    """Episodes end by termination (episodic_life ends one at each life loss) and by truncation
    (the cap: 97 frames, so the last step is cut after one of its four frames)."""
    env = make_vector_env(
        "ale:Breakout", 2, seed=11, episodic_life=True, max_episode_frames=97, num_threads=1
    )
    ours = rollout(env, steps=80, action_seed=0)
    assert np.any(ours.terminated) and np.any(ours.truncated)
    for i, seed in enumerate(env_seeds(11, 2)):
        assert_matches_reference(ours, i, _NextStepReference(env, int(seed)))
    env.close()


def test_same_seed_same_observations_and_env_indices_differ():
    kwargs = {"max_episode_frames": 60, "num_threads": 1}
    first = make_vector_env("ale:MsPacman", 3, seed=7, **kwargs)
    second = make_vector_env("ale:MsPacman", 3, seed=7, **kwargs)
    a = rollout(first, steps=40, action_seed=2)
    assert_same_rollout(a, rollout(second, steps=40, action_seed=2))
    # Reseeding a used environment replays it exactly.
    assert_same_rollout(a, rollout(first, steps=40, action_seed=2, seed=7))
    # Different indices, different seeds: different numbers of reset no-op frames.
    _, info = first.reset(seed=7)
    assert len(set(info["episode_frame_number"].tolist())) > 1
    first.close()
    second.close()


def test_bad_actions_are_refused(breakout):
    breakout.reset()
    with pytest.raises(ValueError, match=r"\[0, 18\)"):
        breakout.step(np.array([0, 18]))
    with pytest.raises(ValueError, match="shape"):
        breakout.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="integers"):
        breakout.step(np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match="options"):
        breakout.reset(options={"reset_mask": np.ones(2, dtype=bool)})
