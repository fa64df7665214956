"""benchmarks.return_by_lambda: the training episodes' return per block of each λ coordinate."""

import json

import numpy as np

from benchmarks.return_by_lambda import main as return_by_lambda
from benchmarks.return_by_lambda import window_by_block
from gdi.cli import main
from tests.runtime.helpers import TINY
from tests.tolerance import assert_close


def cartpole_run(tmp_path, seed=1):
    run = tmp_path / f"run-{seed}"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "1600", "--seed", str(seed),
          "--backend", "inline", "--run-dir", str(run), "--no-report", "--set", *TINY,
          "eval_every=0"])
    return run


def test_each_blocks_mean_return_and_count_are_its_episodes(tmp_path):
    run = cartpole_run(tmp_path)
    rows = [json.loads(line) for line in (run / "meta.jsonl").read_text().splitlines()]
    since, until = 200, 1400
    names, coordinates = window_by_block(run, since, until, blocks=4)
    assert names == ("inv_tau1", "inv_tau2", "eps")
    # CartPole's 1/τ box, [0, 1000] searched in x = log(1 + 1/τ), in blocks even in x; ε's
    # [0, 1] in even blocks.
    for i in (0, 1):
        assert_close(np.log1p(coordinates[i][0]), np.linspace(0, np.log(1001), 5), terms=4)
    assert_close(coordinates[2][0], np.linspace(0, 1, 5))
    for i, (edges, means, counts) in enumerate(coordinates):
        # A loop straight from the definition: the episodes of the window whose coordinate i
        # lies in block b (the last block closed at the top).
        for b in range(4):
            mine = [r["return"] for r in rows if since < r["frames"] <= until
                    and (edges[b] <= r["lambda"][i] < edges[b + 1]
                         or (b == 3 and r["lambda"][i] == edges[4]))]
            assert counts[b] == len(mine)
            if mine:
                assert_close(means[b], np.mean(mine), terms=len(mine))
            else:
                assert np.isnan(means[b])
    assert sum(coordinates[0][2]) == sum(since < r["frames"] <= until for r in rows) > 0


def test_the_report_prints_a_table_per_coordinate_and_draws_the_figure(tmp_path, capsys):
    runs = [cartpole_run(tmp_path, seed) for seed in (1, 2)]
    out = tmp_path / "by-lambda.png"
    assert return_by_lambda(["--run", f"a={runs[0]}", "--run", f"b={runs[1]}", "--blocks", "3",
                             "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name in ("inv_tau1", "inv_tau2", "eps"):
        assert f"| block of {name} | a: share / return | b: share / return |" in printed
    assert out.stat().st_size > 10_000


def test_an_empty_window_and_bad_arguments_are_one_line(tmp_path, capsys):
    run = cartpole_run(tmp_path)
    capsys.readouterr()  # the training's progress
    assert return_by_lambda(["--run", f"a={run}", "--since", "1e9", "--until", "2e9",
                             "--out", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert "no training episode between" in err and len(err.strip().splitlines()) == 1
    assert return_by_lambda(["--run", f"a={run}", "--since", "5", "--until", "5",
                             "--out", str(tmp_path / "x.png")]) == 1
    assert "--since < --until" in capsys.readouterr().err
