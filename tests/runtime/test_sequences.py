"""Sequence building, as the learner receives it (recorded once per step, cut by the data
collector): windows, overlap, bootstrap observation, stored state, episode ends."""

import numpy as np
import pytest

from gdi.runtime.acting.step import compress_reward
from gdi.runtime.storage.sequences import SequenceBatch
from gdi.runtime.storage.steps import StepRecorder
from tests.runtime.cutting import SequenceCutter
from tests.tolerance import assert_close


def _stream(builder, steps: int, done_at: set[int]) -> list[SequenceBatch]:
    """Feed one env whose observation at step t is t, state is t, λ is 10 + episode index."""
    windows = []
    episode = 0
    reset = True
    prev_action, prev_reward = 0, 0.0
    for t in range(steps):
        done = t in done_at
        builder.record(
            obs=np.array([[t]], dtype=np.float32), resets=np.array([reset]),
            prev_actions=np.array([prev_action]), prev_rewards=np.array([prev_reward]),
            state=np.full((1, 1, 2, 3), t, dtype=np.float32), actions=np.array([t % 5]),
            behavior_log_probs=np.array([-0.1 * t]), lambdas=np.array([[10.0 + episode]]),
            versions=t // 7, rewards=np.array([float(t)]), dones=np.array([done]),
        )
        if done:
            episode += 1
        reset = done
        prev_action = 0 if done else t % 5
        prev_reward = 0.0 if done else float(compress_reward(np.array(float(t))))
        window = builder.emit(obs=np.array([[t + 1]], dtype=np.float32),
                              resets=np.array([reset]), prev_actions=np.array([prev_action]),
                              prev_rewards=np.array([prev_reward]))
        if window is not None:
            windows.append(window)
    return windows


def _builder(length=6, stride=3):
    return SequenceCutter(1, length, stride, (1,), np.float32, 1, (1, 2, 3))


def test_windows_start_every_stride_and_hold_the_right_steps():
    windows = _stream(_builder(length=6, stride=3), steps=15, done_at=set())
    # Windows end after 6, 9, 12, 15 recorded steps: they start at 0, 3, 6, 9.
    assert [int(w.obs[0, 0, 0]) for w in windows] == [0, 3, 6, 9]
    for w in windows:
        start = int(w.obs[0, 0, 0])
        np.testing.assert_array_equal(w.obs[:, 0, 0], np.arange(start, start + 7))  # + bootstrap
        np.testing.assert_array_equal(w.actions[:, 0], np.arange(start, start + 6) % 5)
        np.testing.assert_array_equal(w.rewards[:, 0], np.arange(start, start + 6))
        # The stored state is the one held before obs[0] was processed.
        assert np.all(w.initial_state == start)
        assert w.initial_state.shape == (1, 1, 2, 3)
        assert w.obs.shape[0] == w.length + 1


def test_every_transition_after_burn_in_is_in_some_learning_part():
    burn_in, seq_len, stride = 4, 6, 3
    steps = 40
    windows = _stream(_builder(length=burn_in + seq_len, stride=stride), steps, {7, 19})
    learned = set()
    for w in windows:
        start = int(w.obs[0, 0, 0])
        learned.update(range(start + burn_in, start + burn_in + seq_len))
    last_window_end = int(windows[-1].obs[-1, 0, 0])
    assert set(range(burn_in, last_window_end)) <= learned


def test_episode_end_cuts_the_trace_and_marks_the_next_start():
    windows = _stream(_builder(length=6, stride=6), steps=12, done_at={3})
    w = windows[0]  # steps 0..5, bootstrap obs 6
    np.testing.assert_array_equal(w.dones[:, 0], [False, False, False, True, False, False])
    # obs[4] is the first observation of the next episode: reset, zero previous inputs.
    np.testing.assert_array_equal(w.resets[:, 0], [True, False, False, False, True, False, False])
    assert w.prev_actions[4, 0] == 0 and w.prev_rewards[4, 0] == 0.0
    # λ changes with the episode, per step.
    np.testing.assert_array_equal(w.lambdas[:, 0, 0], [10, 10, 10, 10, 11, 11])
    # prev inputs of obs[t] are step t-1's action and compressed reward within an episode.
    assert w.prev_actions[2, 0] == 1
    assert_close(w.prev_rewards[2, 0], np.log1p(1.0))


def test_builder_state_round_trip():
    a = _builder()
    _stream(a, steps=8, done_at=set())
    b = _builder()
    b.load_state_dict(a.state_dict())
    wa = _stream(a, steps=4, done_at=set())
    wb = _stream(b, steps=4, done_at=set())
    assert len(wa) == len(wb) == 2  # windows end after 9 and 12 recorded steps
    for window_a, window_b in zip(wa, wb, strict=True):
        for name, value in window_a.as_dict().items():
            np.testing.assert_array_equal(value, window_b.as_dict()[name])


def test_bad_lengths_raise():
    with pytest.raises(ValueError, match="stride"):
        StepRecorder(1, 4, 5, (1,), np.float32, 1, 1, (1, 2, 3))


def test_compress_reward_is_symmetric_log():
    assert_close(compress_reward(np.array([-3.0, 0.0, 3.0])), [-np.log(4.0), 0.0, np.log(4.0)])
