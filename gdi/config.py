"""One frozen, validated configuration for a GDI run, composed of the layers' own configs.

Each layer declares, documents and checks its fields where it is (``gdi.nets.config``,
``gdi.learning.loss``, ``gdi.meta.config``, ``gdi.learning.optimizer``; what to run in
``gdi.run_spec``); ``Config`` inherits them and adds the runtime's, so a run's fields are one
flat set. Every field has a docstring: these are what ``gdi config`` and the configuration
page show, and what ``config.json`` records. Presets (``gdi.presets``) fill the fields;
``--set field=value`` overrides any of them. Defaults are the paper's Atari values (App.
"Hyperparameters", Tab. "Hyperparameters for Atari experiments"); presets scale them down for
MinAtar and Gymnasium ids.
"""

from __future__ import annotations

import contextvars
import dataclasses
import itertools
import json
import math
import typing
from dataclasses import dataclass
from typing import Any, Literal

from gdi import backend_registry
from gdi.checks import non_negative, positive
from gdi.learning.loss import LossConfig
from gdi.learning.optimizer import OptimizerConfig
from gdi.meta.config import MetaConfig
from gdi.nets.config import NetworkConfig
from gdi.policy_space import POLICY_SPACES
from gdi.run_spec import RunSpec
from gdi.scores import PAPER_EVAL_EPISODES

# Whether building a Config checks that this machine's torch can use learner_device. Off while
# a saved config.json is read back (Config.from_dict): a run trained on a GPU machine must stay
# readable (reports, evaluation) on a laptop.
_CHECK_DEVICE: contextvars.ContextVar[bool] = contextvars.ContextVar("check_device", default=True)


#: Fields that only name where a config came from and that ``Config.from_dict`` derives when a
#: config saved before they existed lacks them (``scale``: the environment kind's; ``learning``:
#: the paper's, the only one there was, its fields as saved).
LABELS_DERIVED_ON_LOAD = ("scale", "learning")


def derived_labels(saved: typing.Mapping[str, Any]) -> dict[str, str]:
    """The ``LABELS_DERIVED_ON_LOAD`` a saved config's fields (``saved``) lack, derived: a run
    saved before scales had names took its environment kind's scale, and one saved before T's
    readings had names the paper's learning, the only one there was (a run that changed its
    fields with --set keeps them as saved, the label as resolved)."""
    derived = {}
    if "scale" not in saved and ":" in str(saved.get("env", "")):
        derived["scale"] = str(saved["env"]).split(":", 1)[0].lower()
    if "learning" not in saved:
        derived["learning"] = RunSpec.learning
    return derived


#: Config fields added after run folders were first written, each with the value that gives
#: the behaviour runs had before the field existed (checkpoint_every_frames: today's default;
#: before it, only checkpoint_every_s bounded the work a crash loses). Only these are filled in
#: when a config.json lacks them (they say where and how a run runs, never what it learns, but
#: for torso_init, whose fill-in is what runs before it did); any other missing field is an
#: error. Read by ``gdi.runtime.run_folder.run_dir.read_config`` and, to say what an older run
#: ran, by ``gdi.presets.setting.run_setting``.
FIELDS_ADDED_LATER = {
    "ray_address": "",
    "ray_cpus_per_actor": 1.0,
    "ray_placement": "spread",
    "actor_failures_max": 3,
    "actor_failure_window_s": 600.0,
    "actor_timeout_s": 300.0,  # before it, a hung actor was waited for forever
    "skipped_updates_max": 100,
    "checkpoint_every_frames": 1_000_000,
    "learner_compile": False,
    "actor_device": "cpu",  # before it, actors always acted on the CPU
    # What runs had before the field: he for nature (since He initialization came in, before
    # any recorded nature run but the one in benchmarks/results/ale-cpu/breakout-default-init-0,
    # whose config.json says pytorch), PyTorch's default for the others.
    "torso_init": "auto",
    "q_loss_trains_value": True,  # before it, L_Q always reached V through Q = Ā + V
    "pg_advantage_norm": "none",  # before it, ρ_s δ weighed log π as V-trace gave it
    "pg_clip": 0.0,  # before it, the V-trace policy gradient, no clipped surrogate
    "wandb_project": "",  # before it, no run went to Weights & Biases
    "protocol": "paper",  # before it, the paper's ALE settings (env_overrides on top)
    "policy_head": "advantage",  # before it, π_λ always read A (the paper)
    "core": "lstm",  # before it, every network had the paper's LSTM
    "clip_pg_rho": None,  # before it, the policy gradient's ρ was truncated at ρ̄ (the paper)
    "trace_lambda": 1.0,  # before it, traces were cut by c̄ only (the paper)
    "input_norm": "none",  # before it, observations entered the torso as scaled (the paper)
    "value_norm": "none",  # before it, the A and V heads spoke in the returns' units (the paper)
    "entropy_floor": 0.0,  # before it, no floor on π_λ's entropy
    "entropy_floor_scale": 1.0,  # (its weight, read only with a floor)
}

