"""End-to-end runs of `gdi train` on small environments: files written, determinism, exact
resume, the local backend, SIGTERM, and bad input. Kept small so the file runs in a minute or
two on 2 cores."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from gdi.cli import main
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import TINY, tiny_config, train_until

ACTOR_PHASES = ("inference", "env", "record", "meta", "pull")


def rows(path: Path, drop_perf: bool = True) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if drop_perf:
            row = {k: v for k, v in row.items() if not k.startswith("perf/")}
        out.append(row)
    return out


def test_inline_run_writes_a_complete_run_folder(tmp_path):
    result = train(tiny_config(), tmp_path / "run", show_progress=False)
    run = result.run_dir
    assert result.frames >= 800 and not result.interrupted
    config = json.loads((run / "config.json").read_text())
    assert config["preset"] == "gdi-i3" and config["env"] == "gym:CartPole-v1"
    assert config["provenance"]["versions"]["torch"] == torch.__version__.split("+")[0] or \
        config["provenance"]["versions"]["torch"].startswith(torch.__version__.split("+")[0])
    assert "env_settings" in config
    assert not any(key.isupper() for key in config)  # no environment variables
    metrics = rows(run / "metrics.jsonl", drop_perf=False)
    assert any("losses/total" in r for r in metrics)
    assert any("charts/episodic_return" in r for r in metrics)
    assert any("perf/fps" in r for r in metrics)
    # Where the time goes: in one process the actor's phases and the learner's share one wall
    # clock, so together they cannot exceed it (eval and logging take the rest).
    for row in (r for r in metrics if "perf/actor_env_share" in r):
        shares = [row[f"perf/actor_{p}_share"] for p in ACTOR_PHASES]
        assert all(0.0 < s < 1.0 for s in shares)
        assert sum(shares) + row.get("perf/learner_share", 0.0) <= 1.0
    meta = [json.loads(line) for line in (run / "meta.jsonl").read_text().splitlines()]
    assert meta and all(len(m["lambda"]) == 3 for m in meta)
    assert sorted(p.name for p in (run / "eval").iterdir())  # periodic + final evaluation
    # The last periodic evaluation falls on the last window (800 frames due, 808 reached): it
    # is the final one too, played and recorded once.
    evals = [r for r in metrics if "eval/mean_return" in r]
    assert len({r["frames"] for r in evals}) == len(evals) >= 2
    assert evals[-1]["frames"] == result.frames
    assert evals[-1]["eval/mean_return"] == result.final_eval_return
    assert latest_checkpoint(run).is_file()
    assert list((run / "tensorboard").iterdir())


@pytest.mark.parametrize("preset", ["gdi-h3", "gdi-i1", "gdi-i0"])
def test_every_preset_trains(tmp_path, preset):
    result = train(tiny_config(preset, frames=400), tmp_path / preset, show_progress=False)
    metrics = rows(result.run_dir / "metrics.jsonl")
    losses = [r["losses/total"] for r in metrics if "losses/total" in r]
    assert losses and all(np.isfinite(losses))


def test_inline_is_deterministic_for_a_seed(tmp_path):
    a = train(tiny_config(), tmp_path / "a", show_progress=False, tensorboard=False)
    b = train(tiny_config(), tmp_path / "b", show_progress=False, tensorboard=False)
    assert rows(a.run_dir / "metrics.jsonl") == rows(b.run_dir / "metrics.jsonl")
    assert (a.run_dir / "meta.jsonl").read_text() == (b.run_dir / "meta.jsonl").read_text()


def test_interrupted_and_resumed_equals_uninterrupted(tmp_path):
    config = tiny_config(frames=1200)
    whole = train(config, tmp_path / "whole", show_progress=False, tensorboard=False)
    cut = train_until(config, tmp_path / "cut", 600)
    assert cut.interrupted and cut.frames < 1200
    resumed = train(config, tmp_path / "cut", resume=True, show_progress=False,
                    tensorboard=False)
    assert resumed.frames == whole.frames
    assert rows(resumed.run_dir / "metrics.jsonl") == rows(whole.run_dir / "metrics.jsonl")
    assert (resumed.run_dir / "meta.jsonl").read_text() == \
        (whole.run_dir / "meta.jsonl").read_text()
    final_a = load_checkpoint(latest_checkpoint(whole.run_dir))["learner"]["net"]
    final_b = load_checkpoint(latest_checkpoint(resumed.run_dir))["learner"]["net"]
    for key in final_a:
        # Exact: the resumed run repeats the same computations in the same process.
        assert torch.equal(final_a[key], final_b[key]), key


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_actors_on_the_gpu_train_checkpoint_and_resume(tmp_path):
    # actor_device=cuda: acting, truncation values and the recorded LSTM state cross devices;
    # the checkpoint holds CPU tensors and a resume puts them back on the GPU.
    config = tiny_config(env="minatar:breakout", frames=1200, actor_device="cuda")
    cut = train_until(config, tmp_path / "gpu", 600)
    assert cut.interrupted
    state = load_checkpoint(latest_checkpoint(cut.run_dir))
    for tensor in state["actors"][0]["net"].values():
        assert tensor.device.type == "cpu"
    assert state["actors"][0]["state"].device.type == "cpu"  # the carried LSTM state
    resumed = train(config, tmp_path / "gpu", resume=True, show_progress=False,
                    tensorboard=False)
    assert resumed.frames >= 1200


@pytest.mark.parametrize("env", ["minatar:breakout", "gym:CartPole-v1"])
def test_local_backend_smoke(tmp_path, env):
    config = tiny_config(env=env, frames=3000, backend="local", num_actors=2)
    result = train(config, tmp_path / "local", show_progress=False)
    assert result.frames >= 3000
    for name in ("config.json", "metrics.jsonl", "meta.jsonl"):
        assert (result.run_dir / name).stat().st_size > 0
    metrics = rows(result.run_dir / "metrics.jsonl", drop_perf=False)
    assert any("losses/total" in r for r in metrics)
    timed = [r for r in metrics if "perf/actor_env_share" in r]
    assert timed, "actors report where their time goes"
    for row in timed:  # each actor process has its own wall clock; shares average over them
        shares = [row.get(f"perf/actor_{p}_share", 0.0) for p in ACTOR_PHASES]
        # Idle time is reported with the actor's next message, possibly rows later, so only
        # the phases of acting itself are bounded by the row's wall time.
        assert 0.0 < sum(shares) <= 1.0 + 0.05
        assert row.get("perf/actor_idle_share", 0.0) >= 0.0
    assert load_checkpoint(latest_checkpoint(result.run_dir))["controllers"][0] is not None


@pytest.mark.slow
def test_the_paper_ale_preset_runs_its_five_actors(tmp_path):
    # The ALE preset's actors as the paper's table has them (5 actors, each with its own E),
    # shrunk everywhere else so that the run takes seconds: impala_deep on 84×84 frames.
    config = tiny_config(env="ale:Pong", frames=3000, backend="local", envs_per_actor=2,
                         eval_every=0)
    assert config.num_actors == 5 and config.torso == "impala_deep"
    result = train(config, tmp_path / "ale", show_progress=False)
    assert result.frames >= 3000
    controllers = load_checkpoint(latest_checkpoint(result.run_dir))["controllers"]
    assert len(controllers) == 5 and all(state is not None for state in controllers)


def test_sigterm_during_a_local_run_leaves_a_loadable_checkpoint(tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "gdi.cli", "train", "--env", "gym:CartPole-v1",
           "--frames", "10000000", "--run-dir", str(run), "--no-report", "--set", *TINY]
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until it is really training
        metrics = run / "metrics.jsonl"
        if metrics.exists() and "losses/total" in metrics.read_text():
            break
        time.sleep(0.5)
    process.send_signal(signal.SIGTERM)
    output = process.communicate(timeout=120)[0].decode()
    assert process.returncode == 143, output  # 128 + SIGTERM: interrupted, not finished
    assert "--resume" in output
    payload = load_checkpoint(latest_checkpoint(run))
    assert 0 < payload["frames"] < 10_000_000


def test_a_stop_during_the_final_evaluation_is_played_on_resume(tmp_path, monkeypatch):
    # Issue 45 item 3: SIGTERM while the final evaluation plays kept the checkpoint and
    # recorded nothing, and the resume then refused the run as "already finished".
    from gdi.runtime.training import periodic_evaluation as evaluation_module

    play = evaluation_module.play_episodes

    def terminated_while_playing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # a real signal, to the run's own handler
        return play(*args, **kwargs)

    config = tiny_config(frames=400, eval_every=0)
    monkeypatch.setattr(evaluation_module, "play_episodes", terminated_while_playing)
    cut = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    assert cut.interrupted and cut.frames >= 400 and cut.final_eval_return is None
    assert not list((cut.run_dir / "eval").glob("*.json"))
    checkpoints = sorted((cut.run_dir / "checkpoints").iterdir())

    monkeypatch.setattr(evaluation_module, "play_episodes", play)
    done = train(config, cut.run_dir, resume=True, show_progress=False, tensorboard=False)
    assert not done.interrupted and done.frames == cut.frames
    assert done.final_eval_return is not None
    recorded = json.loads((cut.run_dir / "eval" / f"frames_{cut.frames:012d}.json").read_text())
    assert recorded["frames"] == cut.frames and recorded["mean_return"] == done.final_eval_return
    assert sorted((cut.run_dir / "checkpoints").iterdir()) == checkpoints  # nothing retrained
    with pytest.raises(ValueError, match="already finished"):
        train(config, cut.run_dir, resume=True, show_progress=False, tensorboard=False)


def test_a_resume_that_only_plays_the_final_evaluation_says_so(tmp_path, monkeypatch,
                                                               capsys):
    # Issue 72: the note was queued for a progress line that never came.
    from gdi.runtime.training import periodic_evaluation as evaluation_module

    play = evaluation_module.play_episodes

    def terminated_while_playing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return play(*args, **kwargs)

    monkeypatch.setattr(evaluation_module, "play_episodes", terminated_while_playing)
    cut = train(tiny_config(frames=400, eval_every=0), tmp_path / "run", show_progress=False,
                tensorboard=False)
    monkeypatch.setattr(evaluation_module, "play_episodes", play)
    capsys.readouterr()
    main(["train", "--resume", str(cut.run_dir)])
    err = capsys.readouterr().err
    assert ("warning: the budget of 400 frames was spent but the final evaluation was "
            "interrupted: playing it now") in err
    assert "final evaluation mean return" in err


def test_a_budget_cut_below_the_frames_reached_is_refused_not_evaluated(tmp_path):
    # Only a run stopped during its final evaluation at its own budget plays it on resume; a
    # run resumed with a budget below what it reached is refused, as before.
    config = tiny_config(frames=800, eval_every=0)
    cut = train_until(config, tmp_path / "run", 400)
    with pytest.raises(ValueError, match=r"already finished at \d+ frames \(budget 200\)"):
        train(config.replace(frames=200), cut.run_dir, resume=True, show_progress=False,
              tensorboard=False)


def test_run_folder_is_never_overwritten(tmp_path, capsys):
    run = tmp_path / "exists"
    run.mkdir()
    (run / "config.json").write_text("{}")  # an empty folder would be used for the new run
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--env", "gym:CartPole-v1", "--run-dir", str(run), "--backend", "inline"])
    assert exit_info.value.code == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--preset", "gdi-i4"], "unknown preset"),
        (["train", "--env", "atari:Pong"], "must start with one of"),
        (["train", "--env", "minatar:brekout"], "breakout"),
        (["train", "--set", "lerning_rate=0.1"], "did you mean learning_rate"),
        (["train", "--set", "discount=2"], "discount must be in"),
        (["evaluate", "/nonexistent/run"], "not a gdi run folder"),
    ],
)
def test_bad_input_is_one_clear_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_resume_with_a_conflicting_config_is_refused(tmp_path, capsys):
    result = train(tiny_config(frames=200), tmp_path / "run", show_progress=False,
                   tensorboard=False)
    with pytest.raises(SystemExit):
        main(["train", "--resume", str(result.run_dir), "--preset", "gdi-h3"])
    assert "conflicting" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a run keeps the scale it was resolved at
        main(["train", "--resume", str(result.run_dir), "--scale", "minatar"])
    assert "conflicting options: {'scale': ('gym', 'minatar')}" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # and the learning
        main(["train", "--resume", str(result.run_dir), "--learning", "policy-head"])
    assert "conflicting options: {'learning': ('paper', 'policy-head')}" in \
        capsys.readouterr().err


def test_a_foreign_newest_checkpoint_is_named_with_the_older_one_that_resumes(tmp_path,
                                                                           capsys):
    # Issue 72: a gdi-h3 checkpoint planted newest in a gdi-i3 run was refused as a config the
    # user changed, with no word of the run's own older checkpoint.
    own = train(tiny_config(frames=400), tmp_path / "own", show_progress=False,
                tensorboard=False).run_dir
    other = train(tiny_config(preset="gdi-h3", frames=400), tmp_path / "other",
                  show_progress=False, tensorboard=False).run_dir
    (older,) = list_checkpoints(own)
    planted = own / "checkpoints" / "ckpt_999999999999.safetensors"
    shutil.copy(list_checkpoints(other)[-1], planted)
    with pytest.raises(SystemExit):
        main(["train", "--resume", str(own), "--frames", "800"])
    err = " ".join(capsys.readouterr().err.split())
    assert "preset ('gdi-h3' → 'gdi-i3')" in err
    assert (f"the newest checkpoint, {planted.name}, is the one that differs; the older "
            f"{older.name} has this config: move {planted} out of the folder") in err
    planted.unlink()
    main(["train", "--resume", str(own), "--frames", "800"])
    assert "done: " in capsys.readouterr().err


@pytest.mark.parametrize("flag, typed, saved", [
    ("--env", "minatar:breakout", "gym:CartPole-v1"),  # typed values equal to Config's
    ("--seed", "0", "3"),                               # defaults are still typed
    ("--preset", "gdi-i3", None),                       # the run's own: accepted
    ("--env", "gym:CartPole-v1", None),
])
def test_a_typed_option_on_resume_is_honoured_or_refused_never_dropped(
        tmp_path, capsys, monkeypatch, flag, typed, saved):
    from types import SimpleNamespace

    import gdi.runtime.wiring

    result = train(tiny_config(frames=200), tmp_path / "run", show_progress=False,
                   tensorboard=False)
    resumed = []
    def resume(config, *args, **kwargs):
        resumed.append(config)
        return SimpleNamespace(interrupted=False, run_dir=result.run_dir)

    monkeypatch.setattr(gdi.runtime.wiring, "train", resume)
    if saved is None:
        main(["train", "--resume", str(result.run_dir), flag, typed, "--no-report"])
        assert resumed and resumed[0].seed == 3 and resumed[0].env == "gym:CartPole-v1"
        return
    with pytest.raises(SystemExit) as refused:
        main(["train", "--resume", str(result.run_dir), flag, typed])
    assert refused.value.code == 2 and not resumed
    err = capsys.readouterr().err
    assert "conflicting options" in err and f"'{flag[2:]}': (" in err and saved in err


def test_a_resume_onto_another_backend_takes_the_fields_it_needs_in_the_same_step(
        tmp_path, monkeypatch):
    # actor_device auto is refused on Ray: `--backend ray --set actor_device=cpu` must be
    # checked as one change, not with the backend changed and the device not yet.
    from types import SimpleNamespace

    from gdi.cli.train import _train
    from gdi.runtime import wiring
    from gdi.runtime.run_folder.run_dir import write_config

    run = tmp_path / "run"
    run.mkdir()
    write_config(run, tiny_config(actor_device="auto", backend="local"), {})
    started = []
    monkeypatch.setattr(wiring, "train", lambda config, *a, **k: started.append(config))
    _train(None, None, None, None, None, 5000, None, "ray",  # none typed
           ("actor_device=cpu",), None, run, SimpleNamespace(requested=False))
    assert [(c.backend, c.actor_device, c.frames) for c in started] == [("ray", "cpu", 5000)]


def test_evaluate_command_writes_scores(tmp_path, capsys):
    result = train(tiny_config(frames=400), tmp_path / "run", show_progress=False,
                   tensorboard=False)
    main(["evaluate", str(result.run_dir), "--episodes", "3", "--envs", "2"])
    written = json.loads(next((result.run_dir / "eval").glob("ckpt_*.json")).read_text())
    assert len(written["episodes"]) == 3
    assert all(ep["return"] > 0 for ep in written["episodes"])  # CartPole pays 1 per step
    assert os.path.exists(result.run_dir / "eval")


def test_greedy_evaluation_plays_es_greedy_lambda_in_every_episode(tmp_path, capsys):
    from gdi.runtime.components import build_controller
    from gdi.runtime.run_folder.checkpoint import checkpoint_controller_state

    config = tiny_config(frames=1200)
    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    controller = build_controller(config, 0)
    ckpt = latest_checkpoint(result.run_dir)
    controller.load_state_dict(checkpoint_controller_state(load_checkpoint(ckpt)))
    main(["evaluate", str(result.run_dir), "--episodes", "4", "--envs", "2",
          "--policy", "greedy"])
    main(["evaluate", str(result.run_dir), "--episodes", "4", "--envs", "2"])
    greedy = json.loads((result.run_dir / "eval_greedy" / f"{ckpt.stem}.json").read_text())
    population = json.loads((result.run_dir / "eval" / f"{ckpt.stem}.json").read_text())
    assert config.meta_controller == "bandit"
    assert "greedy" in greedy["policy"] and greedy["checkpoint"] == ckpt.stem
    for episode in greedy["episodes"]:
        # Exact: the agent holds λ as E gives it (float64), and the episode records it so.
        np.testing.assert_array_equal(episode["lambda"], controller.greedy())
    assert len({tuple(ep["lambda"]) for ep in population["episodes"]}) == 4  # drawn per episode
    assert not list((result.run_dir / "eval").glob("*greedy*"))  # reports read eval/ only


def test_greedy_evaluation_of_an_e_without_estimates_is_one_clear_line(tmp_path, capsys):
    result = train(tiny_config(frames=400, meta_controller="uniform", meta_kwargs="{}"),
                   tmp_path / "run", show_progress=False, tensorboard=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", str(result.run_dir), "--episodes", "2", "--policy", "greedy"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "'uniform' keeps no estimate of the best λ" in err and len(err.splitlines()) == 1
    assert "play it with --policy population, uniform or fixed" in err


def test_a_stop_request_does_not_wait_for_an_evaluation(tmp_path, monkeypatch):
    """Ctrl-C during an evaluation abandons its episodes at the next step (an ALE evaluation can
    run to the 27,000-step cap): nothing of it is recorded, and the run checkpoints and stops
    as interrupted, resumable."""
    import gdi.runtime.training.periodic_evaluation as evaluation_module
    from gdi.runtime.acting.evaluator import play_agent_episodes
    from gdi.runtime.stop import StopRequest

    stop = StopRequest()
    real = evaluation_module.play_episodes
    asked = []

    def play_and_press_ctrl_c(*args, should_stop, **kwargs):
        stop.requested = True  # as the signal handler does, while the episodes run

        def counted() -> bool:
            asked.append(should_stop())
            return asked[-1]

        return real(*args, should_stop=counted, **kwargs)

    monkeypatch.setattr(evaluation_module, "play_episodes", play_and_press_ctrl_c)
    result = train(tiny_config(frames=400, eval_every=200), tmp_path / "run", stop=stop,
                   show_progress=False, tensorboard=False)
    assert result.interrupted and result.final_eval_return is None
    assert asked == [True]  # asked before the first step, and stopped there
    assert not list((result.run_dir / "eval").glob("*.json"))
    assert latest_checkpoint(result.run_dir) is not None
    # The playing loop itself: asked before every step, abandoned when told.
    import gdi

    agent = gdi.load_agent(result.run_dir, seed=1)
    answers = iter([False, False, False, True])
    assert play_agent_episodes(agent, agent.env_config, episodes=2, seed=0,
                               should_stop=lambda: next(answers)) is None


@pytest.mark.parametrize("backend", ["inline", "local"])
def test_one_step_sequences_train(tmp_path, backend):
    """seq_len=1, seq_stride=1, burn_in=0 on CartPole (no frame stack): the collector once
    dropped the newest window it held and failed on the next one (IndexError)."""
    config = tiny_config(frames=400, backend=backend, seq_len=1, seq_stride=1, burn_in=0)
    result = train(config, tmp_path / "run", show_progress=False, tensorboard=False)
    rows = [json.loads(line) for line in (result.run_dir / "metrics.jsonl").read_text()
            .splitlines()]
    assert result.frames >= 400 and max(row.get("learner_steps", 0) for row in rows) > 0


@pytest.mark.parametrize("frames, settings", [
    ("1", []),
    ("20000", ["min_replay=100000", "replay_capacity=200000"]),
])
def test_a_budget_that_ends_before_the_first_learner_step_is_refused(
        tmp_path, capsys, frames, settings):
    from tests.runtime.helpers import TINY

    run = tmp_path / "run"
    with pytest.raises(SystemExit) as refused:
        main(["train", "--env", "gym:CartPole-v1", "--backend", "inline", "--frames", frames,
              "--run-dir", str(run), "--set", *TINY, *settings])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "ends before the first learner step" in err
    assert "allowed: --frames" in err and len(err.strip().splitlines()) == 1
    assert not run.exists()


def test_a_run_that_never_stepped_says_so(tmp_path, capsys):
    """Two actors whose first windows (6 steps each) pass the lower bound (6 + 2·1 steps of
    one actor) but not min_replay = 3 windows of 4 sequences: the budget ends untrained."""
    from tests.runtime.helpers import TINY

    main(["train", "--env", "gym:CartPole-v1", "--backend", "inline", "--frames", "40",
          "--run-dir", str(tmp_path / "run"), "--no-report", "--set", *TINY, "num_actors=2",
          "seq_stride=1", "min_replay=12", "eval_every=0"])
    assert "warning: no learner step was taken: the collector held 8 of min_replay=12" in \
        capsys.readouterr().err
