"""Parts built from a config: the network sees observations at the scale of their env."""

import pytest
import torch

from gdi.envs import resolve_env
from gdi.nets import build
from gdi.presets import resolve_config
from gdi.runtime.components import env_shapes, learner_threads


@pytest.mark.parametrize(
    ("spec", "scale"),
    [("minatar:breakout", 1.0), ("ale:Pong", 1 / 255), ("gym:CartPole-v1", 1.0)],
)
def test_observation_scale_follows_the_observation_space(spec, scale):
    # MinAtar's planes are uint8 0/1: scaling them like pixels (1/255) starved the network
    # of input and nothing learned.
    assert env_shapes(resolve_env(spec), seed=0).obs_scale == pytest.approx(scale)


def test_network_applies_its_observation_scale():
    torch.manual_seed(0)
    raw = build((4, 10, 10), 6, torso="minatar", lstm_units=8, aux=False, obs_scale=1.0)
    torch.manual_seed(0)
    pixels = build((4, 10, 10), 6, torso="minatar", lstm_units=8, aux=False, obs_scale=1 / 255)
    obs = torch.ones(1, 2, 4, 10, 10, dtype=torch.uint8)
    args = (torch.zeros(1, 2, dtype=torch.long), torch.zeros(1, 2), torch.ones(1, 2, dtype=bool))
    out_raw, _ = raw(obs, *args, raw.initial_state(2))
    out_pix, _ = pixels(obs * 255, *args, pixels.initial_state(2))
    torch.testing.assert_close(out_raw.adv, out_pix.adv)
    with pytest.raises(ValueError, match="obs_scale"):
        build((4,), 2, torso="mlp", obs_scale=0.0)


def test_learner_threads_leave_cores_to_actor_processes():
    local = resolve_config("gdi-i3", "minatar:breakout", backend="local")
    assert learner_threads(local.replace(torch_threads=3)) == 3
    assert learner_threads(local.replace(num_actors=64, replay_capacity=4096)) == 1
