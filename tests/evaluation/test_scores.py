"""The run folder's evaluation files: writer, reader, ordering and errors."""

import json
import os

import pytest

from gdi.scores import (
    Episode,
    load_run,
    periodic_eval_name,
    read_eval_file,
    write_eval_file,
)


def _run(tmp_path, env="ale:Pong"):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps({"env": env, "preset": "gdi-i3", "seed": 3, "name": "run"})
    )
    return run


def _write(run, name, frames, returns, env="ale:Pong"):
    episodes = [{"return": r, "frames": 100 + i, "seed": i} for i, r in enumerate(returns)]
    return write_eval_file(
        run,
        name,
        checkpoint=f"ckpt-{frames}",
        frames=frames,
        env=env,
        policy="greedy",
        seed=3,
        episodes=episodes,
    )


def test_round_trip_and_exact_format(tmp_path):
    run = _run(tmp_path)
    path = _write(run, periodic_eval_name(4000), 4000, [1.0, 2.0, 6.0])
    assert path == run / "eval" / "frames_000000004000.json"
    assert json.loads(path.read_text()) == {
        "checkpoint": "ckpt-4000",
        "frames": 4000,
        "env": "ale:Pong",
        "policy": "greedy",
        "seed": 3,
        "episodes": [
            {"return": 1.0, "frames": 100, "seed": 0},
            {"return": 2.0, "frames": 101, "seed": 1},
            {"return": 6.0, "frames": 102, "seed": 2},
        ],
        "mean_return": 3.0,
    }
    record = read_eval_file(path)
    assert record.episodes[2] == Episode(6.0, 102, 2)
    assert (record.mean_return, record.frames, record.periodic) == (3.0, 4000, True)
    assert sorted(os.listdir(run / "eval")) == ["frames_000000004000.json"]  # no temp file left


def test_curve_and_final_are_the_runs_own_evaluations_never_a_gdi_evaluate_file(tmp_path):
    # Issue 44: a `gdi evaluate` file at the final frames replaced the run's own final score
    # with no notice and added a second point to the curve.
    run = _run(tmp_path)
    _write(run, periodic_eval_name(3000), 3000, [30.0])
    _write(run, periodic_eval_name(1000), 1000, [10.0])
    _write(run, "ckpt-a", 3000, [31.0])
    later = _write(run, "ckpt-b", 3000, [32.0])
    os.utime(later, ns=(2**62, 2**62))  # written last
    _write(run, periodic_eval_name(2000), 2000, [20.0])
    evals = load_run(run)
    frames, returns = evals.curve()
    assert frames.tolist() == [1000, 2000, 3000]
    assert returns.tolist() == [10.0, 20.0, 30.0]
    assert evals.final.name == periodic_eval_name(3000) and evals.final.mean_return == 30.0
    assert [e.name for e in evals.evaluated_later] == ["ckpt-a", "ckpt-b"]  # written order


def test_a_run_evaluated_only_with_gdi_evaluate_takes_those_files(tmp_path):
    run = _run(tmp_path)
    _write(run, "ckpt-a", 2000, [5.0])
    _write(run, "ckpt-b", 4000, [7.0])
    evals = load_run(run)
    assert evals.curve()[0].tolist() == [2000, 4000] and evals.final.mean_return == 7.0
    assert evals.evaluated_later == ()
    assert (evals.env, evals.preset, evals.seed, evals.name) == ("ale:Pong", "gdi-i3", 3, "run")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episodes": []}, "at least one episode"),
        ({"episodes": [{"return": float("nan"), "frames": 1, "seed": 0}]}, "finite"),
        ({"episodes": [{"return": 1.0, "frames": 1}]}, "lacks"),
        ({"frames": -1}, "non-negative"),
    ],
)
def test_writer_refuses_bad_evaluations(tmp_path, kwargs, message):
    arguments = {
        "checkpoint": "c",
        "frames": 1,
        "env": "ale:Pong",
        "policy": "p",
        "seed": 0,
        "episodes": [Episode(1.0, 1, 0)],
    }
    with pytest.raises(ValueError, match=message):
        write_eval_file(tmp_path, "x", **{**arguments, **kwargs})
    with pytest.raises(ValueError, match="plain file name"):
        write_eval_file(tmp_path, "../x", **arguments)


def test_clear_errors_for_bad_run_folders(tmp_path):
    with pytest.raises(FileNotFoundError, match="run folder not found"):
        load_run(tmp_path / "missing")
    (tmp_path / "bare").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no config\.json"):
        load_run(tmp_path / "bare")
    run = _run(tmp_path)
    with pytest.raises(FileNotFoundError, match="no evaluation data"):
        load_run(run)
    (run / "eval" / "bad.json").parent.mkdir()
    (run / "eval" / "bad.json").write_text('{"frames": 1,')
    with pytest.raises(ValueError, match=r"bad\.json: not valid JSON"):
        load_run(run)
    (run / "eval" / "bad.json").write_text(json.dumps({"checkpoint": "c", "frames": "1"}))
    with pytest.raises(ValueError, match=r"bad\.json: field 'frames' must be int"):
        load_run(run)
    (run / "eval" / "bad.json").unlink()
    _write(run, "other", 10, [1.0], env="ale:Breakout")
    with pytest.raises(ValueError, match="differs from the run's 'ale:Pong'"):
        load_run(run)
    (run / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        load_run(run)


def test_inconsistent_mean_return_is_refused(tmp_path):
    path = _write(_run(tmp_path), "e", 10, [1.0, 3.0])
    data = json.loads(path.read_text())
    data["mean_return"] = 5.0
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="not the mean of the episode returns"):
        read_eval_file(path)
