"""The actor's records against an independent replay of the same episodes: μ is the
probability of the sampled action, and an episode cut by a time limit stores the value of its
final observation (to bootstrap from), one that terminates stores none."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from gdi.config import Config, apply_overrides
from gdi.envs import env_seeds, resolve_env
from gdi.policy_space import get_policy_space
from gdi.presets import resolve_config
from gdi.runtime.acting.actor import Actor
from gdi.runtime.acting.step import compress_reward, sample_actions
from gdi.runtime.components import build_controller, build_network, env_shapes
from gdi.runtime_config import ActorsConfig, ReplayConfig
from gdi.upgrade import todays_payload
from tests.nets.helpers import summed_terms
from tests.runtime.cutting import actor_window
from tests.tolerance import assert_close

CAP = 6  # CartPole under random actions lasts 9 steps or more: every episode is cut at CAP


SEED = 4


def _config(preset: str, cap: int = CAP, seq_len: int = 2 * CAP) -> Config:
    config = resolve_config(preset, "gym:CartPole-v1", seed=SEED)
    return apply_overrides(config, [
        "envs_per_actor=3", "burn_in=0", f"seq_len={seq_len}", f"seq_stride={seq_len}",
        "lstm_units=8", f"env_overrides={{\"max_episode_steps\": {cap}}}",
    ])


def _actor_of(config: Config) -> Actor:
    env_config = resolve_env(config.env, **config.env_overrides)
    torch.manual_seed(SEED)
    net = build_network(config, env_shapes(env_config, SEED))
    return Actor(0, config.layer(ActorsConfig), config.layer(ReplayConfig), config.policy_space,
                 env_config, net, build_controller(config, SEED), seed=SEED)


def _actor(preset: str, cap: int = CAP, seq_len: int = 2 * CAP) -> Actor:
    return _actor_of(_config(preset, cap, seq_len))


def _first_window(actor: Actor, config: Config):
    window = actor_window(actor)
    assert actor.steps == config.sequence_length  # the first window ends there
    return window


def _replay_episode(actor: Actor, env_index: int, actions: np.ndarray):
    """The episode's observations (first ... final), replayed on a fresh Gymnasium env."""
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=int(env_seeds(SEED, actor.num_envs)[env_index]))
    observations, rewards = [obs], []
    for action in actions:
        obs, reward, terminated, _, _ = env.step(int(action))
        observations.append(obs)
        rewards.append(reward)
        assert not terminated
    return np.stack(observations).astype(np.float32), np.array(rewards)


@pytest.mark.parametrize("preset", ["gdi-i3", "gdi-h3"])
def test_time_limit_cut_stores_the_final_observations_value(preset):
    config = _config(preset)
    actor = _actor_of(config)
    window = _first_window(actor, config)
    families = actor.net.families
    assert window.truncation_values.shape == (2 * CAP, actor.num_envs, families)
    cut = np.zeros(2 * CAP, dtype=bool)
    cut[[CAP - 1, 2 * CAP - 1]] = True
    for env_index in range(actor.num_envs):
        np.testing.assert_array_equal(window.dones[:, env_index], cut)
        # Steps that did not end an episode hold no bootstrap value.
        assert not window.truncation_values[~cut, env_index].any()
        # The first episode, unrolled from a zero state over its CAP observations and then the
        # final one, with the usual previous-action / previous-reward inputs.
        actions = window.actions[:CAP, env_index]
        observations, rewards = _replay_episode(actor, env_index, actions)
        # Exact: the same Gymnasium code, seed and actions give the same observations.
        np.testing.assert_array_equal(observations[:CAP], window.obs[:CAP, env_index])
        prev_actions = np.concatenate([[0], actions])
        prev_rewards = np.concatenate([[0.0], compress_reward(rewards)]).astype(np.float32)
        resets = np.zeros(CAP + 1, dtype=bool)
        resets[0] = True
        with torch.no_grad():
            outputs, _ = actor.net(
                torch.from_numpy(observations)[:, None],
                torch.from_numpy(prev_actions)[:, None],
                torch.from_numpy(prev_rewards)[:, None],
                torch.from_numpy(resets)[:, None],
                actor.net.initial_state(1),
            )
        expected = outputs.value[:, -1, 0].numpy()  # [F]: V_f of the final observation
        # The actor stepped one observation at a time, this unrolls all CAP + 1 at once.
        assert_close(window.truncation_values[CAP - 1, env_index], expected,
                     terms=summed_terms(actor.net, num_steps=CAP + 1))
        assert np.abs(expected).min() > 0  # a random network's values are not 0 by accident


