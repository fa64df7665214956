"""How a run's roles connect (the paper's Algorithm 1), built in one function that reads as
this diagram, ``build_run``:

    environments ──▶ actors ──windows──▶ data collector ──batches──▶ learner (operator T)
                     ▲  │                                                 │
                     │  └──(λ, G) per episode──▶ E (one per actor)        │ push every push_every
                     └────────── pull every pull_every steps ◀── parameter server

``build_run`` builds each part from what it needs and hands it to the next, before the run
folder exists; ``build_trainer`` builds the learner side around them once it does (the parts
that record episodes, step the learner, log, evaluate and checkpoint); ``train`` runs the
lifecycle (``gdi.runtime.lifecycle``) around the driver loop (``gdi.runtime.driver``), which
is the same for every backend. A backend (``gdi.runtime.backends``: inline, local or ray)
places the actors and moves windows and parameters. docs/architecture.md follows one step
through the roles' folders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gdi.config import Config
from gdi.meta.config import MetaConfig
from gdi.nets.config import NetworkConfig
from gdi.policy_space import get_policy_space
from gdi.runtime import seeds
from gdi.runtime.backends.base import Backend, ParameterServer, backend_class
from gdi.runtime.callbacks import Callback, Callbacks
from gdi.runtime.components import (
    ActorRecipe,
    build_collector,
    build_learner,
    build_network,
    env_shapes,
    resolve_run_env,
)
from gdi.runtime.lifecycle import (
    RunSession,
    StartUpLines,
    TrainResult,
    check_budget_reaches_training,
    check_can_run,
    open_resumed_run,
)
from gdi.runtime.progress import Warnings
from gdi.runtime.run_folder.run_dir import MetricsWriter, RunLock
from gdi.runtime.stop import StoppedDuringStartUp, StopRequest
from gdi.runtime.storage.collector import ReplayCollector
from gdi.runtime.storage.reservoir import StageReservoir
from gdi.runtime.training.checkpointing import Checkpointing
from gdi.runtime.training.episodes import EpisodeRecorder
from gdi.runtime.training.learner import Learner
from gdi.runtime.training.log import TrainingLog, log_interval
from gdi.runtime.training.periodic_evaluation import TrainingEvaluation
from gdi.runtime.training.roster import ActorRoster
from gdi.runtime.training.trainer import Trainer
from gdi.runtime.training.updates import DivergenceWatch, LearnerUpdates
from gdi.runtime_config import OutputConfig, PlacementConfig, ReplayConfig


@dataclass(frozen=True)
class RunParts:
    """A run's parts, in the order experience flows through them (the diagram above)."""

    actors: Backend
    """The actors (each with its environments, its copy of θ and its own E), placed by the
    backend, which moves their windows and θ."""
    collector: ReplayCollector
    """Windows in, the learner's batches of sequences out."""
    learner: Learner
    """Operator T: θ and its optimizer, one update per batch."""
    server: ParameterServer
    """θ as the learner pushes it and the actors pull it."""


def build_run(config: Config, env_config, stop: StopRequest) -> RunParts:
    """Every part of a run, built in the order experience flows through them (the diagram
    above), each from what it needs and handed to the next. Nothing here writes to the run
    folder: a part that cannot be built (an environment gdi cannot act in, a Ray cluster it
    cannot reach) refuses the run before its folder exists. ``StoppedDuringStartUp`` when a
    stop is taken up while a part is built."""
    # environments: one built here to read what the network needs of them (``shapes``)
    shapes = env_shapes(env_config, config.seed)
    # θ, drawn first from torch's generator (seeded before): the learner trains it, the
    # actors act with copies of it
    net = build_network(config.layer(NetworkConfig), shapes)
    # environments → actors: each steps envs_per_actor environments with π_λ, λ drawn per
    # episode from its own E, and records windows of steps; the backend builds them from
    # their recipe where it places them
    recipe = ActorRecipe.of(config, env_config, shapes)
    actors = backend_class(config.backend)(recipe, config.layer(PlacementConfig), stop=stop)
    # actors → collector: each actor's windows continue its stream into sequences
    collector = build_collector(config.layer(ReplayConfig), config.seed,
                                env_config.stacked_frames)
    # collector → learner (operator T): a batch of sequences, one AdamW step of θ
    learner = build_learner(config, net)
    # learner → parameter server: θ pushed every push_every learner steps, held where the
    # backend's actors read it
    server = actors.parameter_server(learner.net)
    # parameter server → actors: each pulls θ every pull_every of its steps
    actors.pull_from(server)
    return RunParts(actors=actors, collector=collector, learner=learner, server=server)