#: Labels that a command-line option resolves into fields (``--scale``, ``--learning``): a
#: ``--set`` of one would rename the config without changing what it stands for.
NAMED_BY_OPTION = ("scale", "learning")

#: Fields that say where and how a run runs (its machine, backend, threads, fault budgets,
#: checkpoints, tracking), never what it learns: a resume may change them
#: (``gdi.runtime.lifecycle.RESUMABLE_FIELDS``) and runs that differ only in them are seeds of one
#: agent (``gdi.presets.setting.NOT_WHAT_IT_LEARNS``, read by ``gdi report``).
PLACEMENT_FIELDS = (
    "backend", "ray_address", "ray_cpus_per_actor", "ray_placement", "torch_threads",
    "learner_compile", "learner_device", "actor_device", "actor_failures_max",
    "actor_failure_window_s", "actor_timeout_s", "checkpoint_every_s", "wandb_project",
    "checkpoint_every_frames", "keep_checkpoints",
)


@dataclass(frozen=True)
class Config(OptimizerConfig, MetaConfig, LossConfig, NetworkConfig, RunSpec):
    """The run's configuration, composed of the layers' own: what to run (:class:`RunSpec`:
    the environment's spec, protocol and overrides among it), the network's
    (:class:`gdi.nets.config.NetworkConfig`), the loss's (:class:`gdi.learning.loss.LossConfig`,
    the policy space Λ among it), E's (:class:`gdi.meta.config.MetaConfig`) and the
    optimizer's (:class:`gdi.learning.optimizer.OptimizerConfig`), each declared, documented
    and checked by the layer that uses it, plus the fields below, which the runtime reads
    (declared here: the config never imports the runtime). Composed by
    inheritance, so its fields stay one flat set: ``config.json``, ``--set field=value`` and
    the configuration page name them as before, and a Config is each layer's config (the
    learner hands it to the loss as its LossConfig). What no single layer can check (do the
    parts fit: λ's dimension, families and reward shapes, the replay's sizes, the devices) is
    checked here, when the Config is built."""

    # --- the runtime: actors ---------------------------------------------------------------
    num_actors: int = 1
    """Actors, each with its environments and its own E: processes (local), Ray actors (ray);
    the inline backend steps them in turn."""
    envs_per_actor: int = 32
    """Environments each actor steps with one batched forward pass."""
    pull_every: int = 64
    """Actors pull parameters from the parameter server every this many steps."""

    # --- the runtime: sequences, replay and γ --------------------------------------------
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

    # --- the runtime: devices, backends and faults -------------------------------------------
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

    # --- what the run writes ----------------------------------------------------------------
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
        # Dict-valued fields are kept in their JSON form (tuples as lists), so that a config
        # read back from config.json compares equal to the one that wrote it.
        for name in ("env_overrides", "meta_kwargs"):
            object.__setattr__(self, name, _json_form(getattr(self, name)))
        object.__setattr__(self, "reward_shapes", tuple(self.reward_shapes))
        _validate(self)
        # Each layer checks its own fields (a Config is each layer's config), then the parts'
        # fit is checked across them.
        self.check_network()
        _validate_shapes_per_family(self)
        self.check_loss()
        controller = self.check_meta(self.seed)  # built once, read again by the fit check
        self.check_optimizer()
        _validate_parts(self, controller)

    # --- conversions ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Config:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown config field(s) {unknown}; see `gdi train --help`")
        values = {**data, **derived_labels(data)}
        if "reward_shapes" in values:
            values["reward_shapes"] = tuple(values["reward_shapes"])
        token = _CHECK_DEVICE.set(False)  # a saved run stays readable on any machine
        try:
            return cls(**values)
        finally:
            _CHECK_DEVICE.reset(token)

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)

    @property
    def sequence_length(self) -> int:
        """Transitions per stored sequence (burn-in + learning part)."""
        return self.burn_in + self.seq_len


