"""One frozen, validated configuration for a GDI run, composed of the layers' own configs.

Each layer declares, documents and checks its fields where it is (``gdi.nets.config``,
``gdi.learning.loss``, ``gdi.meta.config``, ``gdi.learning.optimizer``, the runtime's in
``gdi.runtime_config``; what to run in ``gdi.run_spec``); ``Config`` inherits them, so a run's
fields are one flat set, and hands each part of a run the one layer it reads
(``Config.layer``). Every field has a docstring: these are what ``gdi config`` and the configuration
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
from gdi.runtime_config import ActorsConfig, OutputConfig, PlacementConfig, ReplayConfig
from gdi.upgrade import todays_config_fields

# Whether building a Config checks that this machine's torch can use learner_device. Off while
# a saved config.json is read back (Config.from_dict): a run trained on a GPU machine must stay
# readable (reports, evaluation) on a laptop.
_CHECK_DEVICE: contextvars.ContextVar[bool] = contextvars.ContextVar("check_device", default=True)


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
class Config(OutputConfig, PlacementConfig, ReplayConfig, ActorsConfig, OptimizerConfig,
             MetaConfig, LossConfig, NetworkConfig, RunSpec):
    """The run's configuration, composed of the layers' own: what to run (:class:`RunSpec`:
    the environment's spec, protocol and overrides among it), the network's
    (:class:`gdi.nets.config.NetworkConfig`), the loss's (:class:`gdi.learning.loss.LossConfig`,
    the policy space Λ among it), E's (:class:`gdi.meta.config.MetaConfig`), the
    optimizer's (:class:`gdi.learning.optimizer.OptimizerConfig`) and the runtime's
    (``gdi.runtime_config``: actors, replay, placement, output), each declared, documented
    and checked by the layer that uses it. Composed by inheritance, so its fields stay one
    flat set, in that order: ``config.json``, ``--set field=value`` and the configuration page
    name them as before. A part of a run is handed its layer, ``config.layer(ReplayConfig)``,
    not the Config, so that its signature says what it reads. What no single layer can check
    (do the parts fit: λ's dimension, families and reward shapes, the replay's room for every
    actor, the devices) is checked here, when the Config is built."""

    def __post_init__(self) -> None:
        # Dict-valued fields are kept in their JSON form (tuples as lists), so that a config
        # read back from config.json compares equal to the one that wrote it.
        for name in ("env_overrides", "meta_kwargs"):
            object.__setattr__(self, name, _json_form(getattr(self, name)))
        object.__setattr__(self, "reward_shapes", tuple(self.reward_shapes))
        # Each layer checks its own fields (a Config is each layer's config), then the parts'
        # fit is checked across them.
        self.check_actors()
        self.check_replay()
        self.check_placement()
        self.check_output()
        _validate(self)
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
        values = todays_config_fields(data, fill_added_later=False)
        if "reward_shapes" in values:
            values["reward_shapes"] = tuple(values["reward_shapes"])
        token = _CHECK_DEVICE.set(False)  # a saved run stays readable on any machine
        try:
            return cls(**values)
        finally:
            _CHECK_DEVICE.reset(token)

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)

    def layer(self, layer: type[Layer]) -> Layer:
        """This config's fields of one layer (``layer``, one of :data:`LAYERS`), as that
        layer's own config: what a part of the run that reads only that layer is handed."""
        if layer not in LAYERS:
            raise TypeError(f"{layer.__name__} is not one of Config's layers "
                            f"({', '.join(cls.__name__ for cls in LAYERS)})")
        return layer(**{f.name: getattr(self, f.name) for f in dataclasses.fields(layer)})


#: The layers' configs a Config is composed of, in the order of its fields.
LAYERS = (RunSpec, NetworkConfig, LossConfig, MetaConfig, OptimizerConfig, ActorsConfig,
          ReplayConfig, PlacementConfig, OutputConfig)
Layer = typing.TypeVar("Layer", RunSpec, NetworkConfig, LossConfig, MetaConfig, OptimizerConfig,
                       ActorsConfig, ReplayConfig, PlacementConfig, OutputConfig)


def _json_form(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_form(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_form(v) for v in value]
    return value


def _validate(cfg: Config) -> None:
    """What to run (``RunSpec``'s fields), and what spans the runtime's layers."""
    positive(cfg, "frames")
    non_negative(cfg, "seed")
    # The registry itself, not BACKENDS: a backend registered since this module was imported
    # (a test's) is allowed as well.
    if cfg.backend not in backend_registry.BACKENDS:
        raise ValueError(
            f"backend must be one of {', '.join(backend_registry.BACKENDS)}, got {cfg.backend!r}")
    if cfg.backend == "ray" and cfg.actor_device != "cpu":
        raise ValueError(
            f"actor_device={cfg.actor_device!r} needs the local or inline backend: Ray actors "
            "reserve CPUs only (ray_cpus_per_actor) and Ray hides the GPUs from them; allowed "
            "with backend ray: cpu")
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
