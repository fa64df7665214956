"""``gdi report`` end to end on fabricated run folders: a two-seed Atari set (two games) and a
two-seed MinAtar one. Checks the files, the figures and that the Markdown shows the CSV's
numbers."""

import csv
import json
from pathlib import Path

import pytest
from matplotlib.image import imread

from gdi import cli
from gdi.evaluation.report import default_out_dir, write_report
from gdi.scores import periodic_eval_name, write_eval_file
from tests.evaluation.markdown_tables import table_after
from tests.tolerance import assert_close

FINALS = {
    ("ale:Breakout", 0): 300.0,
    ("ale:Breakout", 1): 340.0,
    ("ale:Pong", 0): 10.0,
    ("ale:Pong", 1): 14.0,
}
#: The groups of the runs below, whose config.json names only the preset: the scale their
#: environment kind's, the paper's learning, nothing changed (gdi.presets.setting).
ALE_GROUP = "gdi-i3 · ale · paper"
MINATAR_GROUP = "gdi-i3 · minatar · paper"


def make_run(root, env, seed, final, *, frames=(500_000, 1_000_000, 1_500_000, 2_000_000)):
    run = root / f"{env.replace(':', '_')}__gdi-i3__{seed}"
    run.mkdir(parents=True)
    (run / "config.json").write_text(
        json.dumps({"env": env, "preset": "gdi-i3", "seed": seed, "name": run.name})
    )
    for k, f in enumerate(frames, start=1):
        value = final * k / len(frames)
        episodes = [
            {"return": value - 1.0, "frames": 900, "seed": 0},
            {"return": value + 1.0, "frames": 950, "seed": 1},
        ]
        write_eval_file(
            run,
            periodic_eval_name(f),
            checkpoint=f"ckpt-{f}",
            frames=f,
            env=env,
            policy="greedy",
            seed=seed,
            episodes=episodes,
        )
    return run


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    runs = [make_run(root, env, seed, final) for (env, seed), final in FINALS.items()]
    # `gdi evaluate` at the final frames of one run: listed as such, never its final score.
    write_eval_file(
        runs[0],
        "final-checkpoint",
        checkpoint="final",
        frames=2_000_000,
        env="ale:Breakout",
        policy="greedy",
        seed=0,
        episodes=[{"return": 310.0, "frames": 1000, "seed": 7}],
    )
    runs += [make_run(root, "minatar:breakout", seed, 20.0 + seed) for seed in (0, 1)]
    return write_report(runs, root / "report", compare="rainbow,agent57,gdi-i3", reps=20)


def _csv(report, name):
    with (report.out_dir / name).open() as f:
        return list(csv.DictReader(f))


def test_files_written(report):
    names = {p.name for p in report.files}
    assert names == {
        "report.md", "final_returns.csv", "learning_curves.csv", "learning_curves_band.csv",
        "learning_curves.png", "atari_per_game.csv", "hns_per_game.png", "hwrns_per_game.png",
        "saber_per_game.png", "atari_aggregates.csv", "atari_summary.csv", "efficiency.png",
        "efficiency.csv", "final_returns_summary.csv", "evaluated_later.csv", "groups.csv",
    }  # fmt: skip
    for path in report.files:
        assert path.is_file() and path.stat().st_size > 0, path


@pytest.mark.parametrize(
    "name",
    [
        "learning_curves.png",
        "hns_per_game.png",
        "hwrns_per_game.png",
        "saber_per_game.png",
        "efficiency.png",
    ],
)
def test_figures_are_real_images(report, name):
    image = imread(report.out_dir / name)
    assert image.shape[0] > 300 and image.shape[1] > 300
    assert image[..., :3].std() > 0.05  # not a blank canvas


def test_final_scores_follow_the_run_folder_rules(report):
    finals = {(r["env"], r["seed"]): r for r in _csv(report, "final_returns.csv")}
    assert finals[("ale:Breakout", "0")]["eval_file"] == "frames_000002000000.json"
    assert float(finals[("ale:Breakout", "0")]["mean_return"]) == FINALS[("ale:Breakout", 0)]
    assert float(finals[("ale:Pong", "1")]["mean_return"]) == 14.0
    later = _csv(report, "evaluated_later.csv")
    assert [(r["eval_file"], float(r["mean_return"])) for r in later] == [
        ("final-checkpoint.json", 310.0)]
    text = report.markdown.read_text()
    assert "Evaluated later with `gdi evaluate` (not the runs' final scores" in text
    assert "| final-checkpoint.json |" in text


