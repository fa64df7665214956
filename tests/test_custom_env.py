"""docs/custom-environments.md, run as a user would (issue 44, item 3): the page's module
saved as my_envs.py in a folder, then its commands with the `gdi` console script in that
folder, the local backend's actor processes importing the module by the spec alone."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "custom-environments.md"
GDI = Path(sys.executable).with_name("gdi")


@pytest.fixture
def user_folder(tmp_path):
    module = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)[0]
    assert "gym.register(id=\"Corridor-v0\"" in module
    (tmp_path / "my_envs.py").write_text(module)
    return tmp_path


def gdi(folder: Path, *args: str) -> str:
    done = subprocess.run([str(GDI), *args], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.skipif(not GDI.is_file(), reason="the gdi console script is not installed")
def test_a_users_environment_module_trains_evaluates_and_plays(user_folder):
    out = gdi(user_folder, "train", "--env", "gym:my_envs:Corridor-v0", "--frames", "4000",
              "--run-dir", "runs/corridor", "--backend", "local", "--no-report")
    assert "done: " in out
    assert '"env": "gym:my_envs:Corridor-v0"' in \
        (user_folder / "runs/corridor/config.json").read_text()
    out = gdi(user_folder, "evaluate", "runs/corridor", "--episodes", "2")
    assert "2 episodes: mean return" in out
    out = gdi(user_folder, "enjoy", "runs/corridor", "--video", "corridor.gif",
              "--max-steps", "20")
    assert (user_folder / "corridor.gif").stat().st_size > 0


@pytest.mark.skipif(not GDI.is_file(), reason="the gdi console script is not installed")
@pytest.mark.parametrize(("spec", "message"), [
    ("gym:no_such_mod:X-v0", "cannot import module 'no_such_mod' named in "
                             "'gym:no_such_mod:X-v0' (No module named 'no_such_mod')"),
    ("gym:my_envs:Corrido-v0", "module 'my_envs' in 'gym:my_envs:Corrido-v0' was imported but "
                               "registers no Gymnasium id 'Corrido-v0'; close matches: "
                               "Corridor-v0"),
])
def test_a_bad_module_spec_is_one_line_and_makes_no_folder(user_folder, spec, message):
    done = subprocess.run([str(GDI), "train", "--env", spec, "--frames", "2000"],
                          cwd=user_folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (user_folder / "runs").exists()
