"""Parts built from a config: the network sees observations at the scale of their env."""

import pytest
import torch

from gdi.envs import resolve_env
from gdi.nets import build
from gdi.presets import resolve_config
from gdi.runtime.components import env_shapes, flush_denormals, learner_threads
from tests.nets.helpers import summed_terms
from tests.tolerance import assert_close


@pytest.mark.parametrize(
    ("spec", "scale"),
    [("minatar:breakout", 1.0), ("ale:Pong", 1 / 255), ("gym:CartPole-v1", 1.0)],
)
def test_observation_scale_follows_the_observation_space(spec, scale):
    # MinAtar's planes are uint8 0/1: scaling them like pixels (1/255) starved the network
    # of input and nothing learned.
    assert_close(env_shapes(resolve_env(spec), seed=0).obs_scale, scale)


def test_network_applies_its_observation_scale():
    torch.manual_seed(0)
    raw = build((4, 10, 10), 6, torso="minatar", lstm_units=8, aux=False, obs_scale=1.0)
    torch.manual_seed(0)
    pixels = build((4, 10, 10), 6, torso="minatar", lstm_units=8, aux=False, obs_scale=1 / 255)
    obs = torch.ones(1, 2, 4, 10, 10, dtype=torch.uint8)
    args = (torch.zeros(1, 2, dtype=torch.long), torch.zeros(1, 2), torch.ones(1, 2, dtype=bool))
    out_raw, _ = raw(obs, *args, raw.initial_state(2))
    out_pix, _ = pixels(obs * 255, *args, pixels.initial_state(2))
    # 1 and 255·(1/255) round apart by an ulp; the network carries that through its sums.
    assert_close(out_raw.adv, out_pix.adv, terms=summed_terms(raw))
    with pytest.raises(ValueError, match="obs_scale"):
        build((4,), 2, torso="mlp", obs_scale=0.0)


def test_the_configs_torso_init_reaches_every_familys_torso():
    from gdi.runtime.components import build_network

    config = resolve_config("gdi-h3", "minatar:breakout", torso_init="he")
    net = build_network(config, env_shapes(resolve_env(config.env), seed=0))
    for family in net.family_nets:  # He: zero biases (PyTorch's default draws them)
        assert all(torch.count_nonzero(m.bias) == 0 for m in family.torso.modules()
                   if isinstance(m, torch.nn.Conv2d | torch.nn.Linear))
    default = build_network(resolve_config("gdi-h3", "minatar:breakout"),
                            env_shapes(resolve_env(config.env), seed=0))
    assert torch.count_nonzero(default.family_nets[1].torso.linear.bias) > 0


def test_learner_threads_leave_cores_to_actor_processes():
    local = resolve_config("gdi-i3", "minatar:breakout", backend="local")
    assert learner_threads(local.replace(torch_threads=3)) == 3
    assert learner_threads(local.replace(num_actors=64, replay_capacity=4096)) == 1


def test_flush_denormals_zeroes_denormal_arithmetic_and_is_undone():
    denormal = torch.tensor([1e-39])
    try:
        flush_denormals()
        assert (denormal * 1.0).item() == 0.0
        normal = torch.tensor([1e-30])
        assert (normal * 1.0).item() == normal.item()  # normal: kept (× 1.0 is exact)
    finally:
        flush_denormals(False)
    assert (denormal * 1.0).item() == denormal.item()


def test_threads_started_after_the_flush_flush_too():
    # torch's worker threads inherit the setting when they start: a fresh process flushes
    # first, then computes on two threads.
    import subprocess
    import sys

    code = ("import torch\n"
            "from gdi.runtime.components import flush_denormals\n"
            "flush_denormals()\n"
            "torch.set_num_threads(2)\n"
            "x = torch.full((1 << 22,), 1e-39)\n"
            "print(int(((x * 1.0) != 0).sum()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "0"


def test_training_flushes_denormals_and_restores_the_default_after(tmp_path, monkeypatch):
    from gdi.runtime import lifecycle, wiring
    from tests.runtime.helpers import tiny_config

    calls = []
    monkeypatch.setattr(lifecycle, "flush_denormals", lambda on=True: calls.append(on))
    wiring.train(tiny_config(frames=200), run_dir=tmp_path / "run", show_progress=False)
    assert calls == [True, False]
