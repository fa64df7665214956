"""The GDI loss: a float-by-float reference from the paper, the gradient contract, checks."""

import math
from dataclasses import replace

import pytest
import torch

from gdi.learning import LossBatch, LossConfig, LossOutputs, loss
from gdi.learning.policy_gradient import (
    clipped_fraction,
    clipped_surrogate_loss,
    normalized_pg_advantages,
)
from tests.learning.test_retrace import retrace_reference
from tests.learning.test_vtrace import vtrace_reference
from tests.tolerance import assert_close, is_close

DTYPE = torch.float64
SHAPES = {
    "log": lambda r: math.log(abs(r) + 1.0) * (2.0 if r >= 0 else -1.0),
    "root": lambda r: math.copysign(1.0, r) * ((abs(r) + 1.0) ** 0.25 - 1.0) * (r != 0) + 0.001 * r,
    "none": lambda r: r,
}


def make_case(num_families, num_steps=5, batch_size=3, num_actions=4, seed=0, logits=False):
    """Random outputs and batch with λ at the edges (ε ∈ {0, 1}, 1/τ = 0) and an episode end;
    with ``logits``, a policy head's logits beside A (policy_head="separate")."""
    generator = torch.Generator().manual_seed(seed)

    def normal(*shape, scale=1.0):
        return scale * torch.randn(*shape, generator=generator, dtype=DTYPE)

    def uniform(*shape, high=1.0):
        return high * torch.rand(*shape, generator=generator, dtype=DTYPE)

    adv = normal(num_families, num_steps + 1, batch_size, num_actions, scale=1.5)
    value = normal(num_families, num_steps + 1, batch_size)
    lambdas = torch.stack(
        [
            uniform(num_steps, batch_size, high=3.0),
            uniform(num_steps, batch_size, high=3.0),
            uniform(num_steps, batch_size),
        ],
        dim=-1,
    )
    lambdas[0, 0] = torch.tensor([2.0, 1.0, 0.0], dtype=DTYPE)  # pure exploitation component
    lambdas[1, 1] = torch.tensor([0.0, 1.0, 1.0], dtype=DTYPE)  # pure uniform exploration
    actions = torch.randint(0, num_actions, (num_steps, batch_size), generator=generator)
    behavior_logits = normal(num_steps, batch_size, num_actions)
    behavior_log_probs = torch.log_softmax(behavior_logits, -1).gather(-1, actions[..., None])[
        ..., 0
    ]
    discounts = torch.full((num_steps, batch_size), 0.97, dtype=DTYPE)
    discounts[2, 2] = 0.0
    batch = LossBatch(
        actions=actions,
        rewards=normal(num_steps, batch_size, scale=3.0),
        discounts=discounts,
        behavior_log_probs=behavior_log_probs,
        lambdas=lambdas,
    )
    policy_logits = (normal(num_families, num_steps + 1, batch_size, num_actions, scale=1.5)
                     .requires_grad_(True) if logits else None)
    outputs = LossOutputs(
        adv=adv.requires_grad_(True), value=value.requires_grad_(True), aux_losses={},
        logits=policy_logits,
    )
    return outputs, batch


def naive_policy(adv1, adv2, lam):
    """ε·softmax(A₁/τ₁) + (1−ε)·softmax(A₂/τ₂), one state, in Python floats."""
    inv_tau1, inv_tau2, eps = lam

    def softmax(x):
        m = max(x)
        e = [math.exp(v - m) for v in x]
        return [v / sum(e) for v in e]

    p1 = softmax([inv_tau1 * a for a in adv1])
    p2 = softmax([inv_tau2 * a for a in adv2])
    return [eps * x + (1 - eps) * y for x, y in zip(p1, p2, strict=True)]


def pg_normalized_by_hand(pg, norm):
    """The batch normalization of ρ_s δ, element by element in Python floats."""
    if norm == "none":
        return pg
    terms = pg.flatten().tolist()
    mean = sum(terms) / len(terms)
    std = math.sqrt(sum((x - mean) ** 2 for x in terms) / len(terms))
    scale = 1.0 if norm == "center" else 1.0 / (std + 1e-8)
    return torch.tensor([(x - mean) * scale for x in terms], dtype=pg.dtype).reshape(pg.shape)


