"""The control of the E ablation (issue 27): ``gdi-i3-uniform`` is GDI-I³ with E = identity
(P_Λ uniform over the bandit's box for the whole run), and grid cells that fix λ
(``gdi-i0@10/10/1``) for the best-fixed-λ sweep."""

import json
import re

import numpy as np
import pytest
from scipy import stats

from benchmarks import minatar_ablation as grid
from gdi.meta import make_controller
from gdi.meta.fixed import UniformIndex
from gdi.presets import PRESETS, index_set_note, resolve_config
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config
from tests.tolerance import assert_close


@pytest.mark.parametrize("env", ["minatar:breakout", "ale:Breakout", "gym:CartPole-v1"])
def test_the_uniform_control_differs_from_gdi_i3_only_in_its_e(env):
    bandit = resolve_config("gdi-i3", env).to_dict()
    uniform = resolve_config("gdi-i3-uniform", env).to_dict()
    differs = {k for k in bandit if bandit[k] != uniform[k]}
    assert differs == {"preset", "meta_controller", "meta_kwargs"}
    assert uniform["meta_controller"] == "uniform"
    # The same box in the same coordinates: the bandit's P_Λ⁽⁰⁾, kept.
    for key in ("ranges", "index_names", "transforms"):
        assert uniform["meta_kwargs"].get(key) == bandit["meta_kwargs"].get(key), key


def test_gdi_presets_and_config_explain_the_control():
    preset = PRESETS["gdi-i3-uniform"]
    assert preset.category == "GDI-I³ (w/o E)" and "uniform" in preset.meta
    assert "gdi-i3-uniform: The control of the E ablation" in index_set_note()
    # Listed with the paper's rows, not under the operator view's heading.
    note = index_set_note().splitlines()
    assert note.index(next(n for n in note if n.startswith("gdi-i3-uniform"))) < \
        note.index(next(n for n in note if n.startswith("The *-like presets")))


def test_a_uniform_box_in_log_coordinates_is_uniform_in_x_not_in_lambda():
    top = np.log1p(1000.0)
    e = UniformIndex(ranges=[(0.0, top), (0.0, 1.0)], index_names=("inv_tau", "eps"),
                     transforms=("log1p", "identity"), seed=3)
    lam = e.sample_many(4000)
    x = np.log1p(lam[:, 0])
    # Kolmogorov-Smirnov against U[0, log 1001]: x is uniform; 1/τ itself is not (its median
    # is e^(log(1001)/2) − 1 ≈ 30.6, far below the 500 of a uniform 1/τ).
    assert stats.kstest(x / top, "uniform").pvalue > 1e-3
    assert stats.kstest(lam[:, 1], "uniform").pvalue > 1e-3
    assert stats.kstest(lam[:, 0] / 1000.0, "uniform").pvalue < 1e-12
    np.testing.assert_array_equal(e.lambda_ranges[0], [0.0, np.expm1(top)])
    # The config and state survive a checkpoint round trip.
    again = make_controller("uniform", 3, ranges=[(0.0, top), (0.0, 1.0)],
                            index_names=("inv_tau", "eps"), transforms=("log1p", "identity"))
    again.load_state_dict(e.state_dict())
    np.testing.assert_array_equal(again.sample_many(5), e.sample_many(5))


def test_transforms_need_a_box_of_matching_size():
    with pytest.raises(ValueError, match="with ranges, not with values"):
        UniformIndex(values=[[0.1]], transforms=("identity",))
    with pytest.raises(ValueError, match="one entry per range"):
        UniformIndex(ranges=[(0.0, 1.0)], transforms=("log1p", "identity"))


def test_the_uniform_control_trains_and_never_changes_its_distribution(tmp_path):
    result = train(tiny_config("gdi-i3-uniform", frames=800), tmp_path / "run",
                   show_progress=False)
    meta = [json.loads(line) for line in (result.run_dir / "meta.jsonl").read_text().splitlines()]
    lam = np.array([m["lambda"] for m in meta])
    assert len(lam) >= 10 and lam.shape[1] == 3
    box = np.array(resolve_config("gdi-i3-uniform", "gym:CartPole-v1").meta_kwargs["ranges"])
    x = np.stack([np.log1p(lam[:, 0]), np.log1p(lam[:, 1]), lam[:, 2]], axis=1)
    assert (x >= box[:, 0]).all() and (x <= box[:, 1]).all()


# --- grid cells with a fixed λ -----------------------------------------------------------------


