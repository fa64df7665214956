"""Environment specs (``ale:<Game>``, ``minatar:<game>``, ``gym:<id>``) and their configs.

:func:`resolve_env` turns a spec string and overrides into a frozen, validated
:class:`EnvConfig`: :class:`AtariConfig` (the paper's ALE pre-processing table, every stage
documented in its docstring), :class:`MinAtarConfig` or :class:`GymConfig`. Nothing here builds
an environment or imports ``minatar`` (slow to import); :func:`gdi.envs.make_vector_env` does.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "ATARI_57_GAMES",
    "ATARI_PROTOCOLS",
    "ENV_KINDS",
    "MINATAR_GAMES",
    "AtariConfig",
    "EnvConfig",
    "GymConfig",
    "MinAtarConfig",
    "atari_rom_ids",
    "canonical_spec",
    "resolve_env",
]

ENV_KINDS: tuple[str, ...] = ("ale", "minatar", "gym")
"""The spec prefixes, ``<kind>:<name>``."""

ATARI_57_GAMES: tuple[str, ...] = (
    "Alien", "Amidar", "Assault", "Asterix", "Asteroids", "Atlantis", "BankHeist", "BattleZone",
    "BeamRider", "Berzerk", "Bowling", "Boxing", "Breakout", "Centipede", "ChopperCommand",
    "CrazyClimber", "Defender", "DemonAttack", "DoubleDunk", "Enduro", "FishingDerby", "Freeway",
    "Frostbite", "Gopher", "Gravitar", "Hero", "IceHockey", "Jamesbond", "Kangaroo", "Krull",
    "KungFuMaster", "MontezumaRevenge", "MsPacman", "NameThisGame", "Phoenix", "Pitfall", "Pong",
    "PrivateEye", "Qbert", "Riverraid", "RoadRunner", "Robotank", "Seaquest", "Skiing", "Solaris",
    "SpaceInvaders", "StarGunner", "Surround", "Tennis", "TimePilot", "Tutankham", "UpNDown",
    "Venture", "VideoPinball", "WizardOfWor", "YarsRevenge", "Zaxxon",
)  # fmt: skip
"""The 57 Atari games of the paper's evaluation (App. "Experiment Details"), ALE CamelCase names."""

MINATAR_GAMES: tuple[str, ...] = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")
"""The five MinAtar games (Young & Tian 2019), as the ``minatar`` package names them."""

_INT32_MAX = 2**31 - 1


def _fold(name: str) -> str:
    """Case- and underscore-insensitive key: ``MsPacman``, ``ms_pacman`` and ``mspacman`` meet."""
    return name.replace("_", "").replace("-", "").lower()


@functools.cache
def atari_rom_ids() -> dict[str, str]:
    """CamelCase game name → ale-py ROM id (``"MontezumaRevenge"`` → ``"montezuma_revenge"``) for
    every ROM shipped in the installed ale-py wheel."""
    from ale_py import roms

    return {
        "".join(part.capitalize() for part in rom_id.split("_")): rom_id
        for rom_id in roms.get_all_rom_ids()
    }


def _close(name: str, choices: list[str] | tuple[str, ...]) -> str:
    matches = difflib.get_close_matches(name, list(choices), n=5, cutoff=0.6)
    if not matches:  # also try the folded form, so "montezuma" finds "MontezumaRevenge"
        folded = {_fold(c): c for c in choices}
        matches = [
            folded[m] for m in difflib.get_close_matches(_fold(name), list(folded), n=5, cutoff=0.5)
        ]
    return f"; close matches: {', '.join(matches)}" if matches else ""


# --------------------------------------------------------------------------------------------
# Validation of override values (overrides arrive from Python or as JSON from the command line).


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def _check_int(name: str, value: Any, low: int, high: int = _INT32_MAX) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def _check_optional_int(name: str, value: Any, low: int) -> int | None:
    if value is None:
        return None
    try:
        return _check_int(name, value, low)
    except ValueError:
        raise ValueError(
            f"{name} must be None (no cap) or an integer in [{low}, {_INT32_MAX}], got {value!r}"
        ) from None


