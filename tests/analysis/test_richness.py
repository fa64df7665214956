"""`gdi analyze richness` (paper App. "Ablation Study", "t-SNE"): the richness numbers on
hand-made embeddings whose answers are worked out here, stage regrouping, the figure and the
files end to end through the CLI, and the errors a user can run into."""

import json

import numpy as np
import pytest
from matplotlib.image import imread

from gdi.analysis.richness import (
    Grid,
    RunObservations,
    compute_richness,
    grid_coverage,
    label_coverage,
    load_observations,
)
from gdi.cli import main
from gdi.run_files import OBSERVATIONS_FILE
from gdi.runtime.storage.reservoir import StageReservoir
from tests.tolerance import assert_close


def identity_embed(features, seed):
    return features


def run_obs(stages, env="minatar:breakout", label="GDI-I³"):
    """RunObservations from a list of per-stage arrays (frames = 100 · index)."""
    stages = tuple(np.asarray(s, dtype=np.float32) for s in stages)
    frames = tuple(np.arange(len(s), dtype=np.int64) * 100 for s in stages)
    return RunObservations(None, label, env, "gdi-i3", 0, stages, frames)


def fabricate_run(root, name, preset, observations_per_stage, *, saved_stages=3,
                  env="minatar:breakout"):
    """A run folder with config.json and observations.npz holding the given observations,
    stage k's fed at progress (k + 0.5) / saved_stages."""
    run = root / name
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(
        {"env": env, "preset": preset, "seed": 0, "name": name}))
    per_stage = max(len(o) for o in observations_per_stage)
    reservoir = StageReservoir(saved_stages, per_stage, seed=0)
    for k, obs in enumerate(observations_per_stage):
        reservoir.add(np.asarray(obs), (k + 0.5) / saved_stages, frames=1000 * k)
    reservoir.save(run / OBSERVATIONS_FILE)
    return run


