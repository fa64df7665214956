"""A trained agent from a run folder, for a plain Gymnasium loop:

    agent = gdi.load_agent("runs/<run>")                       # latest checkpoint, λ ~ P_Λ
    env = gdi.envs.make_vector_env(agent.env_config, num_envs=8, seed=0)
    obs, _ = env.reset()
    agent.reset(env)                                           # or agent.reset(8)
    for _ in range(1000):
        actions = agent.act(obs)
        obs, rewards, terminated, truncated, _ = env.step(actions)
        agent.observe(rewards, terminated, truncated)

The agent acts with the actors' own acting step (``gdi.runtime.acting.step.Acting``: π_λ from the
network's advantages) and carries what acting needs between steps: the LSTM state, the previous
action and (compressed) reward the network reads, and each environment's λ. What it adds is
the checks a user's loop needs (shapes, call order, finite rewards) and the run it comes from.
:meth:`Agent.observe` is where it learns of episode ends: an environment whose episode ended
starts the next one with a zero LSTM state and a fresh λ. The λ of an episode is drawn from E's
state saved in the checkpoint (``policy="population"``, the paper's "population of agents"), is
E's greedy λ (``policy="greedy"``), is drawn uniformly over Λ as E searches it
(``policy="uniform"``, the same for every run of that Λ) or is one λ given
(``policy="fixed"``, ``fixed_lambda``); E itself is frozen: playing never updates it. The last
two tell a network's skill from its E's choice of λ: runs with different E's played alike.

Beside that loop, an agent answers two questions without one: :meth:`Agent.predict` (the
actions π_λ takes at some observations) and :meth:`Agent.evaluate` (the returns of episodes it
plays). ``gdi.train`` and ``gdi.load_agent`` return ``gdi.api.Agent``, this class with ``save``
(a bundle, ``gdi export``'s, which builds on this module and so sits above it).

``gdi evaluate`` (:func:`evaluate_checkpoint`) and ``gdi enjoy`` act through this class.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gdi.atomic import probe_writable
from gdi.run_files import (
    BUNDLE_EVALUATIONS,
    EVAL_DIR,
    EVALUATION_POLICIES,
    FIXED,
    LATEST,
    POPULATION,
    eval_folder,
    eval_name,
    is_bundle,
    lambda_text,
    outside_bundle,
)
from gdi.runtime import seeds
from gdi.runtime.acting.evaluator import Evaluation, play_agent_episodes
from gdi.runtime.acting.step import Acting, one_at_a_time, sample_actions
from gdi.scores import PAPER_EVAL_EPISODES, write_eval_file

POLICIES = tuple(EVALUATION_POLICIES)

# Config fields a checkpoint must share with the run it is filed under: what the environment
# is, which agent it is, and every field that shapes the network or the meaning of λ.
CHECKPOINT_IDENTITY_FIELDS = (
    "env", "env_overrides", "preset", "policy_space", "meta_controller", "torso",
    "lstm_units", "head_hidden", "families", "aux_tasks", "policy_head", "core", "input_norm",
    "value_norm",
)


class Agent(Acting):
    """A network, a policy space and a source of λ, acting on ``num_envs`` environments: the
    actors' acting step (:class:`gdi.runtime.acting.step.Acting`) with checks of what a user's loop
    gives it.

    Build one with :func:`load_agent`; ``Agent(...)`` directly is for code that already holds
    the parts.

    Attributes:
        lambdas: ``float64 [num_envs, dim]``, the λ each environment's current episode plays.
        seed: of action sampling (and, from ``load_agent``, of E's λ draws).
        policy: "population" or "greedy" (how λ is chosen), or a description given by the
            caller.
        config, env_config, checkpoint, frames: the run's Config, its resolved environment,
            the checkpoint file and the frames it was saved at (None when built from parts).
        run_dir: the run folder (or bundle) the checkpoint belongs to (None when built from
            parts).
    """

    def __init__(
        self,
        net: torch.nn.Module,
        policy_space: str,
        draw_lambda: Callable[[], np.ndarray],
        seed: int,
        *,
        obs_shape: tuple[int, ...] | None = None,
        num_actions: int | None = None,
        policy: str = POPULATION,
        env_config=None,
        config=None,
        checkpoint: Path | None = None,
        frames: int | None = None,
        run_dir: Path | None = None,
    ) -> None:
        super().__init__(net.eval(), policy_space, one_at_a_time(draw_lambda),
                         np.random.default_rng(seed))  # action sampling, like an actor's
        self.seed = seed
        self.obs_shape = tuple(obs_shape) if obs_shape is not None else None
        self.num_actions = num_actions
        self.policy = policy
        self.env_config = env_config
        self.config = config
        self.checkpoint = checkpoint
        self.frames = frames
        self.run_dir = run_dir

    def __repr__(self) -> str:
        parts = [f"{self.config.preset} on {self.config.env}" if self.config is not None
                 else f"policy space {self.space.name}"]
        if self.frames is not None:
            parts.append(f"{self.frames:,} frames")
        parts.append(f"λ {self.policy}")
        if self.run_dir is not None:
            parts.append(str(self.run_dir))
        return f"<gdi.Agent {', '.join(parts)}>"

    @property
    def index_names(self) -> tuple[str, ...]:
        """The names of λ's coordinates (e.g. 1/τ₁, 1/τ₂, ε)."""
        return self.space.index_names

    def _describe_run(self) -> str:
        env = self.env_config.spec if self.env_config is not None else "its environment"
        return f"the agent was trained on {env}"

    def check_env(self, env) -> None:
        """ValueError naming both when ``env``'s spaces are not those the agent was trained on."""
        obs_shape = tuple(env.single_observation_space.shape)
        num_actions = int(getattr(env.single_action_space, "n", -1))
        if self.obs_shape is not None and obs_shape != self.obs_shape:
            raise ValueError(
                f"environment {env!r} gives observations of shape {obs_shape}, but "
                f"{self._describe_run()} with shape {self.obs_shape}"
            )
        if self.num_actions is not None and num_actions != self.num_actions:
            raise ValueError(
                f"environment {env!r} has {num_actions} actions, but {self._describe_run()} "
                f"with {self.num_actions}"
            )

    def reset(self, num_envs) -> None:
        """Start a new episode in every one of ``num_envs`` environments (an int, or the
        vector environment itself, whose spaces are then checked against the run's): zero LSTM
        state, no previous action or reward, a fresh λ each."""
        if not isinstance(num_envs, int | np.integer):
            if not hasattr(num_envs, "single_observation_space"):
                raise ValueError(
                    f"agent.reset takes a number of environments or a vector environment "
                    f"(gdi.envs.make_vector_env, gymnasium.vector.*); got {num_envs!r}, which is "
                    "not one: wrap a single environment with gymnasium.vector.SyncVectorEnv"
                    "([lambda: env])")
            self.check_env(num_envs)
            num_envs = num_envs.num_envs
        if isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        super().reset(int(num_envs))

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions ``int64 [num_envs]`` for observations ``[num_envs, *obs_shape]``, sampled
        from each environment's π_λ. Call :meth:`observe` with the step's outcome before the
        next ``act``."""
        if self.num_envs == 0:
            raise RuntimeError("call agent.reset(num_envs) before agent.act(obs)")
        if self.pending is not None:
            raise RuntimeError("call agent.observe(rewards, terminated, truncated) after each "
                               "env.step, before the next agent.act")
        obs = np.asarray(obs)
        expected = (self.num_envs, *(self.obs_shape or obs.shape[1:]))
        if obs.shape != expected:
            raise ValueError(
                f"observations have shape {obs.shape}; expected {expected} ({self.num_envs} "
                f"environments; {self._describe_run()})"
            )
        return super().act(obs)

    def observe(self, rewards, terminated, truncated) -> np.ndarray:
        """The outcome of the last ``env.step``: the reward becomes the network's previous
        reward, and an environment whose episode ended (terminated or truncated) starts the
        next with a zero LSTM state and a fresh λ. Returns the mask of ended episodes."""
        if self.num_envs == 0:
            raise RuntimeError("call agent.reset(num_envs) and agent.act(obs) before "
                               "agent.observe(rewards, terminated, truncated)")
        if self.pending is None:
            raise RuntimeError("agent.observe follows agent.act: no action is awaiting its outcome")
        rewards = np.asarray(rewards, dtype=np.float64).reshape(self.num_envs)
        bad = np.flatnonzero(~np.isfinite(rewards))
        if bad.size:
            # The network reads the previous reward: one NaN would make its outputs NaN for the
            # rest of the episode, and the environment would play action 0 without a word.
            i = int(bad[0])
            raise ValueError(f"environment {i}'s reward is {rewards[i]}; the agent needs finite "
                             "rewards (check the environment or its wrappers)")
        return super().observe(rewards, terminated, truncated)

    # --- without a loop of one's own ------------------------------------------------------------
    def predict(self, obs, deterministic: bool = False) -> np.ndarray | int:
        """The actions π_λ takes at observations, each seen as the first step of an episode
        (zero LSTM state, no previous action or reward) with a λ drawn as a new episode's:
        one observation ``[*obs_shape]`` gives an ``int``, a batch ``[n, *obs_shape]`` gives
        ``int64 [n]``. ``deterministic``: π_λ's most probable action rather than a sample (λ
        still comes from the agent's ``policy``: load it with ``policy="greedy"`` or
        ``"fixed"`` for the same λ every time).

        The network reads the previous action and reward and carries an LSTM state, so an
        episode is played with :meth:`act` and :meth:`observe`, which carry them; ``predict``
        answers what the policy does in a state. It leaves that loop's state as it was."""
        obs = np.asarray(obs)
        single = self.obs_shape is not None and obs.shape == self.obs_shape
        batch = obs[None] if single else obs
        if batch.ndim < 2 or len(batch) == 0 or (self.obs_shape is not None
                                                 and batch.shape[1:] != self.obs_shape):
            shape = f"{self.obs_shape}" if self.obs_shape is not None else "obs_shape"
            raise ValueError(f"observations have shape {obs.shape}; predict takes one "
                             f"observation of shape {shape} or a batch [n, *{shape}] "
                             f"({self._describe_run()})")
        look = Acting(self.net, self.space.name, self.draw_lambdas, self.rng)
        look.reset(len(batch))
        probs, _ = look.action_probs(batch)
        if deterministic:
            actions = probs.argmax(axis=-1).astype(np.int64)
        else:
            actions, _ = sample_actions(probs, self.rng)
        return int(actions[0]) if single else actions

    def evaluate(self, episodes: int = PAPER_EVAL_EPISODES, seed: int | None = None,
                 max_envs: int = 32) -> Evaluation:
        """Play ``episodes`` episodes of the run's environment, each on an environment of its
        own (at most ``max_envs`` at once), and return their returns (printed: the mean and
        each return). Nothing is written: ``gdi evaluate`` files an evaluation in the run.

        The environments are seeded from ``seed`` (default: the agent's ``seed``); actions and
        λ continue the agent's generators, so the first call on a loaded agent plays what
        ``gdi evaluate RUN --episodes N`` plays, and a second call other episodes. It starts
        new episodes: a loop of :meth:`act` and :meth:`observe` starts afresh after it."""
        if self.env_config is None:
            raise ValueError("evaluate plays the run's environment, and this agent was built "
                             "from parts without one (env_config); load it with "
                             "gdi.load_agent(run_dir)")
        for name, value in (("episodes", episodes), ("max_envs", max_envs)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"{name}={value!r}; allowed: a whole number of at least 1")
        results = play_agent_episodes(self, self.env_config, int(episodes),
                                      self.seed if seed is None else seed, max_envs=max_envs)
        return Evaluation(tuple(results), self.frames)