def _check_prob(name: str, value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


# --------------------------------------------------------------------------------------------
# Configs


@dataclass(frozen=True)
class EnvConfig:
    """A resolved environment: its kind (``"ale"``, ``"minatar"`` or ``"gym"``), its canonical
    name, and every setting that shapes what the agent sees. Built by :func:`resolve_env`;
    recorded in a run's ``config.json`` through :meth:`as_dict`."""

    name: str
    """Canonical name: ALE CamelCase game, MinAtar game, or Gymnasium id."""

    kind: ClassVar[str] = ""

    @property
    def frames_per_step(self) -> int:
        """Environment frames one agent step consumes (ALE: the action repeat; else 1). Frame
        budgets and the paper's learning-efficiency metrics count these."""
        return 1

    @property
    def stacked_frames(self) -> int:
        """Frames stacked in each observation along its first axis, newest last (ALE: the
        frame stack; else 1, an observation is one frame). Actors store only the newest frame
        of a step and the learner's side rebuilds the stacks (``gdi.runtime.storage.steps``)."""
        return 1

    @property
    def spec(self) -> str:
        """The canonical spec string, ``<kind>:<name>``."""
        return f"{self.kind}:{self.name}"

    @classmethod
    def override_names(cls) -> tuple[str, ...]:
        """The settings :func:`resolve_env` accepts as overrides for this kind."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "name")

    def as_dict(self) -> dict[str, Any]:
        """JSON-able record: spec, kind, name, every setting, frames_per_step."""
        return {
            "spec": self.spec,
            "kind": self.kind,
            **dataclasses.asdict(self),
            "frames_per_step": self.frames_per_step,
        }

    def replace(self, **overrides: Any) -> EnvConfig:
        """A copy with ``overrides`` applied and validated (ValueError names a bad key)."""
        _check_override_names(type(self), overrides)
        return dataclasses.replace(self, **overrides)


@dataclass(frozen=True)
class AtariConfig(EnvConfig):
    """Arcade Learning Environment pre-processing: the paper's Tab. "Atari pre-processing
    hyperparameters" (App. "Hyperparameters"), run by ale-py's native vector environment
    (``ale_py.vector_env.AtariVectorEnv``, C++ threads) with every setting passed explicitly.

    The stages, in the order they act, each with its default and its source:

    1. **Game mode and difficulty**: the ROM's default mode and difficulty, never randomized
       (table: "Random modes and difficulties: No"; Machado et al. 2018, Sec. 5, describe the
       randomized alternative). ale-py's vector env has no mode selection, so this is fixed.
    2. **Reset no-ops** ``noop_max = 30``: after each reset, a uniformly random number of NOOP
       *emulator frames*, 0 … ``noop_max`` − 1 as ale-py draws it (table: "Random noops range
       30"; Mnih et al. 2015, "no-op max 30"). Seeded per environment, so it is the source of
       start-state diversity when sticky actions are off. ``0`` disables it.
    3. **Fire reset** ``fire_reset = False``: no FIRE press after reset. ale-py defaults to
       pressing it; the table does not list it and Machado et al. 2018 (Sec. 5) recommend
       against such game-specific knowledge, so the agent must learn to launch the ball itself.
    4. **Sticky actions** ``repeat_action_probability = 0.0``: at every emulator frame the
       previous action is repeated with this probability (Machado et al. 2018, Sec. 5.2; table:
       0.0, as in R2D2 and Agent57). Set ``0.25`` for Machado et al.'s recommended protocol.
    5. **Action space** ``full_action_space = True``: all 18 joystick actions for every game
       (table: "Action Space: Full"), so one network head fits all 57 games.
    6. **Action repeat** ``action_repeat = 4``: each agent action is played for 4 emulator frames
       and the rewards of those frames are summed (table: "Num. Action Repeats 4"; Mnih et al.
       2015, "action repeat 4"). :attr:`frames_per_step` equals it.
    7. **Max-pool** ``maxpool = True``: the observed frame is the pixel-wise max of the last two
       emulator frames of the repeat, which removes sprite flicker (Mnih et al. 2015, Methods
       "Preprocessing"; not in the table, standard in every baseline it cites).
    8. **Grayscale** ``grayscale = True``: luminance from the NTSC palette (table: "Grayscaled";
       Mnih et al. 2015). ``False`` gives RGB frames with a trailing channel axis of 3.
    9. **Resize** ``image_height = image_width = 84``: area interpolation of the 210×160 screen
       (table: "Image Size (84, 84)"; Mnih et al. 2015).
    10. **Frame stack** ``frame_stack = 4``: the observation is the last 4 processed frames,
        oldest first, ``uint8 [4, 84, 84]``; at an episode's start the frames before the first
        are zeros (table: "Num. Frame Stacks 4"; Mnih et al. 2015, "agent history length 4").
    11. **Life information** ``episodic_life = False``: losing a life is neither an episode end
        nor a signal to the agent (table: "Life information: Not allowed"; Machado et al. 2018,
        Sec. 5). ``True`` ends (and resets the game) at every life loss, as ale-py implements
        it; ``info["lives"]`` is reported for logging either way and is not an observation.
    12. **Episode cap** ``max_episode_frames = 108_000``: an episode is cut after this many
        emulator frames of agent actions (the reset no-op frames are not counted) and reported
        as *truncated*, never terminated (App. "Experiment Details": "100K frames (or 30 minutes
        of simulated play)"; 30 minutes at 60 Hz is 108,000 frames, the cap of R2D2, NGU and
        Agent57 that the paper compares with; see docs/paper-choices.md). ``100_000`` gives the
        table's literal value.
    13. **Rewards**: raw game score differences, never clipped here (ale-py defaults to clipping
        to [-1, 1]); any clipping or shaping is the learner's (``gdi.learning``).

    ``num_threads`` is execution only (ale-py worker threads; 0 lets ale-py pick
    min(num_envs, cores)) and does not change any result: each environment has its own emulator
    and random generator.
    """

    repeat_action_probability: float = 0.0
    full_action_space: bool = True
    noop_max: int = 30
    fire_reset: bool = False
    action_repeat: int = 4
    maxpool: bool = True
    grayscale: bool = True
    image_height: int = 84
    image_width: int = 84
    frame_stack: int = 4
    episodic_life: bool = False
    max_episode_frames: int = 108_000
    num_threads: int = 0

    kind: ClassVar[str] = "ale"

    def __post_init__(self) -> None:
        if self.name not in atari_rom_ids():
            raise ValueError(f"unknown ALE game {self.name!r}; resolve specs with resolve_env")
        checked = {
            "repeat_action_probability": _check_prob(
                "repeat_action_probability", self.repeat_action_probability
            ),
            "full_action_space": _check_bool("full_action_space", self.full_action_space),
            "noop_max": _check_int("noop_max", self.noop_max, 0, 10_000),
            "fire_reset": _check_bool("fire_reset", self.fire_reset),
            "action_repeat": _check_int("action_repeat", self.action_repeat, 1, 1_000),
            "maxpool": _check_bool("maxpool", self.maxpool),
            "grayscale": _check_bool("grayscale", self.grayscale),
            "image_height": _check_int("image_height", self.image_height, 1, 210),
            "image_width": _check_int("image_width", self.image_width, 1, 160),
            "frame_stack": _check_int("frame_stack", self.frame_stack, 1, 64),
            "episodic_life": _check_bool("episodic_life", self.episodic_life),
            "max_episode_frames": _check_int("max_episode_frames", self.max_episode_frames, 1),
            "num_threads": _check_int("num_threads", self.num_threads, 0, 1_024),
        }
        for key, value in checked.items():
            object.__setattr__(self, key, value)

    @property
    def frames_per_step(self) -> int:
        return self.action_repeat

    @property
    def stacked_frames(self) -> int:
        return self.frame_stack

    @property
    def rom_id(self) -> str:
        """ale-py's ROM id (snake_case) for :attr:`name`."""
        return atari_rom_ids()[self.name]


@dataclass(frozen=True)
class MinAtarConfig(EnvConfig):
    """MinAtar (Young & Tian 2019) through the ``minatar`` package with *its own* defaults, so
    that returns compare with published MinAtar numbers.

    - ``sticky_action_prob = 0.1``: the previous action is repeated with this probability
      (MinAtar's default, after Machado et al. 2018).
    - ``difficulty_ramping = True``: games speed up as the episode goes on (MinAtar's default).
    - ``max_episode_steps = None``: no cap beyond each game's own rules; an integer cuts episodes
      after that many steps, reported as truncated.

    Observations are the game's 10×10 binary channels, channels first, ``uint8 [C, 10, 10]``
    (C = 4 asterix, 4 breakout, 7 freeway, 10 seaquest, 6 space_invaders); the action space is
    MinAtar's full set of 6 actions; one agent step is one frame.
    """

    sticky_action_prob: float = 0.1
    difficulty_ramping: bool = True
    max_episode_steps: int | None = None

    kind: ClassVar[str] = "minatar"

    def __post_init__(self) -> None:
        if self.name not in MINATAR_GAMES:
            raise ValueError(f"unknown MinAtar game {self.name!r}; games: {MINATAR_GAMES}")
        object.__setattr__(
            self, "sticky_action_prob", _check_prob("sticky_action_prob", self.sticky_action_prob)
        )
        _check_bool("difficulty_ramping", self.difficulty_ramping)
        object.__setattr__(
            self,
            "max_episode_steps",
            _check_optional_int("max_episode_steps", self.max_episode_steps, 1),
        )


@dataclass(frozen=True)
class GymConfig(EnvConfig):
    """Any registered Gymnasium id with a discrete action space and an array observation, made
    by ``gymnasium.make`` and batched by Gymnasium's own ``SyncVectorEnv``.

    - ``max_episode_steps = None``: the id's registered time limit; an integer replaces it
      (Gymnasium's ``TimeLimit``, reported as truncated).
    """

    max_episode_steps: int | None = None

    kind: ClassVar[str] = "gym"

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "max_episode_steps",
            _check_optional_int("max_episode_steps", self.max_episode_steps, 1),
        )


