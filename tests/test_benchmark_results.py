"""A grid's results from Python (``gdi.benchmark``'s DataFrames), each number checked against
a computation straight from its definition over records written here by hand: the trailing
mean, the score at the frames compared, HNS with the paper's baselines, the normalized area,
the interquartile mean and the probability of improvement."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import trim_mean

import gdi.benchmark as bench
from gdi.cli import main
from tests.imports import loaded_after
from tests.tolerance import assert_close

GRID = """\
frames = 2000
stop_at = 1000
seeds = [0, 1]
envs = ["ale:Breakout", "ale:Pong"]

[settings.a]
preset = "gdi-i3"
records = "kept/{setting}/{env}-{seed}"

[peers.P]
folder = "peer/{env}-{seed}"

[report]
window = 3
"""
WINDOW = 3
EPISODE_FRAMES = list(range(100, 1001, 100))  # ten episodes, one every 100 frames


def returns_of(system: str, env: str, seed: int) -> list[float]:
    """Each run's own returns: the setting's well above the peer's on Breakout, near them on
    Pong (P(a > P) is then 1 on one game and neither 0 nor 1 on the other)."""
    rng = np.random.default_rng([ord(system), len(env), seed])
    base = {"ale:Breakout": 5.0, "ale:Pong": -15.0}[env]
    lead = (3.0 if env == "ale:Breakout" else -0.5) * (system == "a")
    return [float(v) for v in np.round(base + lead + rng.normal(0, 2, len(EPISODE_FRAMES)), 2)]


def write_records(folder: Path, returns: list[float], trained: int) -> None:
    """A setting's kept records: config.json, the metrics rows' frames and meta.jsonl's
    episodes (as gdi writes them), for the episodes that ended by ``trained`` frames."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "metrics.jsonl").write_text(json.dumps({"frames": trained}) + "\n")
    (folder / "meta.jsonl").write_text("".join(
        json.dumps({"frames": f, "actor": 0, "lambda": [1.0, 1.0, 0.5], "return": r,
                    "length": 10}) + "\n"
        for f, r in zip(EPISODE_FRAMES, returns, strict=True) if f <= trained))


