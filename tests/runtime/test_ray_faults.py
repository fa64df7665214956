"""Every way a `--backend ray` run ends is a clean one (issue 30): SIGTERM checkpoints and exits
143, an address that cannot be reached or refuses us is one line within a bounded time (and a
Ctrl-C there is honoured), a machine too small for one actor is refused, a placement wait
gives up or stops on Ctrl-C, and an actor that cannot be placed again after its node was lost
fails the run after a checkpoint. The ones that start Ray are few and small (`slow`); the
others need no Ray processes."""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

ray = pytest.importorskip("ray")

from gdi.cli import main  # noqa: E402
from gdi.runtime.backends import ray_backend  # noqa: E402
from gdi.runtime.backends.ray_backend import RayBackend  # noqa: E402
from gdi.runtime.errors import ActorFailure  # noqa: E402
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint  # noqa: E402
from gdi.runtime.stop import StopRequest  # noqa: E402
from gdi.runtime_config import PlacementConfig  # noqa: E402
from tests.runtime.helpers import TINY, one_line_error, tiny_config  # noqa: E402

RAY_TRAIN = ["train", "--env", "gym:CartPole-v1", "--backend", "ray", "--no-report", "--set",
             *TINY]


def test_an_unreachable_address_gives_up_in_one_line_and_makes_no_folder(
        tmp_path, capsys, monkeypatch):
    # Before: Ray retried for many minutes, printing "Failed to connect to GCS" every 30 s,
    # deaf to Ctrl-C.
    monkeypatch.setattr(ray_backend, "CONNECT_TIMEOUT_S", 1.0)
    run = tmp_path / "run"
    start = time.monotonic()
    err = one_line_error([*RAY_TRAIN, "ray_address=127.0.0.1:1", "--run-dir", str(run)],
                         capsys)
    assert "cannot reach the Ray cluster at ray_address=127.0.0.1:1" in err
    assert "within 1 s" in err and "ray start --head" in err
    assert time.monotonic() - start < 60 and not run.exists() and not ray.is_initialized()


@pytest.mark.parametrize(("address", "said"), [
    ("127.0.0.1:99999", "ray_address='127.0.0.1:99999': port 99999 is not a TCP port; allowed: "
                        "1-65535"),
    ("ray://127.0.0.1:0", "port 0 is not a TCP port"),
    ("no-such-host.invalid:6379", "ray_address=no-such-host.invalid:6379: the host "
                                  "'no-such-host.invalid' is not known"),
])
def test_a_bad_port_or_an_unknown_host_is_said_at_once(tmp_path, capsys, address, said):
    # Issue 72: a misspelt host waited ~20 s; port 99999 was another address's "connection
    # refused" after ~25 s. Neither waits for the connection timeout now.
    run = tmp_path / "run"
    start = time.monotonic()
    err = one_line_error([*RAY_TRAIN, f"ray_address={address}", "--run-dir", str(run)], capsys)
    assert said in err
    assert time.monotonic() - start < ray_backend.CONNECT_TIMEOUT_S  # no connection tried
    assert not run.exists() and not ray.is_initialized()


def test_ctrl_c_while_reaching_the_cluster_is_honoured(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ray_backend, "CONNECT_TIMEOUT_S", 300.0)
    real_reach = ray_backend._reach

    def ctrl_c_while_reaching(*args):  # the Ctrl-C comes once the address is being tried
        os.kill(os.getpid(), signal.SIGINT)
        return real_reach(*args)

    monkeypatch.setattr(ray_backend, "_reach", ctrl_c_while_reaching)
    run = tmp_path / "run"
    start = time.monotonic()
    with pytest.raises(SystemExit) as exit_info:
        main([*RAY_TRAIN, "ray_address=127.0.0.1:1", "--run-dir", str(run)])
    assert time.monotonic() - start < 250  # not the 300 s
    assert exit_info.value.code == 130
    assert "interrupted during start-up, before any training; no run folder was made" in \
        " ".join(capsys.readouterr().err.split())
    assert not run.exists()


