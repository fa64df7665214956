"""input_norm="running" (issue 41's lever, Sample Factory's normalize_input; not in the paper):
the running moments against NumPy over all the samples at once, the standardization against the
formula, and the statistics' way through the network, the parameter server and the learner."""

import numpy as np
import pytest
import torch

from gdi.config import Config
from gdi.nets import RunningInputNorm, build, merge_moments
from gdi.runtime.training.parameter_server import InlineParameterServer
from tests.tolerance import assert_close, is_close


def test_merged_moments_are_those_of_all_samples_at_once():
    """Chan et al.'s pairwise merge over batches of different sizes and centres gives NumPy's
    mean and population variance of the concatenation (float64 throughout)."""
    rng = np.random.default_rng(0)
    batches = [rng.normal(loc, scale, size=(n, 3)) for loc, scale, n in
               ((0.0, 1.0, 5), (100.0, 0.1, 1), (-3.0, 7.0, 40), (0.5, 0.0, 2))]
    count = torch.tensor(0.0, dtype=torch.float64)
    mean = torch.zeros(3, dtype=torch.float64)
    var = torch.ones(3, dtype=torch.float64)
    for batch in batches:
        b = torch.from_numpy(batch)
        count, mean, var = merge_moments(count, mean, var, len(batch), b.mean(0),
                                         b.var(0, unbiased=False))
    everything = np.concatenate(batches)
    assert count.item() == len(everything)  # a count of integers: exact
    assert_close(mean, everything.mean(0), terms=len(everything))
    assert_close(var, everything.var(0), terms=len(everything),
                 magnitude=np.abs(everything).max() ** 2)


def test_a_hand_worked_merge():
    """{1, 3} (mean 2, variance 1) and {6} (mean 6, variance 0): the three samples' mean is
    10/3 and their variance ((1 − 10/3)² + (3 − 10/3)² + (6 − 10/3)²) / 3 = 38/9."""
    count, mean, var = merge_moments(
        torch.tensor(2.0, dtype=torch.float64), torch.tensor([2.0], dtype=torch.float64),
        torch.tensor([1.0], dtype=torch.float64), 1, torch.tensor([6.0], dtype=torch.float64),
        torch.tensor([0.0], dtype=torch.float64))
    assert count.item() == 3.0
    assert_close(mean, [10 / 3])
    assert_close(var, [38 / 9])


def test_the_norm_standardizes_with_the_running_moments_and_clips():
    """After three updates the statistics are NumPy's over the 3 batches, and the output is
    clip((x − μ) / √(σ² + 1e-5), −5, 5) element by element; an element that never varied sends
    a changed value to the clip."""
    rng = np.random.default_rng(1)
    norm = RunningInputNorm((2, 2))
    seen = []
    for n in (4, 7, 1):
        batch = rng.uniform(0, 1, size=(n, 2, 2)).astype(np.float32)
        batch[:, 0, 0] = 0.25  # a pixel that never changes
        seen.append(batch)
        norm.update(torch.from_numpy(batch))
    everything = np.concatenate(seen).astype(np.float64)
    assert norm.count.item() == 12
    # Each batch's moments are float32 (var_mean over the batch), merged in float64.
    assert_close(norm.mean, everything.mean(0), terms=12, dtype=torch.float32)
    assert_close(norm.var, everything.var(0), terms=12, dtype=torch.float32)
    x = rng.uniform(-1, 2, size=(5, 2, 2)).astype(np.float32)
    x[0, 0, 0] = 0.5
    expected = np.clip((x - everything.mean(0)) / np.sqrt(everything.var(0) + 1e-5), -5, 5)
    out = norm(torch.from_numpy(x))
    assert out.dtype == torch.float32
    assert_close(out, expected, magnitude=float(np.abs(x).max() / np.sqrt(1e-5)))
    assert out[0, 0, 0].item() == 5.0  # (0.5 − 0.25) / √1e-5 ≈ 79, clipped: exact


def test_before_any_update_the_input_passes_through():
    x = torch.linspace(-4.0, 4.0, 12).reshape(3, 4)
    out = RunningInputNorm((4,))(x)
    assert_close(out, x / np.sqrt(1 + 1e-5))


def test_an_update_of_the_wrong_shape_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"shape \(4,\); got samples of shape \(3,\)"):
        RunningInputNorm((4,)).update(torch.zeros(2, 3))


