"""The arrows of DESIGN.md, read from the source: math packages (policy_space, meta, learning,
nets, envs) never import runtime or cli; meta and learning never import each other; nets never
imports learning; evaluation reads run folders through the file layout below both
(``gdi.scores``, ``gdi.run_files``) and never imports runtime; the config, which every layer
imports, never imports runtime or cli, and reads the backend names from the registry below
both (``gdi.backends``). Every import counts, top-level or inside a function."""

import ast
from pathlib import Path

import pytest

import gdi

ROOT = Path(gdi.__file__).parent
MATH = ("policy_space", "meta", "learning", "nets", "envs")
FORBIDDEN = {
    **{package: {"runtime", "cli"} for package in MATH},
    "meta": {"runtime", "cli", "learning"},
    "learning": {"runtime", "cli", "meta"},
    "nets": {"runtime", "cli", "learning"},
    "evaluation": {"runtime", "cli"},
    "config": {"runtime", "cli"},
    "backends": {"runtime", "cli", "config"},
}


def package_of(path: Path) -> str:
    """The first component under gdi/ ('cli' for gdi/cli.py, 'policy_space' for its package)."""
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def gdi_imports(path: Path) -> set[str]:
    """The gdi packages ``path`` imports (first component after ``gdi.``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names
                                     if node.module == "gdi"]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "gdi" and len(parts) > 1:
                found.add(parts[1])
    return found


def edges() -> list[tuple[str, str, str]]:
    return [(package_of(path), imported, str(path.relative_to(ROOT)))
            for path in sorted(ROOT.rglob("*.py"))
            for imported in gdi_imports(path)]


def test_the_scanner_sees_imports_of_every_form(tmp_path):
    source = tmp_path / "example.py"
    source.write_text("import gdi.runtime.actor\nfrom gdi.learning import loss\n"
                      "from gdi import cli\n\ndef f():\n    from gdi.meta.base import X\n")
    assert gdi_imports(source) == {"runtime", "learning", "cli", "meta"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_forbidden_arrow(package):
    bad = [f"{where} imports gdi.{imported}" for source, imported, where in edges()
           if source == package and imported in FORBIDDEN[package]]
    assert not bad, "arrows DESIGN.md forbids: " + "; ".join(bad)


def test_every_math_package_exists():
    # A renamed package would make its rule vacuous.
    assert {package_of(path) for path in ROOT.rglob("*.py")} >= set(MATH)