def test_ray_address_auto_without_a_cluster_is_one_line(tmp_path, capsys, monkeypatch):
    # Before: a 46-line ConnectionError. (Ray's own lookup, told that this machine runs no
    # cluster: other tests on the machine may run one.)
    from ray._private import services

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(services, "find_gcs_addresses", lambda: [])
    monkeypatch.setattr(services, "find_bootstrap_address", lambda temp_dir: None)
    err = one_line_error([*RAY_TRAIN, "ray_address=auto", "--run-dir", str(tmp_path / "r")],
                         capsys)
    assert "ray_address=auto: no running Ray cluster was found from this machine" in err
    assert "ray start --head --port 6379" in err and not (tmp_path / "r").exists()


def test_a_cluster_whose_token_auth_refuses_us_is_one_line_saying_what_to_set(
        tmp_path, capsys, monkeypatch):
    # Ray 2.60 turns token auth on for a head started where ~/.ray/auth_token exists; a
    # driver joining without RAY_AUTH_MODE=token got a 60-line AuthenticationError.
    listener = socket.create_server(("0.0.0.0", 0))  # Ray resolves 127.0.0.1 to the node IP
    port = listener.getsockname()[1]

    def refused(*args, **kwargs):
        raise ray.exceptions.AuthenticationError("Authentication failed: missing token")

    monkeypatch.setattr(ray, "init", refused)
    try:
        err = one_line_error([*RAY_TRAIN, f"ray_address=127.0.0.1:{port}", "--run-dir",
                              str(tmp_path / "r")], capsys)
    finally:
        listener.close()
    assert "uses token authentication and refused this process" in err
    assert "set RAY_AUTH_MODE=token" in err and "~/.ray/auth_token" in err


def test_more_cpus_per_actor_than_this_machine_has_is_refused(tmp_path, capsys):
    # Before: a local Ray instance of 64 CPUs on a 2-core machine, without a word.
    cores = os.cpu_count()
    err = one_line_error([*RAY_TRAIN, f"ray_cpus_per_actor={cores + 62}", "--run-dir",
                          str(tmp_path / "r")], capsys)
    assert f"ray_cpus_per_actor={cores + 62} is more than this machine's {cores} cores" in err
    assert not ray.is_initialized() and not (tmp_path / "r").exists()


class NeverPlaced:
    """Just what ``RayBackend._wait_placed`` uses of Ray, with a cluster that never places."""

    class Handle:
        class where:  # Ray's `handle.method.remote()`
            @staticmethod
            def remote():
                return object()

    def __init__(self, stop_after: int | None = None, stop: StopRequest | None = None):
        self.waits, self.stop_after, self.stop = 0, stop_after, stop

    def wait(self, refs, num_returns, timeout):
        self.waits += 1
        if self.stop_after is not None and self.waits >= self.stop_after:
            self.stop.signal_received(signal.SIGINT)
        return [], refs

    def available_resources(self):
        return {"CPU": 0.0}


def never_placing_backend(fake, cpus=4.0):
    backend = object.__new__(RayBackend)
    backend.ray = fake
    backend.handles = [NeverPlaced.Handle(), NeverPlaced.Handle()]
    backend.placement = tiny_config(ray_cpus_per_actor=cpus).layer(PlacementConfig)
    return backend


def test_ctrl_c_during_the_placement_wait_is_honoured(monkeypatch):
    monkeypatch.setattr(ray_backend, "PLACEMENT_TIMEOUT_S", 300.0)
    stop = StopRequest()
    fake = NeverPlaced(stop_after=3, stop=stop)
    assert never_placing_backend(fake)._wait_placed(stop) is False  # not the 300 s
    assert fake.waits == 3


def test_a_placement_that_never_comes_is_one_line(monkeypatch):
    monkeypatch.setattr(ray_backend, "PLACEMENT_TIMEOUT_S", 0.3)
    monkeypatch.setattr(ray_backend, "POLL_S", 0.05)
    with pytest.raises(ValueError, match=r"placed 0 of 2 actors in 0.3 s: each actor reserves "
                                         r"ray_cpus_per_actor=4 CPUs and 0 are free"):
        never_placing_backend(NeverPlaced())._wait_placed(StopRequest())


