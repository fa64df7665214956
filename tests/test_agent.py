"""gdi.load_agent: a run's network and E acting in a plain Gymnasium loop, the same acting that
`gdi evaluate` uses, and one clear line for every way a run folder or checkpoint can be wrong."""

import shutil

import numpy as np
import pytest
import torch

import gdi
from gdi.agent import evaluate_checkpoint
from gdi.cli import main
from gdi.envs import make_vector_env
from gdi.policy_space import get_policy_space
from gdi.runtime.acting.step import compress_reward
from gdi.runtime.components import build_controller
from gdi.runtime.run_folder.checkpoint import (
    checkpoint_controller_state,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
)
from gdi.runtime.wiring import train
from tests.runtime.helpers import one_line_error, tiny_config
from tests.tolerance import assert_close, is_close


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("agent") / "run"
    return train(tiny_config(frames=800), folder, show_progress=False, tensorboard=False).run_dir


def test_act_is_pi_lambda_with_the_carried_lstm_state_previous_action_and_reward(run):
    """Three steps by hand from the formula (network forward with the previous action and
    compressed reward, π_λ, inverse-CDF sampling with the same generator), one episode ending
    at the second step: the agent's actions and λ match."""
    agent = gdi.load_agent(run, seed=11)
    env = make_vector_env(agent.env_config, 3, seed=5)
    obs, _ = env.reset()
    agent.reset(env)
    net, space = agent.net, get_policy_space(agent.config.policy_space)
    rng = np.random.default_rng(11)
    state, resets = net.initial_state(3), np.ones(3, dtype=bool)
    prev_a, prev_r = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.float32)
    lambdas = agent.lambdas.copy()
    fake_rewards = [np.array([1.0, 3.0, 0.0]), np.array([2.0, 1.0, 5.0]), np.zeros(3)]
    fake_done = [np.zeros(3, bool), np.array([False, True, False]), np.zeros(3, bool)]
    for step in range(3):
        with torch.no_grad():
            out, state = net(torch.from_numpy(obs)[None], torch.from_numpy(prev_a)[None],
                             torch.from_numpy(prev_r)[None], torch.from_numpy(resets)[None],
                             state)
        probs = space.acting_probs(out.adv[:, 0].numpy(), lambdas)
        cdf = np.cumsum(probs, axis=-1)
        u = rng.random((3, 1)) * cdf[:, -1:]
        expected = (cdf <= u).sum(axis=-1)
        actions = agent.act(obs)
        np.testing.assert_array_equal(actions, expected)
        np.testing.assert_array_equal(agent.lambdas, lambdas)
        obs, *_ = env.step(actions)
        agent.observe(fake_rewards[step], fake_done[step], np.zeros(3, bool))
        done = fake_done[step]
        prev_a = np.where(done, 0, actions)
        prev_r = np.where(done, 0.0, compress_reward(fake_rewards[step])).astype(np.float32)
        resets = done
        if done.any():  # a fresh λ for the ended episode only
            assert not is_close(agent.lambdas[1], lambdas[1])
            np.testing.assert_array_equal(agent.lambdas[[0, 2]], lambdas[[0, 2]])
            lambdas = agent.lambdas.copy()
    env.close()


def test_evaluate_plays_what_a_plain_loop_plays(run):
    """`evaluate_checkpoint` against a ten-line loop with the same seeds: equal returns."""
    _, results = evaluate_checkpoint(run, episodes=3, envs=3, seed=7)
    agent = gdi.load_agent(run, seed=7)
    env = make_vector_env(agent.env_config, 3, seed=7)
    obs, _ = env.reset(seed=7)
    agent.reset(env)
    returns, running = np.zeros(3), np.ones(3, dtype=bool)
    while running.any():
        obs, rewards, terminated, truncated, _ = env.step(agent.act(obs))
        agent.observe(rewards, terminated, truncated)
        returns += np.where(running, rewards, 0.0)
        running &= ~(terminated | truncated)
    env.close()
    assert_close([r["return"] for r in results], returns)


def test_greedy_agent_plays_es_greedy_lambda_after_every_episode_end(run):
    controller = build_controller(tiny_config(), 0)
    controller.load_state_dict(checkpoint_controller_state(load_checkpoint(latest_checkpoint(run))))
    agent = gdi.load_agent(run, policy="greedy")
    agent.reset(2)
    agent.act(np.zeros((2, 4), dtype=np.float32))
    agent.observe(np.zeros(2), np.array([True, False]), np.zeros(2, bool))
    # Exact: the agent holds λ as the controller gives it, its float64 greedy λ.
    np.testing.assert_array_equal(agent.lambdas, np.stack([controller.greedy()] * 2))


