"""gdi.nets.torsos: output sizes, preprocessing and observation layouts."""

import pytest
import torch

from gdi.nets import (
    ImpalaDeepTorso,
    MinAtarTorso,
    MLPTorso,
    NatureTorso,
    make_torso,
    preprocess_observations,
)
from gdi.nets.torsos import ResidualBlock
from tests.nets.helpers import summed_terms
from tests.tolerance import assert_close


def test_impala_deep_feature_sizes():
    # 84 → 42 → 21 → 11 per max-pool (3×3, stride 2, padding 1): 32·11·11 = 3872 features.
    torso = ImpalaDeepTorso((4, 84, 84))
    assert torso.flat_features == 3872 and torso.output_size == 256
    out = torso(torch.rand(2, 4, 84, 84))
    assert out.shape == (2, 256) and (out >= 0).all()  # ReLU after the linear layer


def test_nature_feature_sizes_and_parameter_count():
    # 84 → ⌊(84 − 8)/4⌋ + 1 = 20 → ⌊(20 − 4)/2⌋ + 1 = 9 → 9 − 3 + 1 = 7: 64·7·7 = 3136 features.
    torso = NatureTorso((4, 84, 84))
    assert torso.flat_features == 3136 and torso.output_size == 512
    # DQN's published size, by hand: 4·32·64 + 32, 32·64·16 + 64, 64·64·9 + 64, 3136·512 + 512.
    expected = (8192 + 32) + (32768 + 64) + (36864 + 64) + (1605632 + 512)
    assert sum(p.numel() for p in torso.parameters()) == expected == 1_684_128
    out = torso(torch.rand(2, 4, 84, 84))
    assert out.shape == (2, 512) and (out >= 0).all()


def test_minatar_and_mlp_feature_sizes():
    torso = MinAtarTorso((6, 10, 10))
    assert torso.flat_features == 16 * 8 * 8 and torso(torch.rand(3, 6, 10, 10)).shape == (3, 128)
    mlp = MLPTorso((2, 3), hidden=(7, 9), activation="relu")
    assert mlp(torch.rand(4, 2, 3)).shape == (4, 9)


def test_preprocess_scales_uint8_only():
    obs = torch.tensor([0, 51, 255], dtype=torch.uint8)
    assert_close(preprocess_observations(obs, torch.float32), torch.tensor([0.0, 0.2, 1.0]))
    # Exact: a float input is only cast, and booleans become 0.0 and 1.0.
    vec = torch.tensor([-3.0, 7.5], dtype=torch.float64)
    assert torch.equal(preprocess_observations(vec, torch.float32), vec.float())
    flags = torch.tensor([True, False])
    assert torch.equal(preprocess_observations(flags, torch.float32), torch.tensor([1.0, 0.0]))


@pytest.mark.parametrize(("torso_cls", "side"), [(ImpalaDeepTorso, 10), (MinAtarTorso, 10),
                                                 (NatureTorso, 36)])
def test_hwc_layout_reads_the_same_image(torso_cls, side):
    torch.manual_seed(0)
    chw = torso_cls((3, side, side))
    hwc = torso_cls((side, side, 3), layout="HWC")
    hwc.load_state_dict(chw.state_dict())
    x = torch.rand(2, 3, side, side)
    assert_close(hwc(x.permute(0, 2, 3, 1)), chw(x), terms=summed_terms(chw))


def test_channels_last_shape_without_layout_is_refused():
    with pytest.raises(ValueError, match="layout"):
        make_torso("impala_deep", (84, 84, 4))
    make_torso("impala_deep", (84, 84, 4), layout="CHW")  # stated explicitly: taken as given