def _usable_device(device: str | torch.device) -> torch.device:
    """``device`` as a torch.device this machine can run on ("auto": cuda where there is a GPU,
    else cpu); a ValueError naming it and what is allowed here otherwise."""
    from gdi.config import check_learner_device
    from gdi.runtime.components import resolve_device

    name = str(device)
    check_learner_device(name, what="device")
    return torch.device(resolve_device(name))


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=list))


def checkpoint_mismatch(run_config: dict, checkpoint_config: dict) -> list[str]:
    """``field=checkpoint's value (run: run's value)`` for every identity field the two
    configs disagree on (:data:`CHECKPOINT_IDENTITY_FIELDS`); a field either lacks is skipped."""
    out = []
    for name in CHECKPOINT_IDENTITY_FIELDS:
        if name in run_config and name in checkpoint_config:
            ours, theirs = _jsonable(run_config[name]), _jsonable(checkpoint_config[name])
            if ours != theirs:
                out.append(f"{name}={theirs!r} (run: {ours!r})")
    return out


def _older_that_loads(run_dir: Path, newest: Path) -> str:
    """Where to go when the newest checkpoint does not load: the newest one before it that
    does, offered rather than taken (an evaluation of an older network filed as the latest
    would mislead), or that none does."""
    from gdi.runtime.run_folder.checkpoint import list_checkpoints, load_checkpoint

    for path in reversed([p for p in list_checkpoints(run_dir) if p != newest]):
        try:
            load_checkpoint(path)
        except (ValueError, FileNotFoundError):
            continue
        return f"the newest checkpoint that loads is {path}: pass --checkpoint {path} to use it"
    return "no earlier checkpoint of the run loads either"