def reference_loss(outputs, batch, config):
    """The loss written from the paper, state by state, in Python floats.

    Returns the total, the metrics, and each metric's magnitude for tests.tolerance: the
    same mean taken over the absolute values of its terms (a mean of terms of both signs,
    such as the mean V-trace target, can be far smaller than the terms it rounds)."""
    num_families, _, batch_size, num_actions = outputs.adv.shape
    num_steps = batch.actions.shape[0]
    adv, value = outputs.adv.detach(), outputs.value.detach()
    # π_λ reads the policy head's logits where there is one, A otherwise (the paper).
    reads = adv if outputs.logits is None else outputs.logits.detach()
    pi = [
        [
            naive_policy(
                reads[0, t, b].tolist(), reads[-1, t, b].tolist(), batch.lambdas[t, b].tolist()
            )
            for b in range(batch_size)
        ]
        for t in range(num_steps)
    ]
    log_rhos = torch.tensor(
        [
            [
                math.log(pi[t][b][int(batch.actions[t, b])]) - float(batch.behavior_log_probs[t, b])
                for b in range(batch_size)
            ]
            for t in range(num_steps)
        ],
        dtype=DTYPE,
    )
    metrics, magnitudes = {}, {}
    totals = {"value": 0.0, "q": 0.0, "policy": 0.0}
    total_magnitudes = dict.fromkeys(totals, 0.0)
    clipped_shares = []  # each family's share of steps the clipped surrogate leaves flat
    for k in range(num_families):
        shape = SHAPES[config.reward_shapes[k]]
        rewards = batch.rewards.clone().apply_(shape)
        q = torch.zeros(num_steps, batch_size, num_actions, dtype=DTYPE)
        for t in range(num_steps):
            for b in range(batch_size):
                mean_adv = sum(p * a for p, a in zip(pi[t][b], adv[k, t, b].tolist(), strict=True))
                q[t, b] = adv[k, t, b] - mean_adv + value[k, t, b]
        q_taken = q.gather(-1, batch.actions[..., None])[..., 0]
        expected_q = (torch.tensor(pi, dtype=DTYPE) * q).sum(-1)  # computed, not assumed = V
        vs, pg = vtrace_reference(
            log_rhos,
            batch.discounts,
            rewards,
            value[k, :num_steps],
            value[k, num_steps],
            config.clip_rho,
            config.clip_c,
            config.clip_pg_rho,
            config.trace_lambda,
        )
        # E_π Q(x_T, ·) needs π at x_T, whose λ is not in the batch; it equals V(x_T) (see
        # test_dueling.test_expected_q_under_pi_is_value).
        g = retrace_reference(
            log_rhos,
            batch.discounts,
            rewards,
            q_taken,
            expected_q,
            value[k, num_steps],
            config.clip_c,
            config.trace_lambda,
        )
        log_pi_taken = (
            torch.tensor(pi, dtype=DTYPE).log().gather(-1, batch.actions[..., None])[..., 0]
        )
        if config.pg_clip > 0:  # PPO's surrogate of the advantage before ρ, written out
            vs_next = torch.cat([vs[1:], value[k, num_steps:num_steps + 1]])
            pg = rewards + batch.discounts * vs_next - value[k, :num_steps]
            weight = pg_normalized_by_hand(pg, config.pg_advantage_norm)
            ratio = (log_pi_taken - batch.behavior_log_probs).exp()
            low, high = 1 - config.pg_clip, 1 + config.pg_clip
            policy = -torch.minimum(ratio * weight, ratio.clamp(low, high) * weight)
            # The steps whose surrogate is flat: π past 1 ± ε of μ in the direction Â pushes.
            flat = [(r > high and w > 0) or (r < low and w < 0)
                    for r, w in zip(ratio.flatten().tolist(), weight.flatten().tolist(),
                                    strict=True)]
            metrics[f"stats/pg_clipped_frac_f{k + 1}"] = sum(flat) / len(flat)
            magnitudes[f"stats/pg_clipped_frac_f{k + 1}"] = 1.0  # a fraction
            clipped_shares.append(sum(flat) / len(flat))
        else:
            policy = -pg_normalized_by_hand(pg, config.pg_advantage_norm) * log_pi_taken
        # value_norm="running": the errors in units of the family's σ (Sample Factory's
        # standardized targets against its standardized head).
        sigma = 1.0 if outputs.value_scale is None else float(outputs.value_scale[k])
        terms = {
            "value": 0.5 * ((vs - value[k, :num_steps]) / sigma) ** 2,
            "q": 0.5 * ((g - q_taken) / sigma) ** 2,
            "policy": policy,
        }
        for name, term in terms.items():
            metrics[f"losses/{name}_f{k + 1}"] = float(term.mean())
            magnitudes[f"losses/{name}_f{k + 1}"] = float(term.abs().mean())
            totals[name] += float(term.mean())
            total_magnitudes[name] += float(term.abs().mean())
        metrics[f"stats/vs_mean_f{k + 1}"] = float(vs.mean())
        magnitudes[f"stats/vs_mean_f{k + 1}"] = float(vs.abs().mean())
        targets = [w for row in vs.tolist() for w in row]
        vs_mean = sum(targets) / len(targets)
        metrics[f"stats/vs_std_f{k + 1}"] = math.sqrt(
            sum((w - vs_mean) ** 2 for w in targets) / len(targets))
        magnitudes[f"stats/vs_std_f{k + 1}"] = float(vs.abs().max())
        spreads = [max(adv[k, t, b].tolist()) - min(adv[k, t, b].tolist())
                   for t in range(num_steps) for b in range(batch_size)]
        metrics[f"stats/adv_spread_f{k + 1}"] = sum(spreads) / len(spreads)
        magnitudes[f"stats/adv_spread_f{k + 1}"] = sum(spreads) / len(spreads)  # all >= 0
        if outputs.logits is not None:
            spreads = [max(reads[k, t, b].tolist()) - min(reads[k, t, b].tolist())
                       for t in range(num_steps) for b in range(batch_size)]
            metrics[f"stats/logit_spread_f{k + 1}"] = sum(spreads) / len(spreads)
            magnitudes[f"stats/logit_spread_f{k + 1}"] = sum(spreads) / len(spreads)
        metrics[f"stats/pg_advantage_mean_f{k + 1}"] = float(pg.mean())
        magnitudes[f"stats/pg_advantage_mean_f{k + 1}"] = float(pg.abs().mean())
        raw = [w for row in pg.tolist() for w in row]  # before any normalization
        mean = sum(raw) / len(raw)
        std = math.sqrt(sum((w - mean) ** 2 for w in raw) / len(raw))
        metrics[f"stats/pg_advantage_std_f{k + 1}"] = std
        magnitudes[f"stats/pg_advantage_std_f{k + 1}"] = std
    entropy = -sum(p * math.log(p) for row in pi for probs in row for p in probs if p > 0)
    entropy /= num_steps * batch_size
    total = (
        config.value_loss_scale * totals["value"]
        + config.q_loss_scale * totals["q"]
        + config.pg_loss_scale * totals["policy"]
        - config.entropy_scale * entropy
    )
    metrics.update({f"losses/{name}": number for name, number in totals.items()})
    magnitudes.update({f"losses/{name}": number for name, number in total_magnitudes.items()})
    metrics["losses/entropy"] = magnitudes["losses/entropy"] = entropy  # terms -p·log p >= 0
    if config.entropy_floor > 0:  # the floor's penalty, straight from max(0, floor − H)
        below = config.entropy_floor - entropy if entropy < config.entropy_floor else 0.0
        total += config.entropy_floor_scale * below
        metrics["losses/entropy_below_floor"] = below
        magnitudes["losses/entropy_below_floor"] = config.entropy_floor + entropy
    metrics["losses/total"] = total
    magnitudes["losses/total"] = (
        config.value_loss_scale * total_magnitudes["value"]
        + config.q_loss_scale * total_magnitudes["q"]
        + config.pg_loss_scale * total_magnitudes["policy"]
        + config.entropy_scale * entropy
    )
    if config.entropy_floor > 0:
        magnitudes["losses/total"] += config.entropy_floor_scale * (config.entropy_floor + entropy)
    if clipped_shares:
        metrics["stats/pg_clipped_frac"] = sum(clipped_shares) / len(clipped_shares)
        magnitudes["stats/pg_clipped_frac"] = 1.0
    metrics["stats/rho_mean"] = magnitudes["stats/rho_mean"] = float(log_rhos.exp().mean())
    metrics["stats/rho_clipped_frac"] = float((log_rhos.exp() > config.clip_rho).double().mean())
    magnitudes["stats/rho_clipped_frac"] = 1.0  # a fraction
    return total, metrics, magnitudes


