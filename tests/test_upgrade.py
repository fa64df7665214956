"""`gdi upgrade` (issue 72): a run folder of gdi before 0.2 (tests/data/pickle-format: a
CartPole run written by gdi at 480693b, pickle checkpoint and all) converts once and resumes;
the conversion runs no code either."""

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from gdi.cli import main
from gdi.run_files import list_checkpoints, list_pickle_checkpoints
from gdi.runtime.acting import actor
from gdi.runtime.run_folder.checkpoint import load_checkpoint
from gdi.upgrade import MOVED_MODULES, read_pickle_checkpoint, todays_payload, upgrade_folder
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


def _old_payload(actor_state: dict, num_actors: int = 1, pull_every: int = 4) -> dict:
    """A checkpoint tree in the layout of gdi before 0.2: no ``controllers``, no actor turns,
    the inline actors' states of their time."""
    return {"config": {"env": "gym:CartPole-v1", "num_actors": num_actors,
                       "pull_every": pull_every},
            "frames": 100, "trainer": {"episodes": 0}, "actors": [actor_state]}


def test_an_old_payload_is_put_in_todays_layout():
    """Each branch that parts once had for older states is done once, here: E's states and the
    actor turns where they were missing, NumPy's sampler from the old torch generator, the
    last pull at the old multiples, the pickled environments dropped."""
    generator = torch.Generator().manual_seed(9).get_state()

    def state(**changes) -> dict:  # todays_payload changes the tree it is given, as it may
        return {"controller": {"e": 1}, "steps": 18, "env": b"pickled",
                "generator": generator.clone(), **changes}

    today = todays_payload(_old_payload(state(), pull_every=4))
    assert today["controllers"] == [{"e": 1}]
    assert today["trainer"]["turns"] == {"last_asked": [-1], "requests": 0}
    assert today["trainer"]["actor_restarts"] == 0
    (actor_state,) = today["actors"]
    assert actor_state["env"] is None and "generator" not in actor_state
    assert actor_state["pulled_at"] == 16  # pulls came at 0, 4, ..., 16 of 18 steps
    rng = np.random.default_rng()
    rng.bit_generator.state = actor_state["rng"]
    seeded = np.random.default_rng(np.frombuffer(generator.numpy().tobytes(), dtype=np.uint32))
    assert rng.random(3).tolist() == seeded.random(3).tolist()
    at_multiple = todays_payload(_old_payload(state(steps=16), pull_every=4))
    assert at_multiple["actors"][0]["pulled_at"] == 12  # the pull at 16 comes with step 16
    kept = todays_payload(_old_payload(state(rng={"kept": 1}, pulled_at=5)))
    assert kept["actors"][0]["rng"] == {"kept": 1} and kept["actors"][0]["pulled_at"] == 5


def test_an_old_collector_of_whole_sequences_loads_as_todays_chunks():
    from gdi.runtime.storage.collector import ReplayCollector
    from gdi.runtime.storage.sequences import SequenceBatch
    from tests.runtime.test_steps import SyntheticStream, assert_same_batch, recorders

    stack = 4  # ale:Breakout's frame stack, which the conversion reads from the config
    stream = SyntheticStream(num_envs=2, stack=stack, end_rate=0.2, seed=3)
    old, new = recorders(stream, 8, 4)
    windows = [w for _ in range(30) for w, _ in [stream.step([old, new])] if w is not None]
    columns = [w.column(i) for w in windows for i in range(stream.n)]
    former = {"items": [c.as_dict() for c in columns], "uses_left": [2] * len(columns),
              "rng": np.random.default_rng(0).bit_generator.state, "added": len(columns),
              "trained": 0}
    payload = {"config": {"env": "ale:Breakout", "num_actors": 1, "pull_every": 4},
               "trainer": {}, "collector": former}
    collector = ReplayCollector(1, 2, 10_000, 1, seed=0, frame_stack=stack)
    collector.load_state_dict(todays_payload(payload)["collector"])
    assert_same_batch(collector.newest(len(columns)), SequenceBatch.concatenate(columns))
    assert len(collector) == len(columns)


def test_compatibility_is_declared_in_gdi_upgrade_alone():
    """docs/architecture.md's rule: what earlier versions wrote is read through gdi/upgrade.py;
    the tables of it (fields added since, labels derived, modules moved) and the functions
    that apply them are defined nowhere else."""
    import ast

    import gdi

    names = {"FIELDS_ADDED_LATER", "LABELS_DERIVED_ON_LOAD", "MOVED_MODULES", "derived_labels",
             "todays_config_fields", "todays_payload"}
    root = Path(gdi.__file__).parent
    found = {}
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = ([t.id for t in node.targets if isinstance(t, ast.Name)]
                       if isinstance(node, ast.Assign) else
                       [node.target.id] if isinstance(node, ast.AnnAssign)
                       and isinstance(node.target, ast.Name) else
                       [node.name] if isinstance(node, ast.FunctionDef) else [])
            for name in set(targets) & names:
                found.setdefault(name, set()).add(path.relative_to(root).as_posix())
    assert found == {name: {"upgrade.py"} for name in names}
