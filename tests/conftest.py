"""Test-wide settings and fixtures. CI runs pytest with two workers on two cores: one torch
thread per worker keeps PyTorch from oversubscribing the cores (which makes it many times
slower)."""

import pytest
import torch

from tests.registries import restored_registries

torch.set_num_threads(1)


@pytest.fixture
def registries():
    """Registrations a test makes — a policy space, an operator E, a preset — are undone after
    it, so that no other test sees them."""
    with restored_registries():
        yield


@pytest.fixture
def full_disk(tmp_path):
    """A real file system with no space left: a 4 MiB tmpfs mounted at ``tmp_path/disk`` and
    filled to the last byte by ``fill_up`` (writes fail with ENOSPC; new empty files and folders can still
    be made, as on a real full disk). Skipped where mounting is not allowed (not root, no
    CAP_SYS_ADMIN)."""
    import subprocess

    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip() or made.returncode}")
    try:
        fill_up(mount)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill_up(folder, name: str = ".filler") -> None:
    """Write ``folder/name`` until its file system has no byte left (ENOSPC)."""
    import os

    with open(os.path.join(folder, name), "ab", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass
