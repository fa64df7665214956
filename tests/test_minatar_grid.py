"""The MinAtar ablation grid (benchmarks/minatar_ablation.py) and its report (benchmarks/minatar_report.py):
the commands a dry run prints, the skip / resume / restart decisions on fabricated run folders,
the report's numbers against a hand computation on fabricated evaluation files, and one real
grid of a single 800-frame CartPole run, trained, skipped when re-run, and reported."""

import dataclasses
import json
import shutil

import numpy as np
import pytest
from matplotlib.image import imread

from benchmarks import minatar_ablation as minatar
from benchmarks import minatar_report
from gdi.presets import resolve_config
from gdi.scores import periodic_eval_name, write_eval_file
from tests.runtime.test_train import TINY
from tests.tolerance import assert_close

BUDGET = 5000


def fake_run(root, game, preset, seed, returns, *, budget=BUDGET, lambdas=None,
             checkpoint_frames=None):
    """A run folder as `gdi train` leaves it: the full config.json, one periodic evaluation per
    entry of ``returns`` (at 1000, 2000, ... frames; two episodes each, mean = the entry), an
    empty checkpoint file named for ``checkpoint_frames`` and, with ``lambdas`` ({frames: λ}),
    a meta.jsonl."""
    env = game if ":" in game else f"minatar:{game}"
    run = root / f"{game.replace(':', '-')}__{preset}__{seed}"
    (run / "checkpoints").mkdir(parents=True)
    config = resolve_config(preset, env, frames=budget, seed=seed, backend="inline").to_dict()
    (run / "config.json").write_text(json.dumps({**config, "name": run.name}))
    for k, value in enumerate(returns, start=1):
        write_eval_file(run, periodic_eval_name(1000 * k), checkpoint="x", frames=1000 * k,
                        env=env, policy="π_λ", seed=0,
                        episodes=[{"return": value - 1, "frames": 10, "seed": 0},
                                  {"return": value + 1, "frames": 10, "seed": 1}])
    frames = 1000 * len(returns) if checkpoint_frames is None else checkpoint_frames
    (run / "checkpoints" / f"ckpt_{frames:012d}.safetensors").write_bytes(b"")
    rows = [{"frames": f, "actor": 0, "lambda": list(lam), "return": 1.0, "length": 5}
            for f, lam in (lambdas or {}).items()]
    (run / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


# --- the grid harness ----------------------------------------------------------------------------


def test_dry_run_prints_every_command_and_runs_nothing(tmp_path, capsys):
    root = tmp_path / "grid"
    code = minatar.main(["--games", "breakout,asterix", "--presets", "gdi-i3,gdi-i1,gdi-i0",
                         "--seeds", "0,1", "--frames", "3000", "--root", str(root),
                         "--observation-reservoir", "1000", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0 and not root.exists()
    lines = [line for line in out.splitlines() if "gdi.cli train" in line]
    assert len(lines) == 2 * 3 * 2
    # Seed-major order: every game and preset of seed 0 before seed 1.
    assert [line.split(":")[0].split()[-1] for line in lines[:6]] == [
        "breakout__gdi-i3__0", "breakout__gdi-i1__0", "breakout__gdi-i0__0",
        "asterix__gdi-i3__0", "asterix__gdi-i1__0", "asterix__gdi-i0__0"]
    first = lines[0]
    for part in ("--preset gdi-i3", "--env minatar:breakout", "--frames 3000", "--seed 0",
                 "--backend inline", f"--run-dir {root}/breakout__gdi-i3__0", "--no-report",
                 "torch_threads=1", "num_actors=1", "observation_reservoir=1000"):
        assert part in first
    # Observations are kept for the t-SNE pair (I³, I¹) only.
    assert ["observation_reservoir" in line for line in lines[:3]] == [True, True, False]


def test_status_skip_resume_restart_and_a_foreign_run(tmp_path):
    root = tmp_path / "grid"
    root.mkdir()
    runs = {r.preset: r for r in minatar.grid_runs(["breakout"], ["gdi-i3", "gdi-i1", "gdi-i0",
                                                                  "gdi-h3"], [0], BUDGET, root)}
    fake_run(root, "breakout", "gdi-i3", 0, [1, 2, 3, 4, 5])  # eval + checkpoint at 5000
    fake_run(root, "breakout", "gdi-i1", 0, [1, 2], checkpoint_frames=2000)
    (root / "breakout__gdi-i0__0").mkdir()  # died before writing anything
    assert [minatar.run_status(runs[p]) for p in ("gdi-i3", "gdi-i1", "gdi-i0", "gdi-h3")] == \
        ["done", "resume", "restart", "todo"]
    resume = minatar.train_command(runs["gdi-i1"], "resume")
    assert resume[-3:] == ["--resume", str(runs["gdi-i1"].run_dir), "--no-report"]
    with pytest.raises(ValueError, match="done"):
        minatar.train_command(runs["gdi-i3"], "done")
    moved = minatar.move_aside(runs["gdi-i0"].run_dir)
    assert moved.name == "breakout__gdi-i0__0.failed-1" and moved.is_dir()
    assert minatar.run_status(runs["gdi-i0"]) == "todo"
    # The same folder name holding another budget is refused, not mixed in.
    other = minatar.grid_runs(["breakout"], ["gdi-i3"], [0], 2 * BUDGET, root)[0]
    with pytest.raises(ValueError, match="different run"):
        minatar.run_status(other)
    assert minatar.main(["--games", "breakout", "--presets", "gdi-i3", "--seeds", "0",
                         "--frames", str(2 * BUDGET), "--root", str(root), "--dry-run"]) == 2


def test_a_done_checkpoint_without_its_final_evaluation_is_resumed(tmp_path):
    run = minatar.grid_runs(["breakout"], ["gdi-i3"], [0], BUDGET, tmp_path)[0]
    fake_run(tmp_path, "breakout", "gdi-i3", 0, [1, 2, 3], checkpoint_frames=BUDGET)
    assert minatar.run_status(run) == "resume"


# --- the report ---------------------------------------------------------------------------------


def fabricated_grid(root):
    """Two games, GDI-I³ and GDI-I¹, seeds 0 and 1; finals (mean of the last 3 evaluations):

    breakout  I³: [3,4,5] → 4, [6,8,10] → 8 (mean 6)    I¹: 3, 3 (mean 3)
    asterix   I³: 10, 20 (mean 15)                      I¹: 15, 30 (mean 22.5)
    """
    early_late = {500: (1, 2, 0.1), 900: (3, 4, 0.3), 2500: (50, 50, 1.0),
                  4500: (10, 0, 0.9), 5000: (20, 2, 0.7)}
    fake_run(root, "breakout", "gdi-i3", 0, [1, 2, 3, 4, 5], lambdas=early_late)
    fake_run(root, "breakout", "gdi-i3", 1, [1, 2, 6, 8, 10], lambdas=early_late)
    fake_run(root, "breakout", "gdi-i1", 0, [9, 9, 2, 3, 4], lambdas={100: (4,), 4900: (30,)})
    fake_run(root, "breakout", "gdi-i1", 1, [0, 0, 3, 3, 3], lambdas={200: (6,), 4800: (40,)})
    fake_run(root, "asterix", "gdi-i3", 0, [0, 0, 10, 10, 10], lambdas=early_late)
    fake_run(root, "asterix", "gdi-i3", 1, [0, 0, 20, 20, 20], lambdas=early_late)
    fake_run(root, "asterix", "gdi-i1", 0, [0, 0, 15, 15, 15], lambdas={0: (1,), 5000: (2,)})
    fake_run(root, "asterix", "gdi-i1", 1, [0, 0, 30, 30, 30], lambdas={0: (1,), 5000: (2,)})
    fake_run(root, "asterix", "gdi-i0", 0, [1, 2], checkpoint_frames=2000)  # unfinished


def test_final_return_is_the_mean_of_the_last_three_evaluations(tmp_path):
    from gdi.scores import load_run

    run = fake_run(tmp_path, "breakout", "gdi-i3", 0, [1, 2, 3, 4, 5])
    assert_close(minatar_report.final_return(load_run(run)), (3 + 4 + 5) / 3)
    # A `gdi evaluate` file at the last frame count replaces that evaluation, as in the curve.
    write_eval_file(run, "ckpt_000000005000", checkpoint="ckpt", frames=5000, env="minatar:breakout",
                    policy="π_λ", seed=9, episodes=[{"return": 11.0, "frames": 1, "seed": 0}])
    assert_close(minatar_report.final_return(load_run(run)), (3 + 4 + 11) / 3)
    assert_close(minatar_report.final_return(load_run(run), last=1), 11.0)


def test_report_numbers_match_a_hand_computation(tmp_path):
    root = tmp_path / "grid"
    fabricated_grid(root)
    grid = minatar_report.load_grid(root)
    assert [p.name for p in grid.incomplete] == ["asterix__gdi-i0__0"]
    assert grid.games == ["asterix", "breakout"] and grid.presets == ["gdi-i3", "gdi-i1"]
    finals = minatar_report.final_table(grid, last=3, reps=2000, seed=0)
    seeds, values, ci = finals[("breakout", "gdi-i3")]
    assert seeds == [0, 1]
    assert_close(values, [4.0, 8.0])
    # Two seeds: the bootstrap means are 4, 6, 6, 8 with probabilities ¼, ½, ¼, so the
    # percentile interval is [4, 8] around the mean 6.
    assert_close(tuple(ci), (6.0, 4.0, 8.0))
    assert_close(finals[("asterix", "gdi-i1")][2].point, 22.5)
    normalized, notes = minatar_report.normalized_by_baseline(finals, reps=2000, seed=0)
    by_preset = {n.preset: n for n in normalized}
    # I¹ / I³'s mean: breakout 3/6 = 0.5 for both seeds, asterix 15/15 = 1 and 30/15 = 2;
    # mean over games and seeds (0.5 + 0.5 + 1 + 2) / 4 = 1.0. I³ itself: (4 + 8)/6/2 = 1 and
    # (10 + 20)/15/2 = 1.
    assert by_preset["gdi-i1"].games == ["asterix", "breakout"]
    assert_close(by_preset["gdi-i1"].per_game, [1.5, 0.5])
    assert_close(by_preset["gdi-i1"].aggregate.point, 1.0)
    assert_close(by_preset["gdi-i3"].aggregate.point, 1.0)
    # Both cells' seeds resampled (issue 42: holding GDI-I³'s mean fixed made the intervals
    # too narrow). By hand, the extremes: I¹'s seeds (15, 3) twice over I³'s (20, 8) twice:
    # (15/20 + 3/8) / 2 = 0.5625; (30, 3) over (10, 4): (30/10 + 3/4) / 2 = 1.875.
    low, high = by_preset["gdi-i1"].aggregate.low, by_preset["gdi-i1"].aggregate.high
    assert 0.5625 <= low < 1.0 < high <= 1.875
    own = by_preset["gdi-i3"].aggregate  # GDI-I³ against itself: its own spread, not a point
    assert own.low < 1.0 < own.high
    assert notes == []
    summary = minatar_report.meta_summary(grid.runs[("breakout", "gdi-i3")])
    # First 20 % of 5000 frames: λ at 500 and 900; last 20 %: at 4500 and 5000 (both seeds
    # have the same rows, so the pooled medians are the per-seed ones).
    assert [r["coordinate"] for r in summary] == ["inv_tau1", "inv_tau2", "eps"]
    assert_close([r["early_median"] for r in summary], [2.0, 3.0, 0.2])
    assert_close([r["late_median"] for r in summary], [15.0, 1.0, 0.8])
    assert summary[0]["early_episodes"] == 4 and summary[0]["late_episodes"] == 4
    i1 = minatar_report.meta_summary(grid.runs[("breakout", "gdi-i1")])
    assert [(r["coordinate"], r["early_median"], r["late_median"]) for r in i1] == \
        [("inv_tau", 5.0, 35.0)]


def test_report_writes_the_doc_block_figures_and_csvs(tmp_path, capsys):
    root, doc, figures = tmp_path / "grid", tmp_path / "docs" / "results.md", tmp_path / "figs"
    fabricated_grid(root)
    doc.parent.mkdir()
    doc.write_text("# Results\n\nHand-written text stays.\n")
    args = ["--root", str(root), "--doc", str(doc), "--figures", str(figures), "--reps", "200"]
    assert minatar_report.main(args) == 0
    text = doc.read_text()
    assert text.startswith("# Results\n\nHand-written text stays.\n")
    assert text.count(minatar_report.BEGIN) == 1 and text.count(minatar_report.END) == 1
    assert "| breakout | GDI-I³ | 2 | 6.00 [4.00, 8.00] | 4.00, 8.00 |" in text
    assert "Not finished, left out: asterix__gdi-i0__0." in text
    for name in ("ablation.png", "learning_curves.png", "meta_asterix.png", "meta_breakout.png"):
        assert f"](../figs/{name})" in text
        image = imread(figures / name)
        assert image.shape[0] > 200 and image.std() > 0.02
    rows = (figures / "final_returns.csv").read_text().splitlines()
    assert rows[0] == "game,preset,n_seeds,mean,ci_low,ci_high,per_seed" and len(rows) == 5
    assert "Young & Tian (2019)" in text


def test_the_generated_block_is_replaced_and_the_text_around_it_kept(tmp_path):
    doc = tmp_path / "results.md"
    minatar_report.write_block(doc, "first")  # a missing file is created with a title
    assert doc.read_text().startswith("# MinAtar ablation results\n")
    doc.write_text(doc.read_text() + "\nText after the block.\n")
    minatar_report.write_block(doc, "second")
    text = doc.read_text()
    assert "first" not in text and text.count("second") == 1
    assert text.endswith("Text after the block.\n") and text.count(minatar_report.BEGIN) == 1


def test_report_of_an_empty_grid_is_an_error(tmp_path, capsys):
    (tmp_path / "grid").mkdir()
    assert minatar_report.main(["--root", str(tmp_path / "grid"), "--doc",
                                str(tmp_path / "d.md")]) == 2
    assert "no finished runs" in capsys.readouterr().out


# --- end to end ----------------------------------------------------------------------------------


def test_a_real_grid_trains_skips_when_done_and_reports(tmp_path, capsys):
    root = tmp_path / "grid"
    argv = ["--games", "gym:CartPole-v1", "--presets", "gdi-i3", "--seeds", "0", "--frames",
            "800", "--root", str(root), "--observation-reservoir", "8", "--set", *TINY]
    assert minatar.main(argv) == 0
    run = root / "gym-CartPole-v1__gdi-i3__0"
    assert (run / "observations.npz").is_file() and (root / "logs" / f"{run.name}.log").is_file()
    capsys.readouterr()
    assert minatar.main(argv) == 0  # everything done: nothing started
    out = capsys.readouterr().out
    assert "1 done" in out and "started" not in out
    # Archived as a committed grid keeps it: the λ log compressed, the checkpoints left behind.
    assert (run / "meta.jsonl.gz").is_file() and not (run / "meta.jsonl").exists()
    shutil.rmtree(run / "checkpoints")
    assert minatar.main(argv) == 0 and "1 done" in capsys.readouterr().out
    doc, figures = tmp_path / "results.md", tmp_path / "figs"
    assert minatar_report.main(["--root", str(root), "--doc", str(doc), "--figures",
                                str(figures), "--reps", "100"]) == 0
    text = doc.read_text()
    assert "| CartPole-v1 | GDI-I³ | 1 |" in text and "inv_tau1" in text
    with np.load(run / "observations.npz") as kept:
        assert kept["stage_0"].shape == (8, 4)


def test_every_preset_gets_a_label_of_its_own():
    # dqn-like and impala-like share the paper's class (GDI-I⁰ w/o E): labelled by the class
    # alone, one would hide the other in the table and the learning curves.
    from gdi.presets import PRESETS

    labels = {name: minatar_report.preset_label(name) for name in PRESETS}
    assert len(set(labels.values())) == len(labels)
    assert labels["gdi-i3"] == "GDI-I³"
    assert labels["dqn-like"] == "dqn-like (GDI-I⁰ w/o E)"


def test_a_new_preset_named_like_the_papers_is_labelled_by_its_name(monkeypatch):
    """Only the paper's own agents (Preset.from_paper) are labelled by their class: a preset a
    user adds as "gdi-i3-mine" of class GDI-I³ must not pass for the paper's GDI-I³."""
    import dataclasses

    from gdi.presets import PRESETS

    mine = dataclasses.replace(PRESETS["gdi-i3"], name="gdi-i3-mine", from_paper=False)
    monkeypatch.setitem(PRESETS, "gdi-i3-mine", mine)
    assert minatar_report.preset_label("gdi-i3-mine") == "gdi-i3-mine (GDI-I³)"
    assert minatar_report.preset_label("gdi-i3") == "GDI-I³"


def test_a_grid_names_es_search_for_every_new_run_and_a_resume_keeps_its_own(tmp_path):
    # The positive control of the E ablation (docs/ablation-e.md): E and its uniform control
    # over 1/τ ∈ [0, 1000] in log(1 + 1/τ), one --search for both cells.
    runs = minatar.grid_runs(["breakout"], ["gdi-i3", "gdi-i3-uniform"], [0], BUDGET, tmp_path,
                             search="log1p-1000")
    for run in runs:
        command = minatar.train_command(run, "todo")
        assert command[command.index("--search") + 1] == "log1p-1000"
        assert "--resume" not in command
    assert "--search" not in minatar.train_command(runs[0], "resume")


def test_a_grid_under_a_named_search_resumes_and_skips_its_own_runs(tmp_path, capsys):
    """The folders a ``--search`` grid writes are its own: re-run, the grid finds them done
    (it once raised on its first finished run, the saved box not being the scale's), the report
    groups them under their presets, and a grid of another search refuses the folder."""
    root = tmp_path / "grid"
    argv = ["--games", "gym:CartPole-v1", "--presets", "gdi-i3,gdi-i3-uniform", "--seeds", "0",
            "--frames", "800", "--root", str(root), "--search", "log1p-50", "--set", *TINY]
    assert minatar.main(argv) == 0
    capsys.readouterr()
    assert minatar.main(argv) == 0
    assert "2 done" in capsys.readouterr().out
    for preset in ("gdi-i3", "gdi-i3-uniform"):
        config = json.loads((root / f"gym-CartPole-v1__{preset}__0" / "config.json").read_text())
        assert minatar.search_of(config) == "log1p-50"
        assert minatar.cell_of(config) == preset
    # The scale's own box has no name; a named search that gives it is that box.
    plain = resolve_config("gdi-i3", "gym:CartPole-v1").to_dict()
    assert minatar.search_of(plain) is None and minatar.cell_of(plain) == "gdi-i3"
    table = resolve_config("gdi-i3", "gym:CartPole-v1", search="table").to_dict()
    assert minatar.search_of(table) == "table" and minatar.cell_of(table) == "gdi-i3"
    # A grid of another search refuses the folders, naming both searches.
    other = [*argv[:argv.index("--search")], "--search", "table", "--set", *TINY]
    assert minatar.main(other) == 2
    assert "'search': ('log1p-50', 'table')" in capsys.readouterr().err
    plain_grid = [*argv[:argv.index("--search")], "--set", *TINY]
    assert minatar.main(plain_grid) == 2
    assert "'search': ('log1p-50', None)" in capsys.readouterr().err
    doc, figures = tmp_path / "results.md", tmp_path / "figs"
    assert minatar_report.main(["--root", str(root), "--doc", str(doc), "--figures",
                                str(figures), "--reps", "100"]) == 0
    text = doc.read_text()
    assert "| CartPole-v1 | GDI-I³ | 1 |" in text and "ranges" not in text


def test_a_cell_that_changes_the_box_is_its_own_run_under_any_search(tmp_path):
    """A cell may set E's blocks (``+accuracies``): its folder is its own run, with or without
    a named search, and a grid of the plain preset refuses it."""
    blocks = [0.5, 0.5, 0.1]
    for search in (None, "log1p-1000"):
        root = tmp_path / str(search)
        cell = "gdi-i3+accuracies=[0.5,0.5,0.1]"
        run = minatar.grid_runs(["breakout"], [cell], [0], BUDGET, root, search=search)[0]
        base = resolve_config("gdi-i3", "minatar:breakout", search=search)
        config = resolve_config("gdi-i3", "minatar:breakout", search=search, frames=BUDGET,
                                seed=0, meta_kwargs={**base.meta_kwargs,
                                                     "accuracies": blocks}).to_dict()
        made = fake_run(tmp_path / "made" / str(search), "breakout", "gdi-i3", 0,
                        [1, 2, 3, 4, 5])
        run.run_dir.parent.mkdir(parents=True)
        made.rename(run.run_dir)
        (run.run_dir / "config.json").write_text(json.dumps(config))
        assert minatar.search_of(config) == search
        assert minatar.cell_of(config) == "gdi-i3+accuracies=[0.5,0.5,0.1]"
        assert minatar.run_status(run) == "done"
        plain = minatar.GridRun("breakout", "gdi-i3", 0, BUDGET, root, search)
        shutil.copytree(run.run_dir, plain.run_dir)
        with pytest.raises(ValueError, match="different run"):
            minatar.run_status(plain)


def test_a_grid_names_ts_learning_for_every_new_run(tmp_path):
    runs = minatar.grid_runs(["breakout"], ["gdi-i3", "gdi-i3-uniform"], [0], BUDGET, tmp_path,
                             learning="policy-head")
    for run in runs:
        command = minatar.train_command(run, "todo")
        assert command[command.index("--learning") + 1] == "policy-head"
    plain = minatar.grid_runs(["breakout"], ["gdi-i3"], [0], BUDGET, tmp_path)[0]
    assert "--learning" not in minatar.train_command(plain, "todo")
    assert "--learning" not in minatar.train_command(runs[0], "resume")
    args = minatar.parse_args(["--games", "breakout", "--presets", "gdi-i3", "--seeds", "0",
                               "--root", str(tmp_path), "--learning", "ppo"])
    with pytest.raises(ValueError, match="learning: unknown value 'ppo'"):
        minatar.plan(args)


def test_a_grid_of_another_reading_of_t_refuses_the_folder(tmp_path):
    """A folder trained with the paper's T is not a run of a ``--learning policy-head`` grid
    (it once passed for one: the grid compared preset, env, seed, budget and E only)."""
    fake_run(tmp_path, "breakout", "gdi-i3", 0, [1, 2, 3, 4, 5])  # the paper's T
    paper = minatar.grid_runs(["breakout"], ["gdi-i3"], [0], BUDGET, tmp_path)[0]
    assert minatar.run_status(paper) == "done"
    assert minatar.run_status(dataclasses.replace(paper, learning="paper")) == "done"
    head = dataclasses.replace(paper, learning="policy-head")
    with pytest.raises(ValueError, match=r"different run \{'learning': \('paper', "
                                         r"'policy-head'\)\}"):
        minatar.run_status(head)


def test_a_grids_kept_records_load_from_their_setting_folders(tmp_path):
    """``gdi benchmark`` keeps each run's records as RECORDS/<setting>/<env>-<seed>: the report
    finds them at that depth, and a folder inside a run (a bundle, an export) is no run."""
    flat, nested = tmp_path / "flat", tmp_path / "nested"
    fabricated_grid(flat)
    for run in sorted(flat.iterdir()):
        game, preset, seed = run.name.split("__")
        (nested / preset).mkdir(parents=True, exist_ok=True)
        run.rename(nested / preset / f"minatar-{game}-{seed}")
    inside = nested / "gdi-i3" / "minatar-breakout-0" / "bundle"
    inside.mkdir()
    (inside / "config.json").write_text((inside.parent / "config.json").read_text())
    grid = minatar_report.load_grid(nested)
    assert [p.name for p in grid.incomplete] == ["minatar-asterix-0"]
    assert {cell: [r.seed for r in runs] for cell, runs in grid.runs.items()} == {
        ("asterix", "gdi-i3"): [0, 1], ("asterix", "gdi-i1"): [0, 1],
        ("breakout", "gdi-i3"): [0, 1], ("breakout", "gdi-i1"): [0, 1]}
