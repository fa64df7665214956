"""`gdi export` (issue 44, item 5): a run's agent as a bundle in a Hugging Face model
repository's layout, which loads and plays as the run does."""

import json

import numpy as np
import pytest

import gdi
from gdi.cli import main
from gdi.config import apply_overrides
from gdi.export import training_command
from gdi.presets import resolve_config
from gdi.runtime.run_folder.checkpoint import load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import one_line_error, tiny_config


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export") / "run"
    return train(tiny_config(frames=800), folder, show_progress=False, tensorboard=False).run_dir


def test_a_bundle_loads_and_acts_as_the_run_does(run, tmp_path, capsys):
    out = tmp_path / "bundle"
    main(["export", str(run), str(out)])
    assert f"bundle: {out}" in capsys.readouterr().out
    names = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert names == ["README.md", "checkpoints/ckpt_000000000808.safetensors", "config.json",
                     "eval/frames_000000000808.json", "replay.gif"]
    lean = load_checkpoint(out / "checkpoints/ckpt_000000000808.safetensors")
    assert "optimizer" not in lean["learner"] and lean["controllers"][0] is not None

    # The same network, E and seed: the same actions, from the run and from the bundle.
    original, exported = gdi.load_agent(run, seed=5), gdi.load_agent(out, seed=5)
    for agent in (original, exported):
        agent.reset(2)
    observations = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)
    no = np.zeros(2, dtype=bool)
    for _ in range(5):
        assert np.array_equal(original.act(observations), exported.act(observations))
        for agent in (original, exported):
            agent.observe(np.ones(2, dtype=np.float32), no, no)

    card = (out / "README.md").read_text()
    evaluation = json.loads((out / "eval/frames_000000000808.json").read_text())
    returns = [e["return"] for e in evaluation["episodes"]]
    assert card.startswith("---\nlibrary_name: gdi\n")
    assert f"value: {np.mean(returns):.2f} +/- {np.std(returns):.2f}" in card
    assert "gdi train --preset gdi-i3 --env gym:CartPole-v1 --scale gym --learning paper --seed 3 --frames 800" \
        in card and "![one episode of the agent](replay.gif)" in card
    main(["enjoy", str(out), "--max-steps", "5"])  # the bundle plays as a run folder


def test_exporting_into_a_folder_that_holds_something_is_refused(run, tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    err = one_line_error(["export", str(run), str(tmp_path / "taken"), "--no-video"], capsys)
    assert "is not an empty folder; export into a new one" in err
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"


def test_the_training_command_sets_what_differs_from_the_preset():
    config = apply_overrides(resolve_config("gdi-i3", "minatar:breakout", seed=2),
                             ["learning_rate=0.001", "meta_kwargs.accuracies=[0.5,0.5,0.05]",
                              "backend=inline"])
    command = training_command(config)
    assert command.startswith("gdi train --preset gdi-i3 --env minatar:breakout --scale minatar "
                              "--learning paper --seed 2 --frames 1000000 --set ")
    assert "learning_rate=0.001" in command and "backend" not in command
    assert "'meta_kwargs={" in command and '"accuracies":[0.5,0.5,0.05]' in command
    # A named learning is named, not spelled out field by field.
    head = resolve_config("gdi-i3", "minatar:breakout", learning="policy-head", seed=2)
    assert training_command(head) == ("gdi train --preset gdi-i3 --env minatar:breakout "
                                      "--scale minatar --learning policy-head --seed 2 "
                                      "--frames 1000000")


def test_a_newest_checkpoint_without_its_evaluation_is_refused_until_evaluated(
        run, tmp_path, capsys):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    for evaluation in (copy / "eval").glob("frames_000000000808.json"):
        evaluation.unlink()  # as if stopped after the checkpoint, before its evaluation
    err = one_line_error(["export", str(copy), str(tmp_path / "b"), "--no-video"], capsys)
    assert "has no evaluation of its newest checkpoint (808 frames)" in err
    assert not (tmp_path / "b").exists()
    main(["evaluate", str(copy), "--episodes", "2"])
    main(["export", str(copy), str(tmp_path / "b"), "--no-video"])
    assert (tmp_path / "b" / "eval" / "ckpt_000000000808.json").is_file()


def test_a_failed_export_leaves_nothing(run, tmp_path, monkeypatch):
    from gdi.atomic import StorageError
    from gdi.export import export_agent
    from gdi.video import enjoy

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(enjoy, "enjoy", disk_full)
    with pytest.raises(StorageError, match=r"could not write the bundle .*No space left"):
        export_agent(run, tmp_path / "bundle")
    assert list(tmp_path.iterdir()) == []  # no bundle, no partial folder


def test_without_the_video_extra_the_bundle_is_made_and_says_how_to_add_the_replay(
        run, tmp_path, capsys, monkeypatch):
    # Issue 72: a traceback ending in gymnasium's DependencyNotInstalled.
    import sys

    monkeypatch.setitem(sys.modules, "pygame", None)  # as in an install without pygame
    out = tmp_path / "bundle"
    main(["export", str(run), str(out)])
    printed = capsys.readouterr().out
    (note,) = [line for line in printed.splitlines() if line.startswith("note: ")]
    assert "no replay.gif: rendering gym:CartPole-v1 needs what this install lacks (" in note
    assert "pygame" in note and f"gdi enjoy {out} --video {out / 'replay.gif'}" in note
    assert "pip install 'gdi-rl[video]'" in note
    assert not (out / "replay.gif").exists() and (out / "README.md").is_file()
    assert "replay.gif" not in (out / "README.md").read_text()
    gdi.load_agent(out)  # the bundle itself is whole
