"""Retrace: brute-force reference from the sum form, hand-worked cases, properties."""

import math

import pytest
import torch

from gdi.learning import retrace
from tests.tolerance import assert_close

DTYPE = torch.float64
NAN = float("nan")


def retrace_reference(log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value, clip_c,
                      trace_lambda=1.0):
    """The appendix's Retrace sum with the expected-SARSA TD error, O(T²) per column.

    G_t = Q(x_t, a_t) + Σ_{j=t}^{T-1} (Π_{i=t}^{j-1} γ_i) c_{[t+1:j]} δ_j,
    c_{[t+1:j]} = Π_{i=t+1}^{j} λ min(c̄, π_i/μ_i)  (1 for j = t),
    δ_j = r_j + γ_j E_π Q(x_{j+1}, ·) − Q(x_j, a_j),  E_π Q(x_T, ·) = bootstrap.
    """
    num_steps, batch_size = log_rhos.shape
    targets = torch.zeros(num_steps, batch_size, dtype=DTYPE)
    for b in range(batch_size):
        lr = log_rhos[:, b].tolist()
        g = discounts[:, b].tolist()
        r = rewards[:, b].tolist()
        q = q_taken[:, b].tolist()
        e = [*expected_q[:, b].tolist(), float(bootstrap_value[b])]
        for t in range(num_steps):
            total = q[t]
            for j in range(t, num_steps):
                weight = 1.0
                for i in range(t, j):
                    weight *= g[i]
                for i in range(t + 1, j + 1):
                    weight *= trace_lambda * min(clip_c, math.exp(lr[i]))
                total += weight * (r[j] + g[j] * e[j + 1] - q[j])
            targets[t, b] = total
    return targets


def random_inputs(num_steps=7, batch_size=4, seed=0):
    generator = torch.Generator().manual_seed(seed)

    def normal(*shape):
        return torch.randn(*shape, generator=generator, dtype=DTYPE)

    log_rhos = 0.7 * normal(num_steps, batch_size)
    discounts = torch.full((num_steps, batch_size), 0.95, dtype=DTYPE)
    discounts[1, 0] = 0.0
    discounts[4, 2] = 0.0
    return (
        log_rhos,
        discounts,
        normal(num_steps, batch_size),
        normal(num_steps, batch_size),
        normal(num_steps, batch_size),
        normal(batch_size),
    )


# ---- layer 1: brute-force reference --------------------------------------------------------


@pytest.mark.parametrize("clip_c", [0.8, 1.05, 1.4])
def test_matches_brute_force_sum(clip_c):
    inputs = random_inputs()
    cs = inputs[0][1:].exp()
    assert (cs > clip_c).any() and (cs < clip_c).any()  # c crosses its truncation level
    expected = retrace_reference(*inputs, clip_c)
    assert_close(retrace(*inputs, clip_c=clip_c), expected, terms=len(expected))  # sums of ≤ T


# ---- layer 2: tiny cases by hand -----------------------------------------------------------


def test_three_steps_by_hand_never_reading_the_first_step():
    # Index 0 of q_taken, expected_q and log_rhos is NaN: the target for step t depends only on
    # what happens after a_t, so these entries must never be read.
    log_rhos = torch.tensor([[NAN], [math.log(0.5)], [math.log(2.0)]], dtype=DTYPE)
    discounts = torch.tensor([[0.9], [0.8], [0.5]], dtype=DTYPE)
    rewards = torch.tensor([[1.0], [2.0], [3.0]], dtype=DTYPE)
    q_taken = torch.tensor([[NAN], [5.0], [6.0]], dtype=DTYPE)
    expected_q = torch.tensor([[NAN], [4.0], [7.0]], dtype=DTYPE)
    bootstrap_value = torch.tensor([10.0], dtype=DTYPE)
    # c̄ = 1: c_1 = min(1, 0.5) = 0.5, c_2 = min(1, 2) = 1.
    # G_2 = r_2 + γ_2·bootstrap = 3 + 0.5·10 = 8
    # G_1 = r_1 + γ_1 (E_2 + c_2 (G_2 − q_2)) = 2 + 0.8·(7 + 1·(8 − 6)) = 2 + 7.2 = 9.2
    # G_0 = r_0 + γ_0 (E_1 + c_1 (G_1 − q_1)) = 1 + 0.9·(4 + 0.5·(9.2 − 5)) = 1 + 0.9·6.1 = 6.49
    targets = retrace(
        log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value, clip_c=1.0
    )
    assert_close(targets, torch.tensor([[6.49], [9.2], [8.0]], dtype=DTYPE))


def test_single_step_is_one_step_target():
    # T = 1: G_0 = r_0 + γ_0·bootstrap = 2 + 0.5·6 = 5, whatever the (NaN) other inputs.
    nan = torch.tensor([[NAN]], dtype=DTYPE)
    targets = retrace(
        nan,
        torch.tensor([[0.5]], dtype=DTYPE),
        torch.tensor([[2.0]], dtype=DTYPE),
        nan,
        nan,
        torch.tensor([6.0], dtype=DTYPE),
    )
    assert_close(targets, torch.tensor([[5.0]], dtype=DTYPE))


