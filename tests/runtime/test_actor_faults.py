"""Faults that long runs meet, each injected into a real process: an actor killed mid-run is
restarted and the run completes; too many failures stop the run with a checkpoint; a learner
killed with SIGKILL leaves no actor process behind, even one waiting for its half-done push."""

import fcntl
import json
import multiprocessing
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from gdi.runtime.checkpoint import latest_checkpoint, load_checkpoint
from gdi.runtime.errors import ActorFailure
from gdi.runtime.wiring import train
from tests.runtime.helpers import TINY, tiny_config


def kill_actor_once(at_frames: int, killed: list[int], name: str = "gdi-actor-0"):
    """A stop_when hook that SIGKILLs one local actor process the first time ``at_frames``
    is reached (and never asks the run to stop)."""

    def hook(frames: int) -> bool:
        if frames >= at_frames and not killed:
            actor = next(p for p in multiprocessing.active_children() if p.name == name)
            os.kill(actor.pid, signal.SIGKILL)
            killed.append(actor.pid)
        return False

    return hook


def test_a_killed_local_actor_is_restarted_and_the_run_completes(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=3000, backend="local", num_actors=2)
    killed: list[int] = []
    result = train(config, tmp_path / "run", stop_when=kill_actor_once(800, killed),
                   show_progress=False)
    assert killed and not result.interrupted and result.frames >= 3000
    rows = [json.loads(line) for line in (result.run_dir / "metrics.jsonl").read_text()
            .splitlines()]
    assert max(r.get("perf/actor_restarts", 0) for r in rows) == 1
    payload = load_checkpoint(latest_checkpoint(result.run_dir))
    assert payload["trainer"]["actor_restarts"] == 1
    assert all(state is not None for state in payload["controllers"])


