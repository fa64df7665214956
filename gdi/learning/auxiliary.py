"""Auxiliary dynamics losses: inverse dynamics (predict a_t) and forward dynamics (predict
e_{t+1}), masked at episode ends.

Paper: App. "Hyperparameters", rows "Auxiliary Forward Dynamic Task: Yes" and "Auxiliary
Inverse Dynamic Task: Yes" (the paper gives no architecture or weight; gdi's choices are in
docs/paper-choices.md). The heads that produce the predictions live in ``gdi.nets.dynamics``
(``GDINetwork.dynamics_predictions`` runs them); ``dynamics_losses`` turns every family's
predictions into the two losses.

Naming convention of ``gdi.learning`` (see ``gdi.learning.vtrace``): row t is the transition
``x_t --a_t--> x_{t+1}``. ``valid[t]`` is a 0/1 float mask (or non-negative weights) that is 0
where x_{t+1} is the first observation of a new episode, since no dynamics cross an episode end;
the learner passes ``1 − done``. Both losses are masked means ``Σ valid·ℓ / Σ valid`` over
[T, B]; an all-zero mask gives 0. Masked rows are never read: they may hold any action index,
or NaN, and still add nothing to the loss or its gradient.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from gdi.learning.vtrace import check_time_major

__all__ = ["dynamics_losses", "forward_dynamics_loss", "inverse_dynamics_loss"]


def _masked_mean(per_step: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Σ valid·ℓ / Σ valid; 0 for an all-zero mask."""
    return (valid * per_step).sum() / valid.sum().clamp_min(torch.finfo(valid.dtype).tiny)


def _zero_masked(tensor: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """``tensor [T, B, N]`` with rows where valid == 0 replaced by 0, so that NaN or inf there
    reaches neither the loss nor, through 0·NaN, the gradient."""
    return torch.where((valid > 0).unsqueeze(-1), tensor, torch.zeros_like(tensor))


def _check_last_dim(name: str, tensor: torch.Tensor, shape: tuple[int, ...]) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() != 3 or tuple(tensor.shape[:2]) != shape or tensor.shape[2] < 1:
        raise ValueError(
            f"{name} must have shape [T, B, N] with [T, B] = {shape} and N >= 1, got "
            f"{tuple(tensor.shape)}"
        )
    if not tensor.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")


def inverse_dynamics_loss(
    logits: torch.Tensor, actions: torch.Tensor, valid: torch.Tensor
) -> torch.Tensor:
    """Masked mean cross-entropy of the inverse model p(a_t | e_t, e_{t+1}).

    Args:
      logits: ``[T, B, A]`` float, the inverse head's logits for a_t.
      actions: ``[T, B]`` integer, a_t, the action taken at x_t.
      valid: ``[T, B]`` float, 0 where x_{t+1} starts a new episode.

    Returns:
      A scalar: Σ valid·(−log softmax(logits)[a_t]) / Σ valid.
    """
    check_time_major("valid", valid, None)
    shape = tuple(valid.shape)
    _check_last_dim("logits", logits, shape)
    if not isinstance(actions, torch.Tensor):
        raise TypeError(f"actions must be a torch.Tensor, got {type(actions).__name__}")
    if tuple(actions.shape) != shape:
        raise ValueError(f"actions must have shape [T, B] = {shape}, got {tuple(actions.shape)}")
    if actions.is_floating_point() or actions.dtype == torch.bool:
        raise ValueError(f"actions must be an integer tensor, got dtype {actions.dtype}")
    # Masked rows may hold any placeholder action: index 0 is read there, then dropped.
    safe_actions = torch.where(valid > 0, actions.long(), torch.zeros_like(actions.long()))
    cross_entropy = F.cross_entropy(
        _zero_masked(logits, valid).flatten(0, 1), safe_actions.flatten(), reduction="none"
    ).view(shape)
    return _masked_mean(cross_entropy, valid)


def forward_dynamics_loss(
    predicted: torch.Tensor, target: torch.Tensor, valid: torch.Tensor
) -> torch.Tensor:
    """Masked mean squared error of the forward model e_{t+1} ≈ f(e_t, a_t).

    The target is detached here, so the loss trains the forward head and, through its input
    e_t, the torso, but never pulls e_{t+1} towards the prediction.

    Args:
      predicted: ``[T, B, E]`` float, the forward head's prediction of e_{t+1}.
      target: ``[T, B, E]`` float, e_{t+1}.
      valid: ``[T, B]`` float, 0 where x_{t+1} starts a new episode.

    Returns:
      A scalar: Σ valid·mean_E((predicted − target)²) / Σ valid (mean over E, so its scale does
      not grow with the embedding size).
    """
    check_time_major("valid", valid, None)
    shape = tuple(valid.shape)
    _check_last_dim("predicted", predicted, shape)
    _check_last_dim("target", target, shape)
    if target.shape != predicted.shape:
        raise ValueError(
            f"target must have the shape of predicted {tuple(predicted.shape)}, got "
            f"{tuple(target.shape)}"
        )
    error = _zero_masked(predicted, valid) - _zero_masked(target.detach(), valid)
    squared_error = error.pow(2).mean(dim=-1)
    return _masked_mean(squared_error, valid)


def dynamics_losses(
    inverse_logits: torch.Tensor, forward: torch.Tensor, next_embedding: torch.Tensor,
    actions: torch.Tensor, valid: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """Both auxiliary losses of F families, each family's masked mean summed over families,
    so that each family's parameters get exactly the gradient of their own losses (as the main
    losses, summed in ``gdi.learning.loss``).

    Args:
      inverse_logits: ``[F, T, B, A]`` float, each family's inverse-head logits for a_t.
      forward: ``[F, T, B, E]`` float, each family's forward prediction of e_{t+1}.
      next_embedding: ``[F, T, B, E]`` float, each family's e_{t+1} (detached here).
      actions: ``[T, B]`` integer, a_t.
      valid: ``[T, B]`` float, 0 where x_{t+1} starts a new episode.

    Returns:
      ``{"inverse_dynamics": scalar, "forward_dynamics": scalar}``.
    """
    for name, tensor in (("inverse_logits", inverse_logits), ("forward", forward),
                         ("next_embedding", next_embedding)):
        if not isinstance(tensor, torch.Tensor) or tensor.dim() != 4:
            got = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor)
            raise ValueError(f"{name} must be [F, T, B, N], got {got}")
    if not inverse_logits.shape[0] == forward.shape[0] == next_embedding.shape[0]:
        raise ValueError(
            f"inverse_logits, forward and next_embedding must have the same number of families"
            f", got {inverse_logits.shape[0]}, {forward.shape[0]}, {next_embedding.shape[0]}"
        )
    families = range(inverse_logits.shape[0])
    return {
        "inverse_dynamics": torch.stack(
            [inverse_dynamics_loss(inverse_logits[f], actions, valid) for f in families]).sum(),
        "forward_dynamics": torch.stack(
            [forward_dynamics_loss(forward[f], next_embedding[f], valid) for f in families]
        ).sum(),
    }
