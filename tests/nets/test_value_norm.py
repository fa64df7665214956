"""value_norm="running" (issue 41's lever, Sample Factory's normalize_returns; not in the
paper): the return statistics against NumPy over every target at once, the heads read back in
the returns' units against the formula, and the statistics' way through the learner and its
checkpoint."""

import numpy as np
import pytest
import torch

from gdi.config import Config
from gdi.nets import RunningValueNorm, build
from gdi.nets.normalization import merge_moments
from gdi.runtime.components import build_learner, build_network, env_shapes
from tests.runtime.test_learner import next_window, setup
from tests.tolerance import assert_close


def test_the_statistics_are_those_of_every_target_of_each_family():
    """Batches of different sizes, folded in from their own moments, give NumPy's mean and
    population variance of all the targets, family by family."""
    rng = np.random.default_rng(0)
    norm = RunningValueNorm(2)
    seen = []
    for n, loc in ((6, 0.0), (1, 5.0), (30, -2.0)):
        targets = rng.normal(loc, [1.0, 3.0], size=(n, 2))
        seen.append(targets)
        norm.update(n, torch.from_numpy(targets.mean(0)), torch.from_numpy(targets.var(0)))
    everything = np.concatenate(seen)
    assert norm.count.item() == 37
    assert_close(norm.mean, everything.mean(0), terms=37)
    assert_close(norm.var, everything.var(0), terms=37, magnitude=np.abs(everything).max() ** 2)
    assert_close(norm.std, np.sqrt(everything.var(0) + 1e-5), terms=37)


def test_the_heads_are_read_in_the_returns_units():
    """With μ = (2, −1) and σ² = (9, 0.25): A_f = σ_f·Â_f and V_f = σ_f·v̂_f + μ_f against the
    same parameters read without the statistics; π_λ's logits (the paper's: A) are the A read
    back, and the embedding is untouched."""
    torch.manual_seed(0)
    net = build((6,), 3, torso="mlp", lstm_units=8, families=2, aux=False, value_norm="running")
    plain = build((6,), 3, torso="mlp", lstm_units=8, families=2, aux=False)
    plain.load_state_dict({k: v for k, v in net.state_dict().items()
                           if not k.startswith("value_norm")})
    net.value_norm.update(4, torch.tensor([2.0, -1.0]), torch.tensor([9.0, 0.25]))
    obs = torch.randn(3, 5, 6)
    args = (torch.zeros(3, 5, dtype=torch.long), torch.zeros(3, 5),
            torch.zeros(3, 5, dtype=torch.bool), net.initial_state(5))
    out, _ = net(obs, *args)
    ref, _ = plain(obs, *args)
    sigma = torch.tensor([np.sqrt(9 + 1e-5), np.sqrt(0.25 + 1e-5)])
    assert_close(out.adv, ref.adv * sigma.view(2, 1, 1, 1), dtype=torch.float32, magnitude=3.0)
    assert_close(out.value, ref.value * sigma.view(2, 1, 1) + torch.tensor([2.0, -1.0]).view(
        2, 1, 1), dtype=torch.float32, magnitude=3.0)
    assert torch.equal(out.logits, out.adv)
    assert torch.equal(out.embedding, ref.embedding)


def test_before_any_update_the_heads_read_as_they_are():
    torch.manual_seed(0)
    net = build((6,), 3, torso="mlp", lstm_units=8, aux=False, value_norm="running")
    plain = build((6,), 3, torso="mlp", lstm_units=8, aux=False)
    plain.load_state_dict({k: v for k, v in net.state_dict().items()
                           if not k.startswith("value_norm")})
    obs = torch.randn(2, 4, 6)
    args = (torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 4),
            torch.zeros(2, 4, dtype=torch.bool), net.initial_state(4))
    assert_close(net(obs, *args)[0].value, plain(obs, *args)[0].value * np.sqrt(1 + 1e-5),
                 dtype=torch.float32)


def test_moments_of_the_wrong_shape_or_not_finite():
    norm = RunningValueNorm(1)
    with pytest.raises(ValueError, match=r"per family, shape \(1,\); got mean \(2,\)"):
        norm.update(3, torch.zeros(2), torch.ones(2))
    norm.update(3, torch.tensor([float("nan")]), torch.ones(1))  # a skipped batch: left out
    assert norm.count.item() == 0 and norm.mean.item() == 0 and norm.var.item() == 1


def test_the_learner_folds_each_steps_targets_into_the_statistics_and_checkpoints_them(
        monkeypatch):
    """After two steps the statistics are the merge of the two batches' V-trace targets as the
    loss reported them (T·B each); the loss read σ = √(1 + eps) at the first step and the
    first batch's σ at the second; a learner restored from the checkpoint holds the same
    statistics."""
    import gdi.runtime.training.learner as learner_module

    scales, real_loss = [], learner_module.gdi_loss

    def spy(outputs, batch, config):
        scales.append(outputs.value_scale.clone())
        return real_loss(outputs, batch, config)

    monkeypatch.setattr(learner_module, "gdi_loss", spy)
    config, env_config, learner, actor = setup(value_norm="running")
    reported, sigmas = [], []
    for _ in range(2):
        batch = next_window(actor)
        metrics = learner.step(batch, 0.5)
        reported.append((metrics["stats/vs_mean_f1"], metrics["stats/vs_std_f1"] ** 2))
        sigmas.append(learner.net.value_norm.std.float())
    assert_close(scales[0], [np.sqrt(1 + 1e-5)], dtype=torch.float32)
    assert torch.equal(scales[1], sigmas[0])
    assert not torch.equal(scales[1], scales[0])
    per_batch = (batch.actions.shape[0] - config.burn_in) * batch.actions.shape[1]
    count, mean, var = torch.tensor(0.0, dtype=torch.float64), torch.zeros(1,
                        dtype=torch.float64), torch.ones(1, dtype=torch.float64)
    for m, v in reported:
        count, mean, var = merge_moments(count, mean, var, per_batch,
                                         torch.tensor([m], dtype=torch.float64),
                                         torch.tensor([v], dtype=torch.float64))
    stats = learner.net.value_norm
    assert stats.count.item() == 2 * per_batch
    assert torch.equal(stats.mean, mean) and torch.equal(stats.var, var)
    assert metrics["stats/value_norm_std"] == float(stats.std.mean())
    restored = build_learner(config, build_network(config, env_shapes(env_config, 0)),
                             device="cpu")
    restored.load_state_dict(learner.state_dict())
    for name in ("count", "mean", "var"):
        assert torch.equal(getattr(restored.net.value_norm, name), getattr(stats, name))


def test_an_unknown_value_norm_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="value_norm must be one of none, running, got 'popart'"):
        Config(value_norm="popart")
    with pytest.raises(ValueError, match="value_norm must be one of none, running"):
        build((4,), 2, torso="mlp", value_norm="popart")
