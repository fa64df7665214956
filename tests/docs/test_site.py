"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a missing page
or an unresolved API reference fails it), its generated tables hold every config field and
preset, and the README's links point at files that exist."""

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gdi.config import Config, field_docs
from gdi.presets import PRESETS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


def test_every_config_field_is_on_the_configuration_page(site):
    page = (site / "configuration.html").read_text().replace("<wbr>", "")
    docs = field_docs()
    for field in dataclasses.fields(Config):
        assert f"<code>{field.name}</code>" in page, field.name
        assert field.name in docs  # a field without a docstring would have no meaning here
    assert "<!-- gdi:" not in page


def test_every_preset_is_in_the_preset_table(site):
    page = (site / "training.html").read_text()
    for name in PRESETS:
        assert f"<code>{name}</code>" in page, name


def test_the_api_reference_renders_the_public_modules(site):
    for page, name in [("api/config.html", "gdi.config.Config"),
                       ("api/gdi.html", "gdi.agent.load_agent"),
                       ("api/learning.html", "gdi.learning.vtrace.vtrace"),
                       ("api/runtime.html", "gdi.runtime.wiring.train")]:
        assert f'id="{name}"' in (site / page).read_text(), (page, name)


def test_the_readme_links_to_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links into the site"
    for target in local:
        assert (ROOT / target).exists(), target