@pytest.mark.slow
def test_sigterm_of_a_ray_run_checkpoints_and_exits_143(tmp_path):
    # Before: Ray's (absl's) handler, installed by ray.init, replaced gdi's: a stack dump,
    # exit 15, no "interrupted" line and no checkpoint.
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "gdi.cli", *RAY_TRAIN, "eval_every=0", "--frames", "10000000",
           "--run-dir", str(run)]
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # until it really trains
            metrics = run / "metrics.jsonl"
            if metrics.exists() and "losses/total" in metrics.read_text():
                break
            assert process.poll() is None, process.communicate()[0].decode()
            time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=180)[0].decode()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, output
    assert "SIGTERM received" not in output and "Traceback" not in output
    assert f"Continue with: gdi train --resume {run}" in " ".join(output.split())
    assert 0 < load_checkpoint(latest_checkpoint(run))["frames"] < 10_000_000


@pytest.mark.slow
def test_an_actor_that_cannot_be_placed_again_after_its_node_was_lost_fails_the_run(
        tmp_path, monkeypatch):
    # Before: the replacement's placement never gave up, and the run waited forever for its
    # window. The head has no CPU for actors: the one actor runs on the worker node.
    from ray.cluster_utils import Cluster

    from gdi.runtime.wiring import train

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    worker = cluster.add_node(num_cpus=1)
    removed: list[int] = []

    def lose_the_node(frames: int) -> bool:
        if frames >= 400 and not removed:
            # A short bound for the replacement only: the first placement, on a loaded
            # machine, may take longer than that.
            monkeypatch.setattr(ray_backend, "PLACEMENT_TIMEOUT_S", 5.0)
            cluster.remove_node(worker)
            removed.append(frames)
        return False

    try:
        config = tiny_config(frames=10_000_000, backend="ray", num_actors=1, eval_every=0,
                             ray_address=cluster.address)
        with pytest.raises(ActorFailure, match=r"actor 0 failed: .*; its replacement was not "
                                               r"placed within 5 s: each actor reserves "
                                               r"ray_cpus_per_actor=1 CPUs"):
            train(config, tmp_path / "run", stop_when=lose_the_node, show_progress=False,
                  tensorboard=False)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
    assert removed
    saved = load_checkpoint(latest_checkpoint(tmp_path / "run"))  # checkpointed first
    assert saved["frames"] >= removed[0]


CLUSTER_WITH_TOKEN_AUTH = """
import sys
from ray.cluster_utils import Cluster
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
print(cluster.address, flush=True)
sys.stdin.read()  # until the test closes it
cluster.shutdown()
"""


@pytest.mark.slow
def test_a_real_head_with_token_auth_refusing_a_driver_without_it_is_one_line(tmp_path):
    # What Ray 2.60 does: a head started where ~/.ray/auth_token exists has token auth; a
    # driver joining by address without RAY_AUTH_MODE=token is refused ~20 times, one C++
    # warning a second on stderr, then a ConnectionError (before: all of it, as a traceback).
    head_home, our_home = tmp_path / "head", tmp_path / "ours"
    head_home.mkdir()
    our_home.mkdir()
    head_env = {**os.environ, "HOME": str(head_home), "RAY_AUTH_MODE": "token"}
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray_cli, "get-auth-token", "--generate"], env=head_env, check=True,
                   capture_output=True, timeout=120)
    head = subprocess.Popen([sys.executable, "-c", CLUSTER_WITH_TOKEN_AUTH], env=head_env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        address = head.stdout.readline().strip()
        assert address, "the head did not start"
        ours = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
        ours["HOME"] = str(our_home)
        run = tmp_path / "run"
        done = subprocess.run(
            [sys.executable, "-m", "gdi.cli", *RAY_TRAIN, f"ray_address={address}",
             "--run-dir", str(run)], env=ours, capture_output=True, text=True, timeout=300)
    finally:
        head.stdin.close()
        head.wait(timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "uses token authentication and refused this process: set RAY_AUTH_MODE=token" in \
        lines[0]
    assert not run.exists()
