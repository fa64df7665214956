"""Named ALE protocols (issue 44, item 5): the paper's table and Machado et al. 2018's, a
config field recorded in config.json and printed in reports."""

import csv
import json

import pytest

from gdi.config import apply_overrides
from gdi.envs import resolve_env
from gdi.envs.spec import ATARI_PROTOCOLS
from gdi.evaluation.report import group_labels, write_report
from gdi.presets import resolve_config
from gdi.scores import load_run, periodic_eval_name, write_eval_file


def env_of(config):
    return resolve_env(config.env, protocol=config.protocol, **config.env_overrides)


def test_machado_is_sticky_actions_without_noops_and_paper_is_the_table():
    paper = env_of(resolve_config("gdi-i3", "ale:Pong"))
    assert (paper.repeat_action_probability, paper.noop_max) == (0.0, 30)  # the table
    machado = env_of(apply_overrides(resolve_config("gdi-i3", "ale:Pong"),
                                     ["protocol=machado"]))
    assert (machado.repeat_action_probability, machado.noop_max) == (0.25, 0)
    assert machado.full_action_space and not machado.episodic_life
    assert machado.max_episode_frames == 108_000
    # Overrides may add to a protocol (another stage), never contradict it.
    grayless = env_of(apply_overrides(resolve_config("gdi-i3", "ale:Pong"),
                                      ["protocol=machado", "env_overrides.frame_stack=2"]))
    assert grayless.frame_stack == 2 and grayless.repeat_action_probability == 0.25
    assert set(ATARI_PROTOCOLS) == {"paper", "machado"}


@pytest.mark.parametrize(("env", "sets", "message"), [
    ("ale:Pong", ["protocol=machdo"], "protocol must be one of paper, machado, got 'machdo'"),
    ("minatar:breakout", ["protocol=machado"], "is an ALE protocol; 'minatar:breakout' is not"),
    ("ale:Pong", ["protocol=machado", "env_overrides.repeat_action_probability=0"],
     "fixes what env_overrides changes: repeat_action_probability=0"),
])
def test_a_bad_protocol_is_one_line(env, sets, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_overrides(resolve_config("gdi-i3", env), sets)


def test_the_report_prints_each_runs_protocol(tmp_path):
    runs = []
    for seed, protocol in ((0, "paper"), (1, "machado")):
        run = tmp_path / f"run{seed}"
        run.mkdir()
        (run / "config.json").write_text(json.dumps(
            {"env": "ale:Pong", "preset": "gdi-i3", "seed": seed, "name": run.name,
             "protocol": protocol}))
        write_eval_file(run, periodic_eval_name(1000), checkpoint="c", frames=1000,
                        env="ale:Pong", policy="p", seed=seed,
                        episodes=[{"return": 1.0, "frames": 10, "seed": 0}])
        runs.append(run)
    report = write_report(runs, tmp_path / "report", reps=10)
    rows = list(csv.DictReader((report.out_dir / "final_returns.csv").open()))
    assert [(r["run"], r["protocol"]) for r in rows] == [("run0", "paper"), ("run1", "machado")]
    labels = group_labels([load_run(run) for run in runs])
    assert [labels[run] for run in runs] == [  # never seeds of one agent
        "gdi-i3 · ale · paper", "gdi-i3 · ale · paper · protocol=machado"]
    assert "| machado |" in report.markdown.read_text()
