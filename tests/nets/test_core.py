"""gdi.nets.core: the chunked nn.LSTM equals the per-step definition with resets."""

import pytest
import torch
from torch import nn

from gdi.nets import FeedForwardCore, LSTMCore
from tests.nets.helpers import summed_terms
from tests.tolerance import assert_close


def per_step_reference(core: LSTMCore, x, reset, state):
    """The definition: for each t, zero (h, c) where reset[t], then one LSTMCell step."""
    cell = nn.LSTMCell(core.input_size, core.hidden_size)
    with torch.no_grad():
        cell.weight_ih.copy_(core.lstm.weight_ih_l0)
        cell.weight_hh.copy_(core.lstm.weight_hh_l0)
        cell.bias_ih.copy_(core.lstm.bias_ih_l0)
        cell.bias_hh.copy_(core.lstm.bias_hh_l0)
    h, c = state[:, 0], state[:, 1]
    outs = []
    for t in range(x.shape[0]):
        keep = (~reset[t]).float().unsqueeze(-1)
        h, c = cell(x[t], (h * keep, c * keep))
        outs.append(h)
    return torch.stack(outs), torch.stack((h, c), dim=1)


RESET_PATTERNS = ["none", "one step", "random", "every step"]


def reset_pattern(name: str, num_steps: int, batch: int) -> torch.Tensor:
    reset = torch.zeros(num_steps, batch, dtype=torch.bool)
    if name == "one step":
        reset[5, 1] = True
    elif name == "random":
        reset = torch.rand(num_steps, batch, generator=torch.Generator().manual_seed(2)) < 0.15
    elif name == "every step":
        reset[:] = True
    reset[0, 0] = True  # a reset at t = 0 zeroes the stored state
    return reset


# min_mean_chunk = 1: always nn.LSTM per reset-free chunk; huge: always the lstm_cell loop.
@pytest.mark.parametrize("min_mean_chunk", [1, 10**9])
@pytest.mark.parametrize("pattern", RESET_PATTERNS)
def test_both_unroll_paths_match_per_step_cells(pattern, min_mean_chunk, monkeypatch):
    monkeypatch.setattr(LSTMCore, "min_mean_chunk", min_mean_chunk)
    torch.manual_seed(0)
    core = LSTMCore(6, 8)
    x = torch.randn(13, 4, 6, requires_grad=True)
    reset = reset_pattern(pattern, 13, 4)
    state = torch.randn(4, 2, 8)
    assert_matches_cells(core, x, core(x, reset, state), per_step_reference(core, x, reset, state))


def assert_matches_cells(core: LSTMCore, x, got, want) -> None:
    """(output, final state) of ``core`` and of the cells, and the gradients of the outputs'
    sum for ``x``, by tests.tolerance's rule."""
    (out, final), (ref_out, ref_final) = got, want
    num_steps = len(x)
    # nn.LSTM and the cells round apart at every step; each step's rounding is carried on.
    terms = summed_terms(core, num_steps)
    assert_close(out, ref_out, terms=terms)
    assert_close(final, ref_final, terms=terms)
    (grad,) = torch.autograd.grad(out.sum(), x)
    (ref_grad,) = torch.autograd.grad(ref_out.sum(), x)
    # The gradient of x_t sums the errors of the 4 gates × hidden units, carried back from
    # every later step.
    assert_close(grad, ref_grad, terms=num_steps * 4 * core.hidden_size)


def test_default_path_choice_matches_the_sequence():
    """One chunk of 13 steps uses nn.LSTM; one acting step (T = 1) uses the cell loop."""
    core = LSTMCore(3, 4)
    calls = []
    core.lstm.register_forward_hook(lambda *_: calls.append("lstm"))
    core(torch.randn(13, 2, 3), torch.zeros(13, 2, dtype=torch.bool), torch.zeros(2, 2, 4))
    assert calls == ["lstm"]
    core(torch.randn(1, 2, 3), torch.zeros(1, 2, dtype=torch.bool), torch.zeros(2, 2, 4))
    assert calls == ["lstm"]


