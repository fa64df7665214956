"""The ray backend on a local Ray instance and on a two-node cluster on this machine: runs
complete and write what a local run writes, actors spread over nodes, a killed Ray worker is
restarted, and a local run resumes on Ray."""

import json
import os
import signal

import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster  # noqa: E402

from gdi.runtime.backends.ray_backend import actor_name  # noqa: E402
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, load_checkpoint  # noqa: E402
from gdi.runtime.wiring import train  # noqa: E402
from tests.runtime.helpers import tiny_config, train_until  # noqa: E402

pytestmark = pytest.mark.slow


def run_files(run_dir) -> set[str]:
    return {p.name for p in run_dir.iterdir()}


def test_a_ray_run_writes_the_run_folder_a_local_run_writes(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=1600, num_actors=2)
    on_ray = train(config.replace(backend="ray"), tmp_path / "ray", show_progress=False)
    local = train(config.replace(backend="local"), tmp_path / "local", show_progress=False)
    assert on_ray.frames >= 1600 and not on_ray.interrupted
    assert run_files(on_ray.run_dir) == run_files(local.run_dir)
    rows = [json.loads(line) for line in (on_ray.run_dir / "metrics.jsonl").read_text()
            .splitlines()]
    assert any("losses/total" in r for r in rows)
    assert any("perf/actor_env_share" in r for r in rows)  # actors report their time
    payload = load_checkpoint(latest_checkpoint(on_ray.run_dir))
    assert set(payload) == set(load_checkpoint(latest_checkpoint(local.run_dir)))
    assert all(state is not None for state in payload["controllers"])
    assert not ray.is_initialized()  # the Ray instance the run started is shut down


def test_actors_spread_over_the_nodes_of_a_cluster(tmp_path):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        nodes: dict[str, str] = {}

        def look(frames: int) -> bool:
            if not nodes and ray.is_initialized():
                for i in range(2):
                    node, _ = ray.get(ray.get_actor(actor_name(i, 0)).where.remote())
                    nodes[f"actor {i}"] = node
            return False

        config = tiny_config(env="minatar:breakout", frames=1200, backend="ray", num_actors=2,
                             ray_address=cluster.address)
        result = train(config, tmp_path / "run", stop_when=look, show_progress=False)
        assert result.frames >= 1200
        assert len(set(nodes.values())) == 2, nodes
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


def test_a_killed_ray_worker_is_restarted_and_the_run_completes(tmp_path):
    killed: list[int] = []

    def kill_once(frames: int) -> bool:
        if frames >= 600 and not killed:
            _, pid = ray.get(ray.get_actor(actor_name(0, 0)).where.remote())
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        return False

    config = tiny_config(env="minatar:breakout", frames=2400, backend="ray", num_actors=2)
    result = train(config, tmp_path / "run", stop_when=kill_once, show_progress=False)
    assert killed and result.frames >= 2400
    payload = load_checkpoint(latest_checkpoint(result.run_dir))
    assert payload["trainer"]["actor_restarts"] == 1


def test_a_local_run_resumes_on_ray(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=2000, backend="local")
    cut = train_until(config, tmp_path / "run", 800)
    steps = load_checkpoint(latest_checkpoint(cut.run_dir))["learner"]["steps"]
    resumed = train(config.replace(backend="ray"), cut.run_dir, resume=True,
                    show_progress=False, tensorboard=False)
    payload = load_checkpoint(latest_checkpoint(resumed.run_dir))
    assert resumed.frames >= 2000 and payload["learner"]["steps"] > steps
    assert payload["config"]["backend"] == "ray"
