"""What a statement imports, seen from a fresh interpreter: for the tests that keep an import
light (``gdi --help`` and ``import gdi.benchmark`` answer without loading torch)."""

import json
import subprocess
import sys


def loaded_after(statement: str, packages: set[str]) -> list[str]:
    """Which of ``packages`` a fresh Python has imported once it ran ``statement``, sorted."""
    code = (f"import json, sys; {statement}; "
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.splitlines()[-1]
    return sorted(set(json.loads(shown)) & packages)
