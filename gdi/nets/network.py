"""The GDI network Θ: one parameter family (GDI-I, θ₁ = θ₂) or two (GDI-H, θ₁ and θ₂).

Paper: App. "Algorithm Pseudocode", Eq. "i3 casa equ" (one family: A = A_θ(s), V = V_θ(s)) and
Eq. "h3 casa equ" (two families, A_θ₁, V_θ₁ and A_θ₂, V_θ₂); App. "Hyperparameters" (IMPALA
deep backbone, LSTM 256, burn-in with stored state, auxiliary forward and inverse dynamics).
Ā = A − E_π[A] and Q = Ā + V are computed by the loss (``gdi.learning.dueling``), not here.

One family is, as in R2D2 (Kapturowski et al. 2019) on an IMPALA torso:

    obs[t] ── torso ── e_t ───────┐
    one-hot prev_action[t] ───────┼── LSTM ── h_t ──┬── head → A(s_t, ·)  [A]
    prev_reward[t] ───────────────┘                 ├── head → V(s_t)     [1]
                                                    └── head → L(s_t, ·)  [A]  (separate only)
    (e_t, e_{t+1}, a_t) ── dynamics heads → predictions (training only; the losses are
                                             gdi.learning.auxiliary's)

π_λ's logits are A itself in the paper (``policy_head="advantage"``: π_λ = softmax(A/τ)).
``policy_head="separate"`` adds a third head L beside A and V, as ACER (Wang et al. 2017) keeps
a policy head beside its Q head: π_λ is built from L, and A is left to the Q loss (not in the
paper; docs/paper-choices.md). ``NetOutputs.logits`` is what π_λ reads either way.
``input_norm="running"`` standardizes each input element by its running mean and variance
before the torso (Sample Factory's ``normalize_input``; not in the paper:
``gdi.nets.normalization``); the learner updates the statistics, ``update_input_stats``.
``core="feedforward"`` puts one ReLU layer of the same width where the LSTM is, with no memory
(as Sample Factory's Atari APPO; not in the paper): the recurrent state passes through unread.

A head is one linear layer (``head_hidden=0``) or, as R2D2's dueling heads, a hidden ReLU
layer of ``head_hidden`` units and then a linear layer. The paper does not describe its
heads. The hidden layer matters where values are large: h_t is bounded in (−1, 1), so a
linear head reaches |V| = 100 (CartPole with γ = 0.99) only by saturating the LSTM and
growing every weight to ~100/H, one Adam step of size lr at a time.

GDI-H's families share nothing (torso, core, heads, dynamics heads) and are built one after
the other, so they start from different random draws. They run one after the other in
``forward``: on CPU a batched run of both (``torch.func.vmap`` over stacked parameters, i.e.
grouped convolutions) is slower than the loop (docs/benchmarks.md, "Networks").

Alignment, stated once: ``prev_action[t]`` and ``prev_reward[t]`` are the action taken and the
reward received *before* ``obs[t]``; ``reset[t]`` is True where ``obs[t]`` is the first
observation of an episode. There the recurrent state is zeroed before step t and the previous
action and reward inputs are zeroed (whatever the arrays hold there: a placeholder action such
as −1, or NaN, is never read).
"""

from __future__ import annotations

from numbers import Integral
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from gdi.checks import positive_number
from gdi.nets.core import check_core, make_core
from gdi.nets.dynamics import ForwardDynamicsHead, InverseDynamicsHead
from gdi.nets.normalization import INPUT_NORMS, VALUE_NORMS, RunningInputNorm, RunningValueNorm
from gdi.nets.torsos import TORSOS, check_init, make_torso, preprocess_observations

__all__ = ["POLICY_HEADS", "DynamicsPredictions", "FamilyNetwork", "GDINetwork", "NetOutputs",
           "build"]

