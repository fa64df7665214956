"""Faults a long run meets, each reproduced: a crash that cut the newest checkpoint and the
last rows short, a full disk while checkpointing, a signal mid-run (exit codes), a Ctrl-C
during start-up that a library's bare ``except:`` would swallow, and a second writer."""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from gdi.cli import main
from gdi.runtime import wiring
from gdi.runtime.run_folder import checkpoint as checkpoint_module
from gdi.runtime.run_folder.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import TINY, tiny_config, train_until


def rows(path):
    return [{k: v for k, v in json.loads(line).items() if not k.startswith("perf/")}
            for line in path.read_text().splitlines()]


def test_resume_after_a_crash_mid_write_falls_back_and_matches_an_uninterrupted_run(
        tmp_path, capsys):
    config = tiny_config(frames=1200, checkpoint_every_s=0.001, keep_checkpoints=3)
    whole = train(config, tmp_path / "whole", show_progress=False, tensorboard=False)
    cut = train_until(config, tmp_path / "cut", 600)
    run = cut.run_dir
    newest = latest_checkpoint(run)
    newest.write_bytes(newest.read_bytes()[:100])  # the crash cut the newest checkpoint
    for name in ("metrics.jsonl", "meta.jsonl"):  # ... and the last row of each log
        with open(run / name, "a") as handle:
            handle.write('{"frames": 99999, "charts/episodic_ret')
    capsys.readouterr()
    resumed = train(config, run, resume=True, show_progress=True, tensorboard=False)
    err = capsys.readouterr().err
    assert f"{newest.name} is truncated or corrupt" in err
    assert "resuming from the earlier ckpt_" in err
    for name in ("metrics.jsonl", "meta.jsonl"):
        assert f"{run / name}: dropped its incomplete last line" in " ".join(err.split())
    assert resumed.frames == whole.frames and not resumed.interrupted
    assert rows(run / "metrics.jsonl") == rows(whole.run_dir / "metrics.jsonl")
    assert (run / "meta.jsonl").read_text() == (whole.run_dir / "meta.jsonl").read_text()
    assert (newest.parent / (newest.name + ".corrupt")).is_file()  # kept for inspection


def test_a_full_disk_while_checkpointing_is_one_line_and_keeps_earlier_ones(
        tmp_path, capsys, monkeypatch):
    real_write, written = checkpoint_module.write_data_file, []

    def disk_fills_after_two(path, tree):
        if len(written) >= 2:
            def partial(handle):
                handle.write(b"partial")
                raise OSError(errno.ENOSPC, "No space left on device")
            checkpoint_module.atomic_write(path, partial)
        real_write(path, tree)
        written.append(tree["frames"])

    monkeypatch.setattr(checkpoint_module, "write_data_file", disk_fills_after_two)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--env", "gym:CartPole-v1", "--backend", "inline", "--frames", "5000",
              "--run-dir", str(run), "--no-report", "--set", *TINY,
              "checkpoint_every_s=0.001", "keep_checkpoints=5"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("gdi: error: could not write checkpoint ")
    assert last.endswith(": No space left on device; earlier checkpoints are kept")
    assert [load_checkpoint(p)["frames"] for p in list_checkpoints(run)] == written
    assert not [p for p in (run / "checkpoints").iterdir() if p.name.startswith(".")]


def test_ctrl_c_during_start_up_is_not_swallowed(tmp_path, capsys, monkeypatch):
    real_resolve_env = wiring.resolve_run_env

    def resolve_env_importing_like_minatar(*args, **kwargs):
        try:  # minatar imports matplotlib inside a bare `except:`: a Ctrl-C there is swallowed
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        except:  # noqa: E722 - the library's code, reproduced
            pass
        return real_resolve_env(*args, **kwargs)

    monkeypatch.setattr(wiring, "resolve_run_env", resolve_env_importing_like_minatar)
    before = signal.getsignal(signal.SIGINT)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--env", "gym:CartPole-v1", "--backend", "inline", "--frames", "2000",
              "--run-dir", str(run), "--set", *TINY])
    err = capsys.readouterr().err
    assert exit_info.value.code == 130, err
    assert "interrupted during start-up, before any training" in err and "Traceback" not in err
    assert not run.exists()  # nothing trained: nothing kept, the same command starts again
    assert signal.getsignal(signal.SIGINT) is before  # handlers restored


def test_a_stop_before_the_first_window_is_start_up_and_keeps_nothing(
        tmp_path, capsys, monkeypatch):
    # The ALE preset on a CPU: actors are started but no window has come yet (issue 30, item
    # 12). Before, the stop wrote a checkpoint of an untrained network "at 0 frames".
    from gdi.runtime.backends.inline import InlineBackend

    monkeypatch.setattr(InlineBackend, "receive", lambda self, block: [])
    waiting = wiring.StartUpLines.still_waiting
    monkeypatch.setattr(wiring.StartUpLines, "still_waiting",
                        lambda self, progress: waiting(self, progress, every_s=0.0))
    loops: list[int] = []

    def third_loop(frames: int) -> bool:
        loops.append(frames)
        return len(loops) >= 3

    run = tmp_path / "run"
    result = train(tiny_config(), run, stop_when=third_loop, show_progress=True)
    err = capsys.readouterr().err
    assert result.interrupted and result.frames == 0
    assert "start-up: " in err and "waiting for the first window" in err  # what it was doing
    assert "start-up: still waiting for the first window" in err
    assert "frames 0/" not in err  # not a progress line of 0 frames at 0 f/s
    assert "interrupted during start-up, before any training" in " ".join(err.split())
    assert "checkpoint saved" not in err and not run.exists()


