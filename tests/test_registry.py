"""gdi.registry: the one way parts register (policy spaces Λ, operators E, torsos, backends,
presets), and the promise it keeps: a new Λ or a new E is one file, with no other edit."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gdi
from gdi.registry import Registry

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


class Part:
    name = "part"


def test_a_part_registers_by_its_name_attribute_or_by_a_given_name():
    registry = Registry("widget")
    assert registry.register(Part) is Part
    registry.register(name="other")(Part)
    by_kind = Registry("gadget", name_attribute="kind")
    by_kind.register(type("G", (), {"kind": "g"}))
    assert list(registry) == ["part", "other"] and list(by_kind) == ["g"]


def test_a_name_taken_twice_or_missing_is_refused():
    registry = Registry("widget", {"a": 1})
    with pytest.raises(TypeError, match="widget 'a' is registered twice"):
        registry.add("a", 2)
    with pytest.raises(TypeError, match="a widget's name must be a non-empty string, got None"):
        registry.register(type("Nameless", (), {}))
    assert registry == {"a": 1}


def test_an_unknown_name_is_one_line_naming_the_closest_and_the_allowed():
    registry = Registry("widget", {"bandit": 1, "uniform": 2})
    with pytest.raises(ValueError) as err:
        registry.lookup("bandits")
    assert str(err.value) == ("unknown widget 'bandits' (did you mean 'bandit'?); allowed: "
                              "bandit, uniform")
    with pytest.raises(ValueError, match=r"^unknown widget 'zzz'; allowed: bandit, uniform$"):
        registry.lookup("zzz")


def test_a_part_given_as_module_and_attribute_is_imported_when_chosen():
    registry = Registry("widget", {"path": "pathlib:PurePosixPath"})
    assert registry["path"] == "pathlib:PurePosixPath"  # nothing imported to register it
    from pathlib import PurePosixPath

    assert registry.load("path") is PurePosixPath


def test_restored_undoes_what_the_block_registered_and_removed():
    registry = Registry("widget", {"a": 1})
    with registry.restored():
        registry.add("b", 2)
        del registry["a"]
    assert registry == {"a": 1}


def test_every_kind_of_part_has_one_registry():
    from gdi.backend_registry import BACKENDS
    from gdi.meta import CONTROLLERS
    from gdi.nets import TORSOS
    from gdi.policy_space import POLICY_SPACES
    from gdi.presets import PRESETS

    for registry in (POLICY_SPACES, CONTROLLERS, TORSOS, BACKENDS, PRESETS):
        assert isinstance(registry, Registry)
    # What a torso can do, each declared by its class (not by checks of its name elsewhere).
    for name, torso in TORSOS.items():
        assert torso.name == name and isinstance(torso.kwargs, tuple)
        assert torso.auto_init in ("pytorch", "he") and isinstance(torso.residual, bool)


def test_a_new_policy_space_and_a_new_e_are_each_one_file(tmp_path):
    """Copy gdi, add the docs' new Λ and new E as one file each in their packages and nothing
    else: a fresh Python lists both, and a config naming them is built and validated."""
    package = tmp_path / "gdi"
    shutil.copytree(Path(gdi.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(EXAMPLES / "thompson.py", package / "meta" / "thompson.py")
    shutil.copy(EXAMPLES / "normalized_boltzmann.py",
                package / "policy_space" / "normalized_boltzmann.py")
    code = (
        "import gdi\n"
        f"assert gdi.__file__.startswith({str(package)!r}), gdi.__file__\n"
        "from gdi.meta import CONTROLLERS\n"
        "from gdi.policy_space import POLICY_SPACES\n"
        "from gdi.presets import resolve_config\n"
        "assert 'thompson' in CONTROLLERS and 'normalized_boltzmann' in POLICY_SPACES\n"
        "config = resolve_config('gdi-i1', 'minatar:breakout',\n"
        "    policy_space='normalized_boltzmann', meta_controller='thompson',\n"
        "    meta_kwargs={'arms': [[0.5], [2.0]], 'index_names': ['inv_tau']})\n"
        "print(config.policy_space, config.meta_controller)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["normalized_boltzmann", "thompson"]