# ---- layer 1: reference ----------------------------------------------------------------------


def assert_matches_reference(got, reference, batch) -> None:
    """``loss``'s (total, metrics) against ``reference_loss``'s, by tests.tolerance's rule.
    Each metric averages T·B per-step terms, each from a V-trace or Retrace sum of up to T."""
    (total, metrics), (expected_total, expected_metrics, magnitudes) = got, reference
    terms = batch.actions.numel() * batch.actions.shape[0]
    assert_close(total.item(), expected_total, terms=terms, magnitude=magnitudes["losses/total"])
    for name, number in expected_metrics.items():
        assert_close(metrics[name], number, terms=terms, magnitude=magnitudes[name], msg=name)


@pytest.mark.parametrize(
    "config",
    [
        LossConfig(),
        LossConfig(clip_rho=1.3, clip_c=0.8, clip_pg_rho=1.0, entropy_scale=0.01),
        LossConfig(reward_shapes=("log", "root")),
        LossConfig(reward_shapes=("root", "none"), clip_rho=0.9, clip_c=1.2, value_loss_scale=0.5),
        LossConfig(pg_advantage_norm="center", entropy_scale=0.1),
        LossConfig(reward_shapes=("log", "root"), pg_advantage_norm="standardize"),
        LossConfig(pg_clip=0.2),
        LossConfig(reward_shapes=("log", "root"), pg_clip=0.1, pg_advantage_norm="standardize"),
        LossConfig(trace_lambda=0.95),
        LossConfig(reward_shapes=("log", "root"), trace_lambda=0.5, pg_clip=0.1),
        # A floor on the entropy above the case's (~1.1 nats over three actions), then below it.
        LossConfig(pg_advantage_norm="standardize", entropy_scale=0.1, entropy_floor=2.0),
        LossConfig(reward_shapes=("log", "root"), entropy_floor=0.3, entropy_floor_scale=2.0),
    ],
    ids=["gdi-i3", "gdi-i3-clips", "gdi-h3", "gdi-h3-clips", "gdi-i3-center",
         "gdi-h3-standardize", "gdi-i3-ppo-clip", "gdi-h3-ppo-clip-standardize",
         "gdi-i3-trace-lambda", "gdi-h3-trace-lambda-ppo-clip", "gdi-i3-entropy-floor-above",
         "gdi-h3-entropy-floor-below"],
)
def test_matches_reference(config):
    outputs, batch = make_case(config.num_families)
    reference = reference_loss(outputs, batch, config)
    assert 0 < reference[1]["stats/rho_clipped_frac"] < 1  # some ρ above ρ̄, some below
    if config.entropy_floor:  # the two cases are what their ids say
        entropy = reference[1]["losses/entropy"]
        assert (entropy < config.entropy_floor) == (config.entropy_floor == 2.0)
    assert_matches_reference(loss(outputs, batch, config), reference, batch)


@pytest.mark.parametrize("config", [
    LossConfig(entropy_scale=0.1),
    LossConfig(reward_shapes=("log", "root"), pg_clip=0.1, entropy_scale=0.01),
], ids=["gdi-i3", "gdi-h3-ppo-clip"])
def test_a_policy_head_beside_a_matches_reference(config):
    """policy_head="separate": π_λ (ρ, the policy gradient, the entropy and the π inside
    Ā = A − E_π[A]) is built from the policy head's logits L; A and V enter only Q = Ā + V
    and the value targets."""
    outputs, batch = make_case(config.num_families, logits=True)
    reference = reference_loss(outputs, batch, config)
    total, metrics = loss(outputs, batch, config)
    assert_matches_reference((total, metrics), reference, batch)
    # The reference really read L: π from A gives other losses.
    from_a = reference_loss(outputs._replace(logits=None), batch, config)
    assert abs(from_a[1]["losses/policy"] - metrics["losses/policy"]) > 1e-3


@pytest.mark.parametrize("config,scale", [
    (LossConfig(), [2.5]),
    (LossConfig(reward_shapes=("log", "root"), pg_advantage_norm="standardize"), [0.3, 4.0]),
], ids=["gdi-i3", "gdi-h3-standardize"])
def test_a_value_scale_divides_the_v_and_q_errors_as_the_reference(config, scale):
    """value_norm="running" (not the paper): with σ_k given, L_V,k = ½((v_s − V_k)/σ_k)² and
    L_Q,k = ½((G − Q_k)/σ_k)², written from the formula in the reference; the targets, the
    policy gradient and the entropy stay those without it."""
    outputs, batch = make_case(config.num_families)
    scaled = outputs._replace(value_scale=torch.tensor(scale, dtype=DTYPE))
    reference = reference_loss(scaled, batch, config)
    _, metrics = loss(scaled, batch, config)
    assert_matches_reference(loss(scaled, batch, config), reference, batch)
    _, plain = loss(outputs, batch, config)
    for k, sigma in enumerate(scale, start=1):
        assert_close(metrics[f"losses/value_f{k}"], plain[f"losses/value_f{k}"] / sigma**2,
                     terms=batch.actions.numel(), magnitude=plain[f"losses/value_f{k}"] / sigma**2)
        for name in ("losses/policy", "stats/vs_mean", "stats/q_target_mean"):
            assert metrics[f"{name}_f{k}"] == plain[f"{name}_f{k}"], name


@pytest.mark.parametrize("scale", [[1.0, 1.0], [0.0], [-1.0], "2"])
def test_a_value_scale_that_is_not_one_positive_sigma_per_family_is_named(scale):
    outputs, batch = make_case(1)
    bad = torch.tensor(scale, dtype=DTYPE) if isinstance(scale, list) else scale
    with pytest.raises(ValueError, match=r"outputs.value_scale must be None or a positive float "
                                         r"tensor of one σ per family \[F\] = \(1,\)"):
        loss(outputs._replace(value_scale=bad), batch, LossConfig())


