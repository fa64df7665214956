"""AdamW schedule: linear warm-up in learner steps, linear anneal to 0 in frame progress."""

import pytest

from gdi.learning.schedule import optimizer_schedule
from tests.tolerance import assert_close

PAPER = {"learning_rate": 5e-4, "weight_decay": 0.01, "warmup_steps": 4000}


def test_warm_up_is_linear_in_steps():
    # step 0 is the first update: lr · 1/4000; step 1999: lr · 2000/4000.
    assert_close(optimizer_schedule(0, 0.0, **PAPER).learning_rate, 5e-4 / 4000)
    assert_close(optimizer_schedule(1999, 0.0, **PAPER).learning_rate, 2.5e-4)


def test_end_of_warm_up_reaches_the_peak():
    values = optimizer_schedule(3999, 0.0, **PAPER)
    assert_close(values.learning_rate, 5e-4)
    assert_close(values.weight_decay, 0.01)


def test_anneal_is_linear_in_progress_for_both():
    values = optimizer_schedule(10_000, 0.25, **PAPER)
    assert_close(values.learning_rate, 5e-4 * 0.75)
    assert_close(values.weight_decay, 0.01 * 0.75)


def test_run_end_gives_zero_and_progress_past_the_end_clamps():
    for progress in (1.0, 1.3):
        values = optimizer_schedule(50_000, progress, **PAPER)
        # Exact: the schedule's factor clamps to 0.
        assert values.learning_rate == 0.0 and values.weight_decay == 0.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="step"):
        optimizer_schedule(-1, 0.0, **PAPER)
    with pytest.raises(ValueError, match="progress"):
        optimizer_schedule(0, float("nan"), **PAPER)
