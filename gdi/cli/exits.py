"""How a ``gdi`` command ends: the errors a user's input can cause, the exit codes, and a
failure shown as one line."""

from __future__ import annotations

import os
import sys

# Errors a user can cause with bad input. They are printed as one line and exit with code 2;
# GDI_DEBUG=1 shows the traceback instead.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, KeyError)
# Exit codes (documented in `gdi train --help` and README "Troubleshooting").
EXIT_FAILED = 1  # a failure named in one line (full disk, actors failing, a diverged learner)
EXIT_USER_ERROR = 2  # bad input: nothing was trained
EXIT_INTERRUPTED = 130  # Ctrl-C outside training (128 + SIGINT), as the shell reports it
EXIT_BROKEN_PIPE = 141  # stdout's reader left (128 + SIGPIPE), as the shell reports it


def fail(err: BaseException, code: int):
    """Print ``err`` as one line and exit with ``code`` (GDI_DEBUG=1: the traceback)."""
    if os.environ.get("GDI_DEBUG"):
        raise err
    message = err.args[0] if isinstance(err, KeyError) and err.args else err
    print(f"gdi: error: {message}", file=sys.stderr)
    raise SystemExit(code) from None
