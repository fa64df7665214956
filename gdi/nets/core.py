"""The core between the torso and the heads: an LSTM whose state is zeroed at episode starts
(the paper's), or a feedforward layer without memory (not in the paper); time-major.

Paper: App. "Hyperparameters" ("LSTM Units: 256", "Burn-in 40", "Seq-length 80", "Burn-in
Stored Recurrent State: Yes"), the R2D2 recipe (Kapturowski et al. 2019): the actor stores the
state at each sequence start, the learner unrolls from it. A sequence can hold the end of one
episode and the start of the next (``gdi.runtime.storage.sequences``); ``reset[t]`` marks the first
observation of an episode, and the state is zeroed *before* step t for those batch entries.

Speed (benchmarks/nets.py --compare; the times are in docs/benchmarks.md, "Networks"): one
``nn.LSTM`` call over the whole sequence is faster than a per-step ``LSTMCell`` loop, but one
``nn.LSTM`` call per short chunk costs more than a cell step. So the sequence is cut at every
step where *any* batch entry resets, and:

* chunks of mean length >= :attr:`LSTMCore.min_mean_chunk` (3, near the measured crossover
  between the two): ``nn.LSTM`` runs on each reset-free chunk, and the state
  of the resetting entries is zeroed between chunks (the learner's case on ALE: a few resets
  per batch);
* otherwise (acting, or resets at most steps): a per-step loop of ``torch.lstm_cell`` on the
  same weights, zeroing the state at reset steps.

Both equal the per-step definition (tested against an ``LSTMCell`` loop with the same weights).

:class:`FeedForwardCore` (``core="feedforward"``, issue 41's screen; not in the paper) is one
linear layer and a ReLU on each step's input alone, the shape of Sample Factory's Atari APPO,
whose network has no recurrence (its frame stack of 4 carries the motion). It takes and returns
the same ``[B, 2, H]`` state as the LSTM so that actors, the recorded steps and the learner's
burn-in stay as they are; it never reads it, and hands back the state it was given.
"""

from __future__ import annotations

import torch
from torch import nn

from gdi.registry import Registry

__all__ = ["CORES", "FeedForwardCore", "LSTMCore", "check_core", "make_core"]


#: The cores by name (``NetworkConfig.core``), each registered where it is defined
#: (``@CORES.register``, under its class's ``name``).
CORES = Registry("core")


def check_core_inputs(x: torch.Tensor, reset: torch.Tensor, state: torch.Tensor,
                      input_size: int, hidden_size: int) -> None:
    """ValueError naming the input of a core's call that is not ``x [T, B, input_size]``,
    ``reset`` bool ``[T, B]`` or ``state [B, 2, hidden_size]``."""
    if x.dim() != 3 or x.shape[2] != input_size:
        raise ValueError(f"x must be [T, B, {input_size}], got {tuple(x.shape)}")
    num_steps, batch = x.shape[:2]
    if reset.shape != (num_steps, batch) or reset.dtype != torch.bool:
        raise ValueError(
            f"reset must be bool [T, B] = {(num_steps, batch)}, got {reset.dtype} "
            f"{tuple(reset.shape)}"
        )
    if state.shape != (batch, 2, hidden_size):
        raise ValueError(
            f"state must be [B, 2, H] = {(batch, 2, hidden_size)}, got {tuple(state.shape)}"
        )


@CORES.register
class LSTMCore(nn.Module):
    """One-layer LSTM, ``[T, B, input_size]`` → ``[T, B, hidden_size]``, with per-step resets.

    The state is one tensor ``[B, 2, H]`` (h, then c), batch-first so that an actor can slice
    and stack it per environment.
    """

    name = "lstm"

    #: Mean chunk length below which the per-step loop is used instead of ``nn.LSTM`` calls.
    min_mean_chunk: int = 3

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(input_size, hidden_size)

    def forward(
        self, x: torch.Tensor, reset: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Unroll over ``x [T, B, I]`` from ``state [B, 2, H]``.

        ``reset [T, B]`` bool: where True, (h, c) is zeroed before step t. Returns the outputs
        ``h_t [T, B, H]`` and the state after the last step ``[B, 2, H]``.
        """
        check_core_inputs(x, reset, state, self.input_size, self.hidden_size)
        num_steps = x.shape[0]
        keep = (~reset).to(x.dtype).unsqueeze(-1)  # [T, B, 1]: 0 zeroes the state before t
        h = state[:, 0] * keep[0]
        c = state[:, 1] * keep[0]
        # Chunk starts: steps t > 0 where some entry resets (one host sync to get the list).
        starts = (
            (torch.nonzero(reset[1:].any(dim=1)).flatten() + 1).tolist() if num_steps > 1 else []
        )
        if (len(starts) + 1) * self.min_mean_chunk > num_steps:
            return self._step_loop(x, keep, set(starts), h, c)
        h, c = h.unsqueeze(0), c.unsqueeze(0)  # nn.LSTM's [num_layers=1, B, H]
        if not starts:
            out, (h, c) = self.lstm(x, (h, c))
        else:
            outs = []
            # tensor_split (not x[a:b]) so backward concatenates chunk gradients once instead
            # of materializing a full-size zero gradient per chunk.
            for t0, chunk in zip([0, *starts], x.tensor_split(starts), strict=True):
                if t0 > 0:
                    h, c = h * keep[t0], c * keep[t0]
                chunk_out, (h, c) = self.lstm(chunk, (h, c))
                outs.append(chunk_out)
            out = torch.cat(outs)
        return out, torch.stack((h[0], c[0]), dim=1)

    def _step_loop(
        self, x: torch.Tensor, keep: torch.Tensor, reset_steps: set[int], h: torch.Tensor,
        c: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One ``torch.lstm_cell`` per step with ``nn.LSTM``'s weights (same gate order)."""
        weights = (
            self.lstm.weight_ih_l0, self.lstm.weight_hh_l0,
            self.lstm.bias_ih_l0, self.lstm.bias_hh_l0,
        )
        outs = []
        for t, x_t in enumerate(x.unbind(0)):  # unbind: one gradient concat, as tensor_split
            if t in reset_steps:
                h, c = h * keep[t], c * keep[t]
            h, c = torch.lstm_cell(x_t, (h, c), *weights)
            outs.append(h)
        return torch.stack(outs), torch.stack((h, c), dim=1)


@CORES.register
class FeedForwardCore(nn.Module):
    """``[T, B, input_size]`` → ``ReLU(W x + b)`` ``[T, B, hidden_size]``, each step alone.

    Same call as :class:`LSTMCore`; the state ``[B, 2, H]`` is checked and returned as given
    (never read), so that nothing outside the network knows which core it has.
    """

    name = "feedforward"

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(
        self, x: torch.Tensor, reset: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [T, B, I]`` → ``(ReLU(linear(x)) [T, B, H], state)``; ``reset [T, B]`` is checked
        as the LSTM's and has nothing to reset."""
        check_core_inputs(x, reset, state, self.input_size, self.hidden_size)
        return torch.relu(self.linear(x)), state


def check_core(name: str) -> None:
    """A ValueError naming ``name``, the closest cores and every allowed one unless it is
    registered in :data:`CORES`."""
    CORES.lookup(name)


def make_core(name: str, input_size: int, hidden_size: int) -> nn.Module:
    """The core ``name`` (:data:`CORES`); a ValueError naming it and the allowed names."""
    return CORES.lookup(name)(input_size, hidden_size)
