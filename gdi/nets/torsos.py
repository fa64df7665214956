"""Torsos: observation → embedding ``e`` of one parameter family.

Paper: App. "Hyperparameters", row "Backbone: IMPALA, deep" — the deep residual network of
IMPALA (Espeholt et al. 2018, Fig. 3 right). Smaller torsos make the same agent runnable where
IMPALA's is oversized: ``nature`` (DQN's conv net, Mnih et al. 2015: Atari frames on a small
CPU), ``minatar`` (the conv net of the MinAtar baselines, Young & Tian 2019) and ``mlp`` (vector
observations).

Every torso maps a batch ``[N, *obs_shape]`` of *preprocessed* float observations (see
:func:`preprocess_observations`) to ``[N, output_size]``. Image torsos read observations
channels-first ``[C, H, W]`` by default, which is what ``gdi.envs`` delivers for ALE (stacked
frames first) and MinAtar (channels moved first); ``layout="HWC"`` reads channels-last images.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from gdi.registry import Registry

#: Torso name → class, filled by ``@TORSOS.register`` (the class's ``name``) where each is
#: defined; ``build(..., torso=name, torso_kwargs=...)`` passes the kwargs through. What a torso
#: can do is its class's to say: ``kwargs`` (the torso_kwargs it takes), ``auto_init`` (what
#: ``torso_init=auto`` gives it) and ``residual`` (whether it has residual branches for
#: ``he_zero_residual`` to zero).
TORSOS = Registry("torso")

__all__ = [
    "INITIALIZATIONS",
    "TORSOS",
    "ImpalaDeepTorso",
    "MLPTorso",
    "MinAtarTorso",
    "NatureTorso",
    "check_init",
    "he_init",
    "he_zero_residual_init",
    "make_torso",
    "preprocess_observations",
]

LAYOUTS = ("CHW", "HWC")


def preprocess_observations(
    obs: torch.Tensor, dtype: torch.dtype, scale: float | None = None
) -> torch.Tensor:
    """Observations as network input: cast to ``dtype`` and multiplied by ``scale``.

    ``scale=None`` takes ``uint8`` observations to be 0–255 pixels (ALE frames: × 1/255) and
    anything else as-is. Environments whose integer observations are not pixels (MinAtar's 0/1
    planes) must pass their own scale (1.0): at 1/255 their inputs would be ~0.004.
    """
    if scale is None:
        scale = 1.0 / 255.0 if obs.dtype == torch.uint8 else 1.0
    x = obs.to(dtype)
    return x.mul_(scale) if scale != 1.0 else x


def _check_image_shape(torso: str, obs_shape: tuple[int, ...], layout: str | None) -> tuple[
    int, int, int, bool
]:
    """(C, H, W, channels_last) of an image observation shape, or a ValueError saying why not."""
    if len(obs_shape) != 3:
        raise ValueError(
            f"torso {torso!r} needs image observations of rank 3 ([C, H, W] or, with "
            f"layout='HWC', [H, W, C]); got obs_shape {obs_shape}"
        )
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS} (or None for 'CHW'), got {layout!r}")
    if layout == "HWC":
        height, width, channels = obs_shape
    else:
        channels, height, width = obs_shape
        # An unstated layout whose last axis is the smallest is almost surely channels-last
        # (e.g. (84, 84, 4)): read as CHW it would run, silently, on an 84-channel 84×4 image.
        if layout is None and width < channels and width < height:
            raise ValueError(
                f"obs_shape {obs_shape} looks channels-last (its last axis is the smallest), but "
                f"torso {torso!r} reads [C, H, W]; pass torso_kwargs={{'layout': 'HWC'}} for "
                f"channels-last images, or {{'layout': 'CHW'}} if {channels} channels is right"
            )
    return channels, height, width, layout == "HWC"


def _to_nchw(x: torch.Tensor, channels_last: bool) -> torch.Tensor:
    """``[N, C, H, W]`` logical layout in channels-last memory: the fast path of oneDNN (CPU)
    and cuDNN convolutions (docs/benchmarks.md, "Networks")."""
    if channels_last:
        x = x.permute(0, 3, 1, 2)
    return x.contiguous(memory_format=torch.channels_last)


def _relu_flat(x: torch.Tensor) -> torch.Tensor:
    """ReLU, then flatten ``[N, C, H, W]`` in C, H, W order for the linear layer. The
    convolutions leave channels-last memory, which flatten must copy anyway; copying *before*
    the ReLU keeps the ReLU's backward on one layout (its gradient arrives NCHW from flatten):
    on a mixed layout it is one of the learner's largest kernels (docs/benchmarks.md, "Levers
    measured")."""
    return torch.relu(x.contiguous()).flatten(1)


def he_init(module: nn.Module) -> None:
    """He initialization (He et al. 2015: normal, std √(2 / fan_in), zero biases) of every
    convolution and linear layer of ``module``: each ReLU layer keeps its input's scale.

    PyTorch's default (uniform, std 1/√(3·fan_in)) shrinks the signal ~2.4× per ReLU layer.
    Through DQN's four layers an Atari frame (pixels / 255, mean ~0.16) left an embedding of
    mean |x| ~0.007, beside the LSTM's one-hot previous action of 1: a GDI-I³ run on Breakout
    at the ale-cpu scale learned a policy that ignored the screen (one action in every state,
    no learning in 3M frames). The paper does not give its initialization
    (docs/paper-choices.md, "initialization of the ALE torsos")."""
    for layer in module.modules():
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)


