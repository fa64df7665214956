"""The ``local`` backend: each actor in its own process, the learner in this one.

Actors are ``spawn``-ed processes (no inherited threads or locks) that read parameters from a
shared-memory parameter server and send one message per finished window of sequences: the
sequences (observations as a torch tensor, which torch's queue moves through shared memory
instead of a pipe), the episodes that ended since the last message, their frame count, their
E's state (kept for checkpoints and evaluation) and where their time went.

Flow control is by credits: an actor acts a window only after the learner has asked for one
(a semaphore), and the learner asks just in time, ``LEAD_STEPS`` learner steps before the
collector would fall below ``min_replay``, at most one window in flight per actor. On a CPU the
learner is the bottleneck; a window acted earlier than needed is acted by older parameters
(measured on MinAtar Breakout, policy lag in learner steps: ≈ 22 with a free-running actor and
a two-message queue, ≈ 13.5 when a window was asked for as soon as the previous one arrived,
≈ 10 on the inline backend, where the actor acts exactly when the learner runs out). Memory
stays bounded and no data is dropped: the replay ratio stays exact.

Resuming a local run restores the learner, optimizer, counters and every actor's E exactly;
environments restart their episodes and the collector starts empty (documented in
docs/paper-choices.md). Exact resume is the inline backend's job.
"""

from __future__ import annotations

import queue as queue_module
import signal
import time
import traceback
from collections.abc import Callable

import torch
import torch.multiprocessing as torch_mp

from gdi.config import Config
from gdi.runtime.actor import Actor
from gdi.runtime.components import actor_seed, build_controller, build_network
from gdi.runtime.parameter_server import SharedParameterServer
from gdi.runtime.sequences import SequenceBatch
from gdi.runtime.trainer import Trainer


def _pack(window: SequenceBatch) -> dict:
    data = window.as_dict()
    data["obs"] = torch.from_numpy(data["obs"])
    return data


def _unpack(data: dict) -> SequenceBatch:
    data = dict(data)
    data["obs"] = data["obs"].numpy()
    return SequenceBatch(**data)


