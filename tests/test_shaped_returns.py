"""benchmarks/shaped_returns.py: episode totals by hand, and the table for a trained run."""

import math

import numpy as np
import pytest

from benchmarks import shaped_returns
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config
from tests.tolerance import assert_close


def test_episode_totals_of_a_hand_worked_case():
    # Environment 0 plays short episodes (ending at steps 1, 3 and 5); environment 1 one long
    # one (steps 0-4), then one still running at step 5, which belongs to no finished episode.
    rewards = np.array([[1.0, -2.0], [-1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [3.0, 1.0],
                        [0.0, 5.0]])
    done = np.array([[False, False], [True, False], [False, False], [True, False],
                     [False, True], [True, False]])
    totals = shaped_returns.episode_totals(rewards, done, per_env=1)
    # One episode from each environment, environment by environment: env 0's steps 0-1 and
    # env 1's steps 0-4, although env 0's second episode ended (step 3) before env 1's first.
    assert totals.raw == [0.0, -1.0]
    assert totals.positive == [1.0, 1.0]
    assert totals.negative == [-1.0, -2.0]
    assert totals.shaped["none"] == totals.raw
    # The printed log shape: 2·log(1 + r) for r ≥ 0, −log(1 + |r|) for r < 0.
    assert_close(totals.shaped["log"], [2 * math.log(2) - math.log(2),
                                        -math.log(3) + 2 * math.log(2)], dtype=np.float64,
                 terms=2)
    # Reward shape 2: sign(r)·((|r| + 1)^0.25 − 1) + 0.001·r.
    root = lambda r: math.copysign((abs(r) + 1) ** 0.25 - 1, r) + 0.001 * r  # noqa: E731
    assert_close(totals.shaped["root"], [root(1) + root(-1), root(-2) + root(1)],
                 dtype=np.float64, terms=2)
    # Env 1's second episode has not ended by the last step, so two per environment is refused
    # rather than counted from a part of an episode.
    with pytest.raises(ValueError, match="environment 1 finished 1 episodes, fewer than "
                                         "per_env=2"):
        shaped_returns.episode_totals(rewards, done, per_env=2)
    assert shaped_returns.episode_totals(rewards[:, :1], done[:, :1], per_env=3).raw == [
        0.0, 2.0, 3.0]


def test_episode_totals_needs_matching_time_major_arrays():
    with pytest.raises(ValueError, match=r"rewards \(3, 2\) and done \(3,\)"):
        shaped_returns.episode_totals(np.zeros((3, 2)), np.zeros(3, dtype=bool), per_env=1)


def test_the_table_for_a_trained_run(tmp_path, capsys):
    run = train(tiny_config(frames=800), tmp_path / "run", show_progress=False,
                tensorboard=False).run_dir
    # Three episodes from two environments round up to two from each.
    assert shaped_returns.main([str(run), "--episodes", "3", "--envs", "2"]) == 0
    out = capsys.readouterr().out
    assert "gym:CartPole-v1" in out and "4 episodes per policy (2 in each of 2" in out
    rows = [line for line in out.splitlines() if line.startswith(("| agent", "| uniform"))]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        episodes, raw, positive, negative = int(cells[1]), *map(float, cells[2:5])
        shaped = dict(zip(shaped_returns.REWARD_SHAPES, map(float, cells[5:]), strict=True))
        assert episodes == 4 and raw >= 1.0 and negative == 0.0
        # CartPole pays +1 a step: raw = positive = the episode length, "none" shaping is raw,
        # and the printed log shape pays 2·log 2 a step (the table rounds each mean to 0.01:
        # half of that on each number, and a little for the decimal print of binary floats).
        assert positive == raw and shaped["none"] == raw
        assert abs(shaped["log"] - 2 * math.log(2) * raw) <= 0.0051 * (1 + 2 * math.log(2))


def test_bad_counts_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        shaped_returns.main([str(tmp_path), "--episodes", "0"])
    assert "--episodes 0 and --envs 8 must be at least 1" in capsys.readouterr().err
