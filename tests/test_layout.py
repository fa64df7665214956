"""One home per role, read from the tree: no folder name is used twice under gdi/, and no
module is named like a package (its own or another), so that a name in an import, a path or a
traceback says which home it means."""

from collections import defaultdict
from pathlib import Path

import gdi

ROOT = Path(gdi.__file__).parent
NOT_NAMES = {"__init__", "__main__"}


def packages(root: Path) -> dict[str, list[str]]:
    """Each package's name → the folders (relative to ``root``'s parent) that use it."""
    found = defaultdict(list)
    for init in sorted(root.rglob("__init__.py")):
        if init.parent != root:
            found[init.parent.name].append(str(init.parent.relative_to(root.parent)))
    return found


def collisions(root: Path) -> list[str]:
    named = packages(root)
    twice = [f"folder name {name!r} used by {' and '.join(where)}"
             for name, where in sorted(named.items()) if len(where) > 1]
    like_a_package = [f"module {path.relative_to(root.parent)} is named like the package "
                      f"{' and '.join(named[path.stem])}"
                      for path in sorted(root.rglob("*.py"))
                      if path.stem not in NOT_NAMES and path.stem in named]
    return twice + like_a_package


def test_the_rule_sees_both_kinds_of_collision(tmp_path):
    root = tmp_path / "pkg"
    for folder in ("a/learning", "b/learning", "backends"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "backends.py").write_text("")
    (root / "a" / "learning" / "learning.py").write_text("")
    (root / "b" / "__main__.py").write_text("")
    assert collisions(root) == [
        "folder name 'learning' used by pkg/a/learning and pkg/b/learning",
        "module pkg/a/learning/learning.py is named like the package pkg/a/learning and "
        "pkg/b/learning",
        "module pkg/backends.py is named like the package pkg/backends",
    ]


def test_one_home_per_name():
    found = collisions(ROOT)
    assert not found, "names used for two homes: " + "; ".join(found)