def he_zero_residual_init(module: nn.Module) -> None:
    """He initialization, then each residual block's last convolution zero, so that every
    block starts as the identity (Goyal et al. 2017's zero-γ, Fixup's zero branch). He alone
    does not fit a residual torso: each block adds its branch to its input, and through
    ``impala_deep``'s six blocks a Breakout frame's embedding grows to mean |x| ~5.6
    (``benchmarks/torso_signal.py``)."""
    he_init(module)
    blocks = [block for block in module.modules() if isinstance(block, ResidualBlock)]
    if not blocks:
        raise ValueError(f"he_zero_residual needs a torso with residual blocks, got "
                         f"{type(module).__name__}")
    for block in blocks:
        nn.init.zeros_(block.conv1.weight)
        nn.init.zeros_(block.conv1.bias)


class ResidualBlock(nn.Module):
    """IMPALA residual block: x + conv(relu(conv(relu(x)))), 3×3 convolutions, same channels."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv1(torch.relu(self.conv0(torch.relu(x))))


@TORSOS.register
class ImpalaDeepTorso(nn.Module):
    """IMPALA's deep ResNet (Espeholt et al. 2018, Fig. 3 right), the paper's backbone.

    Per stage: conv 3×3 (stride 1, padding 1) → max-pool 3×3 stride 2 (padding 1) →
    ``num_blocks`` residual blocks; stages of ``channels`` = (16, 32, 32); then ReLU, flatten,
    linear to ``out_features`` = 256, ReLU. An 84×84 input leaves 32 × 11 × 11 = 3872 features
    before the linear layer (84 → 42 → 21 → 11).
    """

    name = "impala_deep"
    kwargs = ("channels", "num_blocks", "out_features", "layout")
    auto_init = "pytorch"
    residual = True

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        *,
        channels: Sequence[int] = (16, 32, 32),
        num_blocks: int = 2,
        out_features: int = 256,
        layout: str | None = None,
    ):
        super().__init__()
        in_channels, height, width, self.channels_last = _check_image_shape(
            "impala_deep", obs_shape, layout
        )
        channels = tuple(int(c) for c in channels)
        if not channels or min(channels) < 1 or num_blocks < 0 or out_features < 1:
            raise ValueError(
                f"impala_deep needs channels >= 1 per stage, num_blocks >= 0, out_features >= 1;"
                f" got channels={channels}, num_blocks={num_blocks}, out_features={out_features}"
            )
        layers: list[nn.Module] = []
        for out_channels in channels:
            layers.append(nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1))
            layers.append(nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
            layers.extend(ResidualBlock(out_channels) for _ in range(num_blocks))
            in_channels = out_channels
            height, width = (height + 1) // 2, (width + 1) // 2  # pool: ⌊(n + 2 − 3)/2⌋ + 1
        self.stages = nn.Sequential(*layers)
        self.flat_features = in_channels * height * width
        self.linear = nn.Linear(self.flat_features, out_features)
        self.output_size = out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, *obs_shape]`` float → ``[N, out_features]``."""
        x = self.stages(_to_nchw(x, self.channels_last))
        return torch.relu(self.linear(_relu_flat(x)))


