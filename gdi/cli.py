"""The ``gdi`` command line: one typed function per subcommand (tyro turns the signatures and
docstrings into ``--help``). Commands only parse, call into the library and print; the work
lives in the packages they import.
"""

from __future__ import annotations

import os
import sys

import tyro

import gdi

# Errors a user can cause with bad input. They are printed as one line; GDI_DEBUG=1 shows the
# traceback instead.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, KeyError)


def _commands() -> dict:
    return {}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["--version"], ["-V"]):
        print(f"gdi {gdi.__version__}")
        return
    try:
        tyro.extras.subcommand_cli_from_dict(
            _commands(),
            prog="gdi",
            description=f"gdi {gdi.__version__}: Generalized Data Distribution Iteration.",
            args=args,
        )
    except USER_ERRORS as err:
        if os.environ.get("GDI_DEBUG"):
            raise
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"gdi: error: {message}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
