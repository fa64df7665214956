"""The GDI learner loss: operator T of Algorithm 1 for GDI-I³ (one parameter family) and GDI-H³
(two families).

Paper: App. "Algorithm Pseudocode" (Algorithms GDI-I³ and GDI-H³; Eq. "i3/h3 casa equ" for
Q = Ā + V, Eq. "i3/h3 soft entropy" for π_λ), App. "Background on RL" (V-trace for V and the
policy gradient, Retrace for Q), App. "Hyperparameters" (reward shapes, ξ, α, β, c̄, ρ̄, no
entropy regularization). The function is pure: ``loss(outputs, batch, config) -> (loss,
metrics)``; the learner holds the optimizer and calls it. Naming convention: see
``gdi.learning.vtrace``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

import torch

from gdi.checks import one_of
from gdi.learning.dueling import dueling_q
from gdi.learning.policy_gradient import (
    PG_ADVANTAGE_NORMS,
    clipped_fraction,
    clipped_surrogate_loss,
    entropy_floor_penalty,
    normalized_pg_advantages,
)
from gdi.learning.retrace import retrace
from gdi.learning.shaping import REWARD_SHAPES
from gdi.learning.vtrace import check_time_major, vtrace
from gdi.policy_space import POLICY_SPACES, PolicySpace

__all__ = ["LossBatch", "LossConfig", "LossOutputs", "loss"]

@dataclass(frozen=True)
class LossConfig:
    """Hyperparameters of the GDI loss, declared and checked here, where the loss is. The
    defaults are the paper's GDI-I³ row (App. "Hyperparameters"). The run's
    ``gdi.config.Config`` is composed of this class (and of the other layers' configs), so a
    run's config is a LossConfig: the learner hands it to :func:`loss` as it is, and
    ``config.json`` and ``--set`` name these fields."""

    policy_space: str = "soft_entropy"
    """Index set Λ and π_λ: a space of gdi.policy_space by its name (the one the actors
    sampled from; the loss's target policy is π_λ with each step's λ)."""
    reward_shapes: tuple[str, ...] = ("log",)
    """Reward shaping per family: log, root or none (App. Hyperparameters), or symlog (the
    log shape read as symmetric; docs/paper-choices.md); ("log",) for GDI-I³, ("log", "root")
    for GDI-H³."""
    clip_rho: float = 1.05
    """Importance-sampling clip ρ̄ of the V-trace targets (≥ 0; inf: no truncation)."""
    clip_c: float = 1.05
    """Trace-cutting clip c̄ of V-trace and Retrace (≥ 0; inf: no truncation)."""
    clip_pg_rho: float | None = None
    """Truncation of ρ in the policy-gradient advantage ρ_s δ (≥ 0; inf: none); null: ρ̄
    (clip_rho), as the paper."""
    trace_lambda: float = 1.0
    """λ ∈ [0, 1] scaling the traces of V-trace and Retrace, c = λ·min(c̄, π/μ) (Retrace(λ);
    on-policy, GAE's λ); 1: the paper's traces, cut by c̄ only. Not in the paper."""
    value_loss_scale: float = 1.0
    """ξ, scale of the V loss."""
    q_loss_scale: float = 10.0
    """α, scale of the Q loss."""
    q_loss_trains_value: bool = True
    """Whether the Q loss's gradient reaches V through Q = Ā + V (Eq. "casa equ"; the paper does
    not say). True: V learns from α·L_Q as well as ξ·L_V; False: V from the V loss alone."""
    pg_loss_scale: float = 10.0
    """β, scale of the policy-gradient loss."""
    entropy_scale: float = 0.0
    """Entropy regularization (paper: none)."""
    entropy_floor: float = 0.0
    """A floor on π_λ's entropy (nats, the batch's mean): below it the loss adds
    ``entropy_floor_scale``·(floor − H), so that π_λ is pulled back only while it is sharper
    than the floor (0: no floor; not in the paper nor in APPO; ``entropy_floor_penalty``)."""
    entropy_floor_scale: float = 1.0
    """The weight of the floor's penalty (ten times the ale-cpu default's entropy term)."""
    pg_clip: float = 0.0
    """ε of PPO's clipped surrogate −min(r·Â, clip(r, 1 ± ε)·Â), r = π/μ, Â the V-trace
    advantage before ρ, in place of the paper's policy gradient −ρ_s δ·log π (0: the paper's);
    a bound on how far one batch moves π_λ (``clipped_surrogate_loss``)."""
    pg_advantage_norm: Literal[PG_ADVANTAGE_NORMS] = "none"
    """The policy gradient's advantages ρ_s δ over each batch: none (the paper), center (minus
    their mean) or standardize (centred, divided by their standard deviation;
    ``normalized_pg_advantages``)."""
    aux_loss_scale: float = 1.0
    """Scale of the auxiliary dynamics losses."""

    def __post_init__(self) -> None:
        self.check_loss()

    def check_loss(self) -> None:
        """ValueError of one line for the first field out of its range or naming no registered
        part (a policy space, a reward shape, a normalization)."""
        one_of("policy_space", self.policy_space, sorted(POLICY_SPACES))
        shapes = self.reward_shapes
        if isinstance(shapes, str) or not isinstance(shapes, tuple | list):
            raise ValueError(
                f"reward_shapes: must be a tuple of shape names, one per parameter family, "
                f"e.g. ('log',) or ('log', 'root'); got {shapes!r}"
            )
        object.__setattr__(self, "reward_shapes", tuple(shapes))  # a list from JSON is fine
        if not self.reward_shapes:
            raise ValueError(
                "reward_shapes: one shape per parameter family (1 for GDI-I, 2 for GDI-H³, K "
                "for LASER-like), got none"
            )
        try:  # one shape per family: as many families as the policy space acts with
            POLICY_SPACES[self.policy_space].check_families(len(self.reward_shapes))
        except ValueError as err:
            raise ValueError(f"reward_shapes: {err}") from None
        for name in self.reward_shapes:
            one_of("reward_shapes", name, sorted(REWARD_SHAPES))
        clips = {"clip_rho": self.clip_rho, "clip_c": self.clip_c}
        if self.clip_pg_rho is not None:
            clips["clip_pg_rho"] = self.clip_pg_rho
        for field, value in clips.items():
            # inf is allowed (no truncation); NaN and negatives are not.
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValueError(
                    f"{field}: must be a number >= 0 (inf: no truncation), got {value!r}")
        tl = self.trace_lambda
        if isinstance(tl, bool) or not isinstance(tl, int | float) or not 0 <= tl <= 1:
            raise ValueError(f"trace_lambda: must be in [0, 1] (1: the paper's traces), got "
                             f"{tl!r}")
        if (isinstance(self.pg_clip, bool) or not isinstance(self.pg_clip, int | float)
                or not 0 <= self.pg_clip < 1):
            raise ValueError(f"pg_clip: the clip ε of PPO's surrogate must be in [0, 1) (0: the "
                             f"paper's V-trace policy gradient), got {self.pg_clip!r}")
        if self.pg_advantage_norm not in PG_ADVANTAGE_NORMS:
            raise ValueError(
                f"pg_advantage_norm: unknown normalization {self.pg_advantage_norm!r}; allowed: "
                f"{', '.join(PG_ADVANTAGE_NORMS)}"
            )
        if not isinstance(self.q_loss_trains_value, bool):
            raise ValueError(
                f"q_loss_trains_value: must be True or False, got {self.q_loss_trains_value!r}"
            )
        # Each a finite number >= 0: the loss weights, and the floor on π_λ's entropy.
        finite_non_negative = {
            "value_loss_scale": "a loss weight",
            "q_loss_scale": "a loss weight",
            "pg_loss_scale": "a loss weight",
            "entropy_scale": "a loss weight",
            "entropy_floor": "a floor on π_λ's entropy in nats (0: none)",
            "entropy_floor_scale": "a loss weight",
            "aux_loss_scale": "a loss weight",
        }
        for field, what in finite_non_negative.items():
            value = getattr(self, field)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(
                    f"{field}: {what} must be a finite number >= 0, got {value!r}"
                )

    @property
    def num_families(self) -> int:
        """F: the number of parameter families, one per reward shape."""
        return len(self.reward_shapes)


class LossBatch(NamedTuple):
    """What the actors recorded, time-major over the T learning steps (burn-in removed)."""

    actions: torch.Tensor  # [T, B] int64 a_t
    rewards: torch.Tensor  # [T, B] raw environment rewards; shaped inside the loss per family
    discounts: torch.Tensor  # [T, B] γ·(1 − done_t)
    behavior_log_probs: torch.Tensor  # [T, B] log μ(a_t | x_t) recorded by the actor
    lambdas: torch.Tensor  # [T, B, k] λ step t was acted with; the target policy is π_λ with it
    # [F, T, B] γ·V_f(final observation) at steps where a time limit cut the episode (their
    # discount is 0), 0 elsewhere; added to family f's shaped reward. None: no time limits.
    truncation_bootstrap: torch.Tensor | None = None


class LossOutputs(NamedTuple):
    """What the learner's network produced for the batch (after burn-in)."""

    adv: torch.Tensor  # [F, T+1, B, A] advantages per family; index T is the bootstrap state
    value: torch.Tensor  # [F, T+1, B] state values per family
    aux_losses: dict[str, torch.Tensor]  # reduced scalar auxiliary losses (may be empty)
    # [F, T+1, B, A] π_λ's logits when the network has a policy head of its own beside A
    # (policy_head="separate"); None: π_λ reads A, as in the paper.
    logits: torch.Tensor | None = None
    # [F] σ_f of a network that reads its heads in units of the running statistics of family
    # f's V-trace targets (value_norm="running", gdi.nets.RunningValueNorm): the V and Q
    # losses' errors are divided by it, so the heads regress standardized targets. None: 1
    # (the paper: the errors in the returns' units).
    value_scale: torch.Tensor | None = None


