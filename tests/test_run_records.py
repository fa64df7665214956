"""``gdi.read_run``: a run folder's records as DataFrames, each checked against the files
read line by line here: the metrics rows, the training episodes with λ named by the run's
policy space, the evaluation episodes; a crash-cut last line left out and said, a bad line
elsewhere named, a bundle's missing logs empty tables, a folder that is not a run refused."""

import gzip
import json
import shutil

import pytest

import gdi
from gdi.run_records import EVALUATION_COLUMNS, training_clock
from tests.test_api import tiny_train


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return tiny_train(tmp_path_factory.mktemp("records") / "run").run_dir


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_metrics_are_the_rows_of_metrics_jsonl_by_frames(run):
    records = gdi.read_run(run)
    rows = sorted(lines(run / "metrics.jsonl"), key=lambda row: row["frames"])
    assert len(records.metrics) == len(rows) > 1
    assert list(records.metrics["frames"]) == [row["frames"] for row in rows]
    logged = [row for row in rows if "charts/episodic_return" in row]
    assert logged and list(records.metrics["charts/episodic_return"].dropna()) == \
        [row["charts/episodic_return"] for row in logged]
    assert records.config == json.loads((run / "config.json").read_text())
    assert records.notes == ()


def test_episodes_name_each_coordinate_of_lambda_as_the_policy_space_does(run):
    episodes = gdi.read_run(run).episodes
    rows = lines(run / "meta.jsonl")
    assert list(episodes.columns) == ["frames", "actor", "inv_tau1", "inv_tau2", "eps", "return",
                                      "length"]  # GDI-I³'s λ = (1/τ₁, 1/τ₂, ε)
    assert len(episodes) == len(rows) > 0
    for (_, episode), row in zip(episodes.iterrows(), rows, strict=True):
        assert [episode["inv_tau1"], episode["inv_tau2"], episode["eps"]] == row["lambda"]
        assert (episode["frames"], episode["return"], episode["length"]) == \
            (row["frames"], row["return"], row["length"])


def test_evaluations_hold_every_episode_of_every_evaluation_file(run):
    evaluations = gdi.read_run(run).evaluations
    files = sorted((run / "eval").glob("*.json"))
    assert files and list(evaluations.columns) == list(EVALUATION_COLUMNS)
    expected = []
    for path in files:
        data = json.loads(path.read_text())
        expected += [(data["frames"], path.stem, e["return"]) for e in data["episodes"]]
    got = list(evaluations[["frames", "name", "return"]].itertuples(index=False, name=None))
    assert sorted(got) == sorted(expected)
    assert evaluations["periodic"].all()  # training's own evaluations, frames_<N>.json


def test_a_crash_cut_last_line_is_left_out_and_said(run, tmp_path):
    copy = shutil.copytree(run, tmp_path / "copy")
    with (copy / "metrics.jsonl").open("a") as f:
        f.write('{"frames": 99999, "charts/epis')  # a write cut short, no newline
    records = gdi.read_run(copy)
    assert len(records.metrics) == len(lines(run / "metrics.jsonl"))
    assert len(records.notes) == 1 and "incomplete last line" in records.notes[0]


def test_a_bad_line_elsewhere_is_an_error_naming_the_file_and_line(run, tmp_path):
    copy = shutil.copytree(run, tmp_path / "copy")
    text = (copy / "meta.jsonl").read_text().splitlines()
    (copy / "meta.jsonl").write_text("\n".join([text[0], "not json", *text[1:]]) + "\n")
    with pytest.raises(ValueError, match=r"meta\.jsonl:2 is not valid JSON"):
        gdi.read_run(copy)


def test_a_folder_without_logs_has_empty_tables_and_one_without_config_is_refused(run, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(run / "config.json", bare / "config.json")
    records = gdi.read_run(bare)
    assert records.metrics.empty and list(records.metrics.columns) == ["frames"]
    assert records.evaluations.empty and list(records.evaluations.columns) == \
        list(EVALUATION_COLUMNS)
    assert records.episodes.empty and list(records.episodes.columns) == \
        ["frames", "actor", "inv_tau1", "inv_tau2", "eps", "return", "length"]
    with pytest.raises(FileNotFoundError, match=r"no config\.json"):
        gdi.read_run(tmp_path)


def test_a_compressed_log_and_another_policys_evaluations_are_read_too(run, tmp_path):
    """An archived run keeps meta.jsonl as meta.jsonl.gz; `gdi evaluate --policy greedy` files
    its episodes in eval_greedy/, beside training's in eval/."""
    from gdi.agent import evaluate_checkpoint

    copy = shutil.copytree(run, tmp_path / "copy")
    meta = copy / "meta.jsonl"
    (copy / "meta.jsonl.gz").write_bytes(gzip.compress(meta.read_bytes()))
    meta.unlink()
    evaluate_checkpoint(copy, "latest", 3, 3, 0, policy="greedy")
    records = gdi.read_run(copy)
    assert records.episodes.equals(gdi.read_run(run).episodes)
    greedy = records.evaluations[records.evaluations["policy"] == "greedy"]
    written = json.loads(next((copy / "eval_greedy").glob("*.json")).read_text())
    assert list(greedy["return"]) == [e["return"] for e in written["episodes"]]
    assert not greedy["periodic"].any()
    assert set(records.evaluations["policy"]) == {"population", "greedy"}


def test_the_training_clock_adds_each_rows_frames_over_its_rate():
    rows = [{"frames": 100, "perf/fps": 50.0},            # 2 s
            {"frames": 100, "eval/mean_return": 3.0},      # an evaluation's row: no interval
            {"frames": 300, "perf/fps": 100.0},           # 200 more frames at 100/s: 2 s
            {"frames": 300, "perf/fps": 10.0},            # the same frames again: nothing
            {"frames": 400, "perf/fps": 25.0}]            # 100 at 25/s: 4 s
    frames, seconds = training_clock(rows)
    assert frames.tolist() == [0.0, 100.0, 300.0, 400.0]
    assert seconds.tolist() == [0.0, 2.0, 4.0, 8.0]