def write_peer(folder: Path, returns: list[float]) -> None:
    """A peer run's curve files as benchmarks/appo_peer.py writes them."""
    folder.mkdir(parents=True)
    with (folder / "curve_episodes.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["wall_s", "frames", "return", "length_frames"])
        writer.writerows([i, frames, r, 10] for i, (frames, r)
                         in enumerate(zip(EPISODE_FRAMES, returns, strict=True)))
    (folder / "curve.csv").write_text("wall_s,frames,mean_return,episodes\n9,1000,0,10\n")


@pytest.fixture
def grid(tmp_path):
    """Setting a and peer P on two games, two seeds; a's Pong seed 1 stopped at 500 frames."""
    for env, slug in (("ale:Breakout", "ale-Breakout"), ("ale:Pong", "ale-Pong")):
        for seed in (0, 1):
            trained = 500 if (env, seed) == ("ale:Pong", 1) else 1000
            write_records(tmp_path / "kept" / "a" / f"{slug}-{seed}", returns_of("a", env, seed),
                          trained)
            write_peer(tmp_path / "peer" / f"{slug}-{seed}", returns_of("P", env, seed))
    path = tmp_path / "grid.toml"
    path.write_text(GRID)
    return bench.load_grid(path)


#: The paper's random and human scores (App. "Evaluation Metrics for ALE", Tab. of baselines).
RANDOM_HUMAN = {"ale:Breakout": (1.7, 30.5), "ale:Pong": (-20.7, 14.6)}


def hns(env: str, score: float) -> float:
    random, human = RANDOM_HUMAN[env]
    return (score - random) / (human - random)


def trailing(returns: list[float], i: int) -> float:
    """The mean return of episode i and the WINDOW - 1 before it (fewer at the start)."""
    last = returns[max(0, i - WINDOW + 1):i + 1]
    return sum(last) / len(last)


def score_at(returns: list[float], frames: float) -> float:
    ended = [i for i, f in enumerate(EPISODE_FRAMES) if f <= frames]
    return trailing(returns, ended[-1] if ended else 0)


def test_status_has_a_row_per_run_of_each_setting_and_peer(grid):
    status = bench.grid_status(grid)
    assert len(status) == 8
    mine = status[~status["peer"]].set_index(["env", "seed"])
    assert mine.loc[("ale:Breakout", 0), "state"] == "kept"
    assert mine.loc[("ale:Pong", 1), "state"] == "new"  # short of the target, nothing carried
    assert mine.loc[("ale:Pong", 1), ["frames", "kept_frames"]].tolist() == [0, 500]
    peers = status[status["peer"]]
    assert set(peers["state"]) == {"done"} and set(peers["system"]) == {"P"}


def test_curves_hold_every_episode_with_its_trailing_mean(grid):
    curves = bench.grid_curves(grid)
    assert len(curves) == 8 * 10 - 5  # a's Pong seed 1 ended 5 episodes by 500 frames
    for (system, env, seed), run in curves.groupby(["system", "env", "seed"]):
        returns = returns_of(system, env, seed)
        assert list(run["frames"]) == EPISODE_FRAMES[:len(run)]
        assert list(run["return"]) == returns[:len(run)]
        for i, value in enumerate(run["trailing"]):
            assert_close(value, trailing(returns, i), terms=WINDOW)


def test_scores_are_the_score_hns_and_area_by_their_definitions(grid):
    scores = bench.grid_scores(grid)  # at the grid's target, 1,000 frames
    assert len(scores) == 7  # a's Pong seed 1 is behind: not scored
    x = 1000 * np.arange(1, 101) / 100  # the area's 100 equally spaced frame counts
    for row in scores.itertuples():
        returns = returns_of(row.system, row.env, row.seed)
        score = score_at(returns, 1000)
        assert_close(row.score, score, terms=WINDOW)
        assert_close(row.normalized, hns(row.env, score), terms=WINDOW)
        area = np.mean([hns(row.env, score_at(returns, f)) for f in x])
        assert_close(row.normalized_auc, area, terms=WINDOW * 100)
    # Earlier frames take the scores the curves had then.
    early = bench.grid_scores(grid, at=450).set_index(["system", "env", "seed"])
    assert len(early) == 8  # at 450 frames every run has reached the frames compared
    assert_close(early.loc[("a", "ale:Pong", 1), "score"],
                 score_at(returns_of("a", "ale:Pong", 1), 450), terms=WINDOW)


def test_aggregates_are_the_iqm_and_the_probability_of_improvement(grid):
    result = bench.grid_aggregates(grid, reps=200)
    systems = result.systems.set_index("system")
    assert list(result.systems["group"].unique()) == ["a vs P"]
    assert set(result.systems["envs"]) == {"ale:Breakout, ale:Pong"}
    # rliable takes as many runs on every game: a has one on Pong, so one (seed 0) on each.
    assert systems.loc["a", "runs_per_game"] == 1 and systems.loc["P", "runs_per_game"] == 2
    for system, seeds in (("a", [0]), ("P", [0, 1])):
        flat = [hns(env, score_at(returns_of(system, env, seed), 1000))
                for seed in seeds for env in ("ale:Breakout", "ale:Pong")]
        assert_close(systems.loc[system, "iqm_hns"], trim_mean(flat, 0.25), terms=4)
        low, high = systems.loc[system, ["iqm_hns_low", "iqm_hns_high"]]
        assert low <= systems.loc[system, "iqm_hns"] <= high
    # P(a > P): per game, the share of pairs of runs (a's seed 0 against each of P's) where
    # a's scores higher, ties counting half, averaged over the games.
    per_game = []
    for env in ("ale:Breakout", "ale:Pong"):
        mine = hns(env, score_at(returns_of("a", env, 0), 1000))
        theirs = [hns(env, score_at(returns_of("P", env, s), 1000)) for s in (0, 1)]
        per_game.append(np.mean([1.0 if mine > t else 0.5 if mine == t else 0.0
                                 for t in theirs]))
    better = result.improvements.iloc[0]
    assert (better["setting"], better["peer"]) == ("a", "P")
    assert_close(better["p_score"], np.mean(per_game))


def test_the_report_and_the_dataframes_give_the_same_numbers(grid, tmp_path):
    written = bench.write_grid_report(grid, out=tmp_path / "report", reps=50)
    with written.table.open(newline="") as f:
        table = list(csv.DictReader(f))
    scores = bench.grid_scores(grid)
    assert [(r["system"], r["env"], int(r["seed"]), float(r["score"]), float(r["normalized_auc"]))
            for r in table] == list(scores[["system", "env", "seed", "score",
                                            "normalized_auc"]].itertuples(index=False, name=None))


def test_a_path_serves_as_the_grid_and_a_bad_frame_count_is_refused(grid):
    assert len(bench.grid_scores(grid.path)) == 7
    with pytest.raises(ValueError, match="--at 0: allowed: a frame count of at least 1"):
        bench.grid_scores(grid, at=0)
    with pytest.raises(FileNotFoundError, match="no grid file"):
        bench.grid_status(grid.path.parent / "nope.toml")


def test_importing_the_package_loads_neither_torch_nor_pandas():
    assert loaded_after("import gdi.benchmark as b; b.__all__", {"torch", "pandas"}) == []
    assert loaded_after("import gdi.benchmark as b; b.grid_scores", {"pandas"}) == ["pandas"]


def test_what_remains_is_each_systems_runs_frames_and_pace_by_hand(grid, capsys):
    """a's Pong seed 1 stopped at 500 frames (new again: nothing carried) is a's one run left,
    1,000 frames; the peer's are done. A run's pace is its frames over the seconds they took,
    each metrics row's frames since the row before over its perf/fps; a peer run's, its
    curve's frames over the wall time where both grew; a system's, the median over runs."""
    from gdi.benchmark.remaining import gdi_pace, peer_pace

    for slug in ("ale-Breakout", "ale-Pong"):
        for seed in (0, 1):
            folder = grid.path.parent / "kept" / "a" / f"{slug}-{seed}"
            fps = [100.0 * (seed + 1), 300.0 * (seed + 1), 200.0 * (seed + 1)]
            with (folder / "metrics.jsonl").open("a") as f:  # rows early in each run
                f.writelines(json.dumps({"frames": 100 * (i + 1), "perf/fps": v}) + "\n"
                             for i, v in enumerate(fps))
    runs = sorted(grid.path.parent.glob("kept/a/*"))
    by_hand = [300 / (100 / 100 + 100 / 300 + 100 / 200) * (seed + 1) for seed in (0, 1)]
    for run, expected in zip(runs, by_hand * 2, strict=True):  # Breakout 0, 1, Pong 0, 1
        assert_close(gdi_pace(run), expected, terms=3)
    # A resume: wall time goes on, frames repeat from the checkpoint (no progress counted).
    peer = grid.path.parent / "peer" / "ale-Pong-1"
    (peer / "curve.csv").write_text("wall_s,frames,mean_return,episodes\n"
                                    "10,0,,0\n20,500,1,1\n30,1000,1,2\n35,800,1,2\n45,1400,1,3\n")
    assert_close(peer_pace(peer), (500 + 500 + 600) / (10 + 10 + 10))
    left = {row.system: row for row in bench.grid_remaining(grid)}
    assert (left["a"].runs, left["a"].frames) == (1, 1000)
    assert_close(left["a"].pace, sum(by_hand) / 2, terms=3)  # the median of four: two of each
    assert_close(left["a"].hours, 1000 / left["a"].pace / 3600, terms=4)
    assert (left["P"].runs, left["P"].frames) == (0, 0)
    main(["benchmark", "status", str(grid.path)])
    said = " ".join(capsys.readouterr().out.split())  # rich folds long lines
    assert "left: a 1 run(s), 1,000 frames, at 245 frames/s ≈ 0 min (paces:" in said
    # A curve with a value that is not a number is an error naming the file.
    (peer / "curve.csv").write_text("wall_s,frames,mean_return,episodes\n10,abc,,0\n")
    with pytest.raises(ValueError, match=r"curve\.csv: a row's wall_s or frames is not a number"):
        peer_pace(peer)


def test_without_peers_the_settings_meet_each_other_and_a_closed_one_has_nothing_left(tmp_path):
    """A grid of two settings and no peer: one comparison group of both, P(·) not asked for;
    a closed setting's runs short of the target are reported, never run, so none remain."""
    for setting in ("a", "b"):
        for seed in (0, 1):
            write_records(tmp_path / "kept" / setting / f"ale-Breakout-{seed}",
                          returns_of(setting if setting == "a" else "P", "ale:Breakout", seed),
                          1000 if (setting, seed) != ("b", 1) else 600)
    path = tmp_path / "grid.toml"
    path.write_text(GRID.replace('envs = ["ale:Breakout", "ale:Pong"]', 'envs = ["ale:Breakout"]')
                    .replace('[peers.P]\nfolder = "peer/{env}-{seed}"\n', "")
                    + '\n[settings.b]\npreset = "gdi-i3"\nrecords = "kept/{setting}/{env}-{seed}"\n'
                    'closed = "kept as it ran"\n')
    grid = bench.load_grid(path)
    result = bench.grid_aggregates(grid, reps=100)
    assert set(result.systems["group"]) == {"a vs b"} and result.improvements.empty
    rows = result.systems.set_index("system")
    assert (rows.loc["a", "runs_per_game"], rows.loc["b", "runs_per_game"]) == (2, 1)
    flat = [hns("ale:Breakout", score_at(returns_of("P", "ale:Breakout", 0), 1000))]
    assert_close(rows.loc["b", "iqm_hns"], trim_mean(flat, 0.25))
    remaining = {row.system: row for row in bench.grid_remaining(grid)}
    assert (remaining["a"].runs, remaining["b"].runs, remaining["b"].frames) == (0, 0, 0)
