"""Tiny network configurations shared by the gdi.nets tests (one per torso)."""

import torch
from torch import nn

from gdi.nets import build

#: torso → (obs_shape, obs dtype, num_actions): tiny, but each torso's real input kind.
TINY = {
    "impala_deep": ((4, 12, 12), torch.uint8, 5),  # stacked frames, channels first
    "minatar": ((4, 10, 10), torch.uint8, 6),  # MinAtar channels as gdi.envs delivers them
    "mlp": ((5,), torch.float32, 3),  # vector observation
    "nature": ((4, 36, 36), torch.uint8, 4),  # the smallest frames its convolutions take
}
LSTM_UNITS = 16


def tiny_net(torso: str, families: int = 1, aux: bool = True, seed: int = 0, **torso_kwargs):
    obs_shape, _, num_actions = TINY[torso]
    torch.manual_seed(seed)
    return build(obs_shape, num_actions, torso=torso, lstm_units=LSTM_UNITS,
                 families=families, aux=aux, torso_kwargs=torso_kwargs or None)


def random_inputs(net, num_steps: int, batch: int, seed: int = 0, reset_prob: float = 0.0):
    """(obs, prev_action, prev_reward, reset, state) for ``net`` with a fixed generator; the
    state is random (not zero) so that carrying and resetting it are visible."""
    gen = torch.Generator().manual_seed(seed)
    shape = (num_steps, batch, *net.obs_shape)
    obs_dtype = TINY[net.torso][1]
    if obs_dtype == torch.uint8:
        obs = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
    else:
        obs = torch.randn(shape, generator=gen)
    prev_action = torch.randint(0, net.num_actions, (num_steps, batch), generator=gen)
    prev_reward = torch.randn(num_steps, batch, generator=gen)
    reset = torch.rand(num_steps, batch, generator=gen) < reset_prob
    state = torch.randn(batch, net.families, 2, net.lstm_units, generator=gen)
    return obs, prev_action, prev_reward, reset, state


def summed_terms(net: nn.Module, num_steps: int = 1) -> int:
    """How many rounded terms reach one output of ``net`` over ``num_steps`` recurrent steps,
    for tests.tolerance: the widest sum of any layer (a linear layer's inputs, a convolution's
    window, an LSTM gate's input and state) once per step, the state carrying each step's
    rounding into the next."""
    widths = [1]
    for layer in net.modules():
        if isinstance(layer, nn.Linear):
            widths.append(layer.in_features)
        elif isinstance(layer, nn.Conv2d):
            widths.append(layer.in_channels * layer.kernel_size[0] * layer.kernel_size[1])
        elif isinstance(layer, nn.LSTM | nn.LSTMCell):
            widths.append(layer.input_size + layer.hidden_size)
    return num_steps * max(widths)
