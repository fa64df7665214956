"""benchmarks/lever_screen.py: each run cut at the screen's frames, the frames to each level,
and the learner's statistics as medians per third of the cut, a dash where a run lacks one."""

import json

from benchmarks import lever_screen
from tests.test_atari_learning import write_gdi_run


def add_learner_rows(run, rows):
    with (run / "metrics.jsonl").open("a") as out:
        for row in rows:
            out.write(json.dumps({"losses/total": 1.0, **row}) + "\n")


def test_a_screen_table_by_hand(tmp_path, capsys):
    control, lever = tmp_path / "control-0", tmp_path / "lever-0"
    # Training episodes ending at 30k and 120k frames; the one at 120k is past the cut (90k).
    write_gdi_run(control, seed=0, episode_returns=(6.0, 20.0))
    write_gdi_run(lever, seed=0, episode_returns=(2.0, 20.0))
    # Entropy 3, 1, 2 in the thirds (0, 30k], (30k, 60k], (60k, 90k]; a row past the cut and
    # one without the key are ignored. Only the lever logged the advantage spread.
    add_learner_rows(control, [{"frames": 20_000, "losses/entropy": 3.0},
                               {"frames": 50_000, "losses/entropy": 1.0},
                               {"frames": 55_000, "losses/entropy": 0.5},
                               {"frames": 57_000, "losses/entropy": 1.5},
                               {"frames": 80_000, "losses/entropy": 2.0},
                               {"frames": 85_000},
                               {"frames": 95_000, "losses/entropy": 9.0}])
    add_learner_rows(lever, [{"frames": 10_000, "losses/entropy": 2.5,
                              "stats/adv_spread": 0.25}])
    out = tmp_path / "screen.png"
    assert lever_screen.main(["--run", f"control={control}", "--run", f"lever={lever}",
                              "--frames", "9e4", "--levels", "5", "10", "--window", "1",
                              "--out", str(out)]) == 0
    assert out.stat().st_size > 0
    table = out.with_suffix(".md").read_text()
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in table.splitlines()
            if line.startswith("| control") or line.startswith("| lever")}
    # control: 6 at 30k frames reaches 5, not 10 (the 20 comes after the cut).
    assert rows["control"][1] == "0.09M" and rows["lever"][1] == "0.01M"  # last rows in the cut
    assert rows["control"][2:4] == ["0.03M", "—"]
    assert rows["control"][4] == "9.0 (0.1M)"  # the evaluation at 60k frames, mean of 8 and 10
    assert rows["control"][5] == "3.00 / 1.00 / 2.00"
    assert rows["control"][8] == "— / — / —"
    assert rows["lever"][2:4] == ["—", "—"]
    assert rows["lever"][5] == "2.50 / — / —" and rows["lever"][8] == "0.25 / — / —"
    assert "cut at 0.09M" in table
    assert "| control |" in capsys.readouterr().out
    assert "L spread" not in table  # no run had a policy head


def test_a_policy_heads_spread_gets_a_column_when_a_run_logged_it(tmp_path):
    control, lever = tmp_path / "control-0", tmp_path / "head-0"
    write_gdi_run(control, seed=0)
    write_gdi_run(lever, seed=0)
    add_learner_rows(lever, [{"frames": 10_000, "stats/logit_spread": 1.5},
                             {"frames": 80_000, "stats/logit_spread": 3.0}])
    out = tmp_path / "screen.png"
    assert lever_screen.main(["--run", f"control={control}", "--run", f"head={lever}",
                              "--frames", "9e4", "--out", str(out)]) == 0
    lines = out.with_suffix(".md").read_text().splitlines()
    assert lines[0].endswith("| L spread (thirds) |")
    head_row = next(line for line in lines if line.startswith("| head |"))
    control_row = next(line for line in lines if line.startswith("| control |"))
    assert head_row.endswith("| 1.50 / — / 3.00 |") and control_row.endswith("| — / — / — |")
    assert "clipped" not in lines[0] and "lag" not in lines[0]  # no run logged them


def test_the_clipped_share_the_advantages_spread_and_the_policy_lag_get_columns_when_logged(
        tmp_path):
    control, lever = tmp_path / "control-0", tmp_path / "fresh-0"
    write_gdi_run(control, seed=0)
    write_gdi_run(lever, seed=0)
    add_learner_rows(control, [{"frames": 10_000, "perf/policy_lag": 9.5}])
    add_learner_rows(lever, [{"frames": 10_000, "stats/pg_clipped_frac": 0.3,
                              "stats/pg_advantage_std": 0.0123, "perf/policy_lag": 2.0},
                             {"frames": 80_000, "stats/pg_clipped_frac": 0.1,
                              "perf/policy_lag": 3.0}])
    out = tmp_path / "screen.png"
    assert lever_screen.main(["--run", f"control={control}", "--run", f"fresh={lever}",
                              "--frames", "9e4", "--out", str(out)]) == 0
    lines = out.with_suffix(".md").read_text().splitlines()
    assert lines[0].endswith("| clipped (thirds) | σ of ρδ (thirds) | lag (steps) (thirds) |")
    assert "L spread" not in lines[0]
    fresh = next(line for line in lines if line.startswith("| fresh |"))
    control_row = next(line for line in lines if line.startswith("| control |"))
    assert fresh.endswith("| 0.30 / — / 0.10 | 0.012 / — / — | 2.0 / — / 3.0 |")
    assert control_row.endswith("| — / — / — | — / — / — | 9.5 / — / — |")