def test_per_game_markdown_equals_csv(report):
    text = report.markdown.read_text()
    rows = {(r["source"], r["game"]): r for r in _csv(report, "atari_per_game.csv")}
    # Breakout run mean over seeds, the runs' own final evaluations (not seed 0's later
    # `gdi evaluate` of 310): (300 + 340) / 2; HNS = (320 - 1.7) / (30.5 - 1.7).
    assert float(rows[(ALE_GROUP, "Breakout")]["raw_mean"]) == 320.0
    assert_close(float(rows[(ALE_GROUP, "Breakout")]["hns_pct_mean"]), 100 * 318.3 / 28.8)
    sources = [ALE_GROUP, "Rainbow", "Agent57", "GDI-I³"]
    for heading, column in (
        ("### Raw score", "raw_mean"),
        ("### HNS (%)", "hns_pct_mean"),
        ("### HWRNS (%)", "hwrns_pct_mean"),
        ("### SABER (%)", "saber_pct_mean"),
    ):
        table = table_after(text, heading)
        assert [r[0] for r in table] == ["Breakout", "Pong"]
        for row in table:
            for source, cell in zip(sources, row[1:], strict=True):
                assert cell == f"{float(rows[(source, row[0])][column]):.2f}", (
                    heading,
                    source,
                    row[0],
                )


def test_aggregate_markdown_equals_csv(report):
    text = report.markdown.read_text()
    rows = {
        (r["source"], r["metric"], r["statistic"]): r for r in _csv(report, "atari_aggregates.csv")
    }
    table = table_after(text, "HNS (%):")
    assert [r[0] for r in table] == [ALE_GROUP, "Rainbow", "Agent57", "GDI-I³"]
    for column, statistic in enumerate(("iqm", "mean", "median", "optimality_gap"), start=1):
        run = rows[(ALE_GROUP, "HNS", statistic)]
        expected = (
            f"{float(run['point']):.2f} [{float(run['ci_low']):.2f}, {float(run['ci_high']):.2f}]"
        )
        assert table[0][column] == expected
        assert table[1][column] == f"{float(rows[('Rainbow', 'HNS', statistic)]['point']):.2f}"
    summary = {r["source"]: r for r in _csv(report, "atari_summary.csv")}
    table = table_after(text, "The statistics of the paper's")
    assert [r[0] for r in table][:3] == [ALE_GROUP, "GDI-I³", "GDI-H³"]
    for row in table:
        expected = summary[row[0]]
        assert row[3] == f"{float(expected['hwrb']):g}"
        assert row[4:10] == [
            f"{float(expected[c]):.2f}"
            for c in (
                "mean_hns",
                "median_hns",
                "mean_hwrns",
                "median_hwrns",
                "mean_saber",
                "median_saber",
            )
        ]
        assert row[10] == f"{float(expected['efficiency_mean_hns_pct_per_frame']):.3e}"
    assert_close(float(summary[ALE_GROUP]["mean_hns"]),
                 float(rows[(ALE_GROUP, "HNS", "mean")]["point"]))


def test_minatar_is_reported_raw_with_the_reason(report):
    text = report.markdown.read_text()
    assert "exist for the paper's 57 Atari games only" in text
    [row] = table_after(text, "Final return = mean return")
    [csv_row] = _csv(report, "final_returns_summary.csv")
    assert row[:3] == ["minatar:breakout", MINATAR_GROUP, "2"]
    assert (
        row[4]
        == f"{float(csv_row['mean']):.2f} [{float(csv_row['ci_low']):.2f}, {float(csv_row['ci_high']):.2f}]"
    )
    assert float(csv_row["mean"]) == 20.5


def test_learning_curve_csv_holds_every_plotted_point(report):
    points = _csv(report, "learning_curves.csv")
    # Four periodic files per run; the `gdi evaluate` file is no point of the curve.
    assert len(points) == 4 * 4 + 2 * 4
    band = [r for r in _csv(report, "learning_curves_band.csv") if r["env"] == "ale:Pong"]
    assert [int(r["frames"]) for r in band] == [500_000, 1_000_000, 1_500_000, 2_000_000]
    assert float(band[-1]["mean"]) == 12.0 and float(band[-1]["ci_low"]) <= 12.0 <= float(
        band[-1]["ci_high"]
    )