def test_time_limit_bootstrap_can_be_switched_off():
    config = _config("gdi-i3")
    actor = _actor_of(config)
    assert actor.time_limit_bootstrap  # the default, switched off here
    actor.time_limit_bootstrap = False
    window = _first_window(actor, config)
    assert window.dones.sum() == 2 * actor.num_envs  # two cuts per environment
    assert not window.truncation_values.any()


def test_terminated_episodes_store_no_bootstrap_value():
    actor = _actor("gdi-i3", cap=500)  # episodes of a random policy end by falling over
    windows = [actor.step()[0] for _ in range(200)]
    windows = [w for w in windows if w is not None]
    dones = np.concatenate([w.dones for w in windows], axis=0)
    assert dones.sum() >= 10
    for w in windows:
        assert not w.truncation_values.any()


def test_behavior_log_probs_are_those_of_the_sampled_actions():
    config = _config("gdi-i3")
    actor = _actor_of(config)
    window = _first_window(actor, config)
    space = get_policy_space(config.policy_space)
    resets = window.resets[:-1]
    with torch.no_grad():
        outputs, _ = actor.net(
            torch.from_numpy(window.obs[:-1]), torch.from_numpy(window.prev_actions[:-1]),
            torch.from_numpy(window.prev_rewards[:-1]), torch.from_numpy(resets),
            torch.from_numpy(window.initial_state),
        )
        log_pi = space.log_probs(outputs.adv, torch.from_numpy(window.lambdas))
    taken = log_pi.gather(-1, torch.from_numpy(window.actions)[..., None])[..., 0]
    # The actor stepped one observation at a time (and took μ in float64), this unrolls the
    # window at once.
    assert_close(window.behavior_log_probs, taken,
                 terms=summed_terms(actor.net, num_steps=len(resets)))


def test_sampled_actions_follow_the_probabilities():
    probs = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 1.0], [0.25, 0.25, 0.25, 0.25]])
    n = 40_000
    actions, log_probs = sample_actions(np.repeat(probs, n, axis=0), np.random.default_rng(0))
    counts = np.stack([np.bincount(actions[i * n:(i + 1) * n], minlength=4) for i in range(3)])
    # 5 standard errors of a binomial proportion at n = 40,000 is at most 0.0125.
    np.testing.assert_allclose(counts / n, probs, atol=0.0125)
    assert counts[0, 1] == 0 and counts[1, :3].sum() == 0  # probability 0 is never drawn
    # Exact: sample_actions takes the same np.log of the same probabilities.
    np.testing.assert_array_equal(log_probs, np.log(np.repeat(probs, n, axis=0)[np.arange(3 * n),
                                                                                  actions]))


@pytest.mark.parametrize(("r", "expected"), [(0.0, [1, 1]), (1.0 - 2.0 ** -53, [2, 1])])
def test_draws_at_the_ends_of_the_unit_interval_stay_on_possible_actions(r, expected):
    class Fixed:  # Generator.random's smallest and largest values
        def random(self, shape):
            return np.full(shape, r)

    probs = np.array([[0.0, 0.7, 0.6, 0.0], [0.0, 0.3, 0.0, 0.0]])  # sums need not be 1
    actions, log_probs = sample_actions(probs, Fixed())
    assert actions.tolist() == expected
    assert np.isfinite(log_probs).all()