def _json_form(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_form(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_form(v) for v in value]
    return value


def _validate(cfg: Config) -> None:
    """The runtime's own fields (those declared on Config, not on a layer's config)."""
    positive(
        cfg, "frames", "num_actors", "envs_per_actor", "pull_every", "seq_len",
        "seq_stride", "batch_size", "replay", "replay_capacity", "push_every", "log_every",
        "checkpoint_every_s", "eval_episodes", "checkpoint_every_frames", "keep_checkpoints",
        "reservoir_stages", "ray_cpus_per_actor", "actor_failure_window_s", "actor_timeout_s",
        "skipped_updates_max",
    )
    non_negative(
        cfg, "burn_in", "eval_every", "torch_threads", "seed", "min_replay",
        "observation_reservoir", "actor_failures_max",
    )
    # The registry itself, not BACKENDS: a backend registered since this module was imported
    # (a test's) is allowed as well.
    if cfg.backend not in backend_registry.BACKENDS:
        raise ValueError(
            f"backend must be one of {', '.join(backend_registry.BACKENDS)}, got {cfg.backend!r}")
    if cfg.ray_placement not in ("spread", "pack"):
        raise ValueError(f"ray_placement must be spread or pack, got {cfg.ray_placement!r}")
    if cfg.backend == "ray" and cfg.actor_device != "cpu":
        raise ValueError(
            f"actor_device={cfg.actor_device!r} needs the local or inline backend: Ray actors "
            "reserve CPUs only (ray_cpus_per_actor) and Ray hides the GPUs from them; allowed "
            "with backend ray: cpu")
    if not 0.0 <= cfg.discount <= 1.0:
        raise ValueError(f"discount must be in [0, 1], got {cfg.discount!r}")
    if cfg.seq_stride > cfg.seq_len:
        raise ValueError(
            f"seq_stride ({cfg.seq_stride}) must be <= seq_len ({cfg.seq_len}), or some "
            "transitions would never be learned from"
        )
    if cfg.min_replay < cfg.batch_size:
        raise ValueError(
            f"min_replay ({cfg.min_replay}) must be >= batch_size ({cfg.batch_size})"
        )
    if cfg.replay_capacity < cfg.min_replay + cfg.num_actors * cfg.envs_per_actor:
        raise ValueError(
            f"replay_capacity ({cfg.replay_capacity}) must hold min_replay ({cfg.min_replay}) "
            f"plus one emission of every actor ({cfg.num_actors} × {cfg.envs_per_actor} sequences)"
        )


def _validate_shapes_per_family(cfg: Config) -> None:
    """The loss's reward shapes against the network's families: one shape per family."""
    if len(cfg.reward_shapes) != cfg.families:
        raise ValueError(
            f"reward_shapes needs one shaping per family ({cfg.families}), got {cfg.reward_shapes!r}"
        )


def _validate_parts(cfg: Config, controller) -> None:
    """Check the parts no layer's config checks against their registries, and that the parts
    fit together: the environment, E and its arguments against Λ, families against Λ, and the
    devices. Run when the Config is built, so a bad combination fails before any
    run folder exists, on every backend."""
    # Imported here: the environment packages (ALE, Gymnasium, MinAtar) are slow to import,
    # and only a Config being built needs them.
    from gdi.envs.spec import canonical_spec, protocol_overrides

    object.__setattr__(cfg, "env", canonical_spec(cfg.env))
    protocol_overrides(cfg.protocol, cfg.env, cfg.env_overrides)
    space = POLICY_SPACES[cfg.policy_space]
    space.check_families(cfg.families)
    if controller.dim != space.dim:
        raise ValueError(
            f"E {cfg.meta_controller!r} (meta_kwargs) samples λ of dimension {controller.dim}, "
            f"but policy_space {cfg.policy_space!r} is indexed by {space.dim} "
            f"({', '.join(space.index_names)}); give meta_kwargs for that Λ or pick a preset "
            "that uses it (gdi presets)"
        )
    space.check_lambda_box(controller.lambda_ranges, cfg.families)
    if _CHECK_DEVICE.get():
        check_learner_device(cfg.learner_device)
        check_learner_device(cfg.actor_device, what="actor_device")


def check_learner_device(name: str, what: str = "learner_device") -> None:
    """ValueError unless ``name`` is auto, cpu, cuda or cuda:N and this machine's torch can use
    it (auto always can: it means cuda where there is a GPU, else cpu); ``what`` names the
    setting in the message."""
    import torch

    if name == "auto":
        return
    shape_ok = name == "cpu" or name == "cuda" or (
        isinstance(name, str) and name.startswith("cuda:") and name[5:].isdigit()
    )
    if not shape_ok:
        raise ValueError(
            f"{what}: unknown device {name!r}; allowed: auto, cpu, cuda, cuda:N")
    if name == "cpu":
        return
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    usable = ["auto", "cpu", *(["cuda"] if count else []), *(f"cuda:{i}" for i in range(count))]
    index = int(name[5:]) if ":" in name else 0
    if index >= count:
        raise ValueError(
            f"{what}: {name!r} is not usable by this torch ({torch.__version__}, "
            f"{count} CUDA device(s)); allowed here: {', '.join(usable)}"
        )


# ---------------------------------------------------------------------------------------------
# --set field=value
# ---------------------------------------------------------------------------------------------


#: How the command line may write an infinite number (a truncation that truncates nothing).
INFINITIES = ("inf", "+inf", "infinity", "+infinity")


def _parse_scalar(text: str) -> Any:
    """A value from the command line: JSON when it parses (numbers, true/false, null, lists),
    inf as a number, else text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        if lowered in INFINITIES:
            return math.inf
        return text


def _coerce(name: str, raw: str, annotation: Any) -> Any:
    value = _parse_scalar(raw)
    origin = typing.get_origin(annotation)
    if annotation is int or annotation == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"--set {name}={raw}: {name} takes an integer")
    elif annotation is float or annotation == "float":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ValueError(f"--set {name}={raw}: {name} takes a number")
        value = float(value)
    elif annotation == float | None or annotation == "float | None":
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise ValueError(f"--set {name}={raw}: {name} takes a number or null")
        value = None if value is None else float(value)
    elif annotation is bool or annotation == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"--set {name}={raw}: {name} takes true or false")
    elif annotation is str or annotation == "str" or origin is Literal:
        value = raw
    elif "tuple" in str(annotation):
        items = value if isinstance(value, list) else [s for s in raw.split(",") if s]
        value = tuple(items)
    return value


def apply_overrides(cfg: Config, assignments: list[str] | tuple[str, ...], **fields: Any) -> Config:
    """Apply ``field=value`` strings; ``env_overrides.KEY=VALUE`` and ``meta_kwargs.KEY=VALUE``
    set one key of those dicts. Unknown fields and malformed values raise ValueError.
    ``fields`` (typed values, such as a CLI flag's) are applied in the same step, so the
    config is checked once with every change made; an assignment of the same field wins."""
    hints = typing.get_type_hints(Config)
    changes: dict[str, Any] = dict(fields)
    dict_updates: dict[str, dict[str, Any]] = {}
    for assignment in assignments:
        if "=" not in assignment:
            raise ValueError(f"--set expects field=value, got {assignment!r}")
        name, raw = assignment.split("=", 1)
        name = name.strip()
        if "." in name:
            head, key = name.split(".", 1)
            if head not in ("env_overrides", "meta_kwargs"):
                raise ValueError(
                    f"--set {name}: only env_overrides.KEY and meta_kwargs.KEY take a dotted key"
                )
            dict_updates.setdefault(head, {})[key] = _parse_scalar(raw)
            continue
        if name in NAMED_BY_OPTION:
            raise ValueError(f"--set {name}: names what the config was resolved from; choose it "
                             f"with --{name} NAME, which sets the fields it stands for")
        if name not in hints:
            import difflib

            close = difflib.get_close_matches(name, list(hints), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"--set {name}: unknown config field{hint}")
        if name in ("env_overrides", "meta_kwargs"):
            parsed = _parse_scalar(raw)
            if not isinstance(parsed, dict):
                raise ValueError(f"--set {name}=...: takes a JSON object, got {raw!r}")
            changes[name] = parsed
            continue
        changes[name] = _coerce(name, raw, hints[name])
    for head, updates in dict_updates.items():
        changes[head] = {**changes.get(head, getattr(cfg, head)), **updates}
    return cfg.replace(**changes)


def field_docs() -> dict[str, str]:
    """Field name → its docstring, read from the source of Config and of each layer's config
    it is composed of (for tables and --help); the fields that name a registered part end
    with the names their registry holds now. A field two layers declare (policy_space: the
    loss's and Λ's) takes the docstring of the one whose default the Config has."""
    import ast
    import inspect

    docs: dict[str, str] = {}
    # Bases first, as dataclasses collects fields: a later class's docstring wins, as its
    # default does.
    for cls in reversed(Config.__mro__):
        if not dataclasses.is_dataclass(cls):
            continue
        body = ast.parse(inspect.getsource(cls)).body[0].body  # type: ignore[attr-defined]
        for node, following in itertools.pairwise(body):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if isinstance(following, ast.Expr) and isinstance(following.value,
                                                                  ast.Constant):
                    # One paragraph: the source's line breaks and indentation are not the
                    # text's.
                    docs[node.target.id] = " ".join(str(following.value.value).split())
    for name, choices in registered_choices().items():
        docs[name] += " One of: " + "; ".join(choices) + "."
    return docs


def registered_choices() -> dict[str, list[str]]:
    """For each field that names a registered Λ or E, its registry's names, each with what it
    is (a space's λ and π_λ as the paper writes them): what ``gdi config`` and the
    configuration page list, so that a newly registered part shows with no other edit."""
    from gdi.meta.registry import CONTROLLERS
    from gdi.policy_space import POLICY_SPACES

    return {
        "policy_space": [f"{name} ({space.lambda_text()}, π_λ = {space.description})"
                         for name, space in sorted(POLICY_SPACES.items())],
        "meta_controller": list(CONTROLLERS),
    }
