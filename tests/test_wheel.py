"""A wheel built from the repository holds everything gdi needs (issue 44, item 1): built,
installed apart from the source tree, it trains, reports and prints the paper's table (the
package data)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd, env=None) -> str:
    done = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_a_wheel_built_from_the_repository_installs_and_trains(tmp_path):
    source = tmp_path / "source"  # a copy: the build writes build/ and egg-info beside it
    shutil.copytree(ROOT / "gdi", source / "gdi",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", str(tmp_path / "dist"), str(source), cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("gdi_rl-*.whl")
    site = tmp_path / "site"
    run(sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
        str(wheel), cwd=tmp_path)
    shutil.rmtree(source)  # nothing of the source tree is left to import from

    env = {**os.environ, "PYTHONPATH": str(site)}
    where = run(sys.executable, "-c", "import gdi; print(gdi.__file__)", cwd=tmp_path, env=env)
    assert Path(where.strip()).is_relative_to(site)
    out = run(sys.executable, "-m", "gdi.cli", "train", "--env", "gym:CartPole-v1", "--frames",
              "2000", "--backend", "inline", "--run-dir", "run", cwd=tmp_path, env=env)
    assert "done: " in out and (tmp_path / "run" / "report" / "report.md").is_file()
    table = run(sys.executable, "-m", "gdi.cli", "report", "--paper", cwd=tmp_path, env=env)
    assert "GDI-H³" in table or "GDI-H3" in table
