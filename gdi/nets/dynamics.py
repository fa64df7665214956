"""Auxiliary dynamics heads on the torso embedding e (one pair per parameter family).

Paper: App. "Hyperparameters", "Auxiliary Forward Dynamic Task: Yes", "Auxiliary Inverse
Dynamic Task: Yes"; the paper gives no architecture. gdi uses the classic pair (Pathak et al.
2017, ICM): an inverse model p(a_t | e_t, e_{t+1}) and a forward model ê_{t+1} = f(e_t, a_t),
each an MLP with one hidden layer of E units (E = the embedding size) and ReLU. The losses are
``gdi.learning.auxiliary``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ForwardDynamicsHead", "InverseDynamicsHead"]


def _mlp(in_features: int, hidden: int, out_features: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features))


class InverseDynamicsHead(nn.Module):
    """Logits of a_t from (e_t, e_{t+1}): ``[..., E], [..., E] → [..., A]``."""

    def __init__(self, embedding_size: int, num_actions: int):
        super().__init__()
        self.mlp = _mlp(2 * embedding_size, embedding_size, num_actions)

    def forward(self, e_t: torch.Tensor, e_tp1: torch.Tensor) -> torch.Tensor:
        return self.mlp(torch.cat((e_t, e_tp1), dim=-1))


class ForwardDynamicsHead(nn.Module):
    """Prediction of e_{t+1} from (e_t, one-hot a_t): ``[..., E], [...] int → [..., E]``."""

    def __init__(self, embedding_size: int, num_actions: int):
        super().__init__()
        self.num_actions = num_actions
        self.mlp = _mlp(embedding_size + num_actions, embedding_size, embedding_size)

    def forward(self, e_t: torch.Tensor, a_t: torch.Tensor) -> torch.Tensor:
        one_hot = F.one_hot(a_t, self.num_actions).to(e_t.dtype)
        return self.mlp(torch.cat((e_t, one_hot), dim=-1))