def _check_inputs(
    outputs: LossOutputs, batch: LossBatch, config: LossConfig, space: PolicySpace
) -> None:
    """Ranks, shapes and dtypes of every input, each error naming its argument."""
    actions = batch.actions
    if not isinstance(actions, torch.Tensor) or actions.dim() != 2:
        shape = tuple(actions.shape) if isinstance(actions, torch.Tensor) else type(actions)
        raise ValueError(f"batch.actions must be time-major with rank 2 [T, B], got {shape}")
    if actions.dtype != torch.int64:
        raise ValueError(f"batch.actions must be int64, got dtype {actions.dtype}")
    shape = tuple(actions.shape)
    num_steps, batch_size = shape
    if num_steps < 1:
        raise ValueError(f"batch.actions must have at least one time step, got shape {shape}")
    check_time_major("batch.rewards", batch.rewards, shape)
    check_time_major("batch.discounts", batch.discounts, shape)
    check_time_major("batch.behavior_log_probs", batch.behavior_log_probs, shape)
    bootstrap = batch.truncation_bootstrap
    if bootstrap is not None and (
        not isinstance(bootstrap, torch.Tensor)
        or tuple(bootstrap.shape) != (config.num_families, *shape)
        or not bootstrap.is_floating_point()
    ):
        got = tuple(bootstrap.shape) if isinstance(bootstrap, torch.Tensor) else type(bootstrap)
        raise ValueError(
            f"batch.truncation_bootstrap must be None or a float tensor [F, T, B] = "
            f"{(config.num_families, *shape)}, got {got}"
        )
    lambdas = batch.lambdas
    if not isinstance(lambdas, torch.Tensor) or tuple(lambdas.shape) != (*shape, space.dim):
        got = tuple(lambdas.shape) if isinstance(lambdas, torch.Tensor) else type(lambdas)
        raise ValueError(
            f"batch.lambdas must have shape [T, B, k] = {(*shape, space.dim)} for the "
            f"{space.name!r} policy space ({', '.join(space.index_names)}), got {got}"
        )

    num_families = config.num_families
    adv, value = outputs.adv, outputs.value
    if not isinstance(adv, torch.Tensor) or adv.dim() != 4:
        got = tuple(adv.shape) if isinstance(adv, torch.Tensor) else type(adv)
        raise ValueError(f"outputs.adv must have rank 4 [F, T+1, B, A], got {got}")
    if adv.shape[0] != num_families:
        raise ValueError(
            f"outputs.adv has {adv.shape[0]} parameter families (axis 0) but config.reward_shapes "
            f"names {num_families} ({config.reward_shapes!r}); give one reward shape per family"
        )
    if tuple(adv.shape[1:3]) != (num_steps + 1, batch_size):
        raise ValueError(
            f"outputs.adv must have shape [F, T+1, B, A] with T+1 = {num_steps + 1} (index T is "
            f"the bootstrap state after the last learning step) and B = {batch_size}, got "
            f"{tuple(adv.shape)}"
        )
    if not adv.is_floating_point():
        raise ValueError(f"outputs.adv must be a floating-point tensor, got dtype {adv.dtype}")
    expected_value_shape = tuple(adv.shape[:3])
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != expected_value_shape:
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value)
        raise ValueError(
            f"outputs.value must have shape [F, T+1, B] = {expected_value_shape}, got {got}"
        )
    if not value.is_floating_point():
        raise ValueError(f"outputs.value must be a floating-point tensor, got dtype {value.dtype}")
    logits = outputs.logits
    if logits is not None and (not isinstance(logits, torch.Tensor)
                               or logits.shape != adv.shape or not logits.is_floating_point()):
        got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits)
        raise ValueError(f"outputs.logits must be None or a float tensor shaped as outputs.adv "
                         f"[F, T+1, B, A] = {tuple(adv.shape)}, got {got}")
    scale = outputs.value_scale
    if scale is not None and (not isinstance(scale, torch.Tensor)
                              or tuple(scale.shape) != (adv.shape[0],)
                              or not scale.is_floating_point() or not bool((scale > 0).all())):
        got = (f"{tuple(scale.shape)} {scale.tolist()}" if isinstance(scale, torch.Tensor)
               else type(scale))
        raise ValueError(f"outputs.value_scale must be None or a positive float tensor of one σ "
                         f"per family [F] = ({adv.shape[0]},), got {got}")
    num_actions = adv.shape[-1]
    if bool((actions < 0).any()) or bool((actions >= num_actions).any()):
        raise ValueError(
            f"batch.actions must be in [0, {num_actions}) (A = outputs.adv.shape[-1]), got "
            f"values in [{int(actions.min())}, {int(actions.max())}]"
        )
    for name, aux in outputs.aux_losses.items():
        if not isinstance(aux, torch.Tensor) or aux.dim() != 0:
            got = tuple(aux.shape) if isinstance(aux, torch.Tensor) else type(aux)
            raise ValueError(f"outputs.aux_losses[{name!r}] must be a scalar tensor, got {got}")