def test_fixed_and_uniform_policies_play_the_lambda_they_name(run, capsys):
    """Cross-evaluation's policies (issue 42): `--policy fixed --fixed-lambda` plays that λ in
    every episode, filed apart under eval_fixed/ with the λ in its name; `--policy uniform`
    draws λ as a uniform E over the run's own box (the bandit's coordinates) with the
    evaluation's seed, not from the run's E."""
    import json

    from gdi.meta import make_controller

    main(["evaluate", str(run), "--policy", "fixed", "--fixed-lambda", "2", "0.5", "1",
          "--episodes", "3", "--envs", "3", "--seed", "4"])
    (written,) = (run / "eval_fixed").iterdir()
    assert written.name == f"{latest_checkpoint(run).stem}@2,0.5,1.json"
    record = json.loads(written.read_text())
    assert record["policy"] == "π_λ with λ = (2,0.5,1) in every episode"
    assert [e["lambda"] for e in record["episodes"]] == [[2.0, 0.5, 1.0]] * 3
    assert "3 episodes" in capsys.readouterr().out
    assert not any(p.name.endswith("@2,0.5,1.json") for p in (run / "eval").iterdir())

    config = tiny_config()
    uniform = make_controller("uniform", 9, ranges=config.meta_kwargs["ranges"],
                              transforms=config.meta_kwargs["transforms"])
    agent = gdi.load_agent(run, policy="uniform", seed=9)
    agent.reset(4)
    expected = np.stack([uniform.sample() for _ in range(4)])  # as drawn: float64
    np.testing.assert_array_equal(agent.lambdas, expected)
    population = gdi.load_agent(run, seed=9)
    population.reset(4)
    assert not np.array_equal(population.lambdas, agent.lambdas)


@pytest.mark.parametrize(("argv", "message"), [
    (["--policy", "fixed"], "policy 'fixed' plays the λ given as fixed_lambda (--fixed-lambda)"),
    (["--fixed-lambda", "1", "1", "1"], "and only it takes one; got policy 'population'"),
    (["--policy", "fixed", "--fixed-lambda", "1", "1"],
     "--fixed-lambda for policy space 'soft_entropy' is 3 finite numbers (inv_tau1, inv_tau2, "
     "eps), got (1.0, 1.0)"),
    (["--policy", "fixed", "--fixed-lambda", "1", "1", "2"],
     "--fixed-lambda: eps = 2 is outside what policy space 'soft_entropy' takes: eps in [0, 1]"),
])
def test_a_bad_fixed_lambda_is_one_line(run, capsys, argv, message):
    assert message in one_line_error(["evaluate", str(run), *argv], capsys)


def test_uniform_over_a_run_whose_e_searches_nothing_is_one_line(tmp_path, capsys):
    fixed = train(tiny_config(preset="gdi-i0", frames=400), tmp_path / "run",
                  show_progress=False, tensorboard=False).run_dir
    assert ("policy 'uniform' draws λ over Λ as E searches it, and this run's E (fixed) "
            "searches no box or set of λ") in one_line_error(
        ["evaluate", str(fixed), "--policy", "uniform"], capsys)


def test_an_environment_with_other_spaces_is_one_line_naming_both(run):
    agent = gdi.load_agent(run)
    env = make_vector_env("minatar:breakout", 2, seed=0)
    with pytest.raises(ValueError, match=r"observations of shape \(4, 10, 10\).*CartPole-v1.*\(4,\)"):
        agent.reset(env)
    env.close()
    agent.reset(2)
    with pytest.raises(ValueError, match=r"observations have shape \(2, 5\); expected \(2, 4\)"):
        agent.act(np.zeros((2, 5), dtype=np.float32))


def test_a_folder_that_is_not_a_run(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="not a gdi run folder"):
        gdi.load_agent(tmp_path)
    assert "not a gdi run folder" in one_line_error(["evaluate", str(tmp_path / "nope")], capsys)


