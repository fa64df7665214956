"""Config validation that knows the parts: each bad part is one line naming the value and what
is allowed, raised when the Config is built, so `gdi train` exits before any run folder exists
(on every backend: nothing here depends on it)."""

import re

import pytest
import torch

from gdi.cli import main
from gdi.config import Config, apply_overrides
from gdi.presets import resolve_config

# (--set assignments, what the one line must say)
BAD_PARTS = [
    (["policy_space=softmax"], r"policy_space: unknown value 'softmax'.*allowed: boltzmann, "),
    (["meta_controller=ucb"], r"meta_controller: unknown value 'ucb'.*allowed: bandit, fixed"),
    (["torso=nature_cnn"], r"torso: unknown value 'nature_cnn'.*allowed: impala_deep"),
    (["torso_init=xavier"], r"torso_init: unknown value 'xavier'.*allowed: auto, pytorch, he, "),
    (["torso_init=he_zero_residual"],
     r"torso_init 'he_zero_residual' zeroes residual branches; torso 'minatar' has none"),
    (["reward_shapes=sqrt"], r"reward_shapes: unknown value 'sqrt'.*allowed: log, none, root, sign, symlog"),
    (["meta_kwargs.tile_width=3"],
     r"meta_kwargs of E 'bandit'.*unexpected argument\(s\) tile_width; allowed: ranges"),
    (["policy_space=boltzmann"],
     r"E 'bandit' .*dimension 3, but policy_space 'boltzmann' is indexed by 1 \(inv_tau\)"),
    (["policy_space=epsilon_greedy", 'meta_kwargs={"ranges": [[0, 2]], "accuracies": [0.1]}'],
     r"E reaches eps in \[0, 2\], but policy space 'epsilon_greedy' takes eps in \[0, 1\]"),
    ([f"learner_device=cuda:{torch.cuda.device_count()}"],
     rf"learner_device: 'cuda:{torch.cuda.device_count()}' is not usable by this torch.*"
     r"allowed here: auto, cpu"),
    (["learner_device=tpu"], r"learner_device: unknown device 'tpu'; allowed: auto, cpu, cuda, cuda:N"),
    ([f"actor_device=cuda:{torch.cuda.device_count()}"],
     rf"actor_device: 'cuda:{torch.cuda.device_count()}' is not usable by this torch.*"
     r"allowed here: auto, cpu"),
    (["actor_device=gpu"], r"actor_device: unknown device 'gpu'; allowed: auto, cpu, cuda, cuda:N"),
]


@pytest.mark.parametrize(("assignments", "message"), BAD_PARTS)
def test_a_bad_part_fails_when_the_config_is_built(assignments, message):
    with pytest.raises(ValueError, match=message) as info:
        apply_overrides(resolve_config("gdi-i3", "minatar:breakout"), assignments)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("assignments", "message"), BAD_PARTS)
@pytest.mark.parametrize("backend", ["inline", "local"])
def test_gdi_train_refuses_a_bad_part_in_one_line_and_creates_no_run_folder(
    assignments, message, backend, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--preset", "gdi-i3", "--env", "minatar:breakout", "--backend", backend,
              "--run-dir", str(run), "--no-report", "--set", *assignments])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("gdi: error: ")
    assert re.search(message, err), err
    assert not run.exists() and list(tmp_path.iterdir()) == []  # no runs/ folder either


def test_a_saved_config_with_a_gpu_device_stays_readable_here():
    """A run trained on a GPU machine keeps its config readable (reports, evaluation)."""
    saved = Config().to_dict() | {"learner_device": f"cuda:{torch.cuda.device_count()}"}
    assert Config.from_dict(saved).learner_device == saved["learner_device"]
    with pytest.raises(ValueError, match="learner_device"):  # but a new config checks it
        Config(**saved)


def test_every_preset_passes_its_own_validation_at_every_scale():
    from gdi.presets import PRESETS, SCALE_KINDS

    envs = {"minatar": "minatar:breakout", "gym": "gym:CartPole-v1", "ale": "ale:Breakout"}
    assert set(SCALE_KINDS.values()) == set(envs)
    for name in PRESETS:
        for scale, kind in SCALE_KINDS.items():
            config = resolve_config(name, envs[kind], scale)
            assert (config.preset, config.scale) == (name, scale)


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [("ale:breakout", "ale:Breakout"), ("ALE:montezuma_revenge", "ale:MontezumaRevenge"),
     ("minatar:Breakout", "minatar:breakout"), ("minatar:SPACE_INVADERS", "minatar:space_invaders"),
     ("gym:CartPole-v1", "gym:CartPole-v1")],
)
def test_the_config_stores_the_canonical_environment_spec(typed, canonical):
    assert resolve_config("gdi-i3", typed).env == canonical
    assert Config(env=typed).env == canonical
    assert Config.from_dict(Config(env=typed).to_dict()) == Config(env=canonical)


def test_an_unknown_game_fails_when_the_config_is_built():
    with pytest.raises(ValueError, match=r"unknown MinAtar game 'brekout'.*breakout"):
        Config(env="minatar:brekout")