def wait_until_training(process, run, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        metrics = run / "metrics.jsonl"
        if metrics.exists() and "losses/total" in metrics.read_text():
            return
        assert process.poll() is None, process.communicate()[0]
        time.sleep(0.3)
    process.kill()
    pytest.fail("the run did not start training in time")


@pytest.mark.parametrize(("sig", "code"), [
    (signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_checkpoints_stops_and_exits_with_its_code(tmp_path, capsys, sig, code):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "gdi.cli", "train", "--env", "gym:CartPole-v1",
           "--backend", "inline", "--frames", "10000000", "--run-dir", str(run),
           "--set", *TINY]
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)  # the test's own Ctrl-C stays its own
    try:
        wait_until_training(process, run)
        if sig == signal.SIGTERM:  # while it trains, nobody else writes its folder
            with pytest.raises(SystemExit):
                main(["train", "--resume", str(run)])
            assert f"(PID {process.pid})" in capsys.readouterr().err
        process.send_signal(sig)
        output = process.communicate(timeout=120)[0].decode()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, output
    assert "Traceback" not in output
    assert f"Continue with: gdi train --resume {run}" in " ".join(output.split())
    payload = load_checkpoint(latest_checkpoint(run))
    assert 0 < payload["frames"] < 10_000_000


def test_a_new_run_onto_a_full_disk_is_one_line_and_leaves_nothing(full_disk, capsys):
    # Issue 45 item 7: a traceback from RunLock.acquire, and RUN/.lock and eval/ left behind,
    # so that the same command was later refused as "not a gdi run folder".
    run = full_disk / "run"
    argv = ["train", "--env", "gym:CartPole-v1", "--frames", "2000", "--backend", "inline",
            "--run-dir", str(run), "--no-report", "--set", *TINY]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "No space left on device" in err and str(run) in err, err
    assert not run.exists()
    (full_disk / ".filler").unlink()  # space freed: the same command now runs
    main(argv)
    assert (run / "config.json").is_file() and list((run / "eval").iterdir())


def test_a_disk_that_fills_mid_run_is_one_line_and_the_run_resumes(full_disk, capsys):
    # Issue 45 item 9: a 75-line chained traceback from the metrics writer, and 43 lines for
    # a resume onto the full disk.
    from tests.conftest import fill_up

    (full_disk / ".filler").unlink()
    run = full_disk / "run"
    # A checkpoint at 400 frames, the disk full from 600: the metrics and λ logs or the next
    # checkpoint fail, whichever first fills the room left in its file's last page.
    config = tiny_config(frames=1600, checkpoint_every_frames=400)

    def fill_at_600(frames: int) -> bool:
        if frames >= 600 and not (full_disk / ".filler").exists():
            fill_up(full_disk)
        return False

    with pytest.raises(OSError) as failure:
        train(config, run, stop_when=fill_at_600, show_progress=False, tensorboard=False)
    message = str(failure.value)
    assert message.startswith("could not write") and "\n" not in message, message
    assert "No space left on device" in message
    assert list_checkpoints(run)  # the checkpoints written before the disk filled

    argv = ["train", "--resume", str(run), "--no-report"]
    with pytest.raises(SystemExit) as exit_info:  # the disk still full
        main(argv)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "No space" in err, err

    (full_disk / ".filler").unlink()
    main(argv)
    assert load_checkpoint(latest_checkpoint(run))["frames"] >= 1600


def test_the_metrics_writer_on_a_full_disk_is_one_line_naming_the_file(full_disk):
    from gdi.atomic import StorageError
    from gdi.runtime.run_folder.run_dir import MetricsWriter
    from tests.conftest import fill_up

    (full_disk / ".filler").unlink()
    writer = MetricsWriter(full_disk, tensorboard=False)
    writer.write(0, {"charts/episodic_return": 1.0})
    fill_up(full_disk)
    with pytest.raises(StorageError) as failure:
        for frames in range(1, 10_000):  # past the room left in the file's last page
            writer.write(frames, {"charts/episodic_return": 1.0, "losses/total": 0.5})
    assert str(failure.value) == (
        f"could not write {full_disk}/metrics.jsonl: No space left on device; the run stopped "
        f"at its newest checkpoint: once there is room, continue with: gdi train --resume "
        f"{full_disk}")
    with pytest.raises(StorageError, match=r"meta\.jsonl: No space left on device"):
        for frames in range(10_000):
            writer.write_episode(frames, 0, (1.0, 2.0, 0.5), 3.0, 10)
            writer.flush()
    writer.close()  # the lost rows were reported once; closing does not raise them again


def test_an_environment_giving_nan_observations_is_named_not_the_learning_rate(tmp_path, capsys):
    # Issue 45 item 11: every update was skipped until the run stopped blaming learning_rate.
    import gymnasium as gym
    import numpy as np

    class NaNAfterTen(gym.Wrapper):
        def reset(self, **kwargs):
            self.steps = 0
            return self.env.reset(**kwargs)

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.steps += 1
            if self.steps > 10:
                obs = np.full_like(obs, np.nan)
            return obs, reward, terminated, truncated, info

    gym.register("NaNObservations-v0",
                 entry_point=lambda **kw: NaNAfterTen(gym.make("CartPole-v1", **kw)))
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["train", "--env", "gym:NaNObservations-v0", "--frames", "20000", "--backend",
                  "inline", "--run-dir", str(tmp_path / "run"), "--no-report", "--set", *TINY,
                  "skipped_updates_max=3"])
    finally:
        gym.registry.pop("NaNObservations-v0", None)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the environment gym:NaNObservations-v0 gives non-finite data (" in err
    assert "observation values are NaN" in err and "learning_rate=" not in err, err


REWARD_MODULE = '''
import gymnasium as gym


class Reward(gym.Wrapper):
    """CartPole whose reward turns to VALUE after 30 steps of an episode."""

    def __init__(self, env, value):
        super().__init__(env)
        self.value, self.steps = value, 0

    def reset(self, **kwargs):
        self.steps = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        return obs, self.value if self.steps > 30 else reward, terminated, truncated, info


for name, value in (("NaN", float("nan")), ("Inf", float("inf")), ("Huge", 1e30)):
    gym.register(f"{name}Reward-v0",
                 entry_point=lambda value=value, **kw: Reward(gym.make("CartPole-v1", **kw),
                                                              value))
'''


@pytest.mark.parametrize(("backend", "kind", "shown"), [
    ("inline", "NaN", "nan"), ("inline", "Inf", "inf"), ("local", "NaN", "nan")])
def test_a_non_finite_reward_stops_the_run_naming_env_actor_and_step(tmp_path, backend, kind,
                                                                      shown):
    # Issue 72: three actor restarts, then "episode_return must be a finite number", naming
    # neither the environment nor the step.
    (tmp_path / "reward_envs.py").write_text(REWARD_MODULE)
    env = f"gym:reward_envs:{kind}Reward-v0"
    done = subprocess.run(
        [sys.executable, "-m", "gdi.cli", "train", "--env", env, "--frames", "20000",
         "--backend", backend, "--run-dir", "run", "--no-report", "--set", *TINY],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert re.search(rf"the environment {env} gives non-finite data: reward {shown} from actor "
                     r"0's environment \d+ at its step \d+; fix or wrap the environment", last), \
        done.stderr
    assert "restarted" not in done.stderr and "Traceback" not in done.stderr


def test_an_absurd_reward_is_warned_about_once(tmp_path):
    (tmp_path / "reward_envs.py").write_text(REWARD_MODULE)
    done = subprocess.run(
        [sys.executable, "-m", "gdi.cli", "train", "--env", "gym:reward_envs:HugeReward-v0",
         "--frames", "3000", "--backend", "inline", "--run-dir", "run", "--no-report",
         "--set", *TINY], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "swamp E's statistics" in line]
    assert len(warned) == 1, done.stderr
    assert re.search(r"warning: an episode returned [\d.]+e\+3\d \(actor 0, environment \d+, at "
                     r"[\d,]+ frames\) in gym:reward_envs:HugeReward-v0", warned[0])


HANGING_MODULE = '''
import pathlib
import time

import gymnasium as gym


class Hangs(gym.Wrapper):
    """CartPole whose 200th step never returns (asleep, or spinning in Python)."""

    def __init__(self, env, how):
        super().__init__(env)
        self.how, self.steps = how, 0

    def step(self, action):
        self.steps += 1
        if self.steps == 200:
            pathlib.Path("hung").touch()
            while True:
                if self.how == "sleep":
                    time.sleep(3600)
        return self.env.step(action)


for how in ("sleep", "spin"):
    gym.register(f"Hangs{how}-v0",
                 entry_point=lambda how=how, **kw: Hangs(gym.make("CartPole-v1", **kw), how))
'''


@pytest.mark.parametrize("how", ["sleep", "spin"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_inline_run_with_a_hung_environment_honours_a_stop_signal(tmp_path, how, sig):
    # Issue 72: it needed SIGKILL.
    (tmp_path / "hanging_envs.py").write_text(HANGING_MODULE)
    process = subprocess.Popen(
        [sys.executable, "-m", "gdi.cli", "train", "--env", f"gym:hanging_envs:Hangs{how}-v0",
         "--frames", "100000", "--backend", "inline", "--run-dir", "run", "--no-report",
         "--set", *TINY], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "hung").exists():
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    process.send_signal(sig)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("the run did not stop within 30 s of the signal") from None
    assert process.returncode == 1, err
    last = err.strip().splitlines()[-1]
    assert f"the run did not stop within 10 s of {sig.name}: a step that never returns" in last
    assert "Traceback" not in err