def test_cli_report_and_its_errors(tmp_path, capsys):
    runs = [make_run(tmp_path, "minatar:breakout", s, 5.0) for s in (0, 1)]
    runs.append(make_run(tmp_path, "ale:Pacman", 0, 5.0))
    cli.main(["report", *map(str, runs), "--reps", "10"])
    assert "report:" in capsys.readouterr().out
    text = (default_out_dir(runs) / "report.md").read_text()
    assert default_out_dir(runs) == tmp_path / "report"
    assert "Not among the 57: ale:Pacman." in text

    def error(*args):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["report", *map(str, args)])
        assert exit_info.value.code == 2
        return capsys.readouterr().err

    assert "close matches: agent57" in error(runs[0], "--compare", "rainbow,agent56")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text(
        json.dumps({"env": "ale:Pong", "preset": "p", "seed": 0, "name": "e"})
    )
    assert "nothing to report: none of the 1 run folder(s) has evaluations" in error(empty)
    (empty / "eval").mkdir()
    (empty / "eval" / "frames_000000000001.json").write_text("not json")
    assert "not valid JSON" in error(empty)
    assert "give run folders" in error()


def test_report_skips_and_names_folders_without_evaluations(tmp_path, capsys):
    runs = [make_run(tmp_path, "minatar:breakout", s, 5.0) for s in (0, 1)]
    started = tmp_path / "before_first_eval"  # config.json, a checkpoint, no evaluation yet
    (started / "eval").mkdir(parents=True)
    (started / "checkpoints").mkdir()
    (started / "checkpoints" / "ckpt_000000001000.safetensors").write_bytes(b"a checkpoint")
    (started / "config.json").write_text(
        json.dumps({"env": "minatar:breakout", "preset": "gdi-i3", "seed": 2, "name": "s"})
    )
    half_made = tmp_path / "failed_validation"  # the folder was made, config.json never was
    (half_made / "eval").mkdir(parents=True)
    cli.main(["report", str(runs[0]), str(started), str(runs[1]), str(half_made),
              "--reps", "10"])
    captured = capsys.readouterr()
    skipped = captured.err.strip().splitlines()
    assert skipped == [
        f"skipped {started}: no evaluations yet (eval/ is empty; `gdi evaluate {started}` "
        "evaluates its latest checkpoint)",
        f"skipped {half_made}: no evaluations yet (eval/ is empty; and no checkpoint: it "
        "stopped before its first one)",
    ]
    assert "report:" in captured.out
    final = list(csv.DictReader((tmp_path / "report" / "final_returns.csv").open()))
    assert sorted(r["run"] for r in final) == sorted(r.name for r in runs)
    with pytest.raises(FileNotFoundError, match="run folder not found"):
        write_report([runs[0], tmp_path / "typo"])  # a path that is no folder is still an error


def test_a_damaged_run_among_many_is_named_and_left_out(tmp_path, capsys):
    # Issue 45 item 10: `"seed": null` in one config.json raised a TypeError deep in scores
    # and stopped the whole multi-run report; a file given as a run was "not found".
    runs = [make_run(tmp_path, "minatar:breakout", s, 5.0) for s in (0, 1, 2)]
    config = json.loads((runs[1] / "config.json").read_text())
    (runs[1] / "config.json").write_text(json.dumps({**config, "seed": None}))
    cli.main(["report", *map(str, runs), "--reps", "10"])
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"skipped {runs[1]}: {runs[1] / 'config.json'}: 'seed' must be an integer, got None; "
        "the file is damaged: put back the run's value"]
    final = list(csv.DictReader((tmp_path / "report" / "final_returns.csv").open()))
    assert sorted(r["run"] for r in final) == sorted([runs[0].name, runs[2].name])

    def error(*args):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["report", *map(str, args), "--out", str(tmp_path / "other")])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip()
        assert "Traceback" not in err and len(err.splitlines()) == 1, err
        return err

    # Issue 44: a report written beside the runs is among `runs/*` the next time.
    cli.main(["report", *map(str, runs), str(tmp_path / "report"), "--reps", "10"])
    assert (f"skipped {tmp_path / 'report'}: a gdi report, not a run folder"
            in capsys.readouterr().err.strip().splitlines())

    assert error(runs[1]).endswith("'seed' must be an integer, got None; the file is damaged: "
                                   "put back the run's value")
    config_file = runs[0] / "config.json"
    assert error(runs[2], config_file) == (
        f"gdi: error: {config_file} is a file, not a run folder; give the run's folder")


