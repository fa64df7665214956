"""benchmarks.peer_stats: Sample Factory's learner statistics (its TensorBoard ``train/*``
scalars) kept as ``learner.csv`` beside a peer run's curves, merged across a move."""

import csv

from torch.utils.tensorboard import SummaryWriter

from benchmarks.peer_stats import read_learner_csv, write_learner_csv


def write_events(folder, scalars):
    """TensorBoard events as Sample Factory's learner writes them: (tag, step, value)."""
    writer = SummaryWriter(str(folder))
    for tag, step, value in scalars:
        writer.add_scalar(tag, value, step)
    writer.close()


def test_the_train_scalars_become_one_row_per_step(tmp_path):
    events = tmp_path / ".summary" / "0"
    write_events(events, [("train/entropy", 4096, 2.875), ("train/entropy", 8192, 2.5),
                          ("train/fraction_clipped", 8192, 0.25), ("perf/_fps", 4096, 800.0),
                          ("reward/reward", 8192, 3.0)])
    path = tmp_path / "learner.csv"
    assert write_learner_csv(str(events), str(path)) == 2
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # only the learner's statistics; a step without one of them leaves its cell empty (the
    # values are exact in binary and in five significant digits: compared as text)
    assert rows == [["frames", "train/entropy", "train/fraction_clipped"],
                    ["4096", "2.875", ""], ["8192", "2.5", "0.25"]]


def test_a_resume_without_the_events_keeps_the_rows_kept_before(tmp_path):
    path = tmp_path / "learner.csv"
    path.write_text("frames,train/entropy\n4096,2.875\n8192,2.5\n")
    # the run resumed on another machine from a checkpoint at 4,096 frames: its events start
    # after it, and 8,192 is logged again
    events = tmp_path / "events"
    write_events(events, [("train/entropy", 8192, 2.25), ("train/kl_divergence", 12288, 0.005)])
    assert write_learner_csv(str(events), str(path)) == 3
    rows = read_learner_csv(str(path))
    assert sorted(rows) == [4096, 8192, 12288]
    assert rows[4096] == {"train/entropy": 2.875}
    assert rows[8192] == {"train/entropy": 2.25}  # the new value
    # float32's 0.004999999888 written at five significant digits: exactly the decimal 0.005
    assert rows[12288] == {"train/kl_divergence": 0.005}


def test_no_statistic_writes_no_file(tmp_path):
    events = tmp_path / "events"
    write_events(events, [("perf/_fps", 4096, 800.0)])
    path = tmp_path / "learner.csv"
    assert write_learner_csv(str(events), str(path)) == 0
    assert not path.exists()