#: What π_λ's logits are: A itself (the paper) or a policy head of their own beside A and V
#: (the choices of ``NetworkConfig.policy_head``, whose annotation reads them from here).
POLICY_HEADS = ("advantage", "separate")



class NetOutputs(NamedTuple):
    """What the network computes for ``[T, B]`` observations, family-major."""

    adv: torch.Tensor  # [F, T, B, A] advantages A_θf(s_t, ·)
    value: torch.Tensor  # [F, T, B] V_θf(s_t)
    embedding: torch.Tensor  # [F, T, B, E] torso outputs e_t, input of the dynamics heads
    logits: torch.Tensor  # [F, T, B, A] what π_λ reads: ``adv`` itself, or the policy head L


class DynamicsPredictions(NamedTuple):
    """The auxiliary heads' predictions over ``T − 1`` transitions, family-major."""

    inverse_logits: torch.Tensor  # [F, T − 1, B, A] logits of a_t from (e_t, e_{t+1})
    forward: torch.Tensor  # [F, T − 1, B, E] ê_{t+1} from (e_t, one-hot a_t)
    next_embedding: torch.Tensor  # [F, T − 1, B, E] e_{t+1}, the forward target


class FamilyNetwork(nn.Module):
    """One parameter family θ_f: torso, core (LSTM or feedforward), A and V heads, optional
    policy head L and dynamics heads."""

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        num_actions: int,
        torso: str,
        lstm_units: int,
        aux: bool,
        torso_kwargs: dict,
        head_hidden: int = 0,
        torso_init: str = "auto",
        policy_head: str = "advantage",
        core: str = "lstm",
        policy_init_scale: float = 1.0,
    ):
        super().__init__()
        self.torso = make_torso(torso, obs_shape, init=torso_init, **torso_kwargs)
        self.embedding_size = self.torso.output_size
        # Core input: [e_t, one-hot a_{t−1}, r_{t−1}] (R2D2); the LSTM (the paper's) or a
        # feedforward layer of the same width (gdi.nets.core.FeedForwardCore).
        self.core = make_core(core, self.embedding_size + num_actions + 1, lstm_units)
        self.adv_head = _head(lstm_units, head_hidden, num_actions)
        self.value_head = _head(lstm_units, head_hidden, 1)
        if policy_head == "separate":
            self.policy_head = _head(lstm_units, head_hidden, num_actions)
            _scale_output_layer(self.policy_head, policy_init_scale)
        if aux:
            self.inverse_dynamics = InverseDynamicsHead(self.embedding_size, num_actions)
            self.forward_dynamics = ForwardDynamicsHead(self.embedding_size, num_actions)

    def forward(
        self,
        x: torch.Tensor,
        action_reward: torch.Tensor,
        reset: torch.Tensor,
        state: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``x [T·B, *obs_shape]`` preprocessed, ``action_reward [T, B, A + 1]``, ``reset [T, B]``,
        ``state [B, 2, H]`` → adv ``[T, B, A]``, value ``[T, B]``, embedding ``[T, B, E]``,
        logits ``[T, B, A]`` (adv itself without a policy head), state ``[B, 2, H]``."""
        num_steps, batch = reset.shape
        embedding = self.torso(x).view(num_steps, batch, self.embedding_size)
        core_out, state = self.core(torch.cat((embedding, action_reward), dim=-1), reset, state)
        adv = self.adv_head(core_out)
        logits = self.policy_head(core_out) if hasattr(self, "policy_head") else adv
        return adv, self.value_head(core_out)[..., 0], embedding, logits, state


def _head(in_features: int, hidden: int, out_features: int) -> nn.Module:
    """Linear (``hidden=0``) or linear → ReLU → linear (R2D2's dueling heads)."""
    if hidden == 0:
        return nn.Linear(in_features, out_features)
    return nn.Sequential(
        nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features)
    )


def _scale_output_layer(head: nn.Module, scale: float) -> None:
    """Multiply the initial weights and bias of ``head``'s output layer by ``scale``: at 0.01 the
    logits start near zero and π_λ = softmax(L/τ) near uniform at any τ in E's box, as PPO's
    policy layer starts (orthogonal with gain 0.01; Andrychowicz et al. 2021, "What matters in
    on-policy RL", found it helps). Not in the paper, which has no policy head."""
    if scale == 1.0:
        return
    output = head if isinstance(head, nn.Linear) else head[-1]
    with torch.no_grad():
        output.weight.mul_(scale)
        output.bias.mul_(scale)


def _check_tensor(name: str, tensor: torch.Tensor, shape: tuple[int, ...], kind: str) -> None:
    """ValueError naming ``name`` unless ``tensor`` has ``shape`` and dtype kind ``kind``."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tuple(tensor.shape) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(tensor.shape)}")
    ok = {
        "bool": tensor.dtype == torch.bool,
        "int": not tensor.is_floating_point() and not tensor.is_complex()
        and tensor.dtype != torch.bool,
        "float": tensor.is_floating_point(),
    }[kind]
    if not ok:
        raise ValueError(f"{name} must be a {kind} tensor, got dtype {tensor.dtype}")


class GDINetwork(nn.Module):
    """Θ for GDI-I (``families=1``), GDI-H (``families=2``) or K families (LASER-like); build it
    with :func:`build`.

    Attributes: ``families`` (F), ``num_actions`` (A), ``lstm_units`` (H), ``embedding_size``
    (E), ``obs_shape``, ``torso``, ``aux``, ``policy_head``, ``core``; ``family_nets[f]`` is
    family f's :class:`FamilyNetwork`; ``input_norm`` is the :class:`RunningInputNorm` all
    families read their input through, or None (``input_norm="none"``, the paper);
    ``value_norm`` is the :class:`RunningValueNorm` each family's A and V heads are read
    through, or None (``value_norm="none"``, the paper).
    """

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        num_actions: int,
        *,
        torso: str,
        lstm_units: int,
        families: int,
        aux: bool,
        torso_kwargs: dict,
        obs_scale: float | None = None,
        head_hidden: int = 0,
        torso_init: str = "auto",
        policy_head: str = "advantage",
        core: str = "lstm",
        input_norm: str = "none",
        value_norm: str = "none",
        policy_init_scale: float = 1.0,
    ):
        super().__init__()
        self.obs_shape = tuple(obs_shape)
        self.obs_scale = obs_scale
        self.num_actions = num_actions
        self.lstm_units = lstm_units
        self.families = families
        self.torso = torso
        self.aux = aux
        self.head_hidden = head_hidden
        self.policy_head = policy_head
        self.core = core
        self.family_nets = nn.ModuleList(
            FamilyNetwork(
                self.obs_shape, num_actions, torso, lstm_units, aux, torso_kwargs, head_hidden,
                torso_init, policy_head, core, policy_init_scale,
            )
            for _ in range(families)
        )
        self.embedding_size = self.family_nets[0].embedding_size
        # One set of statistics for all families: they describe the input, not a family.
        self.input_norm = RunningInputNorm(self.obs_shape) if input_norm == "running" else None
        self.value_norm = RunningValueNorm(families) if value_norm == "running" else None

    def _param(self) -> torch.Tensor:
        return next(self.parameters())

    def initial_state(
        self, batch_size: int, device: torch.device | str | None = None
    ) -> torch.Tensor:
        """Zero recurrent state ``[B, F, 2, H]`` (h then c), batch-first so an actor can slice
        and stack it per environment; on the parameters' device unless ``device`` is given."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 0:
            raise ValueError(f"batch_size must be an int >= 0, got {batch_size!r}")
        param = self._param()
        return torch.zeros(
            batch_size, self.families, 2, self.lstm_units,
            dtype=param.dtype, device=param.device if device is None else device,
        )

    def forward(
        self,
        obs: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        reset: torch.Tensor,
        state: torch.Tensor,
    ) -> tuple[NetOutputs, torch.Tensor]:
        """Unroll every family over ``T`` steps of ``B`` environments.

        Args:
          obs: ``[T, B, *obs_shape]``; uint8 is scaled by 1/255, other dtypes used as-is.
          prev_action: ``[T, B]`` integer, the action taken before ``obs[t]``.
          prev_reward: ``[T, B]`` float, the reward received before ``obs[t]``, fed as given.
          reset: ``[T, B]`` bool, True where ``obs[t]`` starts an episode: the state is zeroed
            before step t and ``prev_action[t]``, ``prev_reward[t]`` are replaced by zeros.
          state: ``[B, F, 2, H]`` float, the state before ``obs[0]``.

        Returns:
          ``(NetOutputs(adv [F, T, B, A], value [F, T, B], embedding [F, T, B, E],
          logits [F, T, B, A]), state [B, F, 2, H])``, the state after ``obs[T − 1]``.
        """
        if not isinstance(obs, torch.Tensor):
            raise TypeError(f"obs must be a torch.Tensor, got {type(obs).__name__}")
        if obs.dim() != 2 + len(self.obs_shape) or tuple(obs.shape[2:]) != self.obs_shape:
            dims = ", ".join(map(str, self.obs_shape))
            raise ValueError(
                f"obs must have shape [T, B, *obs_shape] = [T, B, {dims}], got {tuple(obs.shape)}"
            )
        num_steps, batch = obs.shape[:2]
        if num_steps < 1:
            raise ValueError(f"obs must have at least one time step, got {tuple(obs.shape)}")
        _check_tensor("prev_action", prev_action, (num_steps, batch), "int")
        _check_tensor("prev_reward", prev_reward, (num_steps, batch), "float")
        _check_tensor("reset", reset, (num_steps, batch), "bool")
        _check_tensor("state", state, (batch, self.families, 2, self.lstm_units), "float")

        dtype = self._param().dtype
        state = state.to(dtype)
        x = preprocess_observations(
            obs.reshape(num_steps * batch, *self.obs_shape), dtype, self.obs_scale
        )
        if self.input_norm is not None:
            x = self.input_norm(x)
        # Previous action and reward, zeroed at episode starts (placeholders there never read).
        safe_action = torch.where(reset, torch.zeros_like(prev_action), prev_action).long()
        one_hot = F.one_hot(safe_action, self.num_actions).to(dtype)
        one_hot = one_hot.masked_fill(reset.unsqueeze(-1), 0.0)
        reward = prev_reward.to(dtype).masked_fill(reset, 0.0)
        action_reward = torch.cat((one_hot, reward.unsqueeze(-1)), dim=-1)  # [T, B, A + 1]

        per_family = [
            net(x, action_reward, reset, state[:, f]) for f, net in enumerate(self.family_nets)
        ]
        parts = list(zip(*per_family, strict=True))[:4]
        if self.policy_head == "advantage":  # π_λ reads A: no second stack of the same tensors
            parts = parts[:3]
        adv, value, embedding, *logits = (
            part[0].unsqueeze(0) if len(part) == 1 else torch.stack(part) for part in parts
        )
        if self.value_norm is not None:  # the heads' standardized units back to the returns'
            adv, value = self.value_norm(adv, value)
        logits = logits[0] if logits else adv
        # The state is batch-first [B, F, 2, H] (and contiguous, for the actor's numpy copy).
        new_state = torch.stack([out[4] for out in per_family], dim=1)
        return NetOutputs(adv, value, embedding, logits), new_state

    @torch.no_grad()
    def update_input_stats(self, obs: torch.Tensor) -> None:
        """Fold observations ``[..., *obs_shape]`` (as ``forward`` takes them, before their
        scale) into the running input statistics; nothing without ``input_norm``. The learner
        calls it once per step on its batch."""
        if self.input_norm is None:
            return
        if tuple(obs.shape[obs.dim() - len(self.obs_shape):]) != self.obs_shape:
            dims = ", ".join(map(str, self.obs_shape))
            raise ValueError(f"obs must end in obs_shape [{dims}], got {tuple(obs.shape)}")
        flat = obs.reshape(-1, *self.obs_shape)
        self.input_norm.update(preprocess_observations(flat, self._param().dtype,
                                                       self.obs_scale))

    def dynamics_predictions(
        self, outputs: NetOutputs, actions: torch.Tensor, valid: torch.Tensor
    ) -> DynamicsPredictions | None:
        """What the inverse and forward dynamics heads predict from ``outputs.embedding``
        (None when the network has no auxiliary heads); the losses are
        ``gdi.learning.auxiliary.dynamics_losses``.

        Alignment: with T observations in ``outputs``, row t of ``actions [T − 1, B]`` (integer)
        is a_t, the action taken at ``obs[t]``, and ``valid [T − 1, B]`` (float) is 0 where
        ``obs[t + 1]`` starts a new episode (the learner passes 1 − done). So for t < T − 1,
        per family f: the inverse head predicts a_t from (e_t, e_{t+1}) and the forward head
        predicts e_{t+1} from (e_t, one-hot a_t).
        """
        if not self.aux:
            return None
        embedding = outputs.embedding
        if not isinstance(embedding, torch.Tensor) or embedding.dim() != 4 or (
            embedding.shape[0] != self.families or embedding.shape[3] != self.embedding_size
        ):
            got = tuple(embedding.shape) if isinstance(embedding, torch.Tensor) else embedding
            raise ValueError(
                f"outputs.embedding must be [F, T, B, E] with F = {self.families}, E = "
                f"{self.embedding_size}, got {got}"
            )
        num_steps, batch = embedding.shape[1:3]
        if num_steps < 2:
            raise ValueError(
                f"dynamics predictions need T >= 2 observations (a transition), got T = "
                f"{num_steps}"
            )
        _check_tensor("actions", actions, (num_steps - 1, batch), "int")
        _check_tensor("valid", valid, (num_steps - 1, batch), "float")
        # Masked rows may hold a placeholder action (e.g. padding): one-hot reads 0 there.
        safe_actions = torch.where(valid > 0, actions, torch.zeros_like(actions)).long()
        inverse, forward = [], []
        for f, net in enumerate(self.family_nets):
            e_t, e_tp1 = embedding[f, :-1], embedding[f, 1:]
            inverse.append(net.inverse_dynamics(e_t, e_tp1))
            forward.append(net.forward_dynamics(e_t, safe_actions))
        return DynamicsPredictions(torch.stack(inverse), torch.stack(forward), embedding[:, 1:])


def build(
    obs_shape: tuple[int, ...],
    num_actions: int,
    *,
    torso: str = "impala_deep",
    lstm_units: int = 256,
    families: int = 1,
    aux: bool = True,
    torso_kwargs: dict | None = None,
    obs_scale: float | None = None,
    head_hidden: int = 0,
    torso_init: str = "auto",
    policy_head: str = "advantage",
    core: str = "lstm",
    input_norm: str = "none",
    value_norm: str = "none",
    policy_init_scale: float = 1.0,
) -> GDINetwork:
    """The GDI network for observations of ``obs_shape`` and ``num_actions`` discrete actions.

    Defaults are the paper's (App. "Hyperparameters"): IMPALA deep torso, LSTM 256, auxiliary
    dynamics heads; ``families=2`` for GDI-H³. ``torso`` ∈ :data:`gdi.nets.TORSOS`;
    ``torso_kwargs`` are passed to the torso class (e.g. ``{"layout": "HWC"}``). Parameters are
    drawn from torch's global generator: seed it for reproducible weights. ``obs_scale``
    multiplies observations on input; ``None`` means uint8 observations are 0–255 pixels
    (× 1/255) and others are used as they are (see ``preprocess_observations``).
    ``head_hidden`` > 0 gives the A and V heads a hidden ReLU layer of that width (R2D2: 512);
    0 makes them linear. ``torso_init`` initializes the torso's layers
    (:data:`gdi.nets.torsos.INITIALIZATIONS`; ``auto``: He for ``nature``, PyTorch's default for
    the others). ``policy_head``: ``advantage`` (the paper: π_λ's logits are A) or
    ``separate`` (a policy head L beside A and V; π_λ's logits are L). ``core``: ``lstm`` (the
    paper's) or ``feedforward`` (one ReLU layer of ``lstm_units`` without memory; the state
    passes through unread: :class:`gdi.nets.core.FeedForwardCore`). ``input_norm``: ``none``
    (the paper) or ``running`` (each input element standardized by running statistics the
    learner keeps: :class:`gdi.nets.normalization.RunningInputNorm`). ``value_norm``: ``none``
    (the paper) or ``running`` (A and V read in units of the running statistics of each
    family's V-trace targets: :class:`gdi.nets.normalization.RunningValueNorm`).
    ``policy_init_scale`` multiplies the policy head L's initial output layer (1: PyTorch's
    default; 0.01: logits near zero, π_λ near uniform, as PPO's; read with ``separate`` only).

    Raises:
      ValueError: naming the bad value and what is allowed.
    """
    TORSOS.lookup(torso)  # a ValueError naming the allowed torsos
    if isinstance(families, bool) or not isinstance(families, int) or families < 1:
        raise ValueError(
            f"families must be an integer >= 1 (1: GDI-I, θ₁ = θ₂; 2: GDI-H³; K: LASER-like); "
            f"got {families!r}"
        )
    if (
        not isinstance(obs_shape, tuple | list)
        or not obs_shape
        or not all(isinstance(d, Integral) and not isinstance(d, bool) and d >= 1 for d in obs_shape)
    ):
        raise ValueError(
            f"obs_shape must be a non-empty tuple of positive ints, got {obs_shape!r}"
        )
    for name, value in (("num_actions", num_actions), ("lstm_units", lstm_units)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if isinstance(head_hidden, bool) or not isinstance(head_hidden, Integral) or head_hidden < 0:
        raise ValueError(
            f"head_hidden must be an int >= 0 (0: linear heads), got {head_hidden!r}"
        )
    if obs_scale is not None and not (isinstance(obs_scale, int | float) and obs_scale > 0):
        raise ValueError(f"obs_scale must be a positive number or None, got {obs_scale!r}")
    check_init(torso, torso_init)
    if policy_head not in POLICY_HEADS:
        raise ValueError(f"policy_head must be one of {', '.join(POLICY_HEADS)}, got "
                         f"{policy_head!r}")
    check_core(core)
    if input_norm not in INPUT_NORMS:
        raise ValueError(f"input_norm must be one of {', '.join(INPUT_NORMS)}, got "
                         f"{input_norm!r}")
    if value_norm not in VALUE_NORMS:
        raise ValueError(f"value_norm must be one of {', '.join(VALUE_NORMS)}, got "
                         f"{value_norm!r}")
    positive_number("policy_init_scale", policy_init_scale)
    if torso_kwargs is not None and not isinstance(torso_kwargs, dict):
        raise ValueError(f"torso_kwargs must be a dict or None, got {type(torso_kwargs).__name__}")
    return GDINetwork(
        tuple(int(d) for d in obs_shape), int(num_actions), torso=torso,
        lstm_units=int(lstm_units), families=int(families),
        aux=bool(aux), torso_kwargs=dict(torso_kwargs or {}),
        obs_scale=None if obs_scale is None else float(obs_scale),
        head_hidden=int(head_hidden), torso_init=torso_init, policy_head=policy_head,
        core=core, input_norm=input_norm, value_norm=value_norm,
        policy_init_scale=float(policy_init_scale),
    )
