"""Checkpoints: atomic writes, pruning, clear errors for corrupt files, the fallback of
``--resume`` to the newest valid checkpoint, and a full disk while writing (a fault hook)."""

import errno

import pytest
import torch

from gdi.atomic import StorageError
from gdi.runtime.run_folder import checkpoint as checkpoint_module
from gdi.runtime.run_folder.checkpoint import (
    latest_checkpoint,
    latest_valid_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)


def test_save_load_and_prune(tmp_path):
    for frames in (100, 200, 300, 400):
        save_checkpoint(tmp_path, frames, {"x": torch.tensor([frames])}, keep=3)
    names = [p.name for p in list_checkpoints(tmp_path)]
    assert names == ["ckpt_000000000200.safetensors", "ckpt_000000000300.safetensors", "ckpt_000000000400.safetensors"]
    assert load_checkpoint(latest_checkpoint(tmp_path))["x"].item() == 400
    assert not list((tmp_path / "checkpoints").glob(".*.tmp"))  # no temporary file left


def test_corrupt_checkpoint_is_named_on_one_line(tmp_path):
    save_checkpoint(tmp_path, 100, {"x": 1}, keep=3)
    path = save_checkpoint(tmp_path, 200, {"x": 2}, keep=3)
    path.write_bytes(path.read_bytes()[:20])  # truncated write
    with pytest.raises(ValueError, match=r"ckpt_000000000200\.safetensors is truncated or corrupt") as info:
        load_checkpoint(path)
    assert "\n" not in str(info.value) and "intact" not in str(info.value)
    assert load_checkpoint(list_checkpoints(tmp_path)[0])["x"] == 1  # previous one kept


def test_resume_falls_back_past_corrupt_checkpoints_and_says_so(tmp_path):
    for frames in (100, 200, 300):
        save_checkpoint(tmp_path, frames, {"x": frames}, keep=5)
    newest, middle, oldest = reversed(list_checkpoints(tmp_path))
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])  # cut mid-write
    middle.write_bytes(b"\x00" * 64)  # garbage
    path, payload, warnings = latest_valid_checkpoint(tmp_path)
    assert path == oldest and payload["x"] == 100
    assert len(warnings) == 2
    assert "ckpt_000000000300.safetensors is truncated or corrupt" in warnings[0]
    assert "ckpt_000000000200.safetensors is truncated or corrupt" in warnings[1]
    assert all("resuming from the earlier ckpt_000000000100.safetensors" in w for w in warnings)
    # The bad files are kept beside, but never loaded or counted among the `keep` newest.
    folder = tmp_path / "checkpoints"
    assert sorted(p.name for p in folder.glob("*.corrupt")) == [
        "ckpt_000000000200.safetensors.corrupt", "ckpt_000000000300.safetensors.corrupt"]
    assert list_checkpoints(tmp_path) == [oldest]
    save_checkpoint(tmp_path, 150, {"x": 150}, keep=1)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["ckpt_000000000150.safetensors"]


@pytest.mark.parametrize("damage", ["a dangling link", "a folder"])
def test_resume_falls_back_past_a_newest_that_is_no_file(tmp_path, damage):
    # Issue 45 item 11: such a newest "checkpoint" was "no checkpoint at PATH", and the
    # resume stopped there instead of falling back.
    save_checkpoint(tmp_path, 100, {"x": 100}, keep=5)
    newest = tmp_path / "checkpoints" / "ckpt_000000000200.safetensors"
    if damage == "a folder":
        newest.mkdir()
        reason = "is a folder, not a checkpoint file"
    else:
        newest.symlink_to(tmp_path / "gone.pt")
        reason = f"is a link to a missing file ({tmp_path / 'gone.pt'})"
    path, payload, warnings = latest_valid_checkpoint(tmp_path)
    assert payload["x"] == 100 and path.name == "ckpt_000000000100.safetensors"
    assert warnings == [f"checkpoint {newest} {reason}; resuming from the earlier "
                        "ckpt_000000000100.safetensors instead (the bad file is kept as "
                        "ckpt_000000000200.safetensors.corrupt)"]