def test_a_missing_or_corrupt_checkpoint(run, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    missing = copy / "checkpoints" / "ckpt_000000000001.safetensors"
    assert f"no checkpoint at {missing}" in one_line_error(
        ["evaluate", str(copy), "--checkpoint", str(missing)], capsys)
    latest = latest_checkpoint(copy)
    older = latest.with_name("ckpt_000000000002.safetensors")  # an earlier one that loads
    shutil.copyfile(latest, older)
    assert list_checkpoints(copy)[-2:] == [older, latest]
    latest.write_bytes(latest.read_bytes()[:100])
    # Issue 45 item 11: the refusal offers the newest checkpoint that loads (not taken on
    # its own: an older network's evaluation filed as the latest would mislead).
    err = one_line_error(["evaluate", str(copy)], capsys)
    assert f"checkpoint {latest} is truncated or corrupt" in err
    assert err.endswith(f"; the newest checkpoint that loads is {older}: pass --checkpoint "
                        f"{older} to use it")
    older.write_bytes(b"")
    with pytest.raises(ValueError, match="no earlier checkpoint of the run loads either"):
        gdi.load_agent(copy)
    for path in (copy / "checkpoints").iterdir():
        path.unlink()
    with pytest.raises(FileNotFoundError, match="has no checkpoints"):
        gdi.load_agent(copy)


def test_a_checkpoint_from_outside_the_run_is_refused_unless_allowed(run, tmp_path, capsys):
    other = train(tiny_config(frames=400, seed=4), tmp_path / "other", show_progress=False,
                  tensorboard=False).run_dir
    foreign = latest_checkpoint(other)
    err = one_line_error(["evaluate", str(run), "--checkpoint", str(foreign)], capsys)
    assert f"checkpoint {foreign} lies outside run {run}" in err
    assert "--allow-foreign-checkpoint" in err
    assert not (run / "eval" / f"{foreign.stem}.json").exists()
    main(["evaluate", str(run), "--checkpoint", str(foreign), "--episodes", "2", "--envs", "2",
          "--allow-foreign-checkpoint"])
    assert (run / "eval" / f"{foreign.stem}.json").exists()
    (run / "eval" / f"{foreign.stem}.json").unlink()  # the module's run stays its own


def test_a_checkpoint_of_another_architecture_is_refused_naming_the_fields(tmp_path, capsys):
    small = train(tiny_config(frames=400), tmp_path / "small", show_progress=False,
                  tensorboard=False).run_dir
    wide = train(tiny_config(frames=400, lstm_units=24), tmp_path / "wide",
                 show_progress=False, tensorboard=False).run_dir
    planted = small / "checkpoints" / "ckpt_999999999999.safetensors"
    shutil.copy(latest_checkpoint(wide), planted)
    err = one_line_error(["evaluate", str(small)], capsys)  # "latest" is the planted one
    assert "saved by another kind of run" in err and "lstm_units=24 (run: 16)" in err
    err = one_line_error(["evaluate", str(small), "--allow-foreign-checkpoint"], capsys)
    assert f"checkpoint {planted}'s network does not fit run {small}'s config" in err


def test_misuse_of_the_agent_is_one_clear_error_naming_the_value(run):
    import gymnasium

    agent = gdi.load_agent(run)
    with pytest.raises(RuntimeError, match=r"call agent.reset\(num_envs\) and agent.act"):
        agent.observe([0.0], [False], [False])  # before reset (was AttributeError '_actions')
    single = gymnasium.make("CartPole-v1")
    with pytest.raises(ValueError, match=r"got .*CartPole.*SyncVectorEnv"):
        agent.reset(single)  # not a vector env (was AttributeError single_observation_space)
    single.close()
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match=r"device: 'cuda' is not usable by this torch.*"
                                             r"allowed here: auto, cpu"):
            gdi.load_agent(run, device="cuda")  # was torch's AssertionError
    with pytest.raises(ValueError, match=r"device: unknown device 'gpu'; allowed"):
        gdi.load_agent(run, device="gpu")
    assert gdi.load_agent(run, device="auto").device.type in ("cpu", "cuda")


def test_a_non_finite_reward_is_an_error_naming_the_environment(run):
    # Before, one NaN reward made the network's outputs NaN and environment 1 played action 0
    # for the rest of its episode without a word.
    agent = gdi.load_agent(run)
    agent.reset(3)
    agent.act(np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ValueError, match=r"environment 1's reward is nan; the agent needs "
                                         r"finite rewards"):
        agent.observe([0.0, float("nan"), 1.0], [False] * 3, [False] * 3)