_CONFIGS: dict[str, type[EnvConfig]] = {
    "ale": AtariConfig,
    "minatar": MinAtarConfig,
    "gym": GymConfig,
}


def _check_override_names(cls: type[EnvConfig], overrides: dict[str, Any]) -> None:
    allowed = cls.override_names()
    unknown = sorted(set(overrides) - set(allowed))
    if unknown:
        hints = [f"{k!r}{_close(k, allowed)}" for k in unknown]
        raise ValueError(
            f"unknown override {', '.join(hints)} for {cls.kind} environments; "
            f"allowed: {', '.join(allowed)}"
        )


def _canonical_name(kind: str, name: str, spec: str) -> str:
    if kind == "ale":
        games = atari_rom_ids()
        folded = {_fold(game): game for game in games}
        if _fold(name) in folded:
            return folded[_fold(name)]
        raise ValueError(
            f"unknown ALE game {name!r} in {spec!r}{_close(name, sorted(games))} "
            f"(CamelCase ALE names, e.g. ale:Breakout, ale:MontezumaRevenge)"
        )
    if kind == "minatar":
        folded = {_fold(game): game for game in MINATAR_GAMES}
        if _fold(name) in folded:
            return folded[_fold(name)]
        raise ValueError(
            f"unknown MinAtar game {name!r} in {spec!r}{_close(name, MINATAR_GAMES)}; "
            f"MinAtar games: {', '.join(MINATAR_GAMES)}"
        )
    import gymnasium

    if ":" in name:  # Gymnasium's own "module:EnvId": the module registers the id on import
        module, env_id = name.split(":", 1)
        import_registering_module(module, spec)
        if env_id in gymnasium.registry:
            return name
        raise ValueError(
            f"module {module!r} in {spec!r} was imported but registers no Gymnasium id "
            f"{env_id!r}{_close(env_id, sorted(gymnasium.registry))}; register it there with "
            "gymnasium.register(id=..., entry_point=...)")
    if name in gymnasium.registry:
        return name
    raise ValueError(
        f"unknown Gymnasium id {name!r} in {spec!r}{_close(name, sorted(gymnasium.registry))} "
        f"(any id registered with gymnasium, e.g. gym:CartPole-v1; Atari games take ale:<Game>)"
    )


