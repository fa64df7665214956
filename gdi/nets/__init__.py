"""gdi.nets: the parameters Θ of GDI — torsos, the LSTM core, A/V heads and the auxiliary
dynamics heads, for one parameter family (GDI-I) or two (GDI-H).

Paper: App. "Algorithm Pseudocode" (Eqs. "i3/h3 casa equ") and App. "Hyperparameters"
(IMPALA deep backbone, LSTM 256, burn-in 40 + sequence 80 with stored state, auxiliary forward
and inverse dynamics). The runtime calls :func:`build` and the :class:`GDINetwork` methods
``initial_state``, ``forward`` and ``dynamics_predictions``.
"""

from gdi.nets.config import NetworkConfig
from gdi.nets.core import CORES, FeedForwardCore, LSTMCore
from gdi.nets.dynamics import ForwardDynamicsHead, InverseDynamicsHead
from gdi.nets.network import POLICY_HEADS, FamilyNetwork, GDINetwork, NetOutputs, build
from gdi.nets.normalization import (
    INPUT_NORMS,
    VALUE_NORMS,
    RunningInputNorm,
    RunningValueNorm,
    merge_moments,
)
from gdi.nets.torsos import (
    TORSOS,
    ImpalaDeepTorso,
    MinAtarTorso,
    MLPTorso,
    NatureTorso,
    make_torso,
    preprocess_observations,
)

__all__ = [
    "CORES",
    "INPUT_NORMS",
    "POLICY_HEADS",
    "TORSOS",
    "VALUE_NORMS",
    "FamilyNetwork",
    "FeedForwardCore",
    "ForwardDynamicsHead",
    "GDINetwork",
    "ImpalaDeepTorso",
    "InverseDynamicsHead",
    "LSTMCore",
    "MLPTorso",
    "MinAtarTorso",
    "NatureTorso",
    "NetOutputs",
    "NetworkConfig",
    "RunningInputNorm",
    "RunningValueNorm",
    "build",
    "make_torso",
    "merge_moments",
    "preprocess_observations",
]
