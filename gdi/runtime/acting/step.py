"""The acting step: π_λ on a batch of environments, one forward pass per step (the paper's
Algorithm 1, actor side: observation → network → A₁, A₂ → π_λ for each environment's own λ →
action).

Written once, for the actors that gather training data (``gdi.runtime.acting.actor.Actor``), the
evaluation during training (``gdi.runtime.acting.evaluator``) and the trained agent users play
(``gdi.agent.Agent``, which adds checks of its input). Between steps it carries, per
environment, what the network reads besides the observation (the LSTM state, the previous
action, the previous reward compressed, whether the episode has just begun) and the λ of the
environment's episode. An environment whose episode ended starts the next one with a zero LSTM
state, no previous action or reward, and a fresh λ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import torch

from gdi.policy_space import get_policy_space


def compress_reward(reward: np.ndarray) -> np.ndarray:
    """sign(r)·log(1 + |r|): the previous-reward input of the network. Raw game scores span
    orders of magnitude; the network sees them compressed (the learning targets use the
    family's own shaping, App. "Hyperparameters")."""
    return (np.sign(reward) * np.log1p(np.abs(reward))).astype(np.float32)


def sample_actions(
    probs: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One action per row of ``probs`` ``[N, A]`` and its log probability, by inverting the
    CDF at u = r·(row sum), r ~ U[0, 1). Action a is drawn iff cdf[a−1] ≤ u < cdf[a], so an
    action of probability 0 never is (u = 0 included); u < cdf[A−1] because r ≤ 1 − 2⁻⁵³
    rounds r·s below s for every float s."""
    cdf = np.cumsum(probs, axis=-1)
    u = rng.random((probs.shape[0], 1)) * cdf[:, -1:]
    actions = (cdf <= u).sum(axis=-1)
    return actions, np.log(probs[np.arange(actions.shape[0]), actions])


def one_step(a: np.ndarray, device: torch.device) -> torch.Tensor:
    """``[N, ...]`` per environment → ``[1, N, ...]``, one time step, on ``device``."""
    return torch.from_numpy(np.ascontiguousarray(a))[None].to(device)


def one_at_a_time(sample: Callable[[], np.ndarray]) -> Callable[[int], np.ndarray]:
    """``draw_lambdas`` from a sampler of one λ: k of them, ``[k, dim]``, drawn in turn."""
    return lambda k: np.stack([sample() for _ in range(k)])


class ActionDraw(NamedTuple):
    """One step's draw, awaiting the environment's outcome."""

    actions: np.ndarray
    """``int64 [N]``."""
    log_mu: np.ndarray
    """``[N]``: log μ(a|s) of the behavior policy π_λ, what the learner's importance weights
    divide by."""
    next_state: torch.Tensor
    """The LSTM state after this step, ``[N, F, 2, H]``."""


class Acting:
    """π_λ acting on ``num_envs`` environments: :meth:`reset`, then :meth:`act` and
    :meth:`observe` in turn, once per environment step.

    ``draw_lambdas(k)`` gives the λ of ``k`` new episodes ``[k, dim]`` (an actor's E, or a
    frozen copy of it); ``rng`` samples the actions. Attributes, per environment (read them
    between ``act`` and ``observe`` for the inputs of the step just drawn): ``state`` (LSTM),
    ``resets``, ``prev_actions``, ``prev_rewards`` (compressed), ``lambdas`` (``float64``, as E
    drew them: π_λ acts with them and E is told them back exactly; only the recorded steps hold
    them as float32, the storage schema's dtype); ``pending``: the last ``act``'s draw until
    ``observe``.
    """

    def __init__(self, net: torch.nn.Module, policy_space: str,
                 draw_lambdas: Callable[[int], np.ndarray], rng: np.random.Generator) -> None:
        self.net = net
        self.space = get_policy_space(policy_space)
        self.draw_lambdas = draw_lambdas
        self.rng = rng
        self.device = next(net.parameters()).device
        self.num_envs = 0
        self.pending: ActionDraw | None = None

    def reset(self, num_envs) -> None:
        """Start a new episode in every one of ``num_envs`` environments (an int, or the vector
        environment itself): zero LSTM state, no previous action or reward, a fresh λ each."""
        n = self.num_envs = int(getattr(num_envs, "num_envs", num_envs))
        self.state = self.net.initial_state(n)
        self.resets = np.ones(n, dtype=bool)
        self.prev_actions = np.zeros(n, dtype=np.int64)
        self.prev_rewards = np.zeros(n, dtype=np.float32)
        self.lambdas = np.asarray(self.draw_lambdas(n), dtype=np.float64)
        self.pending = None

    def action_probs(self, obs: np.ndarray) -> tuple[np.ndarray, torch.Tensor]:
        """π_λ ``[num_envs, A]`` of each environment at observations ``[num_envs,
        *obs_shape]``, given what is carried, and the LSTM state after the step; nothing
        carried changes."""
        device = self.device
        with torch.no_grad():
            outputs, next_state = self.net(
                one_step(obs, device), one_step(self.prev_actions, device),
                one_step(self.prev_rewards, device), one_step(self.resets, device), self.state)
        return self.space.acting_probs(outputs.logits[:, 0].cpu().numpy(),
                                       self.lambdas), next_state

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions ``int64 [num_envs]`` for observations ``[num_envs, *obs_shape]``, each
        sampled from its environment's π_λ; the draw is kept in ``pending``."""
        probs, next_state = self.action_probs(obs)
        actions, log_mu = sample_actions(probs, self.rng)
        self.pending = ActionDraw(actions, log_mu, next_state)
        return actions

    def observe(self, rewards, terminated, truncated) -> np.ndarray:
        """The outcome of the step ``act`` drew: the reward (compressed) and action become the
        network's previous ones, and an environment whose episode ended (terminated or
        truncated) starts the next with a zero LSTM state and λ from ``draw_lambdas``. Returns
        the mask of ended episodes."""
        draw = self.pending
        done = np.logical_or(terminated, truncated).reshape(self.num_envs)
        rewards = np.asarray(rewards, dtype=np.float64).reshape(self.num_envs)
        self.prev_actions = np.where(done, 0, draw.actions)
        self.prev_rewards = np.where(done, 0.0, compress_reward(rewards)).astype(np.float32)
        self.resets = done
        self.state = draw.next_state
        ended = np.flatnonzero(done)
        if ended.size:
            self.lambdas[ended] = self.draw_lambdas(ended.size)
        self.pending = None
        return done

    # --- checkpointing ---------------------------------------------------------------------
    CARRIED = ("state", "resets", "prev_actions", "prev_rewards", "lambdas")

    def carried(self) -> dict:
        """Copies of what is carried between steps (for an actor's checkpoint)."""
        return {name: (value.clone() if isinstance(value, torch.Tensor) else value.copy())
                for name in self.CARRIED for value in [getattr(self, name)]}

    def load_carried(self, carried: dict) -> None:
        for name in self.CARRIED:
            setattr(self, name, carried[name])
        self.num_envs, self.pending = len(self.resets), None