def _upgraded(state: dict, pull_every: int) -> dict:
    """An actor's state of gdi before 0.2 as ``gdi upgrade`` writes it (gdi.upgrade)."""
    payload = {"config": {"num_actors": 1, "pull_every": pull_every}, "trainer": {},
               "actors": [state]}
    return todays_payload(payload)["actors"][0]


def test_an_upgraded_actor_state_of_the_former_torch_generator_samples_as_seeded_from_it():
    actor = _actor("gdi-i3")
    for _ in range(3):
        actor.step()
    state = actor.state_dict()
    generator = torch.Generator().manual_seed(9).get_state()  # before NumPy sampling
    state["generator"] = generator
    del state["rng"]
    restored = _actor("gdi-i3")
    assert not restored.load_state_dict(_upgraded(state, restored.pull_every))  # envs restart
    assert restored.steps == 3
    seeded = np.random.default_rng(np.frombuffer(generator.numpy().tobytes(), dtype=np.uint32))
    assert restored.acting.rng.random() == seeded.random()


class _CountingServer:
    """A parameter server that records the actor's step count at each pull."""

    def __init__(self, actor: Actor):
        self.actor, self.pulled_at_steps = actor, []

    def pull(self, module, have_version: int) -> int:
        self.pulled_at_steps.append(self.actor.steps)
        return have_version + 1


@pytest.mark.parametrize(("pull_first", "expected"), [
    # inline: every pull_every = 4 steps from the first step, across windows of 6 steps
    (False, [0, 4, 8, 12, 16]),
    # local / ray: at each window start (0, 6, 12), then pull_every steps after the last pull
    (True, [0, 4, 6, 10, 12, 16]),
])
def test_pulls_follow_pull_every_counted_from_the_last_pull(pull_first, expected):
    actor = _actor("gdi-i3", seq_len=6)
    actor.pull_every = 4
    server = _CountingServer(actor)
    for _ in range(3):
        actor.act_window(server, pull_first=pull_first)
    assert actor.steps == 18
    assert server.pulled_at_steps == expected


def test_an_upgraded_checkpoint_from_before_pulled_at_pulls_at_the_old_multiples():
    actor = _actor("gdi-i3", seq_len=6)
    actor.pull_every = 4
    server = _CountingServer(actor)
    actor.act_window(server)  # pulls at steps 0 and 4; ends at step 6
    state = actor.state_dict()
    del state["pulled_at"]
    resumed = _actor("gdi-i3", seq_len=6)
    resumed.pull_every = actor.pull_every
    resumed.load_state_dict(_upgraded(state, actor.pull_every))
    server = _CountingServer(resumed)
    resumed.act_window(server)
    assert server.pulled_at_steps == [8]


def test_e_is_told_the_lambda_it_drew_and_the_steps_record_it_as_float32():
    """λ stays float64 from E's draw to E's update (and the episode's record); only the
    recorded steps (the learner's batch) hold it as float32, the storage schema's dtype."""
    actor = _actor("gdi-i3")
    drawn, told = [], []
    draw, update = actor.controller.sample_many, actor.controller.update

    def recording_draw(k):
        lams = draw(k)
        drawn.extend(map(tuple, lams))
        return lams

    def recording_update(lam, episode_return):
        told.append((lam.dtype, tuple(lam)))
        update(lam, episode_return)

    actor.controller.sample_many, actor.controller.update = recording_draw, recording_update
    actor.acting.draw_lambdas = recording_draw
    actor.acting.lambdas = recording_draw(actor.num_envs)  # the episodes under way
    episodes, chunk = [], None
    while chunk is None:
        chunk, ended = actor.step()
        episodes += ended
    assert told and all(dtype == np.float64 for dtype, _ in told)
    assert all(lam in drawn for _, lam in told)  # exactly as drawn, not a float32 rounding
    assert any(lam != tuple(map(float, np.float32(lam))) for lam in drawn)  # rounding would show
    assert episodes and {episode.lam for episode in episodes} <= set(drawn)
    assert chunk.lambdas.dtype == np.float32
