"""The Makefile's install path: it picks a Python >= 3.11 by running each candidate, says what
to do when there is none, and installs with the pinned constraints."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make(tmp_path, *args):
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    return subprocess.run(["make", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def test_no_suitable_python_is_a_clear_instruction(tmp_path):
    out = _make(tmp_path, "setup", "PYTHON_CANDIDATES=python9.9 no-such-python")
    assert out.returncode != 0
    assert "no Python 3.11 or newer found (tried python9.9 no-such-python)" in out.stderr
    assert "make PYTHON=/path/to/python3.11" in out.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_python_older_than_3_11_is_refused(tmp_path):
    old = tmp_path / "python-old"
    old.write_text("#!/bin/sh\nexec " + sys.executable + " -c 'import sys; sys.exit(1)' \"$@\"\n")
    old.chmod(0o755)
    out = _make(tmp_path, "setup", f"PYTHON={old}")
    assert out.returncode != 0 and "is not Python 3.11 or newer" in out.stderr


def test_the_install_passes_the_constraints_and_they_pin_torch():
    text = (ROOT / "Makefile").read_text()
    assert "pip install -c $(CONSTRAINTS)" in text and "CONSTRAINTS := constraints.txt" in text
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert pins["torch"] == "2.13.0"
    assert "torch==" not in (ROOT / "pyproject.toml").read_text()  # a range there, not a pin