def resolve_checkpoint(run_dir, checkpoint: str | os.PathLike = LATEST,
                       allow_foreign: bool = False):
    """The run's Config, the checkpoint's path and its payload. A checkpoint outside the run
    folder, or one saved by a run of another environment, preset or architecture, is refused
    (its results would be filed under this run) unless ``allow_foreign``."""
    from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint
    from gdi.runtime.run_folder.run_dir import read_config

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir} is not a gdi run folder (no such folder)")
    config, _ = read_config(run_dir)
    path = latest_checkpoint(run_dir) if str(checkpoint) == LATEST else Path(checkpoint)
    try:
        payload = load_checkpoint(path)
    except ValueError as err:
        if str(checkpoint) != LATEST:
            raise
        raise ValueError(f"{err}; {_older_that_loads(run_dir, path)}") from None
    if not allow_foreign:
        if not path.resolve().is_relative_to(run_dir.resolve()):
            raise ValueError(
                f"checkpoint {path} lies outside run {run_dir}; its results would be filed under "
                f"{run_dir}; pass --allow-foreign-checkpoint (allow_foreign_checkpoint=True) to "
                "use it anyway"
            )
        mismatch = checkpoint_mismatch(config.to_dict(), payload.get("config") or {})
        if mismatch:
            raise ValueError(
                f"checkpoint {path} was saved by another kind of run than {run_dir}: "
                f"{'; '.join(mismatch)}; pass --allow-foreign-checkpoint "
                "(allow_foreign_checkpoint=True) to use it anyway"
            )
    return config, path, payload


