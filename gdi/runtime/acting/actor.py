"""The actor: samples data with behavior policies π_λ, λ drawn from E (Alg. GDI-I³/H³, ACTOR).

One actor steps a batch of environments with one batched forward pass per step (the acting
step of ``gdi.runtime.acting.step``). Each environment has its own λ, drawn from the actor's E at
the start of each episode and reported back to E with the raw episode return G at its end;
like the paper, each actor keeps its own E (one bandit ensemble per actor). The actor records
each step once (``gdi.runtime.storage.steps``; ``gdi.runtime.storage.sequences`` has the
contract of what the learner reads) and pulls parameters every ``pull_every`` of its steps (the
paper's 64 on ALE), counted from its last pull.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch

from gdi.envs import make_vector_env
from gdi.policy_space import get_policy_space
from gdi.runtime.acting import env_state
from gdi.runtime.acting.step import Acting, compress_reward, one_step
from gdi.runtime.errors import EnvironmentFault
from gdi.runtime.storage.steps import StepChunk, StepRecorder
from gdi.runtime_config import ActorsConfig, ReplayConfig


@dataclass(frozen=True)
class EpisodeRecord:
    actor: int
    env: int
    episode_return: float
    """Raw, undiscounted, unclipped game score."""
    length: int
    """Agent steps."""
    lam: tuple[float, ...]
    """The λ this episode was played with."""


@dataclass
class Window:
    """What an actor hands the learner side per window: the actor → learner contract.

    Every backend moves this one type (in a process, through a queue, through Ray's object
    store); the learner side takes it with ``Trainer.take_window``.
    """

    actor_id: int
    steps: StepChunk
    """The steps acted for the window, each once, and the sequences they complete, one per
    environment (see ``gdi.runtime.storage.steps`` and ``gdi.runtime.storage.sequences``)."""
    episodes: list[EpisodeRecord]
    """The episodes that ended while the window was acted."""
    frames: int
    """Environment frames acted for this window."""
    controller_state: dict
    """The actor's E after the window (kept for checkpoints, evaluation and restarts)."""
    phase_seconds: dict[str, float]
    """Where the actor's time went since its last window (``Actor.take_phase_seconds``)."""