def test_default_out_dir_of_one_run(tmp_path):
    assert default_out_dir([tmp_path / "r"]) == tmp_path / "r" / "report"
    assert (
        default_out_dir([tmp_path / "a" / "r1", tmp_path / "a" / "r2"]) == tmp_path / "a" / "report"
    )


def test_runs_of_other_budgets_are_other_groups_never_more_seeds(tmp_path, capsys):
    # Four seed-0 runs of four budgets were "Seeds 4" with a CI across them (issue 30, item 9).
    runs = []
    for budget in (1_000_000, 2_000_000, 3_000_000, 4_000_000):
        run = make_run(tmp_path / f"b{budget}", "minatar:breakout", 0, budget / 1e5,
                       frames=(budget // 2, budget))
        config = json.loads((run / "config.json").read_text())
        (run / "config.json").write_text(json.dumps({**config, "frames": budget}))
        runs.append(run)
    empty = tmp_path / "empty"  # an empty folder anywhere in the list is skipped, not fatal
    empty.mkdir()
    cli.main(["report", str(runs[0]), str(empty), *map(str, runs[1:]), "--reps", "10",
              "--out", str(tmp_path / "report")])
    captured = capsys.readouterr()
    assert captured.err.strip() == f"skipped {empty}: an empty folder, not a gdi run folder"
    summary = list(csv.DictReader((tmp_path / "report" / "final_returns_summary.csv").open()))
    assert [(r["group"], r["n_seeds"]) for r in summary] == [
        (f"{MINATAR_GROUP} · {budget}M frames", "1") for budget in (1, 2, 3, 4)]
    assert all(r["ci_low"] == r["mean"] == r["ci_high"] for r in summary)  # no CI across runs


def test_runs_with_other_settings_are_other_groups_named_by_the_difference(tmp_path, capsys):
    # Issue 44: runs with different `--set learning_rate` were lumped into one "gdi-i3" group.
    def run(name, seed, final, **config):
        folder = make_run(tmp_path / name, "minatar:breakout", seed, final)
        written = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**written, "frames": 1_000_000,
                                                        "learning_rate": 5e-4, **config}))
        return folder

    runs = [run("a", 0, 10.0, pg_clip=0.0), run("b", 1, 12.0, backend="inline", torch_threads=1),
            run("c", 0, 20.0, learning_rate=1e-3), run("d", 1, 22.0, learning_rate=1e-3)]
    cli.main(["report", *map(str, runs), "--reps", "10", "--out", str(tmp_path / "report")])
    capsys.readouterr()
    summary = list(csv.DictReader((tmp_path / "report" / "final_returns_summary.csv").open()))
    # Where and how a run ran (backend, threads) does not split a group, nor a field that an
    # older config.json lacks at the value it had then (pg_clip); what it learns does, named
    # as --set takes it where it differs from the preset's (the MinAtar scale's 5e-4).
    assert sorted((r["group"], r["n_seeds"]) for r in summary) == [
        (MINATAR_GROUP, "2"), (f"{MINATAR_GROUP} · learning_rate=0.001", "2")]


def test_a_seed_run_twice_counts_once(tmp_path):
    runs = [make_run(tmp_path / name, "minatar:breakout", seed, final)
            for name, seed, final in (("a", 0, 10.0), ("b", 0, 20.0), ("c", 1, 30.0))]
    report = write_report(runs, tmp_path / "report", reps=10)
    [row] = list(csv.DictReader((report.out_dir / "final_returns_summary.csv").open()))
    assert row["n_seeds"] == "2" and float(row["mean"]) == 22.5  # seed 0: (10 + 20) / 2