def bytes_waiting(connection) -> int:
    """Bytes written into a pipe and not yet read."""
    return struct.unpack("i", fcntl.ioctl(connection.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def test_an_actor_killed_in_the_middle_of_sending_a_window_is_restarted():
    """A window of 64 sequences of 80 steps (~280 kB pickled besides its observations) is
    larger than a pipe's buffer, so its sender waits in the middle of the message until the
    learner reads; killed there, it must leave the learner an end of file, not half a message
    to wait on forever."""
    from types import SimpleNamespace

    from gdi.envs import resolve_env
    from gdi.runtime.components import build_network, env_shapes
    from gdi.runtime.local import LocalBackend

    config = tiny_config(env="minatar:breakout", backend="local", num_actors=1,
                         envs_per_actor=64, seq_len=80, seq_stride=80, burn_in=0,
                         replay_capacity=128)
    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, config.seed)
    backend = LocalBackend(config, env_config, shapes,
                           SimpleNamespace(net=build_network(config, shapes)))
    backend.start(lambda actor_id: None, None)
    received: list = []
    try:
        backend.request(0)
        assert backend.channels[0].poll(120), "no window within 120 s"
        deadline = time.monotonic() + 60
        while bytes_waiting(backend.channels[0]) < 60_000:  # a full pipe: the sender waits
            assert time.monotonic() < deadline, bytes_waiting(backend.channels[0])
            time.sleep(0.05)
        assert backend.processes[0].is_alive()
        os.kill(backend.processes[0].pid, signal.SIGKILL)
        backend.processes[0].join(timeout=10)

        def receive_until_a_window() -> None:
            while not received:
                if backend.in_flight == 0:
                    backend.request(0)
                received.extend(backend.receive(block=True))

        receiver = threading.Thread(target=receive_until_a_window, daemon=True)
        receiver.start()
        receiver.join(timeout=120)
        assert not receiver.is_alive(), "the learner waits for the rest of a dead actor's window"
        assert backend.restarts == 1
        assert any("exited with code -9" in w for w in backend.take_warnings())
        assert received[0].steps.frames.shape[1] > 0
    finally:
        backend.close()


def test_failures_past_the_budget_stop_the_run_with_a_checkpoint(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=100_000, backend="local",
                         actor_failures_max=0)
    killed: list[int] = []
    with pytest.raises(ActorFailure, match=r"1 actor failures within 600 s \(more than "
                                           r"actor_failures_max=0\); the last: actor 0 \(pid "
                                           r"\d+\) exited with code -9"):
        train(config, tmp_path / "run", stop_when=kill_actor_once(800, killed),
              show_progress=False)
    payload = load_checkpoint(latest_checkpoint(tmp_path / "run"))
    assert 800 <= payload["frames"] < 100_000  # resumable from where it stopped


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_sigkill_of_the_learner_leaves_no_actor_process(tmp_path):
    cmd = [sys.executable, "-m", "gdi.cli", "train", "--env", "minatar:breakout",
           "--frames", "10000000", "--run-dir", str(tmp_path / "run"), "--no-report",
           "--set", *TINY, "num_actors=2"]
    learner = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        # Wait until training is under way (the first metrics row is written).
        while not (tmp_path / "run" / "metrics.jsonl").is_file() \
                or not (tmp_path / "run" / "metrics.jsonl").read_text():
            assert learner.poll() is None, f"training exited with {learner.returncode}"
            assert time.monotonic() < deadline, "no metrics row within 120 s"
            time.sleep(0.2)
        spawned = children_of(learner.pid)
        # two actors (and multiprocessing's resource tracker)
        assert len(spawned) >= 2, f"children of the learner: {spawned}"
    finally:
        learner.kill()
        learner.wait()
    deadline = time.monotonic() + 20
    while any(alive(pid) for pid in spawned) and time.monotonic() < deadline:
        time.sleep(0.2)
    survivors = [pid for pid in spawned if alive(pid)]
    for pid in survivors:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"processes left behind: {survivors}"


#: A learner that dies in the middle of a push, when its actor asks for fresh parameters: the
#: actor waits for a write that never ends.
LEARNER_DYING_MID_PUSH = """
import os, sys, time
import torch.multiprocessing as mp
from gdi.envs import resolve_env
from gdi.runtime.components import build_network, env_shapes
from gdi.runtime.local import actor_process
from gdi.runtime.parameter_server import SharedParameterServer
from tests.runtime.helpers import tiny_config

config = tiny_config(env="gym:CartPole-v1")
env_config = resolve_env(config.env)
shapes = env_shapes(env_config, config.seed)
context = mp.get_context("spawn")
server = SharedParameterServer(build_network(config, shapes), context)
messages, stop, credits = context.Queue(maxsize=1), context.Event(), context.Semaphore(1)
server._version.value = 1  # newer than the actor's parameters,
server._sequence.value = 1  # and being written
actor = context.Process(target=actor_process, args=(
    0, 0, config, shapes, server, messages, stop, credits, None, os.getpid()))
actor.start()
print(actor.pid, flush=True)
deadline = time.monotonic() + 120
while credits.get_value() and time.monotonic() < deadline:  # the actor has taken its credit
    time.sleep(0.05)
time.sleep(0.5)  # and waits in its pull
os._exit(0)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_an_actor_whose_learner_died_mid_push_exits(tmp_path):
    root = Path(__file__).resolve().parents[2]
    # Files, not pipes: a pipe would stay open as long as the orphaned actor lives.
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        script = subprocess.run([sys.executable, "-c", LEARNER_DYING_MID_PUSH], cwd=root,
                                stdout=stdout, stderr=stderr, timeout=180)
    assert script.returncode == 0, err.read_text()
    actor_pid = int(out.read_text().split()[0])
    deadline = time.monotonic() + 20
    while alive(actor_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = alive(actor_pid)
    if left:
        os.kill(actor_pid, signal.SIGKILL)
    assert not left, "the actor stayed waiting for the dead learner's push"


def test_sigkill_of_the_learner_loses_at_most_checkpoint_every_frames(tmp_path):
    from gdi.runtime.run_dir import frames_written

    run = tmp_path / "run"
    bound = 2000
    cmd = [sys.executable, "-m", "gdi.cli", "train", "--env", "gym:CartPole-v1",
           "--frames", "10000000", "--run-dir", str(run), "--no-report",
           "--set", *TINY, f"checkpoint_every_frames={bound}", "checkpoint_every_s=1e9"]
    learner = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while frames_written(run / "meta.jsonl") < 4 * bound + bound // 2:  # mid-interval
            assert learner.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        learner.kill()
        learner.wait()
    reached = max(frames_written(run / "metrics.jsonl"), frames_written(run / "meta.jsonl"))
    saved = load_checkpoint(latest_checkpoint(run))["frames"]
    # The driver checks after each window: one window (4 envs × 4 steps) past the bound at most.
    assert 0 < reached - saved <= bound + 16, (reached, saved)

    resumed = subprocess.run(
        [sys.executable, "-m", "gdi.cli", "train", "--resume", str(run), "--frames",
         str(reached + 400), "--no-report"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming from the checkpoint at {saved:,} frames; the run had reached " \
           f"{reached:,}, so {reached - saved:,} frames are redone" in \
           resumed.stdout + resumed.stderr
