"""TrainingLog (the metrics rows a training run writes) and CheckpointSchedule (when it
checkpoints): the parts the trainer calls, tested on their own."""

import time

import pytest

from gdi.config import Config
from gdi.runtime.acting.actor import EpisodeRecord
from gdi.runtime.run_folder.checkpoint import CheckpointSchedule
from gdi.runtime.training.log import MIN_ROWS, TrainingLog, log_interval
from gdi.runtime_config import OutputConfig


class Rows:
    """A MetricsWriter that keeps the rows."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, dict]] = []

    def write(self, frames: int, row: dict) -> None:
        self.rows.append((frames, dict(row)))

    def flush(self) -> None:
        pass


def training_log(config: Config, writer, index_names: tuple[str, ...]) -> TrainingLog:
    """The log of a run of ``config``: a row every ``log_interval`` of its budget."""
    return TrainingLog(log_interval(config.frames, config.log_every), writer, index_names)


def episode(ret: float, length: int, lam: tuple[float, ...]) -> EpisodeRecord:
    return EpisodeRecord(actor=0, env=0, episode_return=ret, length=length, lam=lam)


def test_a_row_holds_the_means_of_what_came_since_the_last_row():
    rows = Rows()
    log = training_log(Config(log_every=100), rows, ("inv_tau", "eps"))
    log.add_step({"losses/total": 1.0}, lag=2.0)
    log.add_step({"losses/total": 3.0}, lag=4.0)
    log.add_episodes([episode(1.0, 10, (2.0, 0.5)), episode(5.0, 30, (4.0, 0.1))])
    assert not log.due(99) and log.due(100)
    log.write(120, learner_steps=2, episodes=2, replay_size=7, actor_restarts=0)
    frames, row = rows.rows[0]
    assert frames == 120
    assert row["losses/total"] == 2.0 and row["perf/policy_lag"] == 3.0
    assert row["charts/episodic_return"] == 3.0 and row["charts/episodic_return_max"] == 5.0
    assert row["charts/episode_length"] == 20.0
    assert row["meta/inv_tau_mean"] == 3.0 and row["meta/inv_tau_std"] == 1.0
    assert row["meta/eps_mean"] == pytest.approx(0.3) and row["perf/replay_size"] == 7
    # The next row is due at the next multiple of log_every past the frames written, and
    # starts from nothing.
    assert not log.due(199) and log.due(200)
    log.write(200, learner_steps=2, episodes=2, replay_size=7, actor_restarts=0)
    assert "losses/total" not in rows.rows[1][1] and rows.rows[1][1]["perf/policy_lag"] == 0.0


def test_a_forced_row_needs_frames_since_the_last_one():
    log = training_log(Config(log_every=100), Rows(), ())
    assert log.due(10, force=True) and not log.due(0, force=True)


def test_a_restored_log_writes_the_row_the_uninterrupted_one_would():
    def fill(log: TrainingLog) -> None:
        log.add_step({"losses/q": 0.5}, lag=1.0)
        log.add_episodes([episode(2.0, 4, (1.0,))])

    config = Config(log_every=100)
    straight, resumed = Rows(), Rows()
    log = training_log(config, straight, ("x",))
    fill(log)
    saved = log.state_dict()
    restored = training_log(config, resumed, ("x",))
    restored.load_state_dict(saved)
    for each in (log, restored):
        each.add_step({"losses/q": 1.5}, lag=3.0)
        each.write(100, learner_steps=2, episodes=1, replay_size=1, actor_restarts=0)
    clock = ("perf/fps", "perf/learner_steps_per_s")  # wall time, not the run
    rows = [{k: v for k, v in log.rows[0][1].items() if k not in clock}
            for log in (straight, resumed)]
    assert rows[0] == rows[1]
    assert resumed.rows[0][1]["losses/q"] == 1.0


def test_a_checkpoint_is_due_by_frames_or_by_seconds_whichever_first():
    schedule = CheckpointSchedule(OutputConfig(checkpoint_every_frames=1000, checkpoint_every_s=3600))
    assert not schedule.due(999) and schedule.due(1000)
    schedule.saved(1000)
    assert not schedule.due(1999) and schedule.due(2000)
    by_time = CheckpointSchedule(OutputConfig(checkpoint_every_frames=10**9, checkpoint_every_s=0.01))
    time.sleep(0.02)
    assert by_time.due(0)
    by_time.saved(0)
    assert not by_time.due(0)


def test_a_short_budget_is_logged_every_tenth_of_it():
    """``log_every`` unless the budget holds fewer than MIN_ROWS of it (issue 71: a short run
    had three rows): then a tenth of the budget, so that a long run's rows stay as they were."""
    assert MIN_ROWS == 10
    assert log_interval(30_000, log_every=10_000) == 3_000
    assert log_interval(30_001, log_every=10_000) == 3_001  # rounded up
    assert log_interval(1_000_000, log_every=50_000) == 50_000
    assert log_interval(12_000, log_every=1_000) == 1_000  # same_records's runs
    assert log_interval(5, log_every=1) == 1
    log = training_log(Config(frames=30_000, log_every=10_000), Rows(), ())
    due = []
    for frames in range(160, 30_081, 160):  # the windows of one actor of 16 environments
        if log.due(frames):
            log.write(frames, learner_steps=0, episodes=0, replay_size=0, actor_restarts=0)
            due.append(frames)
    assert len(due) == 10 and due[0] == 3_040 and due[-1] == 30_080


def test_a_30000_frame_run_has_a_curve(tmp_path):
    """`gdi train --env gym:CartPole-v1 --frames 30000`, the first run of the getting-started
    page, writes at least 10 rows (the Gymnasium scale's log_every is 10,000)."""
    import json

    from gdi.cli import main

    run = tmp_path / "run"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "30000", "--backend", "inline",
          "--run-dir", str(run), "--no-report", "--set", "eval_every=0", "eval_episodes=2",
          "torch_threads=1"])
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    logged = [row["frames"] for row in rows if "perf/fps" in row]
    assert len(logged) >= 10 and logged[-1] >= 30_000
