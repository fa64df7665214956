"""The ``local`` backend: each actor in its own process, the learner in this one.

Actors are ``spawn``-ed processes (no inherited threads or locks) that read parameters from a
shared-memory parameter server and send one message per finished window of sequences: the
sequences (observations as a torch tensor, which torch's queue moves through shared memory
instead of a pipe), the episodes that ended since the last message, their frame count and their
E's state (kept for checkpoints and evaluation). The queue is short; the learner takes a
message only when the collector has room for it, so a slow learner makes actors wait rather
than letting memory grow or data be dropped.

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
    controller_state: dict | None,
) -> None:
    """Entry point of one actor process: act until ``stop_event`` is set."""
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
            if actor.steps % config.pull_every == 0:
                actor.pull(server)
            window, episodes = actor.step()
            pending.extend(episodes)
            if window is None:
                continue
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
            # Waiting for the learner to take the message: counted with the next message.
            actor.phase_seconds["send"] += time.perf_counter() - start
    except Exception:
        messages.put(("error", actor_id, traceback.format_exc()))
    finally:
        if actor is not None:
            actor.close()


class LocalBackend:
    def __init__(self, config: Config, env_config, shapes, learner) -> None:
        self.config = config
        self.shapes = shapes
        self.context = torch_mp.get_context("spawn")
        self.server = SharedParameterServer(learner.net, self.context)
        # One message per actor in the queue (plus the one each actor may be blocked putting):
        # on a CPU the learner is the bottleneck, and every window waiting here is data that
        # grows stale — with two per actor the policy lag on MinAtar was ≈ 22 learner steps
        # against ≈ 10 inline.
        self.messages = self.context.Queue(maxsize=config.num_actors)
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
                      self.stop_event, controller_states[i]),
            )
            process.start()
            self.processes.append(process)

        room = config.envs_per_actor
        while trainer.frames < config.frames:
            # Take messages while the collector has room; wait for one only when there is
            # nothing to train on.
            while trainer.collector.free_slots >= room:
                start = time.perf_counter()
                try:
                    message = self.messages.get(
                        block=not trainer.collector.ready(), timeout=1.0
                    )
                except queue_module.Empty:
                    self._check_actors()
                    break
                finally:
                    trainer.add_time("wait", time.perf_counter() - start)
                if message[0] == "error":
                    raise RuntimeError(f"actor {message[1]} failed:\n{message[2]}")
                _, actor_id, window, episodes, frames, controller_state, times = message
                trainer.add_actor_times(times)
                actor_frames[actor_id] = frames
                controller_states[actor_id] = controller_state
                trainer.frames = base_frames + sum(actor_frames)
                trainer.record_episodes(episodes)
                trainer.ingest(_unpack(window))
                if trainer.collector.ready():
                    break
            if trainer.learn_and_keep_books(stop, report):
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
