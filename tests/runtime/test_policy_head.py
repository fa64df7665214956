"""policy_head="separate" (issue 41, not in the paper): π_λ reads a policy head L of its own
beside A and V, in the actors, the learner and a loaded agent, from the command line to the
checkpoint; and core="feedforward" and input_norm="running" (the same issue's screen) the same
way."""

import json

import numpy as np
import torch

from gdi.agent import load_agent
from gdi.cli import main
from gdi.nets import build
from gdi.runtime.acting.step import Acting
from tests.runtime.helpers import TINY


def trained_cartpole(tmp_path, setting: str) -> tuple:
    """A tiny CartPole run (800 frames, inline) with one ``field=value`` setting from the
    command line: the run folder and its metric rows, after checking that config.json records
    the setting."""
    run = tmp_path / "run"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "800", "--seed", "1",
          "--backend", "inline", "--run-dir", str(run), "--set", *TINY, setting])
    field, value = setting.split("=")
    assert json.loads((run / "config.json").read_text())[field] == value
    return run, [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def finite_losses(rows: list[dict]) -> bool:
    losses = [row["losses/total"] for row in rows if "losses/total" in row]
    return bool(losses) and all(np.isfinite(losses))


def test_acting_samples_from_the_policy_head_not_from_a():
    """A prefers action 0 by 20 nats, L prefers action 1: π_λ = softmax(L) acts 1, and the
    paper's network (π_λ = softmax(A)) with the same A acts 0."""
    draws = {}
    for policy_head in ("separate", "advantage"):
        torch.manual_seed(0)
        net = build((4,), 2, torso="mlp", lstm_units=8, policy_head=policy_head)
        heads = net.family_nets[0]
        with torch.no_grad():
            heads.adv_head.weight.zero_()
            heads.adv_head.bias.copy_(torch.tensor([20.0, 0.0]))
            if policy_head == "separate":
                heads.policy_head.weight.zero_()
                heads.policy_head.bias.copy_(torch.tensor([0.0, 20.0]))
        acting = Acting(net, "boltzmann", lambda k: np.ones((k, 1), np.float32),
                        np.random.default_rng(0))
        acting.reset(16)
        draws[policy_head] = acting.act(np.zeros((16, 4), np.float32))
    assert (draws["separate"] == 1).all() and (draws["advantage"] == 0).all()


def test_a_run_with_a_policy_head_trains_it_and_its_agent_reads_it(tmp_path):
    run, rows = trained_cartpole(tmp_path, "policy_head=separate")
    learned = [row for row in rows if "stats/logit_spread" in row]
    assert learned and all(np.isfinite(row["stats/logit_spread"]) for row in learned)
    assert all(row["stats/logit_spread"] != row["stats/adv_spread"] for row in learned)
    agent = load_agent(run)  # the checkpoint holds L, and the agent acts from it
    assert agent.net.policy_head == "separate"
    assert any(name.startswith("family_nets.0.policy_head.") for name in agent.net.state_dict())
    agent.reset(2)
    assert agent.act(np.zeros((2, 4), np.float32)).shape == (2,)


def test_a_run_with_the_feedforward_core_trains_and_its_agent_has_it(tmp_path):
    """core=feedforward (issue 41's screen, not in the paper) from the command line to the
    checkpoint: the run learns (finite losses), and the loaded agent's network has the
    feedforward layer and no LSTM weights."""
    run, rows = trained_cartpole(tmp_path, "core=feedforward")
    assert finite_losses(rows)
    agent = load_agent(run)
    names = agent.net.state_dict()
    assert "family_nets.0.core.linear.weight" in names
    assert not any(".lstm." in name for name in names)
    agent.reset(2)
    assert agent.act(np.zeros((2, 4), np.float32)).shape == (2,)


def test_a_run_with_running_input_statistics_learns_them_and_its_agent_reads_them(tmp_path):
    """input_norm=running (issue 41's screen, Sample Factory's normalize_input; not in the
    paper) from the command line to the checkpoint: the learner folds every 4th step of each
    batch's learning part in (of its 5 steps 2, 1, 1 or 1 by the step's phase, × 4 sequences),
    and the loaded agent has the learned statistics (CartPole's cart velocity varies,
    so its variance has left the initial 1)."""
    run, rows = trained_cartpole(tmp_path, "input_norm=running")
    assert finite_losses(rows)
    agent = load_agent(run)
    stats = agent.net.input_norm
    assert stats.count.item() > 0 and stats.count.item() % 4 == 0
    assert torch.isfinite(stats.mean).all() and (stats.var != 1.0).all()
    agent.reset(2)
    assert agent.act(np.zeros((2, 4), np.float32)).shape == (2,)
