"""The network's own configuration (``NetworkConfig``): what shapes Θ, declared and checked
here, where the network is built. The run's ``gdi.config.Config`` is composed of it (and of the
other layers' configs), so ``config.json`` and ``--set`` name these fields as they always did.
Defaults are the paper's (App. "Hyperparameters": IMPALA deep torso, LSTM 256, auxiliary
dynamics tasks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gdi.checks import literal_choice, non_negative, one_of, positive
from gdi.nets.core import CORES
from gdi.nets.network import POLICY_HEADS
from gdi.nets.normalization import INPUT_NORMS, VALUE_NORMS
from gdi.nets.torsos import INITIALIZATIONS, TORSOS, check_init


@dataclass(frozen=True)
class NetworkConfig:
    """The fields that shape the network: its torso and the torso's initialization, its core, its
    heads and how many parameter families it holds. Checked on creation (``check_network``);
    :meth:`build_options` gives :func:`gdi.nets.build` its keyword arguments."""

    torso: str = "impala_deep"
    """Observation encoder: impala_deep (the paper's), nature (DQN's, for Atari on a small CPU),
    minatar, mlp."""
    torso_init: str = "auto"
    """Initialization of the torso's layers: auto (he for nature, pytorch for the others), he
    (normal, std √(2/fan_in), zero biases), pytorch (PyTorch's default), he_zero_residual (he
    with each residual block starting as the identity; impala_deep). The paper gives none."""
    lstm_units: int = 256
    """Units of the core (the LSTM's, or the feedforward layer's)."""
    core: str = "lstm"
    """The core between torso and heads, a core of gdi.nets.CORES by its name: lstm (the
    paper's, with burn-in from stored state) or feedforward (one ReLU layer without memory, as
    Sample Factory's Atari APPO; not in the paper: the frame stack is the only memory)."""
    head_hidden: int = 0
    """Hidden ReLU units of the A and V heads (and of L, policy_head=separate; R2D2's dueling
    heads: 512); 0: linear heads."""
    families: int = 1
    """Parameter families: 1 for GDI-I (θ₁ = θ₂), 2 for GDI-H (θ₁ ≠ θ₂), K for LASER-like;
    the policy space says which it acts with."""
    aux_tasks: bool = True
    """Auxiliary forward and inverse dynamics tasks (paper table: yes)."""
    policy_head: Literal[POLICY_HEADS] = "advantage"
    """What π_λ's logits are: advantage (the paper: A itself, so π_λ = softmax(A/τ) and the
    policy gradient and the Q loss both train A) or separate (a policy head L beside A and V,
    as ACER's beside its Q head: π_λ = softmax(L/τ), the policy gradient trains L, the Q loss
    A; not in the paper)."""
    policy_init_scale: float = 1.0
    """A factor on the policy head L's initial output layer (policy_head=separate): 1 is
    PyTorch's default initialization; 0.01 starts L's logits near zero, so π_λ = softmax(L/τ)
    starts near uniform at any τ of E's box, as PPO's policy layer starts. Not in the paper."""
    input_norm: Literal[INPUT_NORMS] = "none"
    """How observations enter the torso after their scale: none (the paper: pixels × 1/255) or
    running (each input element standardized by the running mean and variance of the
    observations the learner has trained on, every 4th step of each batch, and clipped to ±5,
    as Sample Factory's normalize_input; not in the paper). The statistics are saved with the
    parameters."""
    value_norm: Literal[VALUE_NORMS] = "none"
    """How each family's V and A heads are read: none (the paper: in the returns' units) or
    running (V = σ·v̂ + μ and A = σ·Â with μ, σ the running mean and deviation of the family's
    V-trace targets, and the V and Q losses' errors divided by σ, so the heads regress
    standardized targets, as Sample Factory's normalize_returns; not in the paper). The
    statistics are saved with the parameters."""

    def __post_init__(self) -> None:
        self.check_network()

    def check_network(self) -> None:
        """ValueError of one line for the first field that is out of its range or names no
        registered part (a torso, an initialization that torso takes, a core, a policy head)."""
        positive(self, "lstm_units")
        non_negative(self, "head_hidden")
        positive(self, "policy_init_scale")
        families = self.families
        if isinstance(families, bool) or not isinstance(families, int) or families < 1:
            raise ValueError(
                f"families must be an integer >= 1 (1: GDI-I, 2: GDI-H, K: LASER-like), got "
                f"{families!r}"
            )
        literal_choice(self, "policy_head")
        literal_choice(self, "input_norm")
        literal_choice(self, "value_norm")
        one_of("torso", self.torso, list(TORSOS))
        one_of("core", self.core, list(CORES))
        one_of("torso_init", self.torso_init, ["auto", *INITIALIZATIONS])
        check_init(self.torso, self.torso_init)

    def build_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`gdi.nets.build` these fields set."""
        return {"torso": self.torso, "torso_init": self.torso_init,
                "lstm_units": self.lstm_units, "core": self.core,
                "head_hidden": self.head_hidden, "families": self.families,
                "aux": self.aux_tasks, "policy_head": self.policy_head,
                "input_norm": self.input_norm, "value_norm": self.value_norm,
                "policy_init_scale": self.policy_init_scale}