def load_agent(
    run_dir: str | os.PathLike,
    checkpoint: str | os.PathLike = LATEST,
    policy: str = "population",
    device: str | torch.device = "cpu",
    seed: int | None = None,
    allow_foreign_checkpoint: bool = False,
    fixed_lambda: Sequence[float] | None = None,
    *,
    agent_class: type[Agent] = Agent,
) -> Agent:
    """The agent of a run folder's checkpoint: its network on ``device``, its policy space, and
    E's state (actor 0's E, as saved) as the source of λ.

    Args:
        run_dir: A run folder (``config.json`` and ``checkpoints/``).
        checkpoint: "latest" or a checkpoint file's path (inside ``run_dir``, unless
            ``allow_foreign_checkpoint``).
        policy: "population": λ ~ P_Λ per episode (E's exploratory draws included, what
            training's evaluation plays); "greedy": E's greedy λ (highest value estimate).
        device: Where the network runs: "cpu", "cuda", "cuda:N" or "auto" (cuda where there is
            a GPU).
        seed: Seed of action sampling and of E's λ draws (default:
            ``gdi.runtime.seeds.checkpoint_evaluation`` of the run's seed, what ``gdi evaluate``
            uses).
        allow_foreign_checkpoint: Accept a checkpoint outside ``run_dir`` or from a run whose
            environment, preset or architecture differ.
        fixed_lambda: The λ every episode plays with ``policy="fixed"`` (one number per
            coordinate of the run's policy space; only that policy takes one).
        agent_class: The class built, :class:`Agent` or a subclass (``gdi.api.Agent``, which
            ``gdi.load_agent`` builds).
    """
    from gdi.runtime.components import (
        build_controller,
        build_network,
        env_shapes,
        resolve_run_env,
    )
    from gdi.runtime.run_folder.checkpoint import checkpoint_controller_state

    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; allowed: {', '.join(POLICIES)}")
    if (policy == FIXED) != (fixed_lambda is not None):
        raise ValueError("policy 'fixed' plays the λ given as fixed_lambda (--fixed-lambda), "
                         f"and only it takes one; got policy {policy!r} with "
                         f"fixed_lambda={fixed_lambda!r}")
    device = _usable_device(device)
    config, path, payload = resolve_checkpoint(run_dir, checkpoint, allow_foreign_checkpoint)
    env_config = resolve_run_env(config)
    shapes = env_shapes(env_config, config.seed)
    net = build_network(config, shapes)
    try:
        net.load_state_dict(payload["learner"]["net"])
    except (RuntimeError, KeyError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(
            f"checkpoint {path}'s network does not fit run {run_dir}'s config ({first})"
        ) from None
    net.to(device)
    seed = seeds.checkpoint_evaluation(config.seed) if seed is None else seed
    controller = build_controller(config, seed)
    state = checkpoint_controller_state(payload)
    if state is not None:
        controller.load_state_dict(state)
    draw_lambda = controller.sample
    if policy == "greedy":  # an E with no greedy λ (uniform) says so in one line
        draw_lambda = controller.greedy().copy
    elif policy == "uniform":
        draw_lambda = uniform_over_lambda(config, seed).sample
    elif policy == FIXED:
        draw_lambda = checked_lambda(fixed_lambda, config).copy
    return agent_class(
        net, config.policy_space, draw_lambda, seed, obs_shape=shapes.obs_shape,
        num_actions=shapes.num_actions, policy=policy, env_config=env_config, config=config,
        checkpoint=path, frames=int(payload["frames"]), run_dir=Path(run_dir),
    )


def uniform_over_lambda(config, seed: int):
    """P_Λ uniform over Λ as the run's E searches it: over its box (``meta_kwargs`` ranges, in
    E's coordinates: the bandit's P_Λ⁽⁰⁾, kept) or its finite set of λ (values or arms). One
    line naming the run's E when it searches neither (a fixed λ)."""
    from gdi.meta import make_controller

    kwargs = config.meta_kwargs
    names = {"index_names": kwargs["index_names"]} if "index_names" in kwargs else {}
    if "ranges" in kwargs:
        return make_controller("uniform", seed, ranges=kwargs["ranges"],
                               transforms=kwargs.get("transforms"), **names)
    points = kwargs.get("values", kwargs.get("arms"))
    if points is not None:
        return make_controller("uniform", seed, values=points, **names)
    raise ValueError(f"policy 'uniform' draws λ over Λ as E searches it, and this run's E "
                     f"({config.meta_controller}) searches no box or set of λ (meta_kwargs "
                     f"{', '.join(sorted(kwargs)) or 'empty'}); play it with policy 'fixed'")


def checked_lambda(value: Sequence[float], config) -> np.ndarray:
    """``value`` as a float64 λ of the run's policy space; ValueError naming what is wrong
    (its length, a non-finite number, a coordinate outside the space's bounds)."""
    from gdi.policy_space import get_policy_space

    space = get_policy_space(config.policy_space)
    try:
        lam = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        lam = np.full(0, np.nan)
    if lam.shape != (space.dim,) or not np.isfinite(lam).all():
        raise ValueError(f"--fixed-lambda for policy space {space.name!r} is {space.dim} finite "
                         f"numbers ({', '.join(space.index_names)}), got {value!r}")
    outside = space.outside_bounds(np.stack([lam, lam], axis=1), config.families)
    if outside is not None:
        name, x, _, allowed = outside
        raise ValueError(f"--fixed-lambda: {name} = {x:g} is outside what policy space "
                         f"{space.name!r} takes: {name} in {allowed}")
    return lam


def evaluate_checkpoint(
    run_dir,
    checkpoint: str = LATEST,
    episodes: int = 32,
    envs: int = 32,
    seed: int | None = None,
    on_episode: Callable[[], None] | None = None,
    policy: str = POPULATION,
    allow_foreign_checkpoint: bool = False,
    fixed_lambda: Sequence[float] | None = None,
    out: str | os.PathLike | None = None,
):
    """Play ``episodes`` evaluation episodes with a run's checkpoint and write
    ``eval/<checkpoint-name>.json``; returns (path, per-episode results). Any policy but the
    population's writes to ``eval_<policy>/`` instead, which reports never read: a run's curve
    and final score stay those of one policy. ``policy``: "population" (λ ~ P_Λ), "greedy"
    (E's greedy λ), "uniform" (λ uniform over Λ as E searches it) or "fixed" (``fixed_lambda``
    in every episode, filed as ``eval_fixed/<checkpoint-name>@<λ>.json``), see
    :func:`load_agent`. A checkpoint outside the run folder or from another kind of run is
    refused unless ``allow_foreign_checkpoint`` (:func:`gdi.agent.resolve_checkpoint`).

    A bundle of ``gdi export`` (``gdi.run_files.is_bundle``) is never written into: its
    evaluation is filed in ``out`` (default ``evaluations/<bundle name>``,
    ``gdi.run_files.BUNDLE_EVALUATIONS``), beside a copy of the bundle's config.json, so that
    ``gdi report OUT`` reads it as a run (:func:`bundle_evaluation_folder`). A run's
    evaluations are filed in the run, which its reports read: ``out`` with a run is refused."""
    if episodes < 1 or envs < 1:
        raise ValueError(f"episodes and envs must be >= 1, got {episodes} and {envs}")
    folder = eval_folder(policy)  # ValueError for an unknown policy, before any work
    bundle = is_bundle(run_dir)
    if out is not None and not bundle:
        raise ValueError(f"out={str(out)!r} (--out): a run's evaluations are filed in the run "
                         f"({run_dir}/{EVAL_DIR}, which its reports read); allowed: out only "
                         "with a bundle of gdi export")
    agent = load_agent(run_dir, checkpoint, policy=policy, seed=seed,
                       allow_foreign_checkpoint=allow_foreign_checkpoint,
                       fixed_lambda=fixed_lambda)
    filed, made = bundle_evaluation_folder(run_dir, out) if bundle else (Path(run_dir), None)
    try:
        # A read-only or full folder is said now, not after every episode was played.
        probe_writable(filed / folder, "the evaluation")
        config, path, seed = agent.config, agent.checkpoint, agent.seed
        results = play_agent_episodes(agent, agent.env_config, episodes, seed, max_envs=envs,
                                      on_episode=on_episode)
        name = eval_name(path.stem, policy, fixed_lambda)
        described = (f"π_λ with λ = ({lambda_text(fixed_lambda)}) in every episode"
                     if policy == FIXED else EVALUATION_POLICIES[policy])
        written = write_eval_file(
            filed, name, checkpoint=path.stem, frames=agent.frames, env=config.env,
            policy=described, seed=seed, episodes=results, folder=folder,
        )
    except BaseException:
        _take_back(made)  # made for an evaluation that was not written
        raise
    return written, results


def bundle_evaluation_folder(bundle, out=None) -> tuple[Path, Path | None]:
    """The folder a bundle's evaluations go to (``out``, default
    ``gdi.run_files.BUNDLE_EVALUATIONS/<bundle name>``) with the bundle's config.json in it, so
    that it reads as a run folder; and what was made for it now (a folder, or the config.json
    in an empty one; None when it held them already). A folder that holds anything else is
    refused."""
    from gdi.atomic import StorageError, why_not_writable

    out = Path(out) if out is not None else outside_bundle(bundle, BUNDLE_EVALUATIONS)
    config = (Path(bundle) / "config.json").read_bytes()
    if (out / "metrics.jsonl").exists() or (out / "checkpoints").exists():
        raise FileExistsError(f"{out} is a run folder or a bundle; allowed: a new folder or one "
                              f"that holds evaluations of {bundle} (--out)")
    if (out / "config.json").is_file():
        if (out / "config.json").read_bytes() != config:
            raise FileExistsError(f"{out} holds the config.json of another run; allowed: a new "
                                  f"folder or one that holds evaluations of {bundle} (--out)")
        return out, None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and holds no evaluations of {bundle}; allowed: a "
                              "new folder or one that does (--out)")
    # What to take back if no evaluation comes: the first folder made, or the config.json.
    made = next((p for p in reversed((out, *out.parents)) if not p.exists()),
                out / "config.json")
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_bytes(config)
    except OSError as err:
        raise StorageError(f"cannot write the evaluation in {out}: "
                           f"{why_not_writable(out, err)}; nothing was done") from None
    return out, made


def _take_back(made: Path | None) -> None:
    """Remove what :func:`bundle_evaluation_folder` made (a folder, or a config.json)."""
    import shutil

    if made is not None and made.is_dir():
        shutil.rmtree(made, ignore_errors=True)
    elif made is not None:
        made.unlink(missing_ok=True)
