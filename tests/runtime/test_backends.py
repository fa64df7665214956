"""The runtime seam: one registry of backends, one checkpoint format that resumes on another
backend, budget extension, and the refusal to re-run a finished run."""

import json

import numpy as np
import pytest

from gdi.presets import resolve_config
from gdi.run_spec import BACKENDS as CONFIG_BACKENDS
from gdi.runtime.backends.base import BACKENDS, backend_class
from gdi.runtime.lifecycle import RESUMABLE_FIELDS
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config, train_until


def test_every_configurable_backend_is_registered_and_follows_the_protocol():
    assert tuple(BACKENDS) == CONFIG_BACKENDS
    for name in ("inline", "local"):  # ray's import is tested in test_ray.py
        cls = backend_class(name)
        for member in ("start", "request", "idle_actors", "receive", "take_warnings",
                       "actor_states", "close", "in_flight", "restarts"):
            assert hasattr(cls, member), (name, member)
    with pytest.raises(ValueError, match="unknown backend 'mpi'; allowed: inline, local, ray"):
        backend_class("mpi")


def test_every_backend_writes_the_common_checkpoint_format(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=1200, backend="local", num_actors=2)
    local = load_checkpoint(latest_checkpoint(train(config, tmp_path / "local",
                                                    show_progress=False).run_dir))
    inline = load_checkpoint(latest_checkpoint(train(config.replace(backend="inline"),
                                                     tmp_path / "inline",
                                                     show_progress=False).run_dir))
    common = {"format", "config", "frames", "learner", "trainer", "torch_rng", "controllers"}
    assert common <= set(local) and common <= set(inline)
    assert set(local) - common == set()
    assert set(inline) - common == {"actors", "collector"}  # what exact resume adds
    assert len(local["controllers"]) == len(inline["controllers"]) == 2
    assert all(state is not None for state in local["controllers"] + inline["controllers"])


def test_a_local_run_resumes_on_the_inline_backend_and_back(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=2400, backend="local")
    cut = train_until(config, tmp_path / "run", 800)
    assert cut.interrupted
    saved = load_checkpoint(latest_checkpoint(cut.run_dir))

    middle = train(config.replace(backend="inline", frames=1600), cut.run_dir, resume=True,
                   show_progress=False, tensorboard=False)
    assert middle.frames >= 1600 and not middle.interrupted
    resumed = load_checkpoint(latest_checkpoint(middle.run_dir))
    # The learner went on from the checkpoint (its steps counted on), with E restored.
    assert resumed["learner"]["steps"] > saved["learner"]["steps"]
    assert resumed["config"]["backend"] == "inline"
    assert json.loads((cut.run_dir / "config.json").read_text())["backend"] == "inline"

    final = train(config, cut.run_dir, resume=True, show_progress=False, tensorboard=False)
    assert final.frames >= 2400
    assert load_checkpoint(latest_checkpoint(final.run_dir))["config"]["backend"] == "local"


def test_extending_a_finished_runs_budget(tmp_path):
    config = tiny_config(frames=800)
    done = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    with pytest.raises(ValueError, match=r"already finished at 8\d\d frames \(budget 800\); "
                                         r"to train on, extend the budget"):
        train(config, done.run_dir, resume=True, show_progress=False, tensorboard=False)
    before = load_checkpoint(latest_checkpoint(done.run_dir))

    longer = train(config.replace(frames=1600), done.run_dir, resume=True,
                   show_progress=False, tensorboard=False)
    after = load_checkpoint(latest_checkpoint(longer.run_dir))
    assert longer.frames >= 1600 and after["learner"]["steps"] > before["learner"]["steps"]
    assert len(list_checkpoints(longer.run_dir)) >= 2
    rows = [json.loads(line) for line in (longer.run_dir / "metrics.jsonl").read_text()
            .splitlines()]
    assert max(r["frames"] for r in rows) >= 1600
    # The anneal follows the new budget: the learning rate at the old budget's end was ~0,
    # after the extension it is back up (progress = frames / 1600).
    lrs = [r["schedule/learning_rate"] for r in rows if "schedule/learning_rate" in r]
    assert lrs[-1] < max(lrs)