def test_gradient_flows_through_every_chunk():
    torch.manual_seed(1)
    core = LSTMCore(3, 4)
    x = torch.randn(6, 2, 3, requires_grad=True)
    reset = torch.zeros(6, 2, dtype=torch.bool)
    reset[2, 0] = reset[4, 1] = True
    out, _ = core(x, reset, torch.zeros(2, 2, 4))
    out.sum().backward()
    assert (x.grad.abs().sum(dim=-1) > 0).all()


def test_core_rejects_bad_shapes():
    core = LSTMCore(3, 4)
    with pytest.raises(ValueError, match="x must be"):
        core(torch.zeros(2, 3), torch.zeros(2, 1, dtype=torch.bool), torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="reset must be"):
        core(torch.zeros(2, 1, 3), torch.zeros(2, 1), torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="state must be"):
        core(torch.zeros(2, 1, 3), torch.zeros(2, 1, dtype=torch.bool), torch.zeros(1, 4))


# The feedforward core (core="feedforward", not in the paper)


def test_the_feedforward_core_is_relu_of_one_linear_layer_per_step_and_passes_the_state():
    """Each step's output is max(0, W x_t + b), computed here as a loop of dot products; the
    state comes back as it went in, whatever the resets."""
    from gdi.nets import FeedForwardCore

    torch.manual_seed(0)
    core = FeedForwardCore(5, 3)
    x = torch.randn(4, 2, 5)
    state = torch.randn(2, 2, 3)
    reset = torch.tensor([[True, False], [False, True], [False, False], [True, True]])
    out, new_state = core(x, reset, state)
    weight, bias = core.linear.weight.detach(), core.linear.bias.detach()
    expected = torch.zeros(4, 2, 3, dtype=torch.float64)
    magnitude = 0.0  # the largest sum of |terms|: cancellation can leave outputs near 0
    for t in range(4):
        for b in range(2):
            for unit in range(3):
                terms = [float(weight[unit, i]) * float(x[t, b, i]) for i in range(5)]
                terms.append(float(bias[unit]))
                expected[t, b, unit] = max(0.0, sum(terms))
                magnitude = max(magnitude, sum(abs(term) for term in terms))
    assert_close(out.detach(), expected, dtype=torch.float32, terms=6, magnitude=magnitude)
    assert new_state is state


def test_the_feedforward_core_has_no_memory():
    """Changing an earlier step's input leaves every later output unchanged (the LSTM's
    would change)."""
    from gdi.nets import FeedForwardCore

    torch.manual_seed(1)
    x = torch.randn(6, 3, 4)
    later = x.clone()
    later[0] += 5.0
    reset = torch.zeros(6, 3, dtype=torch.bool)
    for core, remembers in ((FeedForwardCore(4, 8), False), (LSTMCore(4, 8), True)):
        state = torch.zeros(3, 2, 8)
        out, _ = core(x, reset, state)
        out_changed, _ = core(later, reset, state)
        assert torch.equal(out[1:], out_changed[1:]) is not remembers


def test_an_unknown_core_is_refused_by_name():
    from gdi.nets import build

    with pytest.raises(ValueError, match=r"unknown core 'gru'; allowed: lstm, feedforward"):
        build((4,), 2, torso="mlp", lstm_units=8, core="gru")


def test_a_core_registered_later_is_a_choice_of_the_config_and_of_build():
    # The cores are a registry like the torsos: a new core is its class, registered; no list
    # of names elsewhere (the config's check, build's) needs an edit.
    from gdi.config import Config
    from gdi.nets import CORES, build
    from gdi.nets.config import NetworkConfig

    class TanhCore(FeedForwardCore):
        name = "tanh_feedforward"

        def forward(self, x, reset, state):
            out, state = super().forward(x, reset, state)
            return torch.tanh(out), state

    with CORES.restored():
        CORES.register(TanhCore)
        assert NetworkConfig(torso="mlp", core="tanh_feedforward").core == "tanh_feedforward"
        assert Config(torso="mlp", core="tanh_feedforward").core == "tanh_feedforward"
        net = build((4,), 2, torso="mlp", lstm_units=8, core="tanh_feedforward")
        assert isinstance(net.family_nets[0].core, TanhCore)
    with pytest.raises(ValueError, match=r"core: unknown value 'tanh_feedforward'"):
        NetworkConfig(torso="mlp", core="tanh_feedforward")