def actor_process(
    actor_id: int,
    config: Config,
    shapes,
    server: SharedParameterServer,
    messages,
    stop_event,
    credits,
    controller_state: dict | None,
) -> None:
    """Entry point of one actor process: act a window per credit until ``stop_event``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner process coordinates shutdown
    torch.set_num_threads(1)
    actor = None
    try:
        from gdi.envs import resolve_env

        env_config = resolve_env(config.env, **config.env_overrides)
        seed = actor_seed(config, actor_id)
        controller = build_controller(config, seed)
        if controller_state is not None:
            controller.load_state_dict(controller_state)
        actor = Actor(actor_id, config, env_config, build_network(config, shapes),
                      controller, seed)
        pending = []
        while not stop_event.is_set():
            # Idle until the learner asks for a window, then act it with fresh parameters.
            start = time.perf_counter()
            while not (credits.acquire(timeout=0.2) or stop_event.is_set()):
                pass
            actor.phase_seconds["idle"] += time.perf_counter() - start
            if stop_event.is_set():
                break
            actor.pull(server)
            window = None
            while window is None and not stop_event.is_set():
                if actor.steps % config.pull_every == 0:
                    actor.pull(server)
                window, episodes = actor.step()
                pending.extend(episodes)
            if window is None:
                break
            message = ("data", actor_id, _pack(window), pending, actor.frames,
                       controller.state_dict(), actor.take_phase_seconds())
            pending = []
            start = time.perf_counter()
            while not stop_event.is_set():
                try:
                    messages.put(message, timeout=0.2)
                    break
                except queue_module.Full:
                    continue
            # Counted with the next message.
            actor.phase_seconds["idle"] += time.perf_counter() - start
    except Exception:
        messages.put(("error", actor_id, traceback.format_exc()))
    finally:
        if actor is not None:
            actor.close()


#: How many learner steps ahead of need an actor is asked for its next window: enough for the
#: actor to act it while the learner takes those steps (a MinAtar window of 10 steps × 32
#: environments takes about one learner step of batch 16 on this CPU), few enough that the
#: window is acted by recent parameters.
LEAD_STEPS = 2


class LocalBackend:
    def __init__(self, config: Config, env_config, shapes, learner) -> None:
        self.config = config
        self.shapes = shapes
        self.context = torch_mp.get_context("spawn")
        self.server = SharedParameterServer(learner.net, self.context)
        self.messages = self.context.Queue(maxsize=config.num_actors)
        self.credits = self.context.Semaphore(0)  # windows the learner has asked for
        self.stop_event = self.context.Event()
        self.processes: list = []

    def run(self, trainer: Trainer, payload: dict | None, stop: Callable[[int], bool],
            report: Callable[[], None]) -> None:
        config = self.config
        controller_states = list(payload["controllers"]) if payload else [None] * config.num_actors
        base_frames = trainer.frames
        actor_frames = [0] * config.num_actors
        trainer.controller_state = lambda: controller_states[0]
        trainer.checkpoint_extra = lambda: {"controllers": list(controller_states)}
        trainer.actor_processes = config.num_actors
        for i in range(config.num_actors):
            process = self.context.Process(
                target=actor_process, name=f"gdi-actor-{i}", daemon=True,
                args=(i, config, self.shapes, self.server, self.messages,
                      self.stop_event, self.credits, controller_states[i]),
            )
            process.start()
            self.processes.append(process)

        room = config.envs_per_actor
        collector = trainer.collector
        in_flight = 0  # windows asked for and not yet received
        # Sequences the learner will have taken out LEAD_STEPS steps from now (each step uses
        # batch_size sequence-uses; a sequence leaves after `replay` of them).
        lead = LEAD_STEPS * -(-config.batch_size // config.replay)

        def ask_for_data() -> None:
            # Just in time: ask for the next window when the learner is LEAD_STEPS steps away
            # from running out (collector below min_replay), at most one in flight per actor.
            # Asked for earlier, a window is acted by parameters that many steps older.
            nonlocal in_flight
            while (in_flight < config.num_actors
                   and len(collector) + room * in_flight < config.min_replay + lead
                   and collector.free_slots >= room * (in_flight + 1)):
                self.credits.release()
                in_flight += 1

        while trainer.frames < config.frames:
            ask_for_data()
            # Take what has arrived; wait for a message only when there is nothing to train on.
            while collector.free_slots >= room:
                start = time.perf_counter()
                try:
                    message = self.messages.get(block=not collector.ready(), timeout=1.0)
                except queue_module.Empty:
                    self._check_actors()
                    break
                finally:
                    trainer.add_time("wait", time.perf_counter() - start)
                if message[0] == "error":
                    raise RuntimeError(f"actor {message[1]} failed:\n{message[2]}")
                _, actor_id, window, episodes, frames, controller_state, times = message
                in_flight -= 1
                trainer.add_actor_times(times)
                actor_frames[actor_id] = frames
                controller_states[actor_id] = controller_state
                trainer.frames = base_frames + sum(actor_frames)
                trainer.record_episodes(episodes)
                trainer.ingest(_unpack(window))
                ask_for_data()
                if collector.ready():
                    break
            if trainer.learn_and_keep_books(stop, report, before_step=ask_for_data):
                return

    def _check_actors(self) -> None:
        for process in self.processes:
            if not process.is_alive() and process.exitcode not in (0, None):
                raise RuntimeError(
                    f"{process.name} exited with code {process.exitcode} without a message"
                )

    def close(self) -> None:
        self.stop_event.set()
        deadline = time.monotonic() + 10.0
        while any(p.is_alive() for p in self.processes) and time.monotonic() < deadline:
            try:  # unblock actors waiting to put; what they sent is discarded
                self.messages.get(timeout=0.1)
            except queue_module.Empty:
                pass
            except (OSError, EOFError):
                # A message whose sender already exited: its shared-memory handle is gone.
                pass
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join(timeout=5.0)
        self.messages.close()
        self.messages.cancel_join_thread()