def test_a_run_without_a_label_is_one_line(tmp_path, capsys):
    assert lever_screen.main(["--run", str(tmp_path), "--out", str(tmp_path / "x.png")]) == 1
    assert "give LABEL=RUN_FOLDER" in capsys.readouterr().err


def test_runs_off_the_ale_are_screened_and_games_are_never_mixed(tmp_path, capsys):
    # MinAtar runs (the learning-per-frame page's check that MinAtar did not get worse): the
    # screen needs no human-normalized score, so any environment's runs are read.
    paper, head = tmp_path / "paper-0", tmp_path / "head-0"
    write_gdi_run(paper, seed=0, env="minatar:breakout", episode_returns=(6.0, 20.0))
    write_gdi_run(head, seed=0, env="minatar:breakout")
    out = tmp_path / "screen.png"
    assert lever_screen.main(["--run", f"paper={paper}", "--run", f"head={head}",
                              "--frames", "9e4", "--levels", "5", "--window", "1",
                              "--out", str(out)]) == 0
    rows = [line.split(" | ") for line in out.with_suffix(".md").read_text().splitlines()
            if line.startswith(("| paper", "| head"))]
    assert [row[2] for row in rows] == ["0.03M", "—"]
    breakout = tmp_path / "breakout-0"
    write_gdi_run(breakout, seed=0)
    assert lever_screen.main(["--run", f"paper={paper}", "--run", f"ale={breakout}",
                              "--out", str(tmp_path / "mixed.png")]) == 1
    assert "different games (Breakout, minatar:breakout)" in capsys.readouterr().err


def test_seeds_of_one_name_are_grouped_with_intervals_over_them_by_hand(tmp_path):
    # Two seeds of the head and two of APPO; a level that one head seed misses is "1 of 2".
    from tests.test_atari_learning import write_appo

    head0, head1 = tmp_path / "head-0", tmp_path / "head-1"
    write_gdi_run(head0, seed=0, episode_returns=(6.0, 20.0))  # 5 at 30k frames (0.5 min)
    write_gdi_run(head1, seed=1, episode_returns=(2.0, 8.0))   # 5 at 120k frames (2.5 min)
    appo0, appo1 = tmp_path / "appo_ale_breakout_seed0", tmp_path / "appo_ale_breakout_seed1"
    write_appo(appo0, [(60.0, 40_000, 6.0)])   # 5 at 40k frames, 1 min
    write_appo(appo1, [(120.0, 80_000, 7.0)])  # 5 at 80k frames, 2 min
    out = tmp_path / "screen.png"
    assert lever_screen.main(["--run", f"head, seed 0={head0}", "--run", f"head, seed 1={head1}",
                              "--appo", f"APPO, seed 0={appo0}", "--appo", f"APPO, seed 1={appo1}",
                              "--frames", "1.5e5", "--levels", "5", "10", "--window", "1",
                              "--out", str(out)]) == 0
    text = out.with_suffix(".md").read_text()
    assert "| group | seeds | mean curve to 5 (M) |" in text  # the mean curve's own table after
    text = text.split("| group | seeds | mean curve")[0]
    rows = {line.split(" | ")[0].lstrip("| "): line.rstrip(" |").split(" | ")
            for line in text.splitlines() if line.startswith(("| head |", "| APPO |"))}
    assert text.count("| group | seeds | frames to 5 (M) | frames to 10 (M) | minutes to 10 |") == 1
    # Two values resampled with replacement: the means are the two values and their midpoint,
    # so the 95 % percentile interval is [smaller, larger].
    assert rows["head"][1:] == ["2", "0.07 [0.03, 0.12]", "1 of 2 reached", "1 of 2 reached",
                                "9.0 [9.0, 9.0]"]
    assert rows["APPO"][1:] == ["2", "0.06 [0.04, 0.08]", "0 of 2 reached", "0 of 2 reached",
                                "—"]
    appo_row = next(line for line in text.splitlines() if line.startswith("| APPO, seed 1 |"))
    assert appo_row.split(" | ")[1:3] == ["0.08M", "0.08M"]  # ran to its last episode
    # Minutes to the highest level, where every seed reached it: the runs' own clocks.
    assert lever_screen.main(["--run", f"head, seed 0={head0}", "--run", f"head, seed 1={head1}",
                              "--appo", f"APPO, seed 0={appo0}", "--appo", f"APPO, seed 1={appo1}",
                              "--frames", "1.5e5", "--levels", "5", "--window", "1",
                              "--out", str(out)]) == 0
    first_tables = out.with_suffix(".md").read_text().split("| group | seeds | mean curve")[0]
    minutes = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[3]
               for line in first_tables.splitlines()
               if line.startswith(("| head |", "| APPO |"))}
    assert minutes == {"head": "1.5 [0.5, 2.5]", "APPO": "1.5 [1.0, 2.0]"}


