"""The arrows of docs/architecture.md ("The folders"), read from the source: math packages (policy_space, meta, learning,
nets, envs) never import runtime or cli, nor the run's config or anything else built on them;
meta and learning never import each other; nets never imports learning; evaluation reads run folders through the file layout below both
(``gdi.scores``, ``gdi.run_files``) and never imports runtime; the config, which every layer
imports, never imports runtime or cli, and reads the backend names from the registry below
both (``gdi.backend_registry``). Inside the runtime, its roles' folders keep their order:
storage imports no other role, acting only storage, the run folder none. Every import counts,
top-level or inside a function."""

import ast
from pathlib import Path

import pytest

import gdi

ROOT = Path(gdi.__file__).parent
MATH = ("policy_space", "meta", "learning", "nets", "envs")
#: What the math packages never import: the run's config and everything built on them (what
#: they share with the config, defaults and choices, tests tie together).
ABOVE_MATH = {"runtime", "cli", "config", "presets", "agent", "video", "evaluation", "export",
              "api"}
FORBIDDEN = {
    **{package: ABOVE_MATH for package in MATH},
    "meta": {*ABOVE_MATH, "learning"},
    "learning": {*ABOVE_MATH, "meta"},
    "nets": {*ABOVE_MATH, "learning"},
    "evaluation": {"runtime", "cli"},
    # agent and video build on the runtime's acting step, and the Python API (api) on all of
    # it; the runtime never imports them.
    "runtime": {"agent", "video", "cli", "api"},
    "config": {"runtime", "cli"},
    "runtime_config": {"runtime", "cli", "config"},
    "backend_registry": {"runtime", "cli", "config"},
}


def package_of(path: Path) -> str:
    """The first component under gdi/ ('cli' for gdi/cli/ and its modules, 'config' for
    gdi/config.py)."""
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
    source.write_text("import gdi.runtime.acting.actor\nfrom gdi.learning import loss\n"
                      "from gdi import cli\n\ndef f():\n    from gdi.meta.base import X\n")
    assert gdi_imports(source) == {"runtime", "learning", "cli", "meta"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_forbidden_arrow(package):
    bad = [f"{where} imports gdi.{imported}" for source, imported, where in edges()
           if source == package and imported in FORBIDDEN[package]]
    assert not bad, "arrows docs/architecture.md forbids: " + "; ".join(bad)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in ROOT.rglob("*.py")}


def module_imports(path: Path) -> set[str]:
    """The gdi modules ``path`` imports by name (``from gdi.runtime import seeds`` is the module
    gdi.runtime.seeds; the parent packages a dotted import also runs are not counted)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in MODULES else node.module)
    return {name for name in found if name in MODULES} - {module_name(path)}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def test_the_cycle_finder_finds_a_circle_through_a_third_module():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_two_modules_import_each_other():
    # Before: gdi.agent imported the runtime's evaluator, which imported gdi.agent lazily.
    graph = {name: module_imports(path) for name, path in MODULES.items()}
    assert import_cycles(graph) == []


def test_every_math_package_exists():
    # A renamed package would make its rule vacuous.
    assert {package_of(path) for path in ROOT.rglob("*.py")} >= set(MATH)


#: The runtime's roles, each a folder (gdi/runtime/__init__.py): storage holds data and knows
#: no one; acting records into storage; the run folder is written by whoever runs; training
#: and the backends build on the rest.
RUNTIME_ROLES = ("acting", "storage", "training", "backends", "run_folder")
RUNTIME_FORBIDDEN = {
    "storage": {"acting", "training", "backends", "run_folder"},
    "acting": {"training", "backends", "run_folder"},
    "run_folder": {"acting", "storage", "training", "backends"},
}


def runtime_role(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["gdi", "runtime"] else None


@pytest.mark.parametrize("role", sorted(RUNTIME_FORBIDDEN))
def test_no_forbidden_arrow_between_the_runtimes_roles(role):
    bad = [f"{name} imports {imported}" for name, path in MODULES.items()
           if runtime_role(name) == role
           for imported in module_imports(path)
           if runtime_role(imported) in RUNTIME_FORBIDDEN[role]]
    assert not bad, "arrows between the runtime's roles: " + "; ".join(bad)


def test_every_runtime_role_is_a_folder():
    # A renamed folder would make its rule vacuous.
    for role in RUNTIME_ROLES:
        assert (ROOT / "runtime" / role / "__init__.py").is_file(), role


def test_the_shared_checks_and_the_run_spec_stay_below_every_layer():
    # gdi.checks is imported by every layer's config, gdi.run_spec by the command line, which
    # must load without torch: neither may import a layer.
    assert gdi_imports(ROOT / "checks.py") == set()
    assert gdi_imports(ROOT / "run_spec.py") <= {"backend_registry"}