def test_every_checkpoint_corrupt_says_what_is_there(tmp_path):
    for frames in (100, 200):
        path = save_checkpoint(tmp_path, frames, {"x": frames}, keep=5)
        path.write_bytes(path.read_bytes()[:30])
    with pytest.raises(ValueError) as info:
        latest_valid_checkpoint(tmp_path)
    message = str(info.value)
    assert "no checkpoint of" in message and "2 found" in message
    assert "ckpt_000000000200.safetensors is truncated" in message
    assert "ckpt_000000000100.safetensors is truncated" in message
    assert "intact" not in message and "\n" not in message
    assert len(list_checkpoints(tmp_path)) == 2  # nothing renamed when nothing loads


def test_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        latest_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        latest_valid_checkpoint(tmp_path)
    foreign = tmp_path / "other.safetensors"
    from safetensors.torch import save_file

    save_file({"weights": torch.ones(1)}, foreign)
    with pytest.raises(ValueError, match="a safetensors file, but not one of gdi's"):
        load_checkpoint(foreign)


@pytest.mark.parametrize(("code", "reason"), [
    (errno.ENOSPC, "No space left on device"),
    (errno.EROFS, "Read-only file system"),
])
def test_a_failed_write_keeps_the_previous_checkpoint_and_is_one_line(tmp_path, monkeypatch,
                                                                      code, reason):
    save_checkpoint(tmp_path, 100, {"x": torch.ones(1000)}, keep=1)
    real_write = checkpoint_module.atomic_write

    def disk_full_mid_write(path, write, binary=True):
        def partial(handle):
            # Part of the file reaches the disk before the device is full, as on a real disk.
            handle.write(b"partial")
            raise OSError(code, reason)
        real_write(path, partial, binary)

    monkeypatch.setattr(checkpoint_module, "atomic_write", disk_full_mid_write)
    with pytest.raises(StorageError) as info:
        save_checkpoint(tmp_path, 200, {"x": torch.ones(1000)}, keep=1)
    assert str(info.value) == (
        f"could not write checkpoint "
        f"{tmp_path / 'checkpoints' / 'ckpt_000000000200.safetensors'}: "
        f"{reason}; earlier checkpoints are kept")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    folder = tmp_path / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["ckpt_000000000100.safetensors"]
    monkeypatch.setattr(checkpoint_module, "atomic_write", real_write)
    assert load_checkpoint(latest_checkpoint(tmp_path))["x"].sum().item() == 1000


def test_a_real_full_device_raises_storage_error(tmp_path, monkeypatch):
    """/dev/full answers every write with ENOSPC: torch.save's own handling of it, unmocked."""
    import os

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")

    def write_to_dev_full(path, write, binary=True):
        with open("/dev/full", "wb") as handle:
            write(handle)
            handle.flush()

    monkeypatch.setattr(checkpoint_module, "atomic_write", write_to_dev_full)
    with pytest.raises(StorageError, match="No space left on device"):
        save_checkpoint(tmp_path, 200, {"x": torch.zeros(100_000)}, keep=1)


def test_what_is_not_data_is_refused_when_saving_by_its_place(tmp_path):
    with pytest.raises(TypeError, match=r"trainer\.hook: a builtins\.object is not data"):
        save_checkpoint(tmp_path, 100, {"trainer": {"hook": object()}}, keep=3)
    assert list_checkpoints(tmp_path) == []  # nothing written


def test_a_pickle_is_refused_and_not_passed_over(tmp_path):
    save_checkpoint(tmp_path, 100, {"x": 1}, keep=3)
    newest = tmp_path / "checkpoints" / "ckpt_000000000200.safetensors"
    torch.save({"format": 2, "x": 2}, newest)  # a pickle under the current name
    with pytest.raises(checkpoint_module.PickleCheckpoint, match="gdi upgrade"):
        latest_valid_checkpoint(tmp_path)
    assert newest.exists()  # not renamed aside as if a crash had cut it


def test_a_folder_of_pickle_checkpoints_says_how_to_convert_it(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    for frames in (100, 200):
        torch.save({"format": 1}, tmp_path / "checkpoints" / f"ckpt_{frames:012d}.pt")
    for find in (latest_checkpoint, latest_valid_checkpoint):
        with pytest.raises(ValueError) as info:
            find(tmp_path)
        assert str(info.value) == (
            f"{tmp_path} holds checkpoints in the pickle format gdi wrote before 0.2 "
            "(ckpt_000000000200.pt and 1 more), which are never loaded as they are (unpickling "
            f"can run code); if you trust the folder, convert it once with: gdi upgrade {tmp_path}")