def test_the_legend_names_only_lines_that_are_drawn():
    import numpy as np

    from gdi.evaluation.plots import Curve, CurvePanel, _group_legend

    one = Curve(np.array([1, 2]), np.array([1.0, 2.0]))
    late = Curve(np.array([5, 6]), np.array([1.0, 2.0]))
    panels = [CurvePanel("env", {"two": [one, one], "single": [one], "apart": [one, late]},
                         {"two": one, "single": one})]
    assert _group_legend("two", panels) == "two (mean of seeds, 95% CI)"
    assert _group_legend("single", panels) == "single (one seed)"
    assert "no mean: their frames do not overlap" in _group_legend("apart", panels)


def test_training_return_is_drawn_beside_the_evaluations_and_one_point_is_marked(
        tmp_path, monkeypatch):
    # Issue 44: a short run's learning_curves.png was empty axes (one evaluation, no marker)
    # and the training return in metrics.jsonl was never plotted.
    from gdi.evaluation import plots
    from gdi.evaluation.curves import training_return

    run = make_run(tmp_path, "minatar:breakout", 0, 4.0, frames=(20_000,))
    rows = [{"frames": 5_000, "charts/episodic_return": 1.0}, {"frames": 5_000},
            {"frames": 10_000, "charts/episodic_return": 2.5}]
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows)
                                       + '\n{"frames": 15000, "charts/epis')  # cut short
    frames, returns = training_return(run)
    assert frames.tolist() == [5_000, 10_000] and returns.tolist() == [1.0, 2.5]

    drawn = []
    real = plots.learning_curves
    monkeypatch.setattr(plots, "learning_curves",
                        lambda panels, path: drawn.extend(panels) or real(panels, path))
    report = write_report([run], tmp_path / "report", reps=10)
    (training,) = drawn[0].training[MINATAR_GROUP]
    assert training.frames.tolist() == [5_000, 10_000]
    assert plots._marker(drawn[0].runs[MINATAR_GROUP][0]) == {"marker": "o", "markersize": 3.5}
    assert "dotted, each run's training return" in report.markdown.read_text()
    rows = list(csv.DictReader((report.out_dir / "training_returns.csv").open()))
    assert [(r["frames"], r["training_return"]) for r in rows] == [("5000", "1.0"),
                                                                  ("10000", "2.5")]


def test_runs_of_two_learnings_are_named_by_the_learning_not_its_fields(tmp_path, capsys):
    # `--learning policy-head` sets five fields; a group is labelled by the learning's name, and
    # a field changed on top of it is named beside it.
    from gdi.presets import LEARNINGS

    head = LEARNINGS["policy-head"]
    paper = {"policy_head": "advantage", "pg_clip": 0.0, "entropy_scale": 0.0,
             "discount": 0.99, "learning_rate": 5e-4, "aux_tasks": True}

    def run(name, seed, final, learning, fields, **more):
        folder = make_run(tmp_path / name, "minatar:breakout", seed, final)
        written = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps(
            {**written, "frames": 1_000_000, "learning": learning, **fields, **more}))
        return folder

    runs = [run("a", 0, 10.0, "paper", paper), run("b", 1, 12.0, "paper", paper),
            run("c", 0, 20.0, "policy-head", head), run("d", 1, 22.0, "policy-head", head)]
    cli.main(["report", *map(str, runs), "--reps", "10", "--out", str(tmp_path / "a-report")])
    capsys.readouterr()
    summary = list(csv.DictReader((tmp_path / "a-report" / "final_returns_summary.csv").open()))
    assert sorted((r["group"], r["n_seeds"]) for r in summary) == [
        ("gdi-i3 · minatar · paper", "2"), ("gdi-i3 · minatar · policy-head", "2")]
    # A head run with its own entropy term: the field is named beside the learning.
    runs.append(run("e", 2, 25.0, "policy-head", {**head, "entropy_scale": 0.0}))
    cli.main(["report", *map(str, runs), "--reps", "10", "--out", str(tmp_path / "b-report")])
    capsys.readouterr()
    summary = list(csv.DictReader((tmp_path / "b-report" / "final_returns_summary.csv").open()))
    assert sorted(r["group"] for r in summary) == [
        "gdi-i3 · minatar · paper", "gdi-i3 · minatar · policy-head",
        "gdi-i3 · minatar · policy-head · entropy_scale=0"]