def test_a_screen_without_seed_groups_has_no_group_table(tmp_path):
    control, lever = tmp_path / "control-0", tmp_path / "lever-0"
    write_gdi_run(control, seed=0)
    write_gdi_run(lever, seed=0)
    out = tmp_path / "screen.png"
    assert lever_screen.main(["--run", f"control, seed 0={control}", "--run", f"lever={lever}",
                              "--frames", "9e4", "--out", str(out)]) == 0
    assert "| group |" not in out.with_suffix(".md").read_text()


def test_the_figure_is_titled_a_screen_unless_told_otherwise(tmp_path, monkeypatch):
    run = tmp_path / "head-0"
    write_gdi_run(run, seed=0)
    import matplotlib.figure

    titles = []
    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle",
                        lambda fig, text, **kw: titles.append(text))
    for extra in ([], ["--title", "three seeds against APPO"]):
        assert lever_screen.main(["--run", f"head={run}", "--frames", "9e4",
                                  "--out", str(tmp_path / "x.png"), *extra]) == 0
    assert titles == ["Breakout: one lever at a time against its control",
                      "Breakout: three seeds against APPO"]


def _curve(frames, returns):
    import numpy as np

    from benchmarks.atari_learning import Curve

    return Curve(label="x", group="x", game="Breakout",
                 episode_minutes=np.arange(1.0, len(frames) + 1),
                 episode_frames=np.array(frames, dtype=float),
                 episode_returns=np.array(returns, dtype=float),
                 eval_minutes=np.array([]), eval_frames=np.array([]), eval_returns=[])


def test_the_seeds_mean_curve_holds_each_seed_between_episodes_by_hand():
    import numpy as np

    from tests.tolerance import assert_close

    # Seed a: episodes end at 10k and 30k frames (returns 4, 12); seed b at 20k and 40k (6,
    # 20). Window 1, grid 10k up to 30k (seed a's last episode): a = 4, 4, 12; b = —, 6, 6.
    grid, values = lever_screen.seed_curves([_curve((1e4, 3e4), (4, 12)),
                                             _curve((2e4, 4e4), (6, 20))], window=1)
    assert_close(grid, np.array([1e4, 2e4, 3e4]))
    assert_close(values[0], np.array([4.0, 4.0, 12.0]))
    assert np.isnan(values[1, 0]) and values[1, 1:].tolist() == [6.0, 6.0]
    means = values.mean(axis=0)  # —, 5, 9: the frame before seed b's first episode is unmeasured
    assert lever_screen.first_crossing(grid, means, 5.0) == 2e4
    assert lever_screen.first_crossing(grid, means, 9.0) == 3e4
    assert lever_screen.first_crossing(grid, means, 10.0) == np.inf
    # A window of 2: seed a's second point is the mean of 4 and 12.
    _, two = lever_screen.seed_curves([_curve((1e4, 3e4), (4, 12))], window=2)
    assert two[0].tolist() == [4.0, 4.0, 8.0]


def test_the_mean_curve_table_reads_a_seed_that_never_got_there_by_hand(tmp_path):
    # Seed 0 reaches 10 at 30k frames, seed 1 never does (6, then 6 until its run ends at 40k).
    # Mean curve (window 1, up to 30k): —, 5, 9, so neither 10 nor, here, anything past 9. The
    # resamples of the two seeds: (0, 0) reaches 5 at 30k and 10 at 30k; (1, 1) reaches 5 at
    # 20k and never 10; the mixed ones 5 at 20k and never 10. Each is a quarter or a half of the
    # 2000 draws, so the 2.5 % and 97.5 % order statistics are the extremes.
    runs = [lever_screen.Screened("head, seed 0", _curve((1e4, 3e4), (4, 12))),
            lever_screen.Screened("head, seed 1", _curve((2e4, 4e4), (6, 6))),
            lever_screen.Screened("lone", _curve((1e4,), (1,)))]
    text = lever_screen.mean_curve_table(runs, [5.0, 10.0], window=1)
    row = next(line for line in text.splitlines() if line.startswith("| head |"))
    assert row.rstrip(" |").split(" | ")[1:] == ["2", "0.02 [0.02, 0.03]",
                                                 "> 0.03 [0.03, > 0.03]", "0.03"]
    assert "| lone |" not in text  # one run alone is no group
    assert lever_screen.mean_curve_table(runs[2:], [5.0], window=1) == ""