def build_trainer(config: Config, env_config, run_dir: Path, parts: RunParts, *,
                  tensorboard: bool, callbacks: Callbacks,
                  should_stop: Callable[[], bool]) -> Trainer:
    """The learner side around the run's parts: the parts that write the run folder, built
    once it exists. ``should_stop`` is asked during an evaluation's episodes."""
    saved_config = config.to_dict()
    output = config.layer(OutputConfig)
    writer = MetricsWriter(run_dir, tensorboard=tensorboard,
                           wandb_project=config.wandb_project, config=saved_config)
    writer.write_hparams_text(saved_config)
    warnings = Warnings()
    index_names = get_policy_space(config.policy_space).index_names
    log = TrainingLog(log_interval(config.frames, config.log_every), writer, index_names,
                      parts.actors.parallel_actors, callbacks)
    episodes = EpisodeRecorder(writer, log, callbacks, warnings, config.env)
    roster = ActorRoster(config.num_actors)
    evaluation = TrainingEvaluation(output, config.layer(MetaConfig), config.policy_space,
                                    env_config, config.env, config.seed, run_dir, writer, log,
                                    callbacks, should_stop)
    reservoir = StageReservoir(
        config.reservoir_stages, config.observation_reservoir, seed=seeds.reservoir(config.seed),
    ) if config.observation_reservoir > 0 else None
    watch = DivergenceWatch(parts.learner, warnings, config.env, config.skipped_updates_max)
    updates = LearnerUpdates(parts.collector, parts.learner, parts.server, log, watch,
                             config.burn_in, config.push_every)
    checkpoints = Checkpointing(saved_config, output, run_dir, parts.learner, parts.collector,
                                parts.server, log, evaluation, episodes, roster, reservoir,
                                writer, callbacks)
    return Trainer(config.frames, config.layer(ReplayConfig), parts.collector, parts.learner,
                   updates, episodes, roster, reservoir, log, evaluation, checkpoints, warnings,
                   writer)


def train(
    config: Config,
    run_dir: Path | str | None = None,
    resume: bool = False,
    stop_when: Callable[[int], bool] | None = None,
    show_progress: bool = True,
    tensorboard: bool = True,
    stop: StopRequest | None = None,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train ``config`` into a new run folder, or continue the run in ``run_dir`` (resume).
    ``stop``: a StopRequest the caller installed before start-up (the CLI does, so that a
    Ctrl-C during imports is not lost); default: one made from ``stop_when``. ``callbacks``
    (``gdi.runtime.callbacks.Callback``) hear of each episode's end, metrics row, evaluation
    and checkpoint, and may stop the run through ``stop``."""
    stop = stop or StopRequest(stop_when)
    heard = Callbacks(callbacks, request_stop=stop.request)  # a wrong one refused before start
    with RunLock() as lock:  # this process alone writes the run folder, until it returns
        return _train(config, run_dir, resume, stop, show_progress, tensorboard, lock, heard)


def _train(config: Config, run_dir: Path | str | None, resume: bool, stop: StopRequest,
           show_progress: bool, tensorboard: bool, lock: RunLock,
           callbacks: Callbacks) -> TrainResult:
    """The run's lifecycle (``gdi.runtime.lifecycle``): checks, then the parts
    (``build_run``) before any folder is made, the folder, the learner side
    (``build_trainer``), the actors started, the loop, the end; closed however it ends."""
    check_can_run(config)
    say = StartUpLines(show_progress)
    env_config = resolve_run_env(config)
    resumed = open_resumed_run(config, run_dir, lock, env_config, say) if resume else None
    if resumed is None:
        check_budget_reaches_training(config, env_config.frames_per_step)
    session = RunSession(config, stop, say, resumed, lock)
    try:
        session.enter_learner_process()
        # Everything that can refuse the run (an environment gdi cannot act in, a Ray cluster
        # it cannot reach) comes before a new run's folder is made.
        try:
            parts = build_run(config, env_config, stop)
        except StoppedDuringStartUp:  # while reaching a Ray cluster
            parts = None
        session.actors = parts.actors if parts is not None else None
        stop.reclaim()  # Ray puts a SIGTERM handler of its own in place when it connects
        if parts is None or stop.requested:  # before any folder was made
            return session.stopped_during_start_up(None)
        run_dir = resumed.run_dir if resumed else session.new_run_folder(run_dir, env_config)
        session.trainer = build_trainer(config, env_config, run_dir, parts,
                                        tensorboard=tensorboard, callbacks=callbacks,
                                        should_stop=lambda: stop.requested)
        ended = session.start(run_dir, show_progress)
        if ended is not None:
            return ended
        session.drive(run_dir)
        return session.finish(run_dir)
    finally:
        session.close()
