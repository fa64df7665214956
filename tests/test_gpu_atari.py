"""benchmarks/gpu_atari.py at a tiny scale on the CPU: the command a GPU machine runs, ready for
the day one is at hand — it trains the ALE preset for a wall time, stops it as a user would and
writes its figures."""

import json

import pytest

from benchmarks import gpu_atari
from tests.runtime.helpers import TINY


@pytest.mark.slow
def test_a_tiny_cpu_run_writes_every_figure(tmp_path, capsys):
    run_dir, out = tmp_path / "run", tmp_path / "figures.json"
    settings = [s for s in TINY if not s.startswith("eval_every")] + ["envs_per_actor=2",
                                                                      "eval_every=0"]
    # A fifth of a minute of training, however long start-up takes on a loaded machine.
    assert gpu_atari.main(["--device", "cpu", "--minutes", "0.2", "--actors", "2",
                           "--run-dir", str(run_dir), "--out", str(out),
                           "--set", *settings]) == 0
    figures = json.loads(out.read_text())
    assert figures["env"] == "ale:Breakout" and figures["learner_device"] == "cpu"
    assert figures["num_actors"] == 2 and figures["exit_code"] == 130  # stopped by SIGINT
    assert figures["frames"] > 0 and figures["frames_per_s_end_to_end"] > 0
    for share in ("learner_busy_share", "learner_wait_share", "actor_idle_share"):
        assert 0.0 <= figures[share] <= 1.0, share
    assert figures["policy_lag"] >= 0.0
    assert (run_dir / "checkpoints").is_dir()  # the interrupted run can be resumed
    assert "frames/s end to end" in capsys.readouterr().out


def test_evaluations_are_read_from_the_run_folder(tmp_path):
    from gdi.scores import periodic_eval_name, write_eval_file

    run = tmp_path / "run"
    (run / "eval").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({
        "env": "ale:Breakout", "preset": "gdi-i3", "learner_device": "cuda", "num_actors": 15,
        "envs_per_actor": 32, "batch_size": 64}))
    rows = [{"frames": 1000 * k, "perf/fps": 100.0 * k, "perf/learner_share": 0.5,
             "perf/wait_share": 0.25, "perf/policy_lag": 3.0, "perf/actor_env_share": 0.5,
             "perf/actor_inference_share": 0.25} for k in (1, 2, 3, 4)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_eval_file(run, periodic_eval_name(2000), checkpoint="x", frames=2000, env="ale:Breakout",
                    policy="π_λ", seed=0, episodes=[{"return": 3.0, "frames": 10, "seed": 0},
                                                     {"return": 5.0, "frames": 10, "seed": 1}])
    figures = gpu_atari.summarize(run, wall_s=40.0)
    assert figures["frames_per_s_end_to_end"] == 4000 / 40.0
    assert figures["frames_per_s_second_half"] == (300.0 + 400.0) / 2  # rows 3 and 4
    assert figures["actor_idle_share"] == 0.25  # 1 − (0.5 + 0.25)
    assert figures["evaluations"] == [{"frames": 2000, "mean_return": 4.0}]


def test_a_named_learning_reaches_gdi_train(tmp_path):
    args = gpu_atari.parse_args(["--learning", "policy-head", "--actors", "3",
                                 "--set", "input_norm=running"])
    command = gpu_atari.train_command(args, tmp_path / "run")
    assert command[command.index("--learning") + 1] == "policy-head"
    assert command[command.index("--set") + 1:] == [
        "learner_device=cuda", "actor_device=cpu", "num_actors=3", "input_norm=running"]
    # Without one, gdi train takes the scale's (the paper's T).
    assert "--learning" not in gpu_atari.train_command(gpu_atari.parse_args([]), tmp_path / "r")


def test_bad_arguments_are_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        gpu_atari.parse_args(["--minutes", "0"])
    assert stop.value.code == 2 and "--minutes must be positive, got 0" in capsys.readouterr().err