def test_with_a_policy_head_the_policy_gradient_trains_l_and_the_q_loss_trains_a():
    outputs, batch = make_case(1, logits=True)
    config = LossConfig(entropy_scale=0.1)
    only_q = replace(config, value_loss_scale=0.0, pg_loss_scale=0.0,
                                 entropy_scale=0.0)
    adv_grad, logit_grad = torch.autograd.grad(loss(outputs, batch, only_q)[0],
                                               (outputs.adv, outputs.logits), allow_unused=True)
    assert none_or_zero(logit_grad) and adv_grad[:, :-1].abs().sum() > 0  # π detached in Ā
    only_pg = replace(config, value_loss_scale=0.0, q_loss_scale=0.0)
    adv_grad, logit_grad = torch.autograd.grad(loss(outputs, batch, only_pg)[0],
                                               (outputs.adv, outputs.logits), allow_unused=True)
    assert none_or_zero(adv_grad) and logit_grad[:, :-1].abs().sum() > 0


def none_or_zero(grad):
    return grad is None or not grad.any()


def test_logits_of_another_shape_are_named():
    outputs, batch = make_case(1, logits=True)
    with pytest.raises(ValueError, match=r"outputs.logits must be None or a float tensor shaped "
                                         r"as outputs.adv"):
        loss(outputs._replace(logits=outputs.logits[:, :-1]), batch, LossConfig())


def test_metrics_are_namespaced_floats():
    outputs, batch = make_case(2)
    outputs = outputs._replace(aux_losses={"forward": torch.tensor(0.5, dtype=DTYPE)})
    total, metrics = loss(outputs, batch, LossConfig(reward_shapes=("log", "root")))
    per_family = {
        f"{n}_f{k}"
        for n in (
            "losses/value",
            "losses/q",
            "losses/policy",
            "stats/vs_mean",
            "stats/vs_std",
            "stats/q_target_mean",
            "stats/adv_spread",
            "stats/pg_advantage_mean",
            "stats/pg_advantage_std",
        )
        for k in (1, 2)
    }
    assert set(metrics) == per_family | {
        "losses/value",
        "losses/q",
        "losses/policy",
        "losses/entropy",
        "losses/aux/forward",
        "losses/total",
        "stats/vs_mean",
        "stats/vs_std",
        "stats/q_target_mean",
        "stats/adv_spread",
        "stats/pg_advantage_mean",
        "stats/pg_advantage_std",
        "stats/rho_mean",
        "stats/rho_clipped_frac",
    }
    assert all(type(number) is float for number in metrics.values())
    assert_close(metrics["losses/total"], total.item())
    assert_close(metrics["losses/value"], metrics["losses/value_f1"] + metrics["losses/value_f2"])


# ---- layer 2: a tiny case by hand ------------------------------------------------------------


def test_one_step_one_family_by_hand():
    # T = 1, B = 1, two actions, A = (0, 0) so π_λ is uniform for any λ: π = (½, ½).
    # μ(a_0 = 0) = ¼ → ρ = 2, truncated to ρ̄ = c̄ = 1.05 (irrelevant for T = 1's c).
    # Raw reward 1 → log shape 2·log 2. γ = 0.5, V(x_0) = 1, V(x_1) = 4.
    # v_0 = V + ρ̄ (r + γ V(x_1) − V) = 1 + 1.05·(2 log 2 + 2 − 1)
    # G_0 = r + γ V(x_1) = 2 log 2 + 2;  Q(x_0, a_0) = Ā + V = 0 + 1 = 1
    # pg_0 = ρ̄ (r + γ v_1 − V) with v_1 = V(x_1): = 1.05·(2 log 2 + 1);  log π(a_0) = log ½
    nan = float("nan")
    outputs = LossOutputs(
        adv=torch.tensor([[[[0.0, 0.0]], [[nan, nan]]]], dtype=DTYPE, requires_grad=True),
        value=torch.tensor([[[1.0], [4.0]]], dtype=DTYPE, requires_grad=True),
        aux_losses={"inverse": torch.tensor(0.25, dtype=DTYPE)},
    )
    batch = LossBatch(
        actions=torch.tensor([[0]]),
        rewards=torch.tensor([[1.0]], dtype=DTYPE),
        discounts=torch.tensor([[0.5]], dtype=DTYPE),
        behavior_log_probs=torch.tensor([[math.log(0.25)]], dtype=DTYPE),
        lambdas=torch.tensor([[[1.0, 2.0, 0.3]]], dtype=DTYPE),
    )
    td = 2 * math.log(2) + 1.0
    value_loss = 0.5 * (1.05 * td) ** 2
    q_loss = 0.5 * (2 * math.log(2) + 2.0 - 1.0) ** 2
    policy_loss = -1.05 * td * math.log(0.5)
    entropy = math.log(2)
    config = LossConfig(entropy_scale=0.1, aux_loss_scale=2.0)
    expected = 1.0 * value_loss + 10.0 * q_loss + 10.0 * policy_loss - 0.1 * entropy + 2.0 * 0.25
    total, metrics = loss(outputs, batch, config)
    assert_close(total.item(), expected)
    assert metrics["losses/aux/inverse"] == 0.25  # exact: the aux loss is passed through
    assert_close(metrics["stats/rho_mean"], 2.0)
    assert metrics["stats/rho_clipped_frac"] == 1.0  # exact: a fraction of counts
    total.backward()  # the NaN advantages at the bootstrap state are never read
    assert torch.isfinite(outputs.adv.grad).all() and torch.isfinite(outputs.value.grad).all()


