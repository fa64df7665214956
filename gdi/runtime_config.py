"""The runtime's own layers of a run's configuration: its actors (``ActorsConfig``), its
sequences and replay (``ReplayConfig``), where and how it runs (``PlacementConfig``) and what
it writes (``OutputConfig``). Declared here, outside ``gdi.runtime``, because ``gdi.config``
composes them with the other layers' configs and the config never imports the runtime; each
part of the runtime is handed the layer it reads (``Config.layer``), never the whole Config.
Each checks its own fields (``check_*``); what spans layers (the replay's room for every
actor's sequences, the devices) is checked by ``gdi.config.Config``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gdi.checks import non_negative, positive
from gdi.scores import PAPER_EVAL_EPISODES


@dataclass(frozen=True)
class ActorsConfig:
    """The actors: how many, how many environments each steps, how often each pulls θ."""

    num_actors: int = 1
    """Actors, each with its environments and its own E: processes (local), Ray actors (ray);
    the inline backend steps them in turn."""
    envs_per_actor: int = 32
    """Environments each actor steps with one batched forward pass."""
    pull_every: int = 64
    """Actors pull parameters from the parameter server every this many steps."""

    def __post_init__(self) -> None:
        self.check_actors()

    def check_actors(self) -> None:
        """ValueError of one line for the first field out of its range."""
        positive(self, "num_actors", "envs_per_actor", "pull_every")


@dataclass(frozen=True)
class ReplayConfig:
    """Sequences as actors store them and the learner replays them (R2D2's burn-in and
    overlap, the data collector's sizes, how often each is trained on), γ, and how often the
    learner pushes θ."""

    burn_in: int = 40
    """Burn-in steps replayed from the stored recurrent state without gradient (R2D2)."""
    seq_len: int = 80
    """Learning steps per sequence."""
    seq_stride: int = 40
    """Steps between the starts of consecutive sequences (R2D2 overlaps sequences by half)."""
    batch_size: int = 64
    """Sequences per learner step."""
    replay: int = 2
    """Times each sequence is trained on before it is dropped ("we train each sample twice")."""
    replay_capacity: int = 1024
    """Most sequences held by the data collector; actors wait when it is full."""
    min_replay: int = 256
    """Sequences the collector holds before the learner samples from it."""
    discount: float = 0.997
    """γ."""
    time_limit_bootstrap: bool = True
    """Bootstrap an episode cut by a time limit from its final observation's value; False ends
    it like a termination (discount 0, nothing after)."""
    push_every: int = 25
    """The learner pushes parameters to the parameter server every this many steps."""

    def __post_init__(self) -> None:
        self.check_replay()

    def check_replay(self) -> None:
        """ValueError of one line for the first field out of its range or out of step with
        another of this layer's."""
        positive(self, "seq_len", "seq_stride", "batch_size", "replay", "replay_capacity",
                 "push_every")
        non_negative(self, "burn_in", "min_replay")
        if not 0.0 <= self.discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {self.discount!r}")
        if self.seq_stride > self.seq_len:
            raise ValueError(
                f"seq_stride ({self.seq_stride}) must be <= seq_len ({self.seq_len}), or some "
                "transitions would never be learned from"
            )
        if self.min_replay < self.batch_size:
            raise ValueError(
                f"min_replay ({self.min_replay}) must be >= batch_size ({self.batch_size})"
            )

    @property
    def sequence_length(self) -> int:
        """Transitions per stored sequence (burn-in + learning part)."""
        return self.burn_in + self.seq_len


@dataclass(frozen=True)
class PlacementConfig:
    """Where and how the run runs: devices, backends' settings, threads and fault budgets
    (a resume may change any of them: they never change what the run learns)."""

    learner_device: str = "cpu"
    """Device of the learner: cpu, cuda, cuda:N (one this machine's torch can use), or auto
    (cuda when the learner's machine has a GPU, else cpu)."""
    actor_device: str = "cpu"
    """Device of each actor's network (its inference, batched over its envs_per_actor
    environments): cpu, cuda, cuda:N or auto, as learner_device. Environments, E and the
    recorded steps stay on the CPU; evaluation acts on the CPU."""
    learner_compile: bool = False
    """torch.compile each family's torso and heads in the learner (the LSTM and the loss stay
    eager): the same math, compiled once per run (see docs/benchmarks.md, "Learner speed")."""
    ray_address: str = ""
    """Ray backend: the cluster to join (auto, or HOST:PORT of `ray start --head`); empty
    starts a Ray instance on this machine for the run."""
    ray_cpus_per_actor: float = 1.0
    """Ray backend: CPUs each actor reserves (Ray places an actor only where they are free)."""
    ray_placement: Literal["spread", "pack"] = "spread"
    """Ray backend: spread actors over the nodes (SPREAD) or fill one node first (PACK)."""
    actor_failures_max: int = 3
    """Actor failures (a killed process, an exception) tolerated within actor_failure_window_s:
    each failed actor is restarted with its E; one more stops the run with a checkpoint."""
    actor_failure_window_s: float = 600.0
    """Seconds over which actor failures are counted against actor_failures_max."""
    actor_timeout_s: float = 300.0
    """Seconds an actor may take to send a window it was asked for, once started, before the
    learner names it as hung (an environment whose step never returns, a stopped process) and
    restarts it, a failure counted against actor_failures_max."""
    skipped_updates_max: int = 100
    """Consecutive learner updates skipped for a non-finite loss or gradient after which the
    run stops with a checkpoint and an error (parameters no longer change)."""
    torch_threads: int = 0
    """CPU threads of the learner process; 0 = the cores left over by actor processes (at least
    1). More threads than free cores makes PyTorch spin and run many times slower."""

    def __post_init__(self) -> None:
        self.check_placement()

    def check_placement(self) -> None:
        """ValueError of one line for the first field out of its range."""
        positive(self, "ray_cpus_per_actor", "actor_failure_window_s", "actor_timeout_s",
                 "skipped_updates_max")
        non_negative(self, "torch_threads", "actor_failures_max")
        if self.ray_placement not in ("spread", "pack"):
            raise ValueError(f"ray_placement must be spread or pack, got {self.ray_placement!r}")


@dataclass(frozen=True)
class OutputConfig:
    """What the run writes and when: metrics rows, checkpoints, evaluations, the observation
    reservoir, Weights & Biases."""

    log_every: int = 50_000
    """Frames between rows of metrics.jsonl / TensorBoard (frames, not seconds, so that a
    seeded inline run writes the same rows every time); a budget shorter than 10 × log_every
    is logged every frames / 10 instead, so that a short run has a curve of about 10 rows."""
    wandb_project: str = ""
    """Weights & Biases project that also receives the run's metrics rows and config
    (pip install 'gdi-rl[wandb]'); empty: no W&B. W&B's own settings apply: WANDB_ENTITY,
    WANDB_MODE=offline (then `wandb sync RUN/wandb/offline-run-*`). A resumed run continues
    the same W&B run."""
    checkpoint_every_s: float = 600.0
    """Seconds between checkpoints (also written at the end and on SIGINT/SIGTERM/SIGHUP)."""
    checkpoint_every_frames: int = 1_000_000
    """Frames between checkpoints, whichever of this and checkpoint_every_s comes first: a
    crash (kill -9, out of memory, power cut) loses at most this many frames of training."""
    eval_every: int = 250_000
    """Frames between periodic evaluations (0 disables them)."""
    eval_episodes: int = PAPER_EVAL_EPISODES
    """Episodes per evaluation, one environment each, with their own seeds (paper: 32)."""
    keep_checkpoints: int = 3
    """Most recent checkpoints kept on disk."""
    observation_reservoir: int = 0
    """Observations kept per training stage for `gdi analyze richness` (a uniform sample of the
    visited states, written to observations.npz; paper App. "t-SNE"); 0 = off."""
    reservoir_stages: int = 3
    """Training stages of the observation reservoir (the paper's early, middle, later: 3)."""

    def __post_init__(self) -> None:
        self.check_output()

    def check_output(self) -> None:
        """ValueError of one line for the first field out of its range."""
        positive(self, "log_every", "checkpoint_every_s", "eval_episodes",
                 "checkpoint_every_frames", "keep_checkpoints", "reservoir_stages")
        non_negative(self, "eval_every", "observation_reservoir")
