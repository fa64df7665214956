"""Observations standardized by running statistics, element by element (not in the paper).

Sample Factory's Atari APPO (``normalize_input=True``, the peer of docs/learning-per-frame.md)
feeds its torso ``clip((x − μ) / √(σ² + ε), −5, 5)`` with μ and σ² the running mean and
variance of every input element over all the observations it has trained on. On an ALE frame
that is a per-pixel standardization: pixels that never change (the walls, the score's
background) go to 0 and the rare ones that do (Breakout's ball, a few pixels of 84 × 84) reach
unit scale, where ``x / 255`` leaves them a small part of a mostly constant image. The paper
scales pixels by 1/255 and says nothing more (App. "Atari pre-processing hyperparameters"), so this is a lever,
``input_norm="running"``, and ``"none"`` stays the default.

The statistics are buffers of the module, so they travel with the parameters wherever
``state_dict`` goes: checkpoints, the parameter server's pushes to the actors, ``gdi.load_agent``.
Only the learner updates them (``GDINetwork.update_input_stats``, once per learner step, on
every 4th step of the batch's learning part: ``gdi.runtime.training.learner``); actors and
evaluation read the learner's.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["INPUT_NORMS", "VALUE_NORMS", "RunningInputNorm", "RunningValueNorm", "merge_moments"]

#: How observations enter the torso after their scale (``NetworkConfig.input_norm``): as they
#: are (the paper) or standardized by running statistics (Sample Factory's ``normalize_input``).
INPUT_NORMS = ("none", "running")

#: How each family's V and A heads are read (``NetworkConfig.value_norm``): in the units of the
#: returns (the paper) or in units of the running statistics of its V-trace targets, as Sample
#: Factory's ``normalize_returns`` reads its value head.
VALUE_NORMS = ("none", "running")


def merge_moments(
    count: torch.Tensor, mean: torch.Tensor, var: torch.Tensor,
    batch_count: int, batch_mean: torch.Tensor, batch_var: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The count, mean and (population) variance of two sets of samples from each set's own.

    Chan, Golub and LeVeque (1979), the pairwise update: with n = n_a + n_b and
    δ = μ_b − μ_a, μ = μ_a + δ·n_b/n and n·σ² = n_a·σ_a² + n_b·σ_b² + δ²·n_a·n_b/n. Exact for
    any split of the samples, and stable where the naive running sum of squares is not (a
    million frames of pixels near the same value). ``count`` is a 0-d tensor; the means and
    variances are elementwise.
    """
    total = count + batch_count
    delta = batch_mean - mean
    new_mean = mean + delta * (batch_count / total)
    m2 = var * count + batch_var * batch_count + delta.square() * (count * batch_count / total)
    return total, new_mean, m2 / total