@pytest.mark.parametrize("reward_shapes", [("log",), ("log", "root")])
def test_truncation_bootstrap_equals_bootstrapping_from_the_final_observation(reward_shapes):
    """A time limit cuts every sequence at its last step. Discount 0 there plus γ·V_f(final
    observation) as truncation_bootstrap must give the loss (and gradients) of the same data
    with discount γ and the final observation's V_f as the bootstrap value."""
    num_families = len(reward_shapes)
    outputs, batch = make_case(num_families, seed=3)
    gamma = 0.97
    final_values = torch.tensor([[2.5, -1.0, 7.0], [0.3, 4.0, -2.0]], dtype=DTYPE)[:num_families]
    continued_value = outputs.value.detach().clone()
    continued_value[:, -1] = final_values  # V_f(x_T) = the final observation's value
    continued = LossOutputs(
        outputs.adv.detach().clone().requires_grad_(True), continued_value.requires_grad_(True),
        {},
    )
    cut_value = outputs.value.detach().clone()
    cut_value[:, -1] = 1e3  # x_T is now the next episode's first observation: never read
    cut = LossOutputs(
        outputs.adv.detach().clone().requires_grad_(True), cut_value.requires_grad_(True), {}
    )
    discounts = batch.discounts.clone()
    discounts[-1] = 0.0
    bootstrap = torch.zeros(num_families, *batch.actions.shape, dtype=DTYPE)
    bootstrap[:, -1] = gamma * final_values
    cut_batch = batch._replace(discounts=discounts, truncation_bootstrap=bootstrap)
    discounts = batch.discounts.clone()
    discounts[-1] = gamma
    continued_batch = batch._replace(discounts=discounts)

    config = LossConfig(reward_shapes=reward_shapes)
    total_cut, metrics_cut = loss(cut, cut_batch, config)
    total_continued, metrics_continued = loss(continued, continued_batch, config)
    assert_close(total_cut.item(), total_continued.item())
    assert metrics_cut.keys() == metrics_continued.keys()
    for name, number in metrics_continued.items():
        assert_close(metrics_cut[name], number, msg=name)
    (total_cut + total_continued).backward()
    assert_close(cut.adv.grad, continued.adv.grad)
    assert_close(cut.value.grad[:, :-1], continued.value.grad[:, :-1])
    # Without the bootstrap the cut step is terminal and the loss differs.
    assert not is_close(loss(cut, cut_batch._replace(truncation_bootstrap=None), config)[0].item(),
                        total_cut.item())


# ---- layer 3: the gradient contract and other properties -------------------------------------


def naive_log_policy(adv1, adv2, lambdas):
    inv_tau1, inv_tau2, eps = lambdas.unbind(-1)
    return torch.log(
        eps[..., None] * torch.softmax(inv_tau1[..., None] * adv1, -1)
        + (1 - eps[..., None]) * torch.softmax(inv_tau2[..., None] * adv2, -1)
    )


@pytest.mark.parametrize("reward_shapes", [("log",), ("log", "root")])
def test_gradient_only_through_the_online_values(reward_shapes):
    """Same gradient as the loss whose targets are constants: none flows through a target."""
    config = LossConfig(reward_shapes=reward_shapes, clip_rho=1.2, clip_c=0.9)
    outputs, batch = make_case(config.num_families, seed=1)
    total, _ = loss(outputs, batch, config)
    adv_grad, value_grad = torch.autograd.grad(total, [outputs.adv, outputs.value])

    # The loss again, with every target computed from detached copies by the references.
    num_steps = batch.actions.shape[0]
    adv, value = outputs.adv, outputs.value
    a1, a2 = adv[0, :num_steps], adv[-1, :num_steps]
    pi = naive_log_policy(a1, a2, batch.lambdas).exp().detach()
    take = batch.actions[..., None]
    log_rhos = pi.log().gather(-1, take)[..., 0] - batch.behavior_log_probs
    expected_total = 0.0
    for k in range(config.num_families):
        rewards = batch.rewards.clone().apply_(SHAPES[reward_shapes[k]])
        v = value[k, :num_steps]
        q_taken = (
            adv[k, :num_steps] - (pi * adv[k, :num_steps]).sum(-1, keepdim=True) + v[..., None]
        ).gather(-1, take)[..., 0]
        vs, pg = vtrace_reference(
            log_rhos, batch.discounts, rewards, v.detach(), value[k, num_steps].detach(), 1.2, 0.9
        )
        g = retrace_reference(
            log_rhos,
            batch.discounts,
            rewards,
            q_taken.detach(),
            v.detach(),
            value[k, num_steps].detach(),
            0.9,
        )
        if config.num_families == 1:
            log_pi = naive_log_policy(a1, a1, batch.lambdas)
        elif k == 0:
            log_pi = naive_log_policy(a1, a2.detach(), batch.lambdas)
        else:
            log_pi = naive_log_policy(a1.detach(), a2, batch.lambdas)
        expected_total = (
            expected_total
            + 0.5 * ((vs - v) ** 2).mean()
            + 10.0 * 0.5 * ((g - q_taken) ** 2).mean()
            - 10.0 * (pg * log_pi.gather(-1, take)[..., 0]).mean()
        )
    expected_adv_grad, expected_value_grad = torch.autograd.grad(expected_total, [adv, value])
    # Each gradient sums the policy, dueling and entropy terms over the A actions.
    num_actions = adv.shape[-1]
    assert_close(adv_grad, expected_adv_grad, terms=num_actions)
    assert_close(value_grad, expected_value_grad, terms=num_actions)
    # Gradient reaches V(x_t) and A(x_t, ·) on the learning steps, nothing at the bootstrap state.
    assert (value_grad[:, :num_steps] != 0).all()
    assert (adv_grad[:, :num_steps].abs().sum(-1) != 0).all()
    assert (value_grad[:, num_steps] == 0).all() and (adv_grad[:, num_steps] == 0).all()


@pytest.mark.parametrize("reward_shapes", [("log",), ("log", "root")])
def test_q_loss_kept_from_v_trains_v_by_the_v_loss_alone(reward_shapes):
    """q_loss_trains_value=False: V's gradient is that of ξ·L_V = ξ·½(v_s − V)² alone (from the
    V-trace reference), the advantages' gradient and every metric are unchanged."""
    config = LossConfig(reward_shapes=reward_shapes, clip_rho=1.2, clip_c=0.9)
    kept = replace(config, q_loss_trains_value=False)
    outputs, batch = make_case(config.num_families, seed=4)
    total, metrics = loss(outputs, batch, config)
    kept_total, kept_metrics = loss(outputs, batch, kept)
    adv_grad, value_grad = torch.autograd.grad(total, [outputs.adv, outputs.value])
    kept_adv_grad, kept_value_grad = torch.autograd.grad(kept_total, [outputs.adv, outputs.value])

    num_steps = batch.actions.shape[0]
    value = outputs.value
    pi = naive_log_policy(outputs.adv[0, :num_steps], outputs.adv[-1, :num_steps], batch.lambdas)
    take = batch.actions[..., None]
    log_rhos = pi.gather(-1, take)[..., 0].detach() - batch.behavior_log_probs
    value_loss = 0.0
    for k in range(config.num_families):
        rewards = batch.rewards.clone().apply_(SHAPES[reward_shapes[k]])
        v = value[k, :num_steps]
        vs, _ = vtrace_reference(
            log_rhos, batch.discounts, rewards, v.detach(), value[k, num_steps].detach(), 1.2, 0.9
        )
        value_loss = value_loss + 0.5 * ((vs - v) ** 2).mean()
    (expected_value_grad,) = torch.autograd.grad(value_loss, [value])

    assert_close(kept_value_grad, expected_value_grad, terms=num_steps)
    assert torch.equal(kept_adv_grad, adv_grad)  # the same graph into A, op for op
    assert kept_metrics == metrics and torch.equal(kept_total, total)
    # The default's V gradient carries α·(Q(x_t, a_t) − G) on top: not the V loss's alone.
    assert not is_close(value_grad, expected_value_grad, terms=num_steps)


