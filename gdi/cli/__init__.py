"""The ``gdi`` command line: one typed function per subcommand (tyro turns the signatures and
docstrings into ``--help``). Commands only parse, call into the library and print; the work
lives in the packages they import. A module per kind of command:

- ``train``: ``gdi train``;
- ``describe``: ``gdi config``, ``scales``, ``presets``, ``meta-demo`` (before any run);
- ``agents``: ``gdi evaluate``, ``enjoy``, ``export``, ``upgrade`` (a trained agent);
- ``reports``: ``gdi report``, ``plot-meta``, ``analyze`` (finished runs);
- ``grids``: ``gdi benchmark run|status|report|keep`` (a grid of runs);
- ``dispatch``: ``gdi`` itself (the subcommands by name, unknown options, errors);
- ``options``, ``tables``, ``exits``: what the commands share.

Importing it loads neither torch nor matplotlib, so that ``gdi --help`` answers at once.
"""

from gdi.cli.dispatch import main

__all__ = ["main"]
