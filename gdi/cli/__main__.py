"""``python -m gdi.cli``, as the ``gdi`` command."""

from gdi.cli import main

main()