@pytest.mark.parametrize("pg_family", [0, 1])
def test_each_family_policy_gradient_reaches_only_its_own_advantages(pg_family):
    # Rewards 0 (both shapes map 0 to 0) and V ≡ 0 in the other family: the other family's
    # V-trace advantage is exactly 0, so with only the PG term in the loss any gradient on the
    # other family's advantages would have to come from this family's policy gradient.
    config = LossConfig(
        reward_shapes=("log", "root"), value_loss_scale=0.0, q_loss_scale=0.0, pg_loss_scale=1.0
    )
    outputs, batch = make_case(2, seed=2)
    other = 1 - pg_family
    with torch.no_grad():
        outputs.value[other] = 0.0
    batch = batch._replace(rewards=torch.zeros_like(batch.rewards))
    total, metrics = loss(outputs, batch, config)
    assert metrics[f"losses/policy_f{other + 1}"] == 0.0
    assert metrics[f"losses/policy_f{pg_family + 1}"] != 0.0
    (adv_grad,) = torch.autograd.grad(total, [outputs.adv])
    # (Not every state: where λ makes π independent of A_k, e.g. ε = 0 for family 1, it is 0.)
    assert (adv_grad[pg_family, :-1] != 0).any()
    assert (adv_grad[other] == 0).all()


def test_pg_advantages_normalized_by_hand():
    pg = torch.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=DTYPE)  # mean 3, deviations -2 -1 0 3
    assert torch.equal(normalized_pg_advantages(pg, "none"), pg)
    assert torch.equal(normalized_pg_advantages(pg, "center"),
                       torch.tensor([[-2.0, -1.0], [0.0, 3.0]], dtype=DTYPE))
    std = math.sqrt((4 + 1 + 0 + 9) / 4)
    assert_close(normalized_pg_advantages(pg, "standardize", eps=0.0),
                 torch.tensor([[-2.0, -1.0], [0.0, 3.0]], dtype=DTYPE) / std, terms=4)
    with pytest.raises(ValueError, match=r"'whiten'.*allowed: none, center, standardize"):
        normalized_pg_advantages(pg, "whiten")


@pytest.mark.parametrize("ratio, advantage, loss_by_hand, gradient_by_hand", [
    (1.5, 2.0, -2.4, 0.0),    # min(3, 1.2·2): clipped, no gradient (π already moved up)
    (0.5, 2.0, -1.0, -1.0),   # min(1, 0.8·2): d(−r·Â)/d log π = −r·Â
    (0.5, -2.0, 1.6, 0.0),    # min(−1, 0.8·−2): clipped (π already moved down)
    (1.5, -2.0, 3.0, 3.0),    # min(−3, 1.2·−2) = −3: unclipped, −r·Â = 3
])
def test_clipped_surrogate_by_hand(ratio, advantage, loss_by_hand, gradient_by_hand):
    log_mu = torch.tensor([[math.log(0.2)]], dtype=DTYPE)
    log_pi = (log_mu + math.log(ratio)).requires_grad_(True)
    got = clipped_surrogate_loss(log_pi, log_mu, torch.tensor([[advantage]], dtype=DTYPE), 0.2)
    (gradient,) = torch.autograd.grad(got.sum(), [log_pi])
    assert_close(got, torch.tensor([[loss_by_hand]], dtype=DTYPE), terms=3)
    assert_close(gradient, torch.tensor([[gradient_by_hand]], dtype=DTYPE), terms=3)



def test_clipped_fraction_counts_the_steps_whose_surrogate_gives_no_gradient():
    """The four hand-worked cases above in one batch, plus a step where π(a_t) = 0: the two
    whose gradient is 0 by hand are the clipped ones (2 of 5); the π = 0 step (r = 0 < 1 − ε
    with Â < 0, flat by the formula) has a loss of 0 by another rule and does not count. Checked against autograd: the clipped steps are exactly
    those with a zero gradient among the finite ones."""
    ratios = torch.tensor([[1.5, 0.5, 0.5, 1.5, 1.0]], dtype=DTYPE)
    advantages = torch.tensor([[2.0, 2.0, -2.0, -2.0, -1.0]], dtype=DTYPE)
    log_mu = torch.full_like(ratios, math.log(0.2))
    log_pi = (log_mu + ratios.log()).detach()
    log_pi[0, 4] = -math.inf
    assert clipped_fraction(log_pi, log_mu, advantages, 0.2).item() == 2 / 5  # exact: 2 of 5
    finite = log_pi[:, :4].clone().requires_grad_(True)
    (gradient,) = torch.autograd.grad(
        clipped_surrogate_loss(finite, log_mu[:, :4], advantages[:, :4], 0.2).sum(), [finite])
    assert (gradient == 0).sum().item() == 2

def test_clipped_surrogate_needs_a_positive_clip():
    with pytest.raises(ValueError, match="needs ε > 0, got 0"):
        clipped_surrogate_loss(torch.zeros(1, 1), torch.zeros(1, 1), torch.ones(1, 1), 0)


