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
    with pytest.raises(ValueError, match=r"different run.*λ"):
        grid.run_status(run)
