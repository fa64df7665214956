"""`python -m gdi`: the command line, as the `gdi` script runs it."""

from gdi.cli import main

main()