#: Committed records of two ale-cpu runs on Space Invaders (read only): seed 0 ran before
#: policy-head-ale had its entropy floor (its config.json has no entropy_floor), seed 1 with it.
RECORDS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "ale-games"
NO_FLOOR, FLOOR = "SpaceInvaders-head-ale-0", "SpaceInvaders-head-ale-floor-1"


def ale_cpu_run(root, name, seed, final, **changes):
    """A run folder with the config.json of an ale-cpu, policy-head-ale run (FLOOR's), its seed
    and ``changes`` (as --set would have made them), and two evaluations."""
    config = json.loads((RECORDS / FLOOR / "config.json").read_text())
    run = root / name
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({**config, "seed": seed, "name": name,
                                                 **changes}))
    for frames in (3_000_000, 6_000_000):
        write_eval_file(run, periodic_eval_name(frames), checkpoint=f"ckpt-{frames}",
                        frames=frames, env=config["env"], policy="greedy", seed=seed,
                        episodes=[{"return": final * frames / 6e6, "frames": 900, "seed": 0}])
    return run


def test_an_ale_cpu_report_names_scale_learning_and_each_set_change(tmp_path, capsys):
    # Issue 71: an ale-cpu run was labelled `gdi-i3` beside the paper's GDI-I³, with neither
    # its scale nor its learning anywhere in report.md.
    runs = [ale_cpu_run(tmp_path, "a", 0, 300.0), ale_cpu_run(tmp_path, "b", 1, 320.0),
            ale_cpu_run(tmp_path, "c", 0, 200.0, learning_rate=1e-3)]
    cli.main(["report", *map(str, runs), "--reps", "10", "--out", str(tmp_path / "report")])
    capsys.readouterr()
    text = (tmp_path / "report" / "report.md").read_text()
    plain = "gdi-i3 · ale-cpu · policy-head-ale"
    changed = f"{plain} · learning_rate=0.001"
    header = table_after(text, "One group per setting")
    assert header == [
        [plain, "gdi-i3", "ale-cpu", "policy-head-ale", "paper", "—", "Space Invaders", "0, 1",
         "6M", "6M"],
        [changed, "gdi-i3", "ale-cpu", "policy-head-ale", "paper", "learning_rate=0.001",
         "Space Invaders", "0", "6M", "6M"]]
    assert text.index("## What ran") < text.index("## Runs")  # the report's header
    groups = list(csv.DictReader((tmp_path / "report" / "groups.csv").open()))
    assert [(g["group"], g["seeds"], g["changes"]) for g in groups] == [
        (plain, "0 1", "—"), (changed, "0", "learning_rate=0.001")]
    # Each group's label in the per-game table, beside (never as) the paper's GDI-I³.
    columns = next(line for line in text.splitlines() if line.startswith("| Game |"))
    assert f"| {plain} | {changed} |" in columns and "| GDI-I³ |" in columns
    finals = list(csv.DictReader((tmp_path / "report" / "final_returns.csv").open()))
    assert [r["group"] for r in finals] == [plain, plain, changed]


def test_runs_with_and_without_the_entropy_floor_are_never_one_group(tmp_path):
    # The committed records: seed 0's config.json predates entropy_floor, so it ran without
    # the floor that policy-head-ale sets today; a field that an older config lacks is
    # compared at the value it had then (gdi.upgrade.FIELDS_ADDED_LATER), not passed over.
    import shutil

    runs = []
    for name in (NO_FLOOR, FLOOR):
        (tmp_path / name).mkdir()
        shutil.copy(RECORDS / name / "config.json", tmp_path / name)
        shutil.copytree(RECORDS / name / "eval", tmp_path / name / "eval")
        runs.append(tmp_path / name)
    report = write_report(runs, tmp_path / "report", reps=10)
    groups = list(csv.DictReader((report.out_dir / "groups.csv").open()))
    assert [(g["group"], g["scale"], g["learning"], g["changes"], g["seeds"]) for g in groups] == [
        ("gdi-i3 · ale-cpu · policy-head-ale · entropy_floor=0", "ale-cpu", "policy-head-ale",
         "entropy_floor=0", "0"),
        ("gdi-i3 · ale-cpu · policy-head-ale", "ale-cpu", "policy-head-ale", "—", "1")]
