"""Checkpoints: atomic writes, pruning, clear errors for corrupt files."""

import pytest
import torch

from gdi.runtime.checkpoint import (
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)


def test_save_load_and_prune(tmp_path):
    for frames in (100, 200, 300, 400):
        save_checkpoint(tmp_path, frames, {"x": torch.tensor([frames])}, keep=3)
    names = [p.name for p in list_checkpoints(tmp_path)]
    assert names == ["ckpt_000000000200.pt", "ckpt_000000000300.pt", "ckpt_000000000400.pt"]
    assert load_checkpoint(latest_checkpoint(tmp_path))["x"].item() == 400
    assert not list((tmp_path / "checkpoints").glob(".*.tmp"))  # no temporary file left


def test_corrupt_checkpoint_names_the_intact_one(tmp_path):
    save_checkpoint(tmp_path, 100, {"x": 1}, keep=3)
    path = save_checkpoint(tmp_path, 200, {"x": 2}, keep=3)
    path.write_bytes(path.read_bytes()[:20])  # truncated write
    with pytest.raises(ValueError, match=r"truncated or corrupt.*ckpt_000000000100\.pt"):
        load_checkpoint(path)
    assert load_checkpoint(list_checkpoints(tmp_path)[0])["x"] == 1  # previous one kept


def test_missing_and_foreign_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        latest_checkpoint(tmp_path)
    foreign = tmp_path / "other.pt"
    torch.save({"weights": 1}, foreign)
    with pytest.raises(ValueError, match="not a gdi checkpoint"):
        load_checkpoint(foreign)