def test_centred_pg_no_longer_pushes_up_every_sampled_action():
    """Every ρ_s δ positive (V far below every return, as early on Breakout, whose rewards are
    never negative): the paper's gradient raises the logit of every taken action; centred over
    the batch, the below-mean ones are lowered. With π = softmax(A) (Boltzmann, 1/τ = 1) and
    only L_π, ∂L/∂A(x_t, a_t) = −w_t·(1 − π(a_t))/(T·B), whose sign is −sign(w_t)."""
    config = LossConfig(policy_space="boltzmann", value_loss_scale=0.0, q_loss_scale=0.0,
                        pg_loss_scale=1.0)
    outputs, batch = make_case(1, seed=5)
    with torch.no_grad():
        outputs.value.fill_(-100.0)
    batch = batch._replace(rewards=batch.rewards.abs(),
                           lambdas=torch.ones_like(batch.lambdas[..., :1]))
    taken = batch.actions[..., None]
    raised = {}
    for norm in ("none", "center"):
        total, metrics = loss(outputs, batch, replace(config, pg_advantage_norm=norm))
        assert metrics["stats/pg_advantage_mean"] > 1.0  # the raw advantages, either way
        (adv_grad,) = torch.autograd.grad(total, [outputs.adv])
        raised[norm] = adv_grad[0, :-1].gather(-1, taken)[..., 0] < 0
    assert raised["none"].all()
    assert raised["center"].any() and not raised["center"].all()


def test_entropy_bonus_reaches_both_families():
    config = LossConfig(
        reward_shapes=("log", "root"),
        value_loss_scale=0.0,
        q_loss_scale=0.0,
        pg_loss_scale=0.0,
        entropy_scale=1.0,
    )
    outputs, batch = make_case(2, seed=3)
    total, metrics = loss(outputs, batch, config)
    assert_close(total.item(), -metrics["losses/entropy"])
    (adv_grad,) = torch.autograd.grad(total, [outputs.adv])
    assert (adv_grad[0, :-1] != 0).any() and (adv_grad[1, :-1] != 0).any()


def test_the_entropy_floor_penalty_by_hand():
    from gdi.learning.policy_gradient import entropy_floor_penalty

    for entropy, floor, expected in [(0.2, 0.5, 0.3), (1.0, 0.5, 0.0), (0.5, 0.5, 0.0),
                                     (0.0, 0.0, 0.0), (0.3, 0.0, 0.0)]:
        got = entropy_floor_penalty(torch.tensor(entropy, dtype=DTYPE), floor)
        assert_close(got.item(), expected)


def test_the_entropy_floor_pulls_pi_only_while_its_entropy_is_below_it():
    """Alone in the loss, the floor's gradient is −entropy_floor_scale times the entropy's
    below the floor, and none above it."""
    only = dict(value_loss_scale=0.0, q_loss_scale=0.0, pg_loss_scale=0.0)
    outputs, batch = make_case(1, seed=5)
    bare, metrics = loss(outputs, batch, LossConfig(entropy_scale=1.0, **only))
    (entropy_grad,) = torch.autograd.grad(-bare, [outputs.adv])  # ∂H/∂A
    entropy = metrics["losses/entropy"]
    below, below_metrics = loss(outputs, batch, LossConfig(entropy_floor=entropy + 0.5,
                                                           entropy_floor_scale=3.0, **only))
    assert_close(below.item(), 3.0 * 0.5, magnitude=entropy + 0.5)
    assert_close(below_metrics["losses/entropy_below_floor"], 0.5, magnitude=entropy + 0.5)
    (grad,) = torch.autograd.grad(below, [outputs.adv])
    assert_close(grad, -3.0 * entropy_grad)
    assert (entropy_grad != 0).any()
    above, above_metrics = loss(outputs, batch, LossConfig(entropy_floor=entropy - 0.1, **only))
    assert above.item() == 0.0 and above_metrics["losses/entropy_below_floor"] == 0.0
    (grad,) = torch.autograd.grad(above, [outputs.adv], allow_unused=True)
    assert grad is None or not grad.any()
    assert "losses/entropy_below_floor" not in metrics  # no floor, no metric


def test_aux_losses_are_added_with_their_scale():
    outputs, batch = make_case(1)
    base, _ = loss(outputs, batch, LossConfig(aux_loss_scale=3.0))
    aux = {"forward": torch.tensor(0.2, dtype=DTYPE), "inverse": torch.tensor(0.7, dtype=DTYPE)}
    total, metrics = loss(outputs._replace(aux_losses=aux), batch, LossConfig(aux_loss_scale=3.0))
    # The difference of two totals carries their rounding error: the magnitude is the total's.
    assert_close((total - base).item(), 3.0 * 0.9, magnitude=abs(total.item()))
    assert_close(metrics["losses/aux/forward"], 0.2)


def test_on_policy_data_has_unit_importance_weights():
    outputs, batch = make_case(1)
    log_pi = naive_log_policy(outputs.adv[0, :-1], outputs.adv[0, :-1], batch.lambdas).detach()
    batch = batch._replace(behavior_log_probs=log_pi.gather(-1, batch.actions[..., None])[..., 0])
    _, metrics = loss(outputs, batch, LossConfig())
    assert_close(metrics["stats/rho_mean"], 1.0)
    assert metrics["stats/rho_clipped_frac"] == 0.0  # exact: a fraction of counts


def test_sharp_policy_with_huge_advantages_stays_finite():
    outputs, batch = make_case(2, seed=4)
    with torch.no_grad():
        outputs.adv.copy_(1e4 * torch.sign(outputs.adv))
    batch = batch._replace(
        lambdas=torch.tensor([50.0, 50.0, 0.5], dtype=DTYPE).expand_as(batch.lambdas)
    )
    total, metrics = loss(
        outputs, batch, LossConfig(reward_shapes=("log", "root"), entropy_scale=0.1)
    )
    total.backward()
    assert math.isfinite(total.item()) and all(math.isfinite(v) for v in metrics.values())
    assert torch.isfinite(outputs.adv.grad).all() and torch.isfinite(outputs.value.grad).all()


@pytest.mark.parametrize(("space", "lam"), [("boltzmann", [0.7]), ("epsilon_greedy", [0.0])])
def test_other_policy_spaces(space, lam):
    outputs, batch = make_case(1, seed=5)
    batch = batch._replace(lambdas=torch.tensor(lam, dtype=DTYPE).expand(*batch.actions.shape, 1))
    total, metrics = loss(outputs, batch, LossConfig(policy_space=space, entropy_scale=0.1))
    total.backward()  # greedy with ε = 0: π(a) = 0 off the argmax, ρ = 0 there, no NaN
    assert math.isfinite(total.item()) and all(math.isfinite(v) for v in metrics.values())
    assert torch.isfinite(outputs.adv.grad).all()


