"""Weights & Biases tracking (issue 44, item 5), for real in W&B's offline mode: the run's
config and metrics rows reach W&B's files, and a resume continues the same W&B run."""

import time

import pytest

from gdi.runtime.run_folder.run_dir import WANDB_ID_FILE
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config, train_until

pytest.importorskip("wandb")


def offline_runs(run_dir):
    return sorted((run_dir / "wandb").glob("offline-run-*"))


def holds_run(folder, run_id):
    """W&B names an offline folder offline-run-<time>-<id>, with -1, -2 ... added when two
    starts fall in the same second (a quick resume does): the log file inside names the run."""
    return (folder / f"run-{run_id}.wandb").is_file()


def offline_log(path, *needles: bytes, patience_s: float = 60.0) -> bytes:
    """W&B's offline log once it holds every needle, or as it is after ``patience_s``: W&B's
    service process writes it and may still be writing when ``run.finish()`` has returned
    (seen on a loaded machine: only the file's 7-byte header was there). The test then asserts
    on what the file holds; the wait only keeps W&B's write-behind from deciding it."""
    deadline = time.monotonic() + patience_s
    while True:
        log = path.read_bytes()
        if all(n in log for n in needles) or time.monotonic() > deadline:
            return log
        time.sleep(0.2)


def test_a_run_and_its_resume_are_one_offline_wandb_run(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    config = tiny_config(frames=800, wandb_project="gdi-tests")
    run_dir = tmp_path / "run"
    train_until(config, run_dir, 400)  # interrupted, as a Ctrl-C would
    run_id = (run_dir / WANDB_ID_FILE).read_text().strip()
    (first,) = offline_runs(run_dir)
    assert holds_run(first, run_id)
    # W&B's offline log (protobuf records, to upload with `wandb sync`) holds the config and
    # the metrics rows: their keys and values are in it as written.
    expected = (b"lstm_units", b'"gdi-i3"', b"gdi-tests", b"losses/total",
                b"charts/episodic_return")
    log = offline_log(first / f"run-{run_id}.wandb", *expected)
    assert b"lstm_units" in log and b'"gdi-i3"' in log and b"gdi-tests" in log
    assert b"losses/total" in log and b"charts/episodic_return" in log

    train(config, run_dir, resume=True, show_progress=False, tensorboard=False)
    runs = offline_runs(run_dir)
    assert len(runs) == 2 and all(holds_run(r, run_id) for r in runs)  # the same W&B run
    log = offline_log(runs[-1] / f"run-{run_id}.wandb", b"eval/mean_return")
    assert b"eval/mean_return" in log  # the resumed part: to the end, final evaluation too


def test_wandb_project_without_wandb_installed_is_refused_before_any_folder(
        tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "wandb" else real(name, *a))
    with pytest.raises(ValueError, match=r"wandb_project='p' needs Weights & Biases, which is "
                                         r"not installed: pip install 'gdi-rl\[wandb\]'"):
        train(tiny_config(wandb_project="p"), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()