def _policy_entropy(log_probs: torch.Tensor, probs: torch.Tensor | None = None) -> torch.Tensor:
    """H(π) = −Σ_a π(a) log π(a) over the last axis; 0·log 0 = 0 (ε-greedy has π(a) = 0).

    ``probs`` is ``log_probs.exp()`` when the caller already has it.
    """
    if probs is None:
        probs = log_probs.exp()
    safe_log_probs = torch.where(probs > 0, log_probs, torch.zeros_like(log_probs))
    return -(probs * safe_log_probs).sum(dim=-1)


def _taken(per_action: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``per_action[t, b, actions[t, b]]``: ``[T, B, A]`` → ``[T, B]``."""
    return per_action.gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def vtrace_target_moments(metrics: dict[str, float], families: int
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    """The mean and the (population) variance of each family's V-trace targets v_s in one
    step, float64 ``[families]`` each, read from that step's ``loss`` metrics: what a running
    normalization of the value heads folds in after the step (``value_norm="running"``)."""
    means = [metrics[f"stats/vs_mean_f{k}"] for k in range(1, families + 1)]
    variances = [metrics[f"stats/vs_std_f{k}"] ** 2 for k in range(1, families + 1)]
    return (torch.tensor(means, dtype=torch.float64),
            torch.tensor(variances, dtype=torch.float64))


def loss(
    outputs: LossOutputs, batch: LossBatch, config: LossConfig
) -> tuple[torch.Tensor, dict[str, float]]:
    """The GDI loss ξ·L_V + α·L_Q + β·L_π − entropy_scale·H(π) + aux_loss_scale·Σ L_aux
    (+ entropy_floor_scale·max(0, entropy_floor − H(π)) with a floor on the entropy).

    For the T learning steps, with the advantages A_1 … A_F of the F families:

    * target policy π = π_λ(A_1, …, A_F) of ``config.policy_space`` with the λ each step was
      acted with (Eq. "soft entropy": A₁ = ``adv[0]``, A₂ = ``adv[F−1]``; LASER-like: the
      family λ names); log ρ_t = log π(a_t) − log μ(a_t), detached. With
      ``outputs.logits`` (a policy head beside A; not the paper) π_λ reads L_1 … L_F in place
      of A_1 … A_F everywhere below: the policy gradient and the entropy reach L, and A is
      trained by the Q loss alone;
    * for each family k, its own shaped rewards r_k = shape_k(r), plus γ·V_k(final
      observation) at steps a time limit cut (``truncation_bootstrap``), and:
      Q_k = Ā_k + V_k with Ā_k = A_k − E_π[A_k], π detached (Eq. "casa equ"), V_k detached
      too when ``config.q_loss_trains_value`` is False;
      V-trace (v_s, ρ_s δ) from (log ρ, γ_t, r_k, V_k, V_k(x_T));
      Retrace target G from (log ρ, γ_t, r_k, Q_k(x_t, a_t), E_π Q_k(x_t, ·) = V_k(x_t), V_k(x_T));
      L_V,k = ½(v_s − V_k)², L_Q,k = ½(G − Q_k(x_t, a_t))² (each error divided by σ_k when
      the network reads its heads in standardized units, ``outputs.value_scale``; not the
      paper), L_π,k = −ρ_s δ · log π_k(a_t)
      (ρ_s δ normalized over the batch as ``config.pg_advantage_norm`` says; with
      ``config.pg_clip`` > 0 PPO's clipped surrogate of δ instead; the paper: neither);
    * means over T×B, sums over families.

    log π_k is π_λ with the *other* families' advantages detached (GDI-H³: "update θ₁, θ₂ via
    policy gradient and policy evaluation, respectively"), so each family's policy gradient
    reaches only its own parameters; see docs/paper-choices.md. Targets (v_s, ρ_s δ, G) never
    carry gradient. ``adv[:, T]`` is never read: the bootstrap state needs only V_k(x_T).

    Returns:
      ``(total_loss, metrics)``: a scalar tensor to backpropagate, and floats named
      ``losses/*`` and ``stats/*``; per-family quantities appear as ``<name>_f1``,
      ``<name>_f2`` and as ``<name>`` (losses: sum over families; stats: mean).
    """
    space = POLICY_SPACES[config.policy_space]
    _check_inputs(outputs, batch, config, space)
    num_families = config.num_families
    num_steps = batch.actions.shape[0]
    actions = batch.actions

    # Index T of adv is the bootstrap state: not needed, since E_π Q(x_T, ·) = V(x_T).
    adv = outputs.adv[:, :num_steps]  # [F, T, B, A]
    values = outputs.value[:, :num_steps]  # [F, T, B]
    bootstrap_values = outputs.value[:, num_steps]  # [F, B]

    # What π_λ reads: A (the paper) or the policy head's logits L.
    logits = adv if outputs.logits is None else outputs.logits[:, :num_steps]

    # log π_k: π_λ with gradient to family k's logits only (F = 1: one family).
    family_logits = list(logits.unbind(0))
    family_log_policies = [
        space.log_probs(
            [a if j == k else a.detach() for j, a in enumerate(family_logits)], batch.lambdas
        )
        for k in range(num_families)
    ]
    target_log_policy = family_log_policies[0].detach()  # the same π_λ for every family
    target_policy = target_log_policy.exp()
    log_rhos = _taken(target_log_policy, actions) - batch.behavior_log_probs.detach()

    # Entropy of the joint π_λ; with gradient to both families only when it is in the loss.
    entropy_in_loss = config.entropy_scale > 0 or config.entropy_floor > 0
    if entropy_in_loss and num_families > 1:
        entropy = _policy_entropy(space.log_probs(family_logits, batch.lambdas)).mean()
    elif entropy_in_loss:
        entropy = _policy_entropy(family_log_policies[0]).mean()
    else:
        entropy = _policy_entropy(target_log_policy, target_policy).mean()

    metrics: dict[str, torch.Tensor] = {}
    value_losses, q_losses, policy_losses, vs_means, q_target_means = [], [], [], [], []
    vs_stds = []
    adv_spreads, pg_advantage_means, pg_advantage_stds = [], [], []
    for family in range(num_families):
        suffix = f"_f{family + 1}"
        shaped_rewards = REWARD_SHAPES[config.reward_shapes[family]](batch.rewards)
        if batch.truncation_bootstrap is not None:
            # A cut episode's last step: r + γ·V(final observation), with discount 0 there.
            shaped_rewards = shaped_rewards + batch.truncation_bootstrap[family].detach()
        value = values[family]
        bootstrap_value = bootstrap_values[family].detach()

        vtrace_returns = vtrace(
            log_rhos,
            batch.discounts,
            shaped_rewards,
            value.detach(),
            bootstrap_value,
            clip_rho=config.clip_rho,
            clip_c=config.clip_c,
            clip_pg_rho=config.clip_pg_rho,
            trace_lambda=config.trace_lambda,
        )

        # π detached inside Ā; V detached too when only L_V is to train it.
        q_value = value if config.q_loss_trains_value else value.detach()
        q_values = dueling_q(adv[family], q_value, target_policy)
        q_taken = _taken(q_values, actions)
        # E_π[Q(x, ·)] = Σ_a π(a)(A(a) − Σ_b π(b) A(b) + V) = E_π[A] − E_π[A]·Σ_a π(a) + V = V,
        # because Σ_a π(a) = 1: the dueling V is exactly the expected Q that Retrace needs.
        q_targets = retrace(
            log_rhos,
            batch.discounts,
            shaped_rewards,
            q_taken.detach(),
            value.detach(),
            bootstrap_value,
            clip_c=config.clip_c,
            trace_lambda=config.trace_lambda,
        )

        value_error = vtrace_returns.vs - value
        q_error = q_targets - q_taken
        if outputs.value_scale is not None:  # the errors in the heads' standardized units
            value_error = value_error / outputs.value_scale[family]
            q_error = q_error / outputs.value_scale[family]
        value_loss = 0.5 * value_error.pow(2).mean()
        q_loss = 0.5 * q_error.pow(2).mean()
        log_policy_taken = _taken(family_log_policies[family], actions)
        # With a clipped surrogate its ratio takes the place of V-trace's ρ.
        raw_pg_advantages = (vtrace_returns.td_advantages if config.pg_clip > 0
                             else vtrace_returns.pg_advantages)
        pg_advantages = normalized_pg_advantages(raw_pg_advantages, config.pg_advantage_norm)
        if config.pg_clip > 0:
            policy_loss = clipped_surrogate_loss(log_policy_taken, batch.behavior_log_probs,
                                                 pg_advantages, config.pg_clip).mean()
            metrics[f"stats/pg_clipped_frac{suffix}"] = clipped_fraction(
                log_policy_taken, batch.behavior_log_probs, pg_advantages, config.pg_clip)
        else:
            # ρ = 0 where π(a_t) = 0 (possible for ε-greedy): the term is 0, not 0·(−inf) = NaN.
            policy_loss = -torch.where(
                raw_pg_advantages == 0, torch.zeros_like(pg_advantages),
                pg_advantages * log_policy_taken
            ).mean()

        value_losses.append(value_loss)
        q_losses.append(q_loss)
        policy_losses.append(policy_loss)
        vs_means.append(vtrace_returns.vs.mean())
        # Their spread too (population): what value_norm="running" folds into σ after the step.
        vs_stds.append(vtrace_returns.vs.std(unbiased=False))
        q_target_means.append(q_targets.mean())
        metrics[f"losses/value{suffix}"] = value_loss
        metrics[f"losses/q{suffix}"] = q_loss
        metrics[f"losses/policy{suffix}"] = policy_loss
        metrics[f"stats/vs_mean{suffix}"] = vs_means[-1]
        metrics[f"stats/vs_std{suffix}"] = vs_stds[-1]
        metrics[f"stats/q_target_mean{suffix}"] = q_target_means[-1]
        # How hard π_λ can lean at a given 1/τ (its logits are A/τ, or L/τ with a policy
        # head), and what the policy gradient pushes with: a positive mean reinforces
        # whatever was sampled.
        family_adv = adv[family].detach()
        adv_spreads.append((family_adv.amax(-1) - family_adv.amin(-1)).mean())
        if outputs.logits is not None:
            family_logit = logits[family].detach()
            metrics[f"stats/logit_spread{suffix}"] = (
                family_logit.amax(-1) - family_logit.amin(-1)).mean()
        pg_advantage_means.append(raw_pg_advantages.mean())
        # Their spread: what pg_advantage_norm=standardize divides by, so how much larger its
        # policy-gradient step is than the raw one's, against the value and entropy terms.
        pg_advantage_stds.append(raw_pg_advantages.std(unbiased=False))
        metrics[f"stats/adv_spread{suffix}"] = adv_spreads[-1]
        metrics[f"stats/pg_advantage_mean{suffix}"] = pg_advantage_means[-1]
        metrics[f"stats/pg_advantage_std{suffix}"] = pg_advantage_stds[-1]

    total_value_loss = torch.stack(value_losses).sum()
    total_q_loss = torch.stack(q_losses).sum()
    total_policy_loss = torch.stack(policy_losses).sum()
    total = (
        config.value_loss_scale * total_value_loss
        + config.q_loss_scale * total_q_loss
        + config.pg_loss_scale * total_policy_loss
        - config.entropy_scale * entropy
    )
    if config.entropy_floor > 0:
        below_floor = entropy_floor_penalty(entropy, config.entropy_floor)
        total = total + config.entropy_floor_scale * below_floor
        metrics["losses/entropy_below_floor"] = below_floor
    for name, aux in outputs.aux_losses.items():
        total = total + config.aux_loss_scale * aux
        metrics[f"losses/aux/{name}"] = aux

    if config.pg_clip > 0:
        metrics["stats/pg_clipped_frac"] = torch.stack(
            [metrics[f"stats/pg_clipped_frac_f{f + 1}"] for f in range(num_families)]).mean()
    if outputs.logits is not None:
        metrics["stats/logit_spread"] = torch.stack(
            [metrics[f"stats/logit_spread_f{f + 1}"] for f in range(num_families)]).mean()
    importance_weights = log_rhos.exp()
    metrics.update(
        {
            "losses/value": total_value_loss,
            "losses/q": total_q_loss,
            "losses/policy": total_policy_loss,
            "losses/entropy": entropy,
            "losses/total": total,
            "stats/vs_mean": torch.stack(vs_means).mean(),
            "stats/vs_std": torch.stack(vs_stds).mean(),
            "stats/q_target_mean": torch.stack(q_target_means).mean(),
            "stats/adv_spread": torch.stack(adv_spreads).mean(),
            "stats/pg_advantage_mean": torch.stack(pg_advantage_means).mean(),
            "stats/pg_advantage_std": torch.stack(pg_advantage_stds).mean(),
            "stats/rho_mean": importance_weights.mean(),
            "stats/rho_clipped_frac": (importance_weights > config.clip_rho)
            .to(importance_weights.dtype)
            .mean(),
        }
    )
    # One device-to-host transfer for all metrics.
    names = list(metrics)
    numbers = torch.stack([metrics[name].detach().to(total.dtype) for name in names]).tolist()
    return total, dict(zip(names, numbers, strict=True))
