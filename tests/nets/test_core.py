"""gdi.nets.core: the chunked nn.LSTM equals the per-step definition with resets."""

import pytest
import torch
from torch import nn

from gdi.nets import LSTMCore
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