class RunningInputNorm(nn.Module):
    """``clip((x − μ) / √(σ² + eps), −clip, clip)`` elementwise over an input of ``shape``, with
    μ and σ² the running mean and population variance of every sample ``update`` has seen
    (Sample Factory's defaults: eps 1e-5, clip 5). Before any update μ = 0 and σ² = 1: the
    input passes through unchanged (up to the clip).

    The statistics accumulate in float64: after tens of millions of frames a float32 mean would
    stop moving by a batch's share. They are cast to the input's dtype when applied.
    """

    def __init__(self, shape: tuple[int, ...], eps: float = 1e-5, clip: float = 5.0):
        super().__init__()
        self.shape = tuple(shape)
        self.eps = float(eps)
        self.clip = float(clip)
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(self.shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(self.shape, dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Fold the samples ``x [N, *shape]`` into the statistics."""
        if tuple(x.shape[1:]) != self.shape:
            raise ValueError(f"input statistics are over shape {self.shape}; got samples of shape "
                             f"{tuple(x.shape[1:])}")
        if x.shape[0] == 0:
            return
        if not x.is_floating_point():
            x = x.float()
        # The batch's moments in its own dtype (one fused pass; 100 samples of pixels in [0, 1]
        # lose nothing that matters in float32), merged into the float64 totals.
        batch_var, batch_mean = torch.var_mean(x, dim=0, correction=0)
        batch_mean, batch_var = batch_mean.to(torch.float64), batch_var.to(torch.float64)
        # From count 0 the merge gives the batch's own moments (the initial σ² = 1 weighs 0).
        count, mean, var = merge_moments(self.count, self.mean, self.var, x.shape[0],
                                         batch_mean, batch_var)
        # A batch with a NaN or an infinity (an environment's fault) is left out: merged, it
        # would poison its elements' statistics for the rest of the run, and every forward
        # pass with them, where without the statistics it costs one skipped update. Chosen on
        # the device (torch.where), so a CUDA learner does not wait for the check.
        finite = torch.isfinite(mean).all() & torch.isfinite(var).all()
        self.count.copy_(torch.where(finite, count, self.count))
        self.mean.copy_(torch.where(finite, mean, self.mean))
        self.var.copy_(torch.where(finite, var, self.var))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x·s − μ·s with s = 1/√(σ² + eps): one fused multiply-add over the input, then the clip.
        scale = torch.rsqrt(self.var + self.eps)
        shift = (-self.mean * scale).to(x.dtype)
        return torch.addcmul(shift, x, scale.to(x.dtype)).clamp_(-self.clip, self.clip)


class RunningValueNorm(nn.Module):
    """Each family's value and Q-advantage heads read in units of its returns' running
    statistics (not in the paper; ``value_norm="running"``).

    Sample Factory's Atari APPO (``normalize_returns=True``) trains its value head on returns
    standardized by their running mean μ and standard deviation σ, and reads the head as
    V = σ·v̂ + μ wherever a value is needed. Here family f's heads give (Â_f, v̂_f) and the
    network returns A_f = σ_f·Â_f and V_f = σ_f·v̂_f + μ_f, so Q_f = Ā_f + V_f = σ_f·(Â̄_f + v̂_f)
    + μ_f is read the same way: everything downstream (V-trace, Retrace, the actors' bootstrap
    at a time limit, π_λ = softmax(A/τ) in the paper's T) sees returns in their own units, and
    the loss divides the V and Q errors by σ_f (``LossOutputs.value_scale``), so the heads
    regress standardized targets, as Sample Factory's does. μ_f and σ_f² are the mean and
    population variance of every V-trace target v_s of family f that the learner has trained
    on (``update``, after each step; its first step reads μ = 0, σ = 1: the heads as they are).
    The statistics accumulate in float64 and are buffers, so they travel with the parameters
    (checkpoints, the actors' pushes). No PopArt correction: a change of σ rescales what the
    heads say, as in Sample Factory.
    """

    def __init__(self, families: int, eps: float = 1e-5):
        super().__init__()
        self.eps = float(eps)
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(families, dtype=torch.float64))
        self.register_buffer("var", torch.ones(families, dtype=torch.float64))

    @property
    def std(self) -> torch.Tensor:
        """σ_f = √(σ_f² + eps), ``[F]`` float64."""
        return torch.sqrt(self.var + self.eps)

    @torch.no_grad()
    def update(self, batch_count: int, batch_mean: torch.Tensor, batch_var: torch.Tensor) -> None:
        """Fold ``batch_count`` targets per family, of mean ``batch_mean [F]`` and population
        variance ``batch_var [F]``, into the statistics. Non-finite moments (a batch the
        learner skips) are left out."""
        batch_mean = torch.as_tensor(batch_mean, dtype=torch.float64, device=self.mean.device)
        batch_var = torch.as_tensor(batch_var, dtype=torch.float64, device=self.var.device)
        if batch_mean.shape != self.mean.shape or batch_var.shape != self.var.shape:
            raise ValueError(f"value statistics are per family, shape {tuple(self.mean.shape)}; "
                             f"got mean {tuple(batch_mean.shape)}, var {tuple(batch_var.shape)}")
        if batch_count < 1 or not (torch.isfinite(batch_mean).all()
                                   and torch.isfinite(batch_var).all()):
            return
        count, mean, var = merge_moments(self.count, self.mean, self.var, batch_count,
                                         batch_mean, batch_var)
        self.count.copy_(count)
        self.mean.copy_(mean)
        self.var.copy_(var)

    def forward(self, adv: torch.Tensor, value: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(σ·adv, σ·value + μ)`` per family: ``adv [F, T, B, A]``, ``value [F, T, B]``."""
        std = self.std.to(value.dtype)
        mean = self.mean.to(value.dtype)
        return adv * std.view(-1, 1, 1, 1), value * std.view(-1, 1, 1) + mean.view(-1, 1, 1)