def test_resuming_with_a_config_that_changes_what_is_learned_is_refused(tmp_path):
    config = tiny_config(frames=1200)
    cut = train_until(config, tmp_path / "run", 400)
    with pytest.raises(ValueError, match=r"differs from its checkpoint's in learning_rate "
                                         r"\(0.0005 → 0.1\); a resumed run may change only "
                                         r"frames, backend"):
        train(config.replace(learning_rate=0.1), cut.run_dir, resume=True,
              show_progress=False, tensorboard=False)
    assert "frames" in RESUMABLE_FIELDS and "lstm_units" not in RESUMABLE_FIELDS


def test_inline_resume_of_a_local_checkpoint_says_what_starts_afresh(tmp_path):
    config = tiny_config(env="minatar:breakout", frames=1600, backend="local")
    cut = train_until(config, tmp_path / "run", 600)
    backend = backend_class("inline")
    from gdi.envs import resolve_env
    from gdi.runtime.components import ActorRecipe, env_shapes
    from gdi.runtime_config import PlacementConfig

    env_config = resolve_env(config.env)
    shapes = env_shapes(env_config, 0)
    inline_config = config.replace(backend="inline")
    inline = backend(ActorRecipe.of(inline_config, env_config, shapes),
                     inline_config.layer(PlacementConfig))
    payload = load_checkpoint(latest_checkpoint(cut.run_dir))
    warnings = inline.start(payload["controllers"].__getitem__, payload)
    assert any("start afresh" in w for w in warnings)
    # E restored exactly (values, counts, RNG).
    np.testing.assert_equal(inline.actors[0].controller.state_dict(), payload["controllers"][0])
    inline.close()


def test_the_cli_extends_a_finished_run_on_another_backend(tmp_path, capsys):
    from gdi.cli import main
    from tests.runtime.helpers import TINY

    run = tmp_path / "run"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "800", "--backend", "inline",
          "--run-dir", str(run), "--no-report", "--set", *TINY])
    with pytest.raises(SystemExit) as again:
        main(["train", "--resume", str(run), "--no-report"])
    assert again.value.code == 2
    assert "already finished at" in capsys.readouterr().err
    with pytest.raises(SystemExit) as changed:  # what it learns cannot change on resume
        main(["train", "--resume", str(run), "--frames", "1600", "--set", "lstm_units=32",
              "--no-report"])
    assert changed.value.code == 2
    assert "lstm_units (16 → 32)" in capsys.readouterr().err

    main(["train", "--resume", str(run), "--frames", "1600", "--backend", "local",
          "--no-report"])
    payload = load_checkpoint(latest_checkpoint(run))
    assert payload["frames"] >= 1600 and payload["config"]["backend"] == "local"
    assert json.loads((run / "config.json").read_text())["frames"] == 1600


def test_stop_at_screens_the_first_frames_of_a_longer_run(tmp_path, capsys):
    """--stop-at N: exit 0 with a checkpoint at N frames, the learning rate still on the full
    budget's schedule; --resume takes it to the budget."""
    from gdi.cli import main
    from tests.runtime.helpers import TINY

    run = tmp_path / "run"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "1600", "--stop-at", "800",
          "--backend", "inline", "--run-dir", str(run), "--no-report", "--set", *TINY])
    assert "stopped (--stop-at 800) at" in capsys.readouterr().err
    payload = load_checkpoint(latest_checkpoint(run))
    assert 800 <= payload["frames"] < 1600
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    # Linear decay to 0 over 1,600 frames: about half the peak remains at 800, not ~0 as a
    # run of --frames 800 would have.
    last = [row for row in rows if "schedule/learning_rate" in row][-1]  # not an evaluation's
    assert last["schedule/learning_rate"] > 0.3 * resolve_config(
        "gdi-i3", "gym:CartPole-v1").learning_rate
    stopped_at = latest_checkpoint(run)
    # Resumed to a --stop-at it has passed: said in one line, nothing started or written.
    main(["train", "--resume", str(run), "--stop-at", "800", "--no-report"])  # exit 0
    assert f"is at {load_checkpoint(stopped_at)['frames']:,} frames, already at or past " \
        "--stop-at 800: nothing to train" in capsys.readouterr().err
    assert latest_checkpoint(run) == stopped_at
    main(["train", "--resume", str(run), "--no-report"])
    assert load_checkpoint(latest_checkpoint(run))["frames"] >= 1600
    with pytest.raises(SystemExit) as bad:
        main(["train", "--env", "gym:CartPole-v1", "--stop-at", "1e-3"])
    assert bad.value.code == 2 and "--stop-at '1e-3' is not a whole number" in \
        capsys.readouterr().err