class Actor:
    """Actor ``actor_id``: ``actors.envs_per_actor`` environments of ``env_config`` stepped
    with ``net`` (θ, pulled every ``actors.pull_every`` steps) under π_λ of ``policy_space``,
    λ drawn from ``controller`` (its E), recorded into sequences of ``replay``'s shape."""

    def __init__(
        self,
        actor_id: int,
        actors: ActorsConfig,
        replay: ReplayConfig,
        policy_space: str,
        env_config,
        net: torch.nn.Module,
        controller,
        seed: int,
    ) -> None:
        self.actor_id = actor_id
        self.pull_every = actors.pull_every
        self.time_limit_bootstrap = replay.time_limit_bootstrap
        self.net = net
        self.controller = controller
        self.space = get_policy_space(policy_space)
        if controller.dim != self.space.dim:
            raise ValueError(
                f"E controller {type(controller).__name__} samples λ of dimension "
                f"{controller.dim}, but policy space {policy_space!r} is indexed by "
                f"{self.space.dim} ({', '.join(self.space.index_names)})"
            )
        self.num_envs = actors.envs_per_actor
        self.frames_per_step = env_config.frames_per_step
        self._env_config, self._seed = env_config, seed  # to build the environments again
        self.env = make_vector_env(env_config, self.num_envs, seed)
        # λ from E (float64, kept so until recorded); seeded action sampling.
        self.acting = Acting(net, policy_space, controller.sample_many,
                             np.random.default_rng(seed))
        self.version = -1  # no parameters pulled yet: the first pull always copies
        self.steps = 0
        self.pulled_at: int | None = None  # self.steps at the last pull (None: never pulled)
        # Seconds per phase of acting ("inference", "env", "record", "meta", "pull"; the local
        # backend's actor loop adds "idle"), for the perf/actor_* metrics and the throughput
        # report; whoever reports them resets them (take_phase_seconds).
        self.phase_seconds: dict[str, float] = defaultdict(float)
        self._start_episodes(seed)
        state_shape = tuple(self.acting.state.shape[1:])
        self.recorder = StepRecorder(
            self.num_envs, replay.sequence_length, replay.seq_stride, self.obs.shape[1:],
            self.obs.dtype, env_config.stacked_frames, self.space.dim, state_shape,
        )

    def _start_episodes(self, seed: int | None) -> None:
        """Reset every environment and draw a fresh λ for each."""
        n = self.num_envs
        self.obs, _ = self.env.reset(seed=seed)
        self.acting.reset(n)
        self.returns = np.zeros(n, dtype=np.float64)
        self.lengths = np.zeros(n, dtype=np.int64)

    @property
    def frames(self) -> int:
        return self.steps * self.num_envs * self.frames_per_step

    @property
    def meta_seconds(self) -> float:
        """Time spent in operator E (sample + update)."""
        return self.phase_seconds["meta"]

    def pull(self, server) -> None:
        start = time.perf_counter()
        self.version = server.pull(self.net, self.version)
        self.pulled_at = self.steps
        self.phase_seconds["pull"] += time.perf_counter() - start

    @property
    def pull_due(self) -> bool:
        """``pull_every`` steps have passed since the last pull (or there was none)."""
        return self.pulled_at is None or self.steps - self.pulled_at >= self.pull_every

    def take_phase_seconds(self) -> dict[str, float]:
        """The seconds per phase since the last call (and start counting afresh)."""
        taken, self.phase_seconds = dict(self.phase_seconds), defaultdict(float)
        return taken

    def act_window(self, server, pull_first: bool = False) -> Window:
        """Act until a window of sequences is finished: pull parameters when due (``pull_every``
        steps after the last pull, and first if ``pull_first``), step, collect the episodes
        that end. The one place where acting a window is written, for every backend.

        ``pull_first``: the backends whose actors wait for a credit between windows (``local``,
        ``ray``) pull when they start one, since the learner moved on while they waited; the
        count of ``pull_every`` steps then starts there, so a window never pulls twice in a
        row (docs/paper-choices.md)."""
        frames_before = self.frames
        episodes: list[EpisodeRecord] = []
        if pull_first:
            self.pull(server)
        while True:
            if self.pull_due:
                self.pull(server)
            steps, ended = self.step()
            episodes.extend(ended)
            if steps is not None:
                return Window(self.actor_id, steps, episodes, self.frames - frames_before,
                              self.controller.state_dict(), self.take_phase_seconds())

    def step(self) -> tuple[StepChunk | None, list[EpisodeRecord]]:
        """One step of every environment; returns the chunk of steps of a finished window (or
        None) and the episodes that ended."""
        clock = time.perf_counter
        acting = self.acting
        start = clock()
        actions = acting.act(self.obs)
        log_mu, next_state = acting.pending.log_mu, acting.pending.next_state
        env_start = clock()
        next_obs, rewards, terminated, truncated, info = self.env.step(actions)
        rewards = np.asarray(rewards, dtype=np.float64)
        if not np.isfinite(rewards).all():
            self._non_finite(rewards)
        truncation_start = clock()
        truncation_values = self._truncation_values(info, truncated, actions, rewards, next_state)
        record_start = clock()
        # Both end the trace (discount 0); a truncation's bootstrap is in truncation_values.
        dones = np.logical_or(terminated, truncated)
        # The step's inputs as the network read them (acting carries them until observe).
        self.recorder.record(
            acting.state.cpu().numpy(), **self._observation(self.obs), actions=actions,
            rewards=rewards, dones=dones, behavior_log_probs=log_mu, lambdas=acting.lambdas,
            versions=self.version, truncation_values=truncation_values,
        )

        self.returns += rewards
        self.lengths += 1
        episodes = []
        meta_start = clock()
        ended = np.flatnonzero(dones)
        # Operator E: every episode that ended at this step updates E; then observe draws the
        # next λ of those environments from the updated E, all in one call.
        for i in ended:
            lam = acting.lambdas[i].copy()  # as E drew it
            episodes.append(EpisodeRecord(
                self.actor_id, int(i), float(self.returns[i]), int(self.lengths[i]),
                tuple(float(x) for x in lam),
            ))
            self.controller.update(lam, float(self.returns[i]))
        acting.observe(rewards, terminated, truncated)
        self.returns[ended] = 0.0
        self.lengths[ended] = 0
        meta_end = clock()

        self.obs = next_obs
        self.steps += 1
        window = self.recorder.emit(**self._observation(self.obs))
        end = clock()
        phases = self.phase_seconds
        phases["inference"] += (env_start - start) + (record_start - truncation_start)
        phases["env"] += truncation_start - env_start
        phases["meta"] += meta_end - meta_start
        phases["record"] += (meta_start - record_start) + (end - meta_end)
        return window, episodes

    def _non_finite(self, rewards: np.ndarray) -> None:
        i = int(np.flatnonzero(~np.isfinite(rewards))[0])
        raise EnvironmentFault(
            f"the environment {self._env_config.spec} gives non-finite data: reward {rewards[i]} "
            f"from actor {self.actor_id}'s environment {i} at its step {self.steps}; fix or "
            "wrap the environment")

    def _observation(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The per-observation fields of a step (``gdi.runtime.storage.sequences``): the observation
        and the inputs the network reads with it, which acting carries between steps."""
        acting = self.acting
        return {"obs": obs, "resets": acting.resets, "prev_actions": acting.prev_actions,
                "prev_rewards": acting.prev_rewards}

    def _truncation_values(
        self, info: dict, truncated: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        state: torch.Tensor,
    ) -> np.ndarray | None:
        """V_f(final observation) ``[N, F]`` for the environments a time limit cut at this
        step (0 for the others), or None when there are none (or ``time_limit_bootstrap`` is
        off).

        The final observation is not a terminal state, so its return is bootstrapped from its
        value: one more forward step of the acting network from the state after this step, on
        the final observation with this step's action and reward as the previous ones. These
        are the actor's parameters, like μ: at most ``pull_every`` steps older than the
        learner's. The learner adds γ·V_f to the shaped reward of the cut step.
        """
        rows = np.flatnonzero(truncated)
        if rows.size == 0 or not self.time_limit_bootstrap:
            return None
        final_obs = np.ascontiguousarray(info["final_obs"][rows])
        device = self.acting.device
        with torch.no_grad():
            outputs, _ = self.net(
                one_step(final_obs, device), one_step(actions[rows], device),
                one_step(compress_reward(rewards[rows]), device),
                torch.zeros(1, rows.size, dtype=torch.bool, device=device),
                state[torch.from_numpy(rows).to(device)],
            )
        values = np.zeros((self.num_envs, outputs.value.shape[0]), dtype=np.float32)
        values[rows] = outputs.value[:, 0].T.cpu().numpy()
        return values

    # --- checkpointing -----------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything to resume this actor, on the CPU whatever ``actor_device`` is (a
        checkpoint loads on any machine)."""
        carried = self.acting.carried()  # state, resets, prev_actions, prev_rewards, lambdas
        carried["state"] = carried["state"].cpu()
        try:
            env = env_state.capture(self.env)
        except env_state.NotData:  # native envs (the ALE): their episodes restart on resume
            env = None
        return {
            "env": env,
            "obs": self.obs.copy(),
            **carried,
            "returns": self.returns.copy(),
            "lengths": self.lengths.copy(),
            "recorder": self.recorder.state_dict(),
            "rng": self.acting.rng.bit_generator.state,
            "controller": self.controller.state_dict(),
            "net": {name: tensor.cpu() for name, tensor in self.net.state_dict().items()},
            "version": self.version,
            "steps": self.steps,
            "pulled_at": self.pulled_at,
        }

    def load_state_dict(self, state: dict) -> bool:
        """Restore; returns False if the environments could not be restored (their episodes
        restart, everything else is restored)."""
        self.controller.load_state_dict(state["controller"])
        self.net.load_state_dict(state["net"])
        self.acting.rng.bit_generator.state = state["rng"]
        self.version, self.steps = state["version"], state["steps"]
        self.pulled_at = state["pulled_at"]
        if state["env"] is None:  # environments that cannot be saved (the ALE's emulator)
            self._start_episodes(seed=None)
            return False
        try:
            env_state.restore(self.env, state["env"])
        except env_state.NotData:  # saved by another kind of environment: start afresh
            self.env.close()
            self.env = make_vector_env(self._env_config, self.num_envs, self._seed)
            self._start_episodes(seed=None)
            return False
        for name in ("obs", "returns", "lengths"):
            setattr(self, name, state[name])
        self.acting.load_carried({**state, "state": state["state"].to(self.acting.device)})
        self.recorder.load_state_dict(state["recorder"])
        return True

    def close(self) -> None:
        self.env.close()