def test_the_network_reads_its_input_through_the_statistics_it_is_given():
    """update_input_stats takes observations as forward does (uint8 pixels × 1/255 first), so
    after one update of a constant frame every element's mean is that frame; the outputs move,
    and a network without input_norm neither has the buffers nor changes."""
    obs = torch.randint(0, 256, (3, 2, 4, 84, 84), dtype=torch.uint8)
    args = (torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, 2), torch.zeros(3, 2,
            dtype=torch.bool))
    torch.manual_seed(0)
    net = build((4, 84, 84), 4, torso="nature", lstm_units=8, aux=False, input_norm="running")
    torch.manual_seed(0)
    plain = build((4, 84, 84), 4, torso="nature", lstm_units=8, aux=False)
    assert {"input_norm.count", "input_norm.mean", "input_norm.var"} <= set(net.state_dict())
    assert not any(name.startswith("input_norm") for name in plain.state_dict())
    before, _ = net(obs, *args, net.initial_state(2))
    frame = torch.full((1, 4, 84, 84), 51, dtype=torch.uint8)
    net.update_input_stats(frame)
    assert net.input_norm.count.item() == 1
    assert_close(net.input_norm.mean, torch.full((4, 84, 84), 51 / 255), dtype=torch.float32)
    after, _ = net(obs, *args, net.initial_state(2))
    assert not is_close(after.value, before.value)
    plain_state = {k: v.clone() for k, v in plain.state_dict().items()}
    plain.update_input_stats(obs)  # nothing to update
    assert all(torch.equal(v, plain.state_dict()[k]) for k, v in plain_state.items())
    with pytest.raises(ValueError, match="obs must end in obs_shape"):
        net.update_input_stats(torch.zeros(2, 84, 84, dtype=torch.uint8))


def test_actors_receive_the_learners_statistics_through_the_parameter_server():
    """The statistics are buffers: a push carries them. The server moves float32, so after
    several updates (float64 values float32 cannot hold) the actor holds the learner's
    statistics rounded to float32, and computes what the learner does up to that rounding."""
    torch.manual_seed(0)
    learner = build((6,), 3, torso="mlp", lstm_units=8, aux=False, input_norm="running")
    actor = build((6,), 3, torso="mlp", lstm_units=8, aux=False, input_norm="running")
    for _ in range(6):
        learner.update_input_stats(torch.randn(50, 6) * 3 + 1)
    assert not torch.equal(learner.input_norm.var.float().double(), learner.input_norm.var)
    server = InlineParameterServer(actor)
    server.push(learner, 1)
    server.pull(actor, 0)
    for name in ("count", "mean", "var"):  # a copy of the float32 rounding: exact
        assert torch.equal(getattr(actor.input_norm, name),
                           getattr(learner.input_norm, name).float().double())
    obs = torch.randn(2, 5, 6)
    args = (torch.zeros(2, 5, dtype=torch.long), torch.zeros(2, 5), torch.zeros(2, 5,
            dtype=torch.bool), learner.initial_state(5))
    assert_close(actor(obs, *args)[0].value, learner(obs, *args)[0].value, dtype=torch.float32,
                 terms=6 * 8, magnitude=5.0)


def test_a_batch_with_a_nan_or_an_infinity_leaves_the_statistics_as_they_were():
    """One bad element (an environment's fault) would poison its statistics for good; the
    batch is left out and the next clean one is merged as usual."""
    norm = RunningInputNorm((3,))
    clean = torch.tensor([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]])
    norm.update(clean)
    before = {name: getattr(norm, name).clone() for name in ("count", "mean", "var")}
    for bad in (float("nan"), float("inf")):
        poisoned = clean.clone()
        poisoned[1, 2] = bad
        norm.update(poisoned)
        for name, value in before.items():  # untouched: exact
            assert torch.equal(getattr(norm, name), value), (bad, name)
    norm.update(clean)
    assert norm.count.item() == 4 and torch.isfinite(norm.mean).all()


def test_an_unknown_input_norm_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="input_norm must be one of none, running, got 'batch'"):
        Config(input_norm="batch")
    with pytest.raises(ValueError, match="input_norm must be one of none, running"):
        build((4,), 2, torso="mlp", input_norm="batch")