def test_a_fixed_lambda_cell_trains_its_preset_with_that_lambda(tmp_path, capsys):
    root = tmp_path / "sweep"
    assert grid.main(["--games", "breakout", "--presets", "gdi-i0,gdi-i0@10/10/1,gdi-i0@50/0/0.9",
                      "--seeds", "0", "--frames", "3000", "--root", str(root), "--dry-run"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "gdi.cli train" in line]
    assert [line.split(":")[0].split()[-1] for line in lines] == [
        "breakout__gdi-i0__0", "breakout__gdi-i0@10_10_1__0", "breakout__gdi-i0@50_0_0.9__0"]
    assert "--preset gdi-i0 " in lines[1] and "meta_kwargs.value=[10.0,10.0,1.0]" in lines[1]
    assert "meta_kwargs.value" not in lines[0]


@pytest.mark.parametrize(("cell", "message"), [
    ("gdi-i3@10/10/1", "only a preset with a fixed λ"),
    ("gdi-i0@10/1", "λ has 2 values, gdi-i0's Λ has 3"),
    ("gdi-i0@10/x/1", "must be numbers separated by '/'"),
    ("gdi-i0@10/10/2", "eps in \\[2, 2\\]"),
    ("gdi-i3+ucb_cc=1", "unexpected argument.*ucb_cc"),
    ("gdi-i3+ucb_c=-1", "ucb_c must be a finite number >= 0, got -1"),
    ("gdi-i3+ucb_c", "KEY=VALUE"),
    ("gdi-i3+ucb_c=1+ucb_c=2", "'ucb_c' is given twice"),
])
def test_bad_cells_are_refused_before_anything_runs(tmp_path, capsys, cell, message):
    root = tmp_path / "grid"
    assert grid.main(["--games", "breakout", "--presets", cell, "--root", str(root),
                      "--dry-run"]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not root.exists()


def test_cell_of_a_config_and_a_folder_of_another_lambda(tmp_path):
    i0 = resolve_config("gdi-i0", "minatar:breakout").to_dict()
    assert grid.cell_of(i0) == "gdi-i0"  # the preset's own λ is the preset
    sharp = {**i0, "meta_kwargs": {**i0["meta_kwargs"], "value": [10.0, 10.0, 1.0]}}
    assert grid.cell_of(sharp) == "gdi-i0@10/10/1"
    assert grid.cell_of(resolve_config("gdi-i3", "minatar:breakout").to_dict()) == "gdi-i3"
    run = grid.grid_runs(["breakout"], ["gdi-i0@10/10/1"], [0], 3000, tmp_path)[0]
    run.run_dir.mkdir(parents=True)
    other = {**sharp, "meta_kwargs": {**sharp["meta_kwargs"], "value": [3.0, 3.0, 1.0]},
             "seed": 0, "frames": 3000}
    (run.run_dir / "config.json").write_text(json.dumps(other))
    with pytest.raises(ValueError, match=r"different run.*gdi-i0@3/3/1.*gdi-i0@10/10/1"):
        grid.run_status(run)


def test_a_cell_that_sets_e_runs_its_preset_with_that_setting(tmp_path, capsys):
    cell = grid.parse_cell("gdi-i3+ucb_c=0.25+num_bandits=3")
    assert (cell.preset, cell.fixed_lambda) == ("gdi-i3", None)
    assert cell.meta_settings == (("num_bandits", 3), ("ucb_c", 0.25))
    assert str(cell) == "gdi-i3+num_bandits=3+ucb_c=0.25"  # one name whatever the order
    root = tmp_path / "grid"
    assert grid.main(["--games", "breakout", "--presets", "gdi-i3+ucb_c=0.25", "--seeds", "0",
                      "--frames", "3000", "--root", str(root), "--dry-run"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "gdi.cli train" in line)
    assert "breakout__gdi-i3+ucb_c=0.25__0:" in line and "meta_kwargs.ucb_c=0.25" in line
    # The config such a run writes is grouped back into its cell, and another setting is refused.
    base = resolve_config("gdi-i3", "minatar:breakout")
    written = resolve_config("gdi-i3", "minatar:breakout",
                             meta_kwargs={**base.meta_kwargs, "ucb_c": 0.25}).to_dict()
    assert grid.cell_of(written) == "gdi-i3+ucb_c=0.25"
    # E's own default (BanditEnsemble's ucb_c = 1), written out, is still the preset's cell.
    assert grid.cell_of({**written, "meta_kwargs": {**written["meta_kwargs"], "ucb_c": 1.0}}) \
        == "gdi-i3"
    run = grid.grid_runs(["breakout"], ["gdi-i3+ucb_c=0.5"], [0], 3000, tmp_path)[0]
    run.run_dir.mkdir(parents=True)
    (run.run_dir / "config.json").write_text(json.dumps({**written, "seed": 0, "frames": 3000}))
    with pytest.raises(ValueError, match=r"different run.*gdi-i3\+ucb_c=0.25.*ucb_c=0.5"):
        grid.run_status(run)


# --- the report: normalized scores, IQM, P(improvement), time to half the best ---------------


def test_e_ablation_numbers_match_a_hand_computation(tmp_path):
    from benchmarks import minatar_report as report
    from tests.test_minatar_grid import fake_run

    root, figures = tmp_path / "grid", tmp_path / "figs"
    lam = {500: (1.0, 2.0, 0.1), 4500: (40.0, 3.0, 0.9)}
    finals = {("breakout", "gdi-i3"): ([2, 4, 6, 8, 10], [1, 1, 4, 4, 4]),
              ("breakout", "gdi-i3-uniform"): ([1, 2, 3, 3, 3], [0, 0, 2, 2, 2]),
              ("asterix", "gdi-i3"): ([1, 1, 11, 11, 11], [1, 1, 6, 6, 6]),
              ("asterix", "gdi-i3-uniform"): ([1, 1, 5, 5, 5], [1, 1, 21, 21, 21])}
    for (game, cell), per_seed in finals.items():
        for seed, returns in enumerate(per_seed):
            fake_run(root, game, cell, seed, returns, lambdas=lam)
    # Random returns given, not played: breakout 0, asterix 1.
    figures.mkdir()
    cache = {json.dumps([f"minatar:{g}", {}, report.RANDOM_EPISODES, report.RANDOM_SEED],
                        sort_keys=True): r for g, r in (("breakout", 0.0), ("asterix", 1.0))}
    (figures / "random_returns.json").write_text(json.dumps(cache))
    doc = tmp_path / "doc.md"
    assert report.main(["--root", str(root), "--doc", str(doc), "--figures", str(figures),
                        "--reps", "200"]) == 0
    # Best: breakout 10, asterix 21. Normalized finals (mean of the last 3 evaluations):
    # breakout I³ 8/10, 4/10; uniform 3/10, 2/10. asterix I³ 10/20, 5/20; uniform 4/20, 20/20.
    # IQM of 4 scores = mean of the middle two: I³ (0.4 + 0.5)/2, uniform (0.2 + 0.3)/2.
    # P(I³ > uniform): breakout 4/4 pairs, asterix 2/4 → 0.75.
    rows = {r.split(",")[0]: r.split(",") for r in
            (figures / "e_ablation_aggregates.csv").read_text().splitlines()[1:]}
    # Sums of a few float64 terms: the rule with terms = 4 (the values a mean adds).
    assert_close(float(rows["gdi-i3"][2]), 0.45, terms=4)
    assert_close(float(rows["gdi-i3"][5]), (0.8 + 0.4 + 0.5 + 0.25) / 4, terms=4)
    assert_close(float(rows["gdi-i3-uniform"][2]), 0.25, terms=4)
    assert_close(float(rows["gdi-i3-uniform"][8]), 0.75, terms=4)
    assert_close(float(rows["gdi-i3"][11]), 0.75, terms=4)  # the same pairs, seen from I³
    assert rows["gdi-i3-uniform"][11] == ""  # the control is no bandit cell
    text = doc.read_text()
    # Time to half the best: breakout I³ seed 0 reaches 6/10 at its third evaluation (3,000
    # frames), seed 1 never (4/10 at best).
    assert "| breakout | GDI-I³ | 1 / 2 | 3,000 |" in text
    assert "| asterix | gdi-i3-uniform (GDI-I³ w/o E) | 1 / 2 | 3,000 |" in text
    assert "#### What E's objective allows" in text and "| breakout | eps |" in text
    for name in ("e_ablation_aggregates.png", "e_learning_breakout.png",
                 "e_learning_asterix.png"):
        assert f"](figs/{name})" in text and (figures / name).stat().st_size > 10_000


def test_random_policy_return_of_cartpole_is_the_known_value():
    from benchmarks.minatar_report import random_policy_return

    # Uniformly random CartPole-v1 episodes last ~22 steps on average (return = length).
    assert 19.5 < random_policy_return("gym:CartPole-v1", {}) < 25.0


def test_two_named_blocks_live_in_one_page(tmp_path):
    from benchmarks.minatar_report import markers, write_block

    doc = tmp_path / "page.md"
    write_block(doc, "sweep v1", "sweep")
    write_block(doc, "grid v1", "grid")
    write_block(doc, "sweep v2", "sweep")
    text = doc.read_text()
    assert "sweep v1" not in text and "sweep v2" in text and "grid v1" in text
    assert text.index(markers("sweep")[0]) < text.index(markers("grid")[0])
    assert markers("")[0] not in text


def test_the_resolving_power_benchmark_measures_the_bandit_against_uniform():
    from benchmarks.e_resolving_power import measure

    row = measure(noise=0.5, drift=0.0, episodes=600, tail=300, seed=0)
    assert 0.0 <= row["near_uniform"] <= 0.05 and 0.0 <= row["near"] <= 1.0
    # Uniform draws stay near the KL floor; the bandit's, after 600 episodes, are well above.
    assert max(row["kl_uniform"]) < 0.1 and max(row["kl"]) > 2 * max(row["kl_uniform"])
    assert row["gain"] > 0