def binary_states(rng, n, positions):
    """MinAtar-like [n, 10, 10, 4] bool states: a ball in one of ``positions`` cells."""
    obs = np.zeros((n, 10, 10, 4), dtype=bool)
    ball = rng.integers(0, positions, n)
    obs[np.arange(n), ball // 10, ball % 10, 0] = True
    obs[:, 9, :3, 1] = True
    return obs


# --- the numbers ---------------------------------------------------------------------------------


def test_label_coverage_is_seen_over_union():
    # A saw conditions {0, 1, 2, 3}, B saw {3, 4}: union {0..4} = 5 → A 4/5, B 2/5.
    c = label_coverage(np.array([0, 1, 1, 2, 3]), np.array([3, 4, 4]))
    assert (c.conditions_a, c.conditions_b, c.conditions_union) == (4, 2, 5)
    assert_close((c.a, c.b), (0.8, 0.4))


def test_grid_cells_by_hand():
    grid = Grid(0.0, 4.0, 0.0, 4.0, bins=4)  # unit cells, id = row · 4 + column
    points = np.array([[0.0, 0.0], [1.5, 0.5], [0.5, 2.5], [3.99, 3.99], [4.0, 4.0], [5, -1]])
    # (4, 4) is on the upper edges: last row and column; (5, −1) is clamped to row 0, col 3.
    np.testing.assert_array_equal(grid.cells(points), [0, 1, 8, 15, 15, 3])
    flat = Grid(1.0, 1.0, 0.0, 2.0, bins=2)  # zero width: everything in column 0
    np.testing.assert_array_equal(flat.cells(np.array([[1.0, 0.0], [1.0, 2.0]])), [0, 2])


def test_grid_coverage_on_a_hand_made_embedding():
    # A occupies cells 0, 1, 2, 15 (4 cells); B occupies 0 (twice) and 9 (2 cells).
    a = np.array([[0.0, 0.0], [1.5, 0.5], [2.5, 0.5], [4.0, 4.0]])
    b = np.array([[0.2, 0.2], [0.4, 0.4], [1.5, 2.5], [1.5, 2.5]])
    grid = Grid.around(np.concatenate([a, b]), bins=4)
    assert grid == Grid(0.0, 4.0, 0.0, 4.0, 4)
    c = grid_coverage(a, b, grid)
    # Union of occupied cells {0, 1, 2, 9, 15}: A 4/5 = 0.8, B 2/5 = 0.4.
    assert (c.conditions_a, c.conditions_b, c.conditions_union) == (4, 2, 5)
    assert_close((c.a, c.b), (0.8, 0.4))


def test_compute_richness_on_known_states():
    # 2-D observations embedded as themselves (identity embedding, no PCA below 50 dims).
    a = [[[0.0, 0.0], [1.5, 0.5], [2.5, 0.5], [4.0, 4.0]], [[1.0, 1.0]]]
    b = [[[0.2, 0.2], [0.4, 0.4], [1.5, 2.5], [1.5, 2.5]], []]
    result = compute_richness(run_obs(a), run_obs(b, label="GDI-I¹"), states=10, grid=4,
                              clusters=50, embed=identity_embed)
    assert result.states == (4, 0)  # stage 2 has no states of B: not measured
    assert result.per_stage[1] is None
    stage = result.per_stage[0]
    assert_close((stage["tsne_grid"].a, stage["tsne_grid"].b), (0.8, 0.4))
    # Exact observations: A has 4 distinct, B 3 ((1.5, 2.5) twice), none shared → 4/7, 3/7.
    assert stage["distinct"].conditions_union == 7
    assert_close((stage["distinct"].a, stage["distinct"].b), (4 / 7, 3 / 7))
    # k = min(50, 7 distinct states): one cluster per distinct state, the same fractions.
    assert result.settings["clusters"] == 7
    assert_close((stage["kmeans"].a, stage["kmeans"].b), (4 / 7, 3 / 7))
    # Repeats share their point: B's two (1.5, 2.5) states sit at one embedded point.
    repeats = np.flatnonzero((result.run == 1) & (result.distinct ==
                                                  result.distinct[result.run == 1][-1]))
    assert len(repeats) == 2 and np.ptp(result.embedding[repeats], axis=0).max() == 0
    assert_close(result.overall["tsne_grid"].a, 0.8)


def test_equal_numbers_of_states_are_drawn_from_both_runs():
    rng = np.random.default_rng(0)
    a = [rng.normal(size=(30, 2)), rng.normal(size=(8, 2))]
    b = [rng.normal(size=(12, 2)), rng.normal(size=(20, 2))]
    result = compute_richness(run_obs(a), run_obs(b), states=10, embed=identity_embed)
    assert result.states == (10, 8)
    for stage, n in enumerate(result.states):
        for r in (0, 1):
            assert np.sum((result.stage == stage) & (result.run == r)) == n


# --- files, figure, CLI --------------------------------------------------------------------------


def test_stages_are_merged_from_the_saved_ones(tmp_path):
    rng = np.random.default_rng(1)
    saved = [binary_states(rng, 5 + k, 50) for k in range(6)]
    run = fabricate_run(tmp_path, "six", "gdi-i3", saved, saved_stages=6)
    merged = load_observations(run, stages=3)
    assert [len(s) for s in merged.stages] == [5 + 6, 7 + 8, 9 + 10]
    np.testing.assert_array_equal(merged.stages[1][:7], saved[2])
    assert merged.label == "GDI-I³" and merged.obs_shape == (10, 10, 4)
    with pytest.raises(ValueError, match="divisor of 6"):
        load_observations(run, stages=4)


def test_cli_writes_figure_numbers_and_embedding(tmp_path, capsys):
    rng = np.random.default_rng(2)
    a = fabricate_run(tmp_path, "breakout__gdi-i3__0", "gdi-i3",
                      [binary_states(rng, 60, 60) for _ in range(3)])
    b = fabricate_run(tmp_path, "breakout__gdi-i1__0", "gdi-i1",
                      [binary_states(rng, 60, 12) for _ in range(3)])
    out = tmp_path / "out"
    main(["analyze", "richness", str(a), str(b), "--states", "40", "--out", str(out),
          "--grid", "10", "--clusters", "20"])
    printed = capsys.readouterr().out
    assert "all stages" in printed and "richness.png" in printed
    image = imread(out / "richness.png")
    assert image.shape[0] > 400 and image.shape[1] > 1000 and image.std() > 0.05
    numbers = json.loads((out / "richness.json").read_text())
    assert numbers["runs"]["A"]["label"] == "GDI-I³" and numbers["runs"]["B"]["label"] == "GDI-I¹"
    assert [s["states_per_run"] for s in numbers["per_stage"]] == [40, 40, 40]
    overall = numbers["all_stages"]
    # A's ball visits 60 cells, B's 12: A sees more exact states than B, whatever the seed.
    assert overall["distinct"]["A"] > overall["distinct"]["B"]
    for method in ("tsne_grid", "kmeans", "distinct"):
        entry = overall[method]
        assert_close(entry["A"], entry["conditions_A"] / entry["conditions_union"])
    rows = (out / "embedding.csv").read_text().splitlines()
    assert rows[0].startswith("run,stage,frames,x,y") and len(rows) == 1 + 2 * 3 * 40


def test_a_run_without_observations_says_how_to_record_them(tmp_path, capsys):
    rng = np.random.default_rng(3)
    a = fabricate_run(tmp_path, "a", "gdi-i3", [binary_states(rng, 10, 20)] * 3)
    b = tmp_path / "b"
    b.mkdir()
    (b / "config.json").write_text(json.dumps(
        {"env": "minatar:breakout", "preset": "gdi-i1", "seed": 0, "name": "b"}))
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", "richness", str(a), str(b)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "observation_reservoir=1000" in err and len(err.splitlines()) == 1


def test_mismatched_runs_are_refused(tmp_path):
    rng = np.random.default_rng(4)
    a = fabricate_run(tmp_path, "a", "gdi-i3", [binary_states(rng, 10, 20)] * 3)
    other_shape = fabricate_run(tmp_path, "b", "gdi-i1", [np.zeros((10, 10, 10, 6), bool)] * 3)
    other_env = fabricate_run(tmp_path, "c", "gdi-i1", [binary_states(rng, 10, 20)] * 3,
                              env="minatar:asterix")
    with pytest.raises(ValueError, match="observation shapes differ"):
        compute_richness(load_observations(a), load_observations(other_shape))
    with pytest.raises(ValueError, match="different environments"):
        compute_richness(load_observations(a), load_observations(other_env))
    with pytest.raises(ValueError, match="no stage has observations"):
        compute_richness(run_obs([[]] * 3), run_obs([[]] * 3), embed=identity_embed)


def test_a_damaged_observations_file_is_a_clear_error(tmp_path):
    rng = np.random.default_rng(5)
    run = fabricate_run(tmp_path, "a", "gdi-i3", [binary_states(rng, 10, 20)] * 3)
    (run / OBSERVATIONS_FILE).write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="not a readable observations file"):
        load_observations(run)