def import_registering_module(module: str, spec: str) -> None:
    """Import the module of a ``module:EnvId`` Gymnasium name (as ``gymnasium.make`` does),
    from wherever Python finds it: installed, on PYTHONPATH, or in the current folder (the
    CLI appends it to ``sys.path``). ValueError of one line when it cannot be imported."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as err:
        raise ValueError(
            f"cannot import module {module!r} named in {spec!r} ({err}); the module that "
            "registers the environment must be importable: installed, on PYTHONPATH, or in "
            "the folder gdi runs in") from None


def _split_spec(spec: str) -> tuple[str, str]:
    """``"<kind>:<name>"`` → (kind lower-cased, name), ValueError naming the allowed prefixes."""
    prefixes = ", ".join(f"{k}:" for k in ENV_KINDS)
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(
            f"environment spec must be '<prefix><name>' (e.g. ale:Breakout), got {spec!r}; "
            f"allowed prefixes: {prefixes}"
        )
    kind, name = spec.split(":", 1)
    kind, name = kind.strip().lower(), name.strip()
    if kind not in _CONFIGS:
        raise ValueError(
            f"unknown environment prefix {kind!r} in {spec!r}; allowed prefixes: {prefixes}"
        )
    return kind, name


def canonical_spec(spec: str) -> str:
    """The one spelling of an environment spec: ``ale:breakout`` → ``ale:Breakout``,
    ``minatar:Breakout`` → ``minatar:breakout``, ``gym:CartPole-v1`` unchanged. Configs store
    this form, so runs of one game group together and reports find its baselines. ValueError
    (with close matches) for an unknown prefix, game or id."""
    kind, name = _split_spec(spec)
    return f"{kind}:{_canonical_name(kind, name, spec)}"


#: Named ALE evaluation protocols: the settings each fixes on top of :class:`AtariConfig`'s
#: defaults (which are the paper's table). ``machado``: Machado et al. 2018 ("Revisiting the
#: Arcade Learning Environment", Sec. 5): sticky actions with probability 0.25 as the only
#: stochasticity (no reset no-ops), the full action set, no life-loss signal, episodes cut at
#: 108,000 frames (Dopamine's 27,000 agent steps).
ATARI_PROTOCOLS: dict[str, dict[str, Any]] = {
    "paper": {},
    "machado": {"repeat_action_probability": 0.25, "noop_max": 0, "full_action_space": True,
                "episodic_life": False, "max_episode_frames": 108_000},
}


def protocol_overrides(protocol: str, spec: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The environment overrides of ``protocol`` merged with the run's own ``overrides``; a
    ValueError of one line for an unknown protocol, a protocol other than the paper's on a
    non-ALE environment, or an override that contradicts the protocol."""
    if protocol not in ATARI_PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(ATARI_PROTOCOLS)}, got "
                         f"{protocol!r}")
    fixed = ATARI_PROTOCOLS[protocol]
    if fixed and _split_spec(spec)[0] != "ale":
        raise ValueError(f"protocol={protocol!r} is an ALE protocol; {spec!r} is not an ale: "
                         "environment (leave protocol=paper)")
    clashes = [f"{k}={overrides[k]!r} (the protocol: {v!r})" for k, v in fixed.items()
               if k in overrides and overrides[k] != v]
    if clashes:
        raise ValueError(f"protocol={protocol!r} fixes what env_overrides changes: "
                         f"{', '.join(clashes)}; drop the override or the protocol")
    return {**fixed, **overrides}