# ---- layer 3: properties -------------------------------------------------------------------


def test_zero_traces_give_one_step_expected_sarsa():
    log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value = random_inputs()
    expected_q_tp1 = torch.cat([expected_q[1:], bootstrap_value[None]])
    one_step = rewards + discounts * expected_q_tp1  # r_t + γ_t E_π Q(x_{t+1}, ·)
    by_truncation = retrace(
        log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value, clip_c=0.0
    )
    by_zero_pi = retrace(
        torch.full_like(log_rhos, -math.inf),
        discounts,
        rewards,
        q_taken,
        expected_q,
        bootstrap_value,
    )
    assert_close(by_truncation, one_step)
    assert_close(by_zero_pi, one_step)


def test_full_traces_with_consistent_q_give_n_step_return():
    # c ≡ 1 (on-policy, c̄ ≥ 1) and Q(x_t, a_t) = E_π Q(x_t, ·): the corrections telescope to the
    # discounted n-step return Σ_{j≥t} (Π_{i=t}^{j-1} γ_i) r_j + (Π_{i=t}^{T-1} γ_i)·bootstrap.
    _, discounts, rewards, q_values, _, bootstrap_value = random_inputs(seed=2)
    targets = retrace(
        torch.zeros_like(rewards),
        discounts,
        rewards,
        q_values,
        q_values,
        bootstrap_value,
        clip_c=1.05,
    )
    expected = torch.zeros_like(rewards)
    for t in range(rewards.shape[0]):
        discount_product = torch.ones_like(bootstrap_value)
        for j in range(t, rewards.shape[0]):
            expected[t] += discount_product * rewards[j]
            discount_product = discount_product * discounts[j]
        expected[t] += discount_product * bootstrap_value
    assert_close(targets, expected, terms=len(expected))  # sums of up to T terms


def test_trajectory_cut_by_zero_discount_equals_halves():
    log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value = random_inputs(8, seed=4)
    discounts[4] = 0.0  # an episode ends after step 4 in every column
    full = retrace(log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value, clip_c=1.2)
    first = retrace(
        log_rhos[:5],
        discounts[:5],
        rewards[:5],
        q_taken[:5],
        expected_q[:5],
        torch.full_like(bootstrap_value, -77.0),
        clip_c=1.2,
    )
    second = retrace(
        log_rhos[5:],
        discounts[5:],
        rewards[5:],
        q_taken[5:],
        expected_q[5:],
        bootstrap_value,
        clip_c=1.2,
    )
    assert_close(full, torch.cat([first, second]))


def test_targets_carry_no_gradient():
    inputs = [x.clone().requires_grad_(True) for x in random_inputs()]
    assert not retrace(*inputs).requires_grad


# ---- input checks --------------------------------------------------------------------------

ARGUMENTS = ["log_rhos", "discounts", "rewards", "q_taken", "expected_q", "bootstrap_value"]


@pytest.mark.parametrize("position", range(len(ARGUMENTS)))
def test_wrong_rank_names_the_argument(position):
    inputs = list(random_inputs())
    inputs[position] = inputs[position].unsqueeze(-1)
    with pytest.raises(ValueError, match=ARGUMENTS[position]):
        retrace(*inputs)


@pytest.mark.parametrize("position", range(1, len(ARGUMENTS)))
def test_wrong_shape_names_the_argument(position):
    inputs = list(random_inputs())
    inputs[position] = inputs[position][..., :-1]
    with pytest.raises(ValueError, match=ARGUMENTS[position]):
        retrace(*inputs)


def test_negative_truncation_rejected():
    with pytest.raises(ValueError, match="clip_c"):
        retrace(*random_inputs(), clip_c=-1.0)


@pytest.mark.parametrize("trace_lambda", [0.0, 0.5, 0.95])
def test_trace_lambda_matches_brute_force_sum(trace_lambda):
    # Retrace(λ): c_i = λ·min(c̄, π_i/μ_i) (Munos et al. 2016).
    inputs = random_inputs(seed=5)
    expected = retrace_reference(*inputs, 1.2, trace_lambda)
    got = retrace(*inputs, clip_c=1.2, trace_lambda=trace_lambda)
    assert_close(got, expected, terms=len(expected))


def test_zero_trace_lambda_is_the_expected_sarsa_target():
    # λ = 0 cuts every trace: G_t = r_t + γ_t E_π Q(x_{t+1}, ·), by hand.
    log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value = random_inputs(seed=6)
    got = retrace(log_rhos, discounts, rewards, q_taken, expected_q, bootstrap_value,
                  clip_c=1.05, trace_lambda=0.0)
    next_expected = torch.cat([expected_q[1:], bootstrap_value.unsqueeze(0)], dim=0)
    assert_close(got, rewards + discounts * next_expected)
