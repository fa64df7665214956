"""`gdi upgrade` (issue 72): a run folder of gdi before 0.2 (tests/data/pickle-format: a
CartPole run written by gdi at 480693b, pickle checkpoint and all) converts once and resumes;
the conversion runs no code either."""

import shutil
import sys
from pathlib import Path

import pytest
import torch

from gdi.cli import main
from gdi.run_files import list_checkpoints, list_pickle_checkpoints
from gdi.runtime.acting import actor
from gdi.runtime.run_folder.checkpoint import load_checkpoint
from gdi.upgrade import MOVED_MODULES, read_pickle_checkpoint, upgrade_folder
from tests.test_payload import Payload

OLD_RUN = Path(__file__).parent / "data" / "pickle-format"


@pytest.fixture
def old_run(tmp_path):
    copy = tmp_path / "old-run"
    shutil.copytree(OLD_RUN, copy)
    return copy


def test_an_old_run_is_refused_with_the_command_that_converts_it(old_run, capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "--resume", str(old_run), "--frames", "1600"])
    assert info.value.code != 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"convert it once with: gdi upgrade {old_run}" in err


def test_an_old_run_converts_once_and_resumes(old_run, capsys):
    before = read_pickle_checkpoint(list_pickle_checkpoints(old_run)[-1])
    main(["upgrade", str(old_run)])
    out = capsys.readouterr().out
    assert "converted 1 checkpoint(s)" in out and "episodes restart" in out
    (converted,) = list_checkpoints(old_run)
    assert list_pickle_checkpoints(old_run) == []
    assert (old_run / "checkpoints" / f"{converted.stem}.pt.upgraded").is_file()
    after = load_checkpoint(converted)
    assert after["frames"] == before["frames"] and after["format"] == 2
    for name, tensor in before["learner"]["net"].items():
        assert torch.equal(after["learner"]["net"][name], tensor)  # a copy: exact
    with pytest.raises(ValueError, match="in the current format already"):
        upgrade_folder(old_run)
    main(["train", "--resume", str(old_run), "--frames", "1600"])
    assert "done: 1,6" in capsys.readouterr().err
    assert list_checkpoints(old_run)[-1].stem > converted.stem


def test_a_record_under_its_old_module_converts(tmp_path, monkeypatch):
    """EpisodeRecord lived in gdi.runtime.actor before the folders by role (issue 43)."""
    record = actor.EpisodeRecord(actor=0, env=1, episode_return=2.0, length=3, lam=(4.0,))
    path = tmp_path / "ckpt_000000000100.pt"
    with monkeypatch.context() as then:  # the module layout at the time it was written
        then.setattr(actor.EpisodeRecord, "__module__", "gdi.runtime.actor")
        then.setitem(sys.modules, "gdi.runtime.actor", actor)
        torch.save({"format": 1, "trainer": {"acc_episodes": [record]}}, path)
    assert b"gdi.runtime.actor" in path.read_bytes()
    loaded = read_pickle_checkpoint(path)
    assert loaded["trainer"]["acc_episodes"] == [record]


def test_a_payload_is_refused_by_the_conversion_too(old_run, tmp_path):
    marker = tmp_path / "marker"
    planted = list_pickle_checkpoints(old_run)[-1].with_name("ckpt_000000000900.pt")
    torch.save({"format": 1, "evil": Payload(marker)}, planted)
    with pytest.raises(ValueError, match=r"not a checkpoint of gdi before 0\.2 that can be converted safely"):
        upgrade_folder(old_run)
    assert not marker.exists()
    assert len(list_pickle_checkpoints(old_run)) == 2 and list_checkpoints(old_run) == []


def test_every_moved_module_is_where_the_map_says():
    import importlib

    for old, new in MOVED_MODULES.items():
        importlib.import_module(new)
        if old != "gdi.runtime.acting":  # now the package that holds the acting modules
            with pytest.raises(ModuleNotFoundError):
                importlib.import_module(old)