def resolve_env(spec: str, protocol: str = "paper", **overrides: Any) -> EnvConfig:
    """Resolve ``"<kind>:<name>"`` and overrides of its settings into a validated config.

    Kinds: ``ale:<Game>`` (ALE CamelCase name, e.g. ``ale:MontezumaRevenge``; case and
    underscores are forgiven, ``ale:montezuma_revenge`` resolves to the same game),
    ``minatar:<game>`` (one of :data:`MINATAR_GAMES`) and ``gym:<id>`` (a registered Gymnasium
    id, e.g. ``gym:CartPole-v1``, or Gymnasium's ``module:EnvId``, e.g.
    ``gym:my_envs:Corridor-v0``, whose module registers the id when imported; every process
    that makes the environment imports it). The overrides each kind accepts are the fields of
    its config
    class (:class:`AtariConfig`, :class:`MinAtarConfig`, :class:`GymConfig`).

    Raises ValueError for an unknown prefix, game or id (with close matches) and for an unknown
    override or an invalid value (naming it and what it accepts).
    """
    kind, name = _split_spec(spec)
    cls = _CONFIGS[kind]
    _check_override_names(cls, overrides)
    overrides = protocol_overrides(protocol, spec, overrides)
    return cls(name=_canonical_name(kind, name, spec), **overrides)