@pytest.mark.parametrize(
    ("name", "obs_shape", "kwargs", "match"),
    [
        ("resnet", (4, 84, 84), {}, "unknown torso 'resnet'.*impala_deep"),
        ("impala_deep", (84, 84), {}, "rank 3"),
        ("minatar", (4, 2, 10), {}, "3×3"),
        ("nature", (4, 35, 84), {}, "at least 36×36"),
        ("nature", (4, 84, 84), {"channels": 8}, "unknown torso_kwargs.*out_features"),
        ("minatar", (4, 10, 10), {"layout": "NHWC"}, "layout"),
        ("mlp", (5,), {"activation": "gelu"}, "activation"),
        ("mlp", (5,), {"channels": 3}, "unknown torso_kwargs.*hidden"),
    ],
)
def test_bad_torso_arguments(name, obs_shape, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_torso(name, obs_shape, **kwargs)


def reference_minatar(torso: MinAtarTorso, x_nchw: torch.Tensor) -> torch.Tensor:
    """The MinAtar torso from its definition with plain functional ops on contiguous NCHW."""
    h = torch.relu(torch.nn.functional.conv2d(x_nchw.contiguous(), torso.conv.weight,
                                              torso.conv.bias))
    return torch.relu(h.reshape(len(h), -1) @ torso.linear.weight.T + torso.linear.bias)


def minatar_case(seed: int = 1, batch: int = 6):
    """A channels-last MinAtar torso and a batch of 0/1 planes, as gdi.envs delivers them."""
    torch.manual_seed(seed)
    torso = MinAtarTorso((10, 10, 4), layout="HWC")
    return torso, (torch.rand(batch, 10, 10, 4) > 0.5).float()


def output_and_gradients(torso: MinAtarTorso, out: torch.Tensor):
    """``out`` and the gradients of Σ_j j·out_j for the conv weight and bias and the linear
    weight: every output unit weighs differently, so a unit's mistake cannot cancel."""
    weights = [torso.conv.weight, torso.conv.bias, torso.linear.weight]
    return out, torch.autograd.grad((out * torch.arange(128.0)).sum(), weights)


def assert_matches_minatar_definition(got, want, batch: int) -> None:
    """``got`` and ``want`` from output_and_gradients, compared by tests.tolerance's rule.

    Terms: the output sums the linear layer's 1024 features. The conv weight and bias
    gradients sum, over the batch × 8·8 positions, errors that each sum the 128 outputs'
    weights. The linear weight gradient sums over the batch products with features that
    each sum the conv's 4·3·3 window."""
    (out, grads), (expected_out, expected_grads) = got, want
    assert_close(out, expected_out, terms=1024)
    terms = {"conv.weight": batch * 64 * 128, "conv.bias": batch * 64 * 128,
             "linear.weight": batch * 36}
    for (name, count), grad, expected in zip(terms.items(), grads, expected_grads, strict=True):
        assert_close(grad, expected, terms=count, msg=name)


def test_minatar_torso_and_its_gradients_match_the_definition_in_any_layout():
    # The torso runs its convolution in channels-last memory and copies before the ReLU
    # (the learner's speed); output and parameter gradients must be the definition's. Other
    # CPUs' convolution and matmul kernels (oneDNN's AVX2 ones) round them differently.
    torso, x = minatar_case()
    got = output_and_gradients(torso, torso(x))
    want = output_and_gradients(torso, reference_minatar(torso, x.permute(0, 3, 1, 2)))
    assert_matches_minatar_definition(got, want, batch=len(x))


def weights(torso, kind):
    return [m.weight for m in torso.modules() if isinstance(m, kind)]


def relative_std_error(weight: torch.Tensor, std: float) -> float:
    return abs(weight.std().item() / std - 1)


@pytest.mark.parametrize(("name", "init", "expected"), [
    ("nature", "auto", "he"), ("nature", "pytorch", "pytorch"),
    ("impala_deep", "auto", "pytorch"), ("impala_deep", "he", "he"),
    ("minatar", "auto", "pytorch"), ("minatar", "he", "he"),
])
def test_each_initialization_draws_its_layers_at_its_scale(name, init, expected):
    # He: normal with std √(2 / fan_in), zero biases; PyTorch: uniform on ±1/√fan_in, std
    # 1/√(3·fan_in). Checked on the largest layer (the linear one, ≥ 100k weights: the sample
    # std is within ~0.3 % of its expectation), the biases on every layer.
    torch.manual_seed(0)
    shape = (4, 10, 10) if name == "minatar" else (4, 84, 84)
    torso = make_torso(name, shape, init=init)
    linear = max(weights(torso, torch.nn.Linear), key=torch.Tensor.numel)
    fan_in = linear.shape[1]
    std = (2 / fan_in) ** 0.5 if expected == "he" else (3 * fan_in) ** -0.5
    assert relative_std_error(linear, std) < 0.02
    biases = [m.bias for m in torso.modules() if isinstance(m, torch.nn.Conv2d | torch.nn.Linear)]
    assert all(torch.count_nonzero(b) == 0 for b in biases) == (expected == "he")


def test_he_zero_residual_starts_every_residual_block_as_the_identity():
    torch.manual_seed(0)
    torso = make_torso("impala_deep", (4, 84, 84), init="he_zero_residual")
    blocks = [m for m in torso.modules() if isinstance(m, ResidualBlock)]
    assert len(blocks) == 6
    x = torch.randn(3, 16, 21, 21)
    assert torch.equal(blocks[0](x), x)
    # The rest is He's: the first convolution of a block, 16 channels × 3 × 3 inputs (2,304
    # weights: the sample std within ~4 % of its expectation at three standard errors).
    assert relative_std_error(blocks[0].conv0.weight, (2 / (16 * 9)) ** 0.5) < 0.05


@pytest.mark.parametrize(("name", "init", "match"), [
    ("nature", "xavier", r"unknown torso_init 'xavier'; allowed: \('auto', 'pytorch', 'he'"),
    ("nature", "he_zero_residual", "torso 'nature' has none"),
])
def test_a_bad_initialization_is_refused(name, init, match):
    with pytest.raises(ValueError, match=match):
        make_torso(name, (4, 84, 84), init=init)
