"""V-trace: brute-force reference from the paper's sum, hand-worked cases, properties."""

import math

import pytest
import torch

from gdi.learning import VTraceReturns, vtrace
from tests.tolerance import assert_close

DTYPE = torch.float64


def vtrace_reference(
    log_rhos, discounts, rewards, values, bootstrap_value, clip_rho, clip_c, clip_pg_rho=None,
    trace_lambda=1.0,
):
    """The appendix's V-trace sum, term by term, O(T²) per column, in Python floats.

    v_s = V(x_s) + Σ_{t=s}^{T-1} (Π_{i=s}^{t-1} γ_i c_i) ρ_t δ_t,  c_i = λ min(c̄, π_i/μ_i),
    δ_t = r_t + γ_t V(x_{t+1}) − V(x_t),  V(x_T) = bootstrap,
    pg_s = ρ^pg_s (r_s + γ_s v_{s+1} − V(x_s)),  v_T = bootstrap.
    """
    clip_pg_rho = clip_rho if clip_pg_rho is None else clip_pg_rho
    num_steps, batch_size = log_rhos.shape
    vs = torch.zeros(num_steps, batch_size, dtype=DTYPE)
    pg = torch.zeros(num_steps, batch_size, dtype=DTYPE)
    for b in range(batch_size):
        lr = log_rhos[:, b].tolist()
        g = discounts[:, b].tolist()
        r = rewards[:, b].tolist()
        v = [*values[:, b].tolist(), float(bootstrap_value[b])]
        for s in range(num_steps):
            total = v[s]
            for t in range(s, num_steps):
                weight = 1.0
                for i in range(s, t):
                    weight *= g[i] * trace_lambda * min(clip_c, math.exp(lr[i]))
                rho_t = min(clip_rho, math.exp(lr[t]))
                total += weight * rho_t * (r[t] + g[t] * v[t + 1] - v[t])
            vs[s, b] = total
        for s in range(num_steps):
            v_next = float(vs[s + 1, b]) if s + 1 < num_steps else v[num_steps]
            pg[s, b] = min(clip_pg_rho, math.exp(lr[s])) * (r[s] + g[s] * v_next - v[s])
    return vs, pg


