"""Issue 72: a checkpoint or bundle that carries code is refused by every loader, and the code
never runs. The payload is real: an object whose unpickling opens (creates) a marker file, in
a copy of a real checkpoint, planted as the newest checkpoint of a run and of a bundle, both
under the current name (pickle bytes in a .safetensors file) and under the name of gdi before
0.2 (ckpt_N.pt)."""

import shutil

import pytest
import torch

import gdi
from gdi.cli import main
from gdi.export import export_agent
from gdi.run_files import checkpoint_name, list_checkpoints
from gdi.runtime.run_folder.checkpoint import load_checkpoint
from gdi.runtime.wiring import train
from tests.runtime.helpers import tiny_config


class Payload:
    """Unpickled, it calls open(marker, "w"): the file appears if and only if code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    base = tmp_path_factory.mktemp("payload")
    run = train(tiny_config(frames=800), base / "run", show_progress=False,
                tensorboard=False).run_dir
    bundle = export_agent(run, base / "bundle", video=False).path
    return run, bundle


def _plant(folder, tmp_path, name_kind):
    """A copy of ``folder`` whose newest checkpoint is a pickle carrying the payload; returns
    the copy and the marker file's path."""
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    newest = list_checkpoints(copy)[-1]
    payload = load_checkpoint(newest)
    marker = tmp_path / "marker"
    payload["trainer" if "trainer" in payload else "config"] = payload.get("trainer") or {}
    payload["evil"] = Payload(marker)
    frames = int(payload["frames"]) + 1
    target = newest.with_name(checkpoint_name(frames) if name_kind == "current"
                              else f"ckpt_{frames:012d}.pt")
    torch.save(payload, target)  # the pickle format a user could be handed
    if name_kind == "old":  # a folder of gdi before 0.2 holds only .pt checkpoints
        for path in list_checkpoints(copy):
            path.unlink()
    return copy, marker


LOADERS = {
    "evaluate": lambda folder: main(["evaluate", str(folder), "--episodes", "1"]),
    "enjoy": lambda folder: main(["enjoy", str(folder), "--episodes", "1"]),
    "load_agent": lambda folder: gdi.load_agent(folder),
    "export": lambda folder: main(["export", str(folder), str(folder) + "-out", "--no-video"]),
    "train --resume": lambda folder: main(["train", "--resume", str(folder), "--frames", "1600"]),
}


#: A bundle is played and loaded, never trained on or exported again.
CASES = [(what, loader) for what in ("run", "bundle") for loader in LOADERS
         if what == "run" or loader in ("evaluate", "enjoy", "load_agent")]


@pytest.mark.parametrize("name_kind", ["current", "old"])
@pytest.mark.parametrize(("what", "loader"), CASES)
def test_every_loader_refuses_a_payload_and_never_runs_it(trained, tmp_path, capsys, what,
                                                        loader, name_kind):
    folder, marker = _plant(trained[0 if what == "run" else 1], tmp_path, name_kind)
    with pytest.raises((SystemExit, ValueError)) as info:
        LOADERS[loader](folder)
    assert not marker.exists(), "the payload ran"
    err = capsys.readouterr().err if isinstance(info.value, SystemExit) else str(info.value)
    if isinstance(info.value, SystemExit):
        assert info.value.code != 0
    text = " ".join(err.split())
    assert "pickle" in text and "gdi upgrade" in text
    assert "Traceback" not in err