def test_float32_inputs():
    outputs, batch = make_case(2)
    outputs = LossOutputs(
        outputs.adv.detach().float().requires_grad_(True), outputs.value.detach().float(), {}
    )
    batch = LossBatch(batch.actions, *(x.float() for x in batch[1:5]))
    total, _ = loss(outputs, batch, LossConfig(reward_shapes=("log", "root")))
    assert total.dtype == torch.float32


# ---- config and input checks -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("policy_space", "softmax"),
        ("reward_shapes", "log"),
        ("reward_shapes", ()),
        ("reward_shapes", ("log", "root", "none")),
        ("reward_shapes", ("log", "sqrt")),
        ("clip_rho", -1.0),
        ("clip_c", float("nan")),
        ("clip_pg_rho", -0.5),
        ("trace_lambda", 1.5),
        ("trace_lambda", float("nan")),
        ("value_loss_scale", -1.0),
        ("q_loss_scale", float("inf")),
        ("q_loss_trains_value", "no"),
        ("q_loss_trains_value", 0),
        ("pg_loss_scale", "10"),
        ("entropy_scale", -0.01),
        ("entropy_floor", -0.1),
        ("entropy_floor", float("nan")),
        ("entropy_floor", True),
        ("entropy_floor_scale", -1.0),
        ("pg_advantage_norm", "whiten"),
        ("pg_clip", 1.0),
        ("pg_clip", -0.1),
        ("pg_clip", True),
        ("aux_loss_scale", float("nan")),
    ],
)
def test_config_rejects_bad_field(field, value):
    with pytest.raises(ValueError, match=f"^{field}: "):
        LossConfig(**{field: value})


def test_config_accepts_a_list_of_shapes():
    config = LossConfig(reward_shapes=["log", "root"])
    assert config.reward_shapes == ("log", "root") and config.num_families == 2
    assert replace(config, clip_pg_rho=1.0).clip_pg_rho == 1.0


def test_family_count_must_match_reward_shapes():
    outputs, batch = make_case(2)
    with pytest.raises(ValueError, match=r"2 parameter families.*reward_shapes"):
        loss(outputs, batch, LossConfig(reward_shapes=("log",)))


@pytest.mark.parametrize(
    "field", ["actions", "rewards", "discounts", "behavior_log_probs", "lambdas"]
)
def test_batch_field_with_wrong_rank_is_named(field):
    outputs, batch = make_case(1)
    batch = batch._replace(**{field: getattr(batch, field).unsqueeze(0)})
    with pytest.raises(ValueError, match=f"batch.{field}"):
        loss(outputs, batch, LossConfig())


def test_truncation_bootstrap_with_wrong_shape_is_named():
    outputs, batch = make_case(2)
    batch = batch._replace(truncation_bootstrap=torch.zeros(1, *batch.actions.shape))
    with pytest.raises(ValueError, match=r"batch.truncation_bootstrap.*\[F, T, B\] = \(2, 5, 3\)"):
        loss(outputs, batch, LossConfig(reward_shapes=("log", "root")))


@pytest.mark.parametrize("field", ["adv", "value"])
def test_output_field_with_wrong_rank_is_named(field):
    outputs, batch = make_case(1)
    outputs = outputs._replace(**{field: getattr(outputs, field)[0]})
    with pytest.raises(ValueError, match=f"outputs.{field}"):
        loss(outputs, batch, LossConfig())


def test_outputs_without_bootstrap_state_rejected():
    outputs, batch = make_case(1)
    outputs = outputs._replace(adv=outputs.adv[:, :-1], value=outputs.value[:, :-1])
    with pytest.raises(ValueError, match="bootstrap state"):
        loss(outputs, batch, LossConfig())


def test_lambda_width_must_match_policy_space():
    outputs, batch = make_case(1)
    with pytest.raises(ValueError, match=r"batch.lambdas.*'boltzmann'"):
        loss(outputs, batch, LossConfig(policy_space="boltzmann"))


def test_bad_actions_rejected():
    outputs, batch = make_case(1)
    with pytest.raises(ValueError, match="int64"):
        loss(outputs, batch._replace(actions=batch.actions.int()), LossConfig())
    with pytest.raises(ValueError, match=r"batch.actions must be in \[0, 4\)"):
        loss(outputs, batch._replace(actions=batch.actions + 4), LossConfig())


def test_non_scalar_aux_loss_rejected():
    outputs, batch = make_case(1)
    outputs = outputs._replace(aux_losses={"forward": torch.ones(3)})
    with pytest.raises(ValueError, match="aux_losses\\['forward'\\]"):
        loss(outputs, batch, LossConfig())


def test_k_families_each_get_the_policy_gradient_of_the_steps_they_acted():
    """LASER-like: K = 3 families, λ = the family that acted. Without the Q loss (which reaches
    every family's A through Q = Ā + V), the policy gradient of a step reaches only the
    advantages of the family named by its λ, and the loss sums one V loss per family."""
    outputs, batch = make_case(3)
    family = torch.tensor([[0, 1, 2], [2, 2, 0], [1, 0, 1], [0, 0, 2], [1, 2, 0]])
    batch = batch._replace(lambdas=family[..., None].to(DTYPE))
    config = LossConfig(policy_space="family_softmax", reward_shapes=("log",) * 3,
                        q_loss_scale=0.0)
    total, metrics = loss(outputs, batch, config)
    assert math.isfinite(total.item())
    assert {"losses/value_f1", "losses/value_f2", "losses/value_f3"} <= set(metrics)
    total.backward()
    grad = outputs.adv.grad[:, :5].abs().sum(-1)  # [F, T, B]
    for k in range(3):
        assert (grad[k][family != k] == 0).all() and (grad[k][family == k] > 0).all()
    with pytest.raises(ValueError, match=r"reward_shapes: .*family_softmax.*K >= 2"):
        LossConfig(policy_space="family_softmax", reward_shapes=("log",))


def test_vtrace_target_moments_are_each_familys_mean_and_population_variance():
    from gdi.learning.loss import vtrace_target_moments

    metrics = {"stats/vs_mean_f1": 1.5, "stats/vs_std_f1": 2.0, "stats/vs_mean_f2": -0.5,
               "stats/vs_std_f2": 0.25, "stats/vs_mean": 0.5}
    means, variances = vtrace_target_moments(metrics, families=2)
    assert means.dtype == variances.dtype == torch.float64
    assert means.tolist() == [1.5, -0.5] and variances.tolist() == [4.0, 0.0625]