@TORSOS.register
class NatureTorso(nn.Module):
    """DQN's torso (Mnih et al. 2015, "Methods: model architecture"): conv 8×8 stride 4 with 32
    channels → ReLU → conv 4×4 stride 2 with 64 → ReLU → conv 3×3 stride 1 with 64 → ReLU →
    flatten → linear ``out_features`` = 512 → ReLU. An 84×84 input leaves 64 × 7 × 7 = 3136
    features (84 → 20 → 9 → 7). 9.3 M multiply-adds per 84×84 frame, about a sixth of
    ``impala_deep``'s 54 M."""

    name = "nature"
    kwargs = ("out_features", "layout")
    # With PyTorch's default a GDI-I³ run at the ale-cpu scale ignored the screen (he_init).
    auto_init = "he"
    residual = False

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        *,
        out_features: int = 512,
        layout: str | None = None,
    ):
        super().__init__()
        in_channels, height, width, self.channels_last = _check_image_shape(
            "nature", obs_shape, layout
        )
        if out_features < 1:
            raise ValueError(f"nature needs out_features >= 1, got {out_features}")
        for kernel, stride in ((8, 4), (4, 2), (3, 1)):
            if height < kernel or width < kernel:
                raise ValueError(f"nature needs images of at least 36×36 (its convolutions "
                                 f"leave at least 1×1), got obs_shape {obs_shape}")
            height, width = (height - kernel) // stride + 1, (width - kernel) // stride + 1
        self.convs = nn.Sequential(
            nn.Conv2d(in_channels, 32, kernel_size=8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1),
        )
        self.flat_features = 64 * height * width
        self.linear = nn.Linear(self.flat_features, out_features)
        self.output_size = out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, *obs_shape]`` float → ``[N, out_features]``."""
        x = self.convs(_to_nchw(x, self.channels_last))
        return torch.relu(self.linear(_relu_flat(x)))


@TORSOS.register
class MinAtarTorso(nn.Module):
    """The MinAtar baselines' torso (Young & Tian 2019): conv 3×3 (stride 1, no padding) with
    ``channels`` = 16 → ReLU → flatten → linear ``out_features`` = 128 → ReLU. A 10×10 input
    leaves 16 × 8 × 8 = 1024 features."""

    name = "minatar"
    kwargs = ("channels", "out_features", "layout")
    auto_init = "pytorch"
    residual = False

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        *,
        channels: int = 16,
        out_features: int = 128,
        layout: str | None = None,
    ):
        super().__init__()
        in_channels, height, width, self.channels_last = _check_image_shape(
            "minatar", obs_shape, layout
        )
        if height < 3 or width < 3:
            raise ValueError(f"minatar needs images of at least 3×3, got {height}×{width}")
        if channels < 1 or out_features < 1:
            raise ValueError(
                f"minatar needs channels >= 1 and out_features >= 1, got {channels}, "
                f"{out_features}"
            )
        self.conv = nn.Conv2d(in_channels, channels, kernel_size=3)
        self.flat_features = channels * (height - 2) * (width - 2)
        self.linear = nn.Linear(self.flat_features, out_features)
        self.output_size = out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, *obs_shape]`` float → ``[N, out_features]``."""
        x = self.conv(_to_nchw(x, self.channels_last))
        return torch.relu(self.linear(_relu_flat(x)))


_ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


@TORSOS.register
class MLPTorso(nn.Module):
    """Vector observations (any rank, flattened): ``hidden`` = (64, 64) linear layers, each
    followed by ``activation`` = tanh (the usual choice for vector control tasks, and bounded,
    which keeps the forward-dynamics target on a fixed scale)."""

    name = "mlp"
    kwargs = ("hidden", "activation")
    auto_init = "pytorch"
    residual = False

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        *,
        hidden: Sequence[int] = (64, 64),
        activation: str = "tanh",
    ):
        super().__init__()
        if len(obs_shape) < 1:
            raise ValueError(f"mlp needs observations of rank >= 1, got obs_shape {obs_shape}")
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"mlp activation must be one of {tuple(_ACTIVATIONS)}, got {activation!r}"
            )
        hidden = tuple(int(h) for h in hidden)
        if not hidden or min(hidden) < 1:
            raise ValueError(f"mlp needs at least one hidden layer, all >= 1; got {hidden}")
        in_features = 1
        for size in obs_shape:
            in_features *= size
        layers: list[nn.Module] = []
        for size in hidden:
            layers += [nn.Linear(in_features, size), _ACTIVATIONS[activation]()]
            in_features = size
        self.layers = nn.Sequential(*layers)
        self.output_size = hidden[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, *obs_shape]`` float → ``[N, hidden[-1]]``."""
        return self.layers(x.flatten(1))


#: Initializations of a torso's layers by name. ``pytorch``: each layer as PyTorch builds it
#: (uniform, std 1/√(3·fan_in)).
INITIALIZATIONS = {
    "pytorch": lambda module: None,
    "he": he_init,
    "he_zero_residual": he_zero_residual_init,
}


def check_init(name: str, init: str) -> str:
    """The initialization ``init`` gives torso ``name`` (``auto`` resolved); ValueError naming
    what is allowed when there is none."""
    allowed = ("auto", *INITIALIZATIONS)
    if init not in allowed:
        raise ValueError(f"unknown torso_init {init!r}; allowed: {allowed}")
    torso = TORSOS.lookup(name)
    if init == "he_zero_residual" and not torso.residual:
        residual = tuple(other for other, cls in TORSOS.items() if cls.residual)
        raise ValueError(f"torso_init 'he_zero_residual' zeroes residual branches; torso {name!r} "
                         f"has none (residual torsos: {residual})")
    # What auto gives each torso is its class's auto_init: He for DQN's, PyTorch's default for
    # the others, with which the MinAtar results were measured. The paper gives no
    # initialization (docs/paper-choices.md, "initialization of the ALE torsos").
    return torso.auto_init if init == "auto" else init


def make_torso(name: str, obs_shape: tuple[int, ...], init: str = "auto", **kwargs) -> nn.Module:
    """Torso ``name`` ∈ :data:`TORSOS` for observations of ``obs_shape``, its layers initialized
    by ``init`` ∈ :data:`INITIALIZATIONS` (``auto``: the class's ``auto_init``); ValueError
    otherwise."""
    cls = TORSOS.lookup(name)
    init = check_init(name, init)
    unknown = sorted(set(kwargs) - set(cls.kwargs))
    if unknown:
        raise ValueError(
            f"torso {name!r} got unknown torso_kwargs {unknown}; allowed: {cls.kwargs}"
        )
    torso = cls(obs_shape, **kwargs)
    INITIALIZATIONS[init](torso)
    return torso