def random_inputs(num_steps=7, batch_size=4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    log_rhos = 0.7 * torch.randn(num_steps, batch_size, generator=generator, dtype=DTYPE)
    discounts = torch.full((num_steps, batch_size), 0.9, dtype=DTYPE)
    discounts[2, 1] = 0.0  # an episode ends inside the sequence
    discounts[5, 3] = 0.0
    rewards = torch.randn(num_steps, batch_size, generator=generator, dtype=DTYPE)
    values = torch.randn(num_steps, batch_size, generator=generator, dtype=DTYPE)
    bootstrap_value = torch.randn(batch_size, generator=generator, dtype=DTYPE)
    return log_rhos, discounts, rewards, values, bootstrap_value


# ---- layer 1: brute-force reference --------------------------------------------------------


@pytest.mark.parametrize(
    ("clip_rho", "clip_c", "clip_pg_rho"), [(1.3, 0.8, None), (0.9, 1.2, 1.1), (1.05, 1.05, 0.5)]
)
def test_matches_brute_force_sum(clip_rho, clip_c, clip_pg_rho):
    inputs = random_inputs()
    rhos = inputs[0].exp()
    # ρ crosses both truncation levels, which differ.
    for level in (clip_rho, clip_c):
        assert (rhos > level).any() and (rhos < level).any()
    returns = vtrace(*inputs, clip_rho=clip_rho, clip_c=clip_c, clip_pg_rho=clip_pg_rho)
    assert isinstance(returns, VTraceReturns)
    assert_matches_brute_force(returns, vtrace_reference(*inputs, clip_rho, clip_c, clip_pg_rho))


def assert_matches_brute_force(returns: VTraceReturns, reference) -> None:
    """vtrace's returns against vtrace_reference's (v_s, pg_s): each sums up to T terms."""
    expected_vs, expected_pg = reference
    assert_close(returns.vs, expected_vs, terms=len(expected_vs))
    assert_close(returns.pg_advantages, expected_pg, terms=len(expected_vs))


# ---- layer 2: tiny cases by hand -----------------------------------------------------------


def test_two_steps_by_hand():
    # ρ̄ = 1.5, c̄ = 1.0; π/μ = (2.0, 0.5) → ρ = (1.5, 0.5), c = (1.0, 0.5).
    log_rhos = torch.tensor([[math.log(2.0)], [math.log(0.5)]], dtype=DTYPE)
    discounts = torch.tensor([[0.9], [0.5]], dtype=DTYPE)
    rewards = torch.tensor([[1.0], [2.0]], dtype=DTYPE)
    values = torch.tensor([[3.0], [4.0]], dtype=DTYPE)
    bootstrap_value = torch.tensor([10.0], dtype=DTYPE)
    # v_1 = V_1 + ρ_1 (r_1 + γ_1 V_2 − V_1) = 4 + 0.5·(2 + 0.5·10 − 4) = 4 + 1.5 = 5.5
    # v_0 = V_0 + ρ_0 δ_0 + γ_0 c_0 (v_1 − V_1) = 3 + 1.5·(1 + 0.9·4 − 3) + 0.9·1.0·1.5
    #     = 3 + 2.4 + 1.35 = 6.75
    # pg_1 = ρ_1 (r_1 + γ_1 v_2 − V_1) = 0.5·(2 + 0.5·10 − 4) = 1.5   (v_2 = bootstrap)
    # pg_0 = ρ_0 (r_0 + γ_0 v_1 − V_0) = 1.5·(1 + 0.9·5.5 − 3) = 1.5·2.95 = 4.425
    returns = vtrace(
        log_rhos, discounts, rewards, values, bootstrap_value, clip_rho=1.5, clip_c=1.0
    )
    assert_close(returns.vs, torch.tensor([[6.75], [5.5]], dtype=DTYPE))
    assert_close(returns.pg_advantages, torch.tensor([[4.425], [1.5]], dtype=DTYPE))
    # The same advantages before ρ: 2.95 and 3.
    assert_close(returns.td_advantages, torch.tensor([[2.95], [3.0]], dtype=DTYPE))


def test_pg_rho_truncated_separately():
    # Same single step, π/μ = 3: ρ̄ = 2 for v, ρ̄_pg = 1 for the advantage.
    # v_0 = 1 + 2·(1 + 0.5·4 − 1) = 1 + 4 = 5;  pg_0 = 1·(1 + 0.5·4 − 1) = 2 (v_1 = bootstrap).
    args = (
        torch.tensor([[math.log(3.0)]], dtype=DTYPE),
        torch.tensor([[0.5]], dtype=DTYPE),
        torch.tensor([[1.0]], dtype=DTYPE),
        torch.tensor([[1.0]], dtype=DTYPE),
        torch.tensor([4.0], dtype=DTYPE),
    )
    returns = vtrace(*args, clip_rho=2.0, clip_c=1.0, clip_pg_rho=1.0)
    assert_close(returns.vs, torch.tensor([[5.0]], dtype=DTYPE))
    assert_close(returns.pg_advantages, torch.tensor([[2.0]], dtype=DTYPE))
    default = vtrace(*args, clip_rho=2.0, clip_c=1.0)  # clip_pg_rho None → ρ̄ = 2: pg = 2·2
    assert_close(default.pg_advantages, torch.tensor([[4.0]], dtype=DTYPE))


# ---- layer 3: properties -------------------------------------------------------------------


@pytest.mark.parametrize("clip", [1.0, 1.05])
def test_on_policy_is_discounted_n_step_return(clip):
    _, discounts, rewards, values, bootstrap_value = random_inputs()
    num_steps = rewards.shape[0]
    log_rhos = torch.zeros_like(rewards)  # π = μ: ρ = c = 1 whenever ρ̄, c̄ ≥ 1
    returns = vtrace(
        log_rhos, discounts, rewards, values, bootstrap_value, clip_rho=clip, clip_c=clip
    )
    # G_s = Σ_{t=s}^{T-1} (Π_{i=s}^{t-1} γ_i) r_t + (Π_{i=s}^{T-1} γ_i) V(x_T)
    expected = torch.zeros_like(rewards)
    for s in range(num_steps):
        discount_product = torch.ones_like(bootstrap_value)
        for t in range(s, num_steps):
            expected[s] += discount_product * rewards[t]
            discount_product = discount_product * discounts[t]
        expected[s] += discount_product * bootstrap_value
    assert_close(returns.vs, expected, terms=num_steps)
    # and the advantage is that return minus the baseline
    assert_close(returns.pg_advantages, expected - values, terms=num_steps)


def test_trajectory_cut_by_zero_discount_equals_halves():
    log_rhos, discounts, rewards, values, bootstrap_value = random_inputs(num_steps=8, seed=3)
    discounts[3] = 0.0  # every column: an episode ends after step 3
    kwargs = {"clip_rho": 1.2, "clip_c": 0.9}
    full = vtrace(log_rhos, discounts, rewards, values, bootstrap_value, **kwargs)
    # First episode: the value after its end must not matter; use a junk bootstrap.
    first = vtrace(
        log_rhos[:4],
        discounts[:4],
        rewards[:4],
        values[:4],
        torch.full_like(bootstrap_value, 123.0),
        **kwargs,
    )
    second = vtrace(log_rhos[4:], discounts[4:], rewards[4:], values[4:], bootstrap_value, **kwargs)
    assert_close(full.vs, torch.cat([first.vs, second.vs]))
    assert_close(
        full.pg_advantages, torch.cat([first.pg_advantages, second.pg_advantages])
    )


def test_columns_are_independent():
    inputs = random_inputs(seed=5)
    full = vtrace(*inputs, clip_rho=1.1, clip_c=0.9)
    for b in range(inputs[0].shape[1]):
        column = [x[:, b : b + 1] for x in inputs[:4]] + [inputs[4][b : b + 1]]
        alone = vtrace(*column, clip_rho=1.1, clip_c=0.9)
        assert_close(alone.vs[:, 0], full.vs[:, b])


def test_targets_carry_no_gradient():
    inputs = [x.clone().requires_grad_(True) for x in random_inputs()]
    returns = vtrace(*inputs)
    assert not returns.vs.requires_grad
    assert not returns.pg_advantages.requires_grad


def test_value_is_fixed_point_when_values_are_vtrace_targets_of_zero_td():
    # If every TD error is zero, v_s = V(x_s) whatever the importance weights.
    log_rhos, discounts, _, values, bootstrap_value = random_inputs(seed=7)
    values_tp1 = torch.cat([values[1:], bootstrap_value[None]])
    rewards = values - discounts * values_tp1
    returns = vtrace(log_rhos, discounts, rewards, values, bootstrap_value)
    assert_close(returns.vs, values)
    # The TD errors are 0 up to the rounding of the rewards computed from the values: the
    # magnitude of the numbers the zero advantages are computed from is that of the values.
    assert_close(returns.pg_advantages, torch.zeros_like(values), magnitude=values.abs().max())


# ---- input checks --------------------------------------------------------------------------

ARGUMENTS = ["log_rhos", "discounts", "rewards", "values", "bootstrap_value"]


@pytest.mark.parametrize("position", range(len(ARGUMENTS)))
def test_wrong_rank_names_the_argument(position):
    inputs = list(random_inputs())
    inputs[position] = inputs[position].unsqueeze(-1)
    with pytest.raises(ValueError, match=ARGUMENTS[position]):
        vtrace(*inputs)


@pytest.mark.parametrize("position", range(1, len(ARGUMENTS)))
def test_wrong_shape_names_the_argument(position):
    inputs = list(random_inputs())
    inputs[position] = inputs[position][..., :-1]
    with pytest.raises(ValueError, match=ARGUMENTS[position]):
        vtrace(*inputs)


@pytest.mark.parametrize("name", ["clip_rho", "clip_c", "clip_pg_rho"])
def test_negative_or_nan_truncation_rejected(name):
    for bad in (-0.1, float("nan")):
        with pytest.raises(ValueError, match=name):
            vtrace(*random_inputs(), **{name: bad})


@pytest.mark.parametrize("trace_lambda", [0.0, 0.5, 0.95])
def test_trace_lambda_matches_brute_force_sum(trace_lambda):
    # c_i = λ·min(c̄, π_i/μ_i) (Espeholt et al. 2018, Sec. 4.1, as Retrace(λ)).
    inputs = random_inputs(seed=3)
    returns = vtrace(*inputs, clip_rho=1.3, clip_c=0.8, trace_lambda=trace_lambda)
    assert_matches_brute_force(returns, vtrace_reference(*inputs, 1.3, 0.8, None, trace_lambda))


def test_on_policy_trace_lambda_gives_gae_targets():
    # On-policy (π = μ, ρ̄ = c̄ = 1) V-trace with λ is GAE's λ-return: A_t = δ_t + γ_t λ A_{t+1}
    # (Schulman et al. 2016), written here as its own backward loop, and v_t = V(x_t) + A_t.
    _, discounts, rewards, values, bootstrap_value = random_inputs(seed=4)
    log_rhos = torch.zeros_like(rewards)
    lam = 0.95
    returns = vtrace(log_rhos, discounts, rewards, values, bootstrap_value, clip_rho=1.0,
                     clip_c=1.0, trace_lambda=lam)
    num_steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    next_advantage = torch.zeros_like(bootstrap_value)
    for t in reversed(range(num_steps)):
        next_value = bootstrap_value if t == num_steps - 1 else values[t + 1]
        delta = rewards[t] + discounts[t] * next_value - values[t]
        next_advantage = delta + discounts[t] * lam * next_advantage
        advantages[t] = next_advantage
    assert_close(returns.vs, values + advantages, terms=num_steps)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_a_trace_lambda_outside_0_1_is_refused(bad):
    with pytest.raises(ValueError, match="trace_lambda must be in \\[0, 1\\]"):
        vtrace(*random_inputs(), trace_lambda=bad)
