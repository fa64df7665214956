"""Faults that long runs meet, each injected into a real process: an actor killed mid-run is
restarted and the run completes; too many failures stop the run with a checkpoint; a learner
killed with SIGKILL leaves no actor process behind, even one waiting for its half-done push."""

import json
import multiprocessing
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gdi.runtime.errors import ActorFailure
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint
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


def test_half_a_window_then_the_senders_end_leaves_the_reader_an_end_of_pipe():
    """A window larger than a pipe's buffer is sent in pieces; a sender killed between them
    leaves its reader half a message. The reader must hand on the end of the pipe (the
    backend then restarts the actor), not wait for the rest forever."""
    from gdi.runtime.backends.local import _END_OF_PIPE, _read_windows

    receiving, sending = multiprocessing.Pipe(duplex=False)
    arrived = queue.Queue()
    reader = threading.Thread(target=_read_windows, args=(3, 1, receiving, arrived),
                              daemon=True)
    reader.start()
    sending.send({"whole": True})
    # A header announcing 1 MB, then 64 kB of it, then the sender is gone.
    os.write(sending.fileno(), struct.pack("!i", 1_000_000) + b"x" * 65_536)
    sending.close()
    reader.join(timeout=30)
    assert not reader.is_alive(), "the reader waits for the rest of a dead sender's window"
    assert arrived.get_nowait() == (3, 1, {"whole": True})
    assert arrived.get_nowait() == (3, 1, _END_OF_PIPE)
    assert receiving.closed


def local_backend(**overrides):
    from gdi.envs import resolve_env
    from gdi.runtime.backends.local import LocalBackend
    from gdi.runtime.components import ActorRecipe, build_network, env_shapes
    from gdi.runtime_config import PlacementConfig

    config = tiny_config(env="minatar:breakout", backend="local", **overrides)
    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, config.seed)
    backend = LocalBackend(ActorRecipe.of(config, env_config, shapes),
                           config.layer(PlacementConfig))
    backend.pull_from(backend.parameter_server(build_network(config, shapes)))
    return backend


def test_a_stopped_actor_is_named_and_replaced_and_never_blocks_the_learner():
    """Issue 45, items 1 and 2: an actor stopped with SIGSTOP (or hung in an environment's
    step) sends nothing. Every receive still returns within about a second, so the learner
    keeps answering signals, and after actor_timeout_s the actor is named and replaced."""
    backend = local_backend(num_actors=1, actor_timeout_s=4)
    backend.start(lambda actor_id: None, None)
    stopped = backend.processes[0]
    try:
        deadline = time.monotonic() + 120
        while backend._started_at[0] is not None:  # its environments built (start-up has
            assert time.monotonic() < deadline    # a bound of its own, ten minutes)
            assert not backend.receive(block=True)
        backend.request(0)
        os.kill(stopped.pid, signal.SIGSTOP)
        received, longest = [], 0.0
        deadline = time.monotonic() + 120
        while not received:
            assert time.monotonic() < deadline, "no window from the replacement in 120 s"
            if backend.in_flight == 0:
                backend.request(0)
            start = time.monotonic()
            received.extend(backend.receive(block=True))
            longest = max(longest, time.monotonic() - start)
        assert longest < 10, f"a receive blocked for {longest:.1f} s"
        assert backend.restarts == 1 and backend.processes[0] is not stopped
        assert not stopped.is_alive()  # killed: a stopped process ignores SIGTERM
        warnings = backend.take_warnings()
        assert any("actor 0 sent nothing for" in w and "actor_timeout_s=4" in w
                   for w in warnings), warnings
    finally:
        if stopped.is_alive():
            os.kill(stopped.pid, signal.SIGKILL)
        backend.close()


def test_closing_with_a_stopped_actor_ends_it_within_seconds():
    backend = local_backend(num_actors=2)
    backend.start(lambda actor_id: None, None)
    processes = list(backend.processes)
    backend.request(0)
    os.kill(processes[0].pid, signal.SIGSTOP)
    start = time.monotonic()
    backend.close()
    assert time.monotonic() - start < 15
    assert not any(p.is_alive() for p in processes)


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


def actor_pids(learner_pid: int) -> list[int]:
    """The actor processes of a local run (spawned children, not the resource tracker)."""
    found = []
    for pid in children_of(learner_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "spawn_main" in cmdline and "resource_tracker" not in cmdline:
            found.append(pid)
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_sigterm_ends_a_run_whose_actor_is_stopped_within_30_s(tmp_path):
    """Issue 45, item 1: with its actor stopped (SIGSTOP), the learner ignored Ctrl-C and
    SIGTERM for as long as the actor stayed stopped, or saved its checkpoint and then waited
    on the stopped child forever."""
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "gdi.cli", "train", "--env", "gym:CartPole-v1",
           "--frames", "10000000", "--backend", "local", "--run-dir", str(run), "--no-report",
           "--set", *TINY]
    learner = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    stopped: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not ((run / "metrics.jsonl").is_file()
                   and "losses/total" in (run / "metrics.jsonl").read_text()):
            assert learner.poll() is None, f"training exited with {learner.returncode}"
            assert time.monotonic() < deadline, "not training within 120 s"
            time.sleep(0.2)
        stopped = actor_pids(learner.pid)
        assert stopped, children_of(learner.pid)
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(2)  # the learner is now waiting for a window that will not come
        start = time.monotonic()
        learner.send_signal(signal.SIGTERM)
        output = learner.communicate(timeout=30)[0].decode()
        took = time.monotonic() - start
    finally:
        if learner.poll() is None:
            learner.kill()
        for pid in stopped:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert learner.returncode == 143, output
    assert took < 30 and "checkpoint saved" in output and "Traceback" not in output, output
    assert 0 < load_checkpoint(latest_checkpoint(run))["frames"] < 10_000_000
    assert not any(alive(pid) for pid in stopped), "a stopped actor was left behind"


#: A learner that dies in the middle of a push, when its actor asks for fresh parameters: the
#: actor waits for a write that never ends.
LEARNER_DYING_MID_PUSH = """
import os, sys, time
import torch.multiprocessing as mp
from gdi.envs import resolve_env
from gdi.runtime.components import ActorRecipe, build_network, env_shapes
from gdi.runtime.backends.local import actor_process
from gdi.runtime.training.parameter_server import SharedParameterServer
from tests.runtime.helpers import tiny_config

config = tiny_config(env="gym:CartPole-v1")
env_config = resolve_env(config.env)
shapes = env_shapes(env_config, config.seed)
recipe = ActorRecipe.of(config, env_config, shapes)
context = mp.get_context("spawn")
server = SharedParameterServer(build_network(config, shapes), context)
receiving, sending = context.Pipe(duplex=False)
stop, credits = context.RawValue("b", 0), context.Semaphore(1)
server._version.value = 1  # newer than the actor's parameters,
server._sequence.value = 1  # and being written
actor = context.Process(target=actor_process, args=(
    0, 0, recipe, server, sending, stop, credits, None, os.getpid()))
actor.start()
print(actor.pid, flush=True)
deadline = time.monotonic() + 120
while credits.get_value() and time.monotonic() < deadline:  # the actor has taken its credit
    time.sleep(0.05)
if credits.get_value() or not actor.is_alive():  # it never got as far as the pull
    print("the actor did not start acting", file=sys.stderr, flush=True)
    os._exit(1)
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
    from gdi.runtime.run_folder.run_dir import frames_written

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
