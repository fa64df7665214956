"""The ``gdi`` command: its subcommands by name, an option a subcommand does not take answered
in one line before tyro parses, and every error a user can cause ended as one line with its
exit code."""

from __future__ import annotations

import os
import sys

import tyro

import gdi
from gdi.cli.agents import enjoy, evaluate, export, upgrade
from gdi.cli.describe import config, meta_demo, presets, scales
from gdi.cli.exits import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USER_ERROR,
    USER_ERRORS,
    fail,
)
from gdi.cli.grids import BENCHMARK_COMMANDS, benchmark
from gdi.cli.options import command_options, merged_option, one_line_args
from gdi.cli.reports import ANALYSES, analyze, plot_meta, report
from gdi.cli.train import train


def _commands() -> dict:
    """The subcommands by name, in ``gdi --help``'s order."""
    return {
        "train": train,
        "presets": presets,
        "scales": scales,
        "config": config,
        "evaluate": evaluate,
        "enjoy": enjoy,
        "export": export,
        "upgrade": upgrade,
        "plot-meta": plot_meta,
        "meta-demo": meta_demo,
        "report": report,
        "analyze": analyze,
        "benchmark": benchmark,
    }


def _commands_with_one_line_args() -> dict:
    """The commands, each function tyro reads (the nested ones too) with its ``Args:``
    entries on one line (``one_line_args``)."""
    commands = _commands()
    for function in (*commands.values(), *ANALYSES.values(), *BENCHMARK_COMMANDS.values()):
        function.__doc__ = one_line_args(function.__doc__)
    return commands


def unknown_option(args: list[str]) -> str | None:
    """One line for the first ``--option`` that the subcommand in ``args`` does not take: the
    config field it names as `--set field=value` (with the value typed), else the nearest
    option, else the options there are. None when every option is known (or no subcommand is
    named, or help is asked for): tyro then parses ``args``."""
    nested = {"analyze": ANALYSES, "benchmark": BENCHMARK_COMMANDS}
    if not args or args[0] not in _commands():
        return None
    command, function, rest = args[0], _commands()[args[0]], args[1:]
    if command in nested:
        if not rest or rest[0] not in nested[command]:
            return None
        command, function, rest = f"{command} {rest[0]}", nested[command][rest[0]], rest[1:]
    if "--help" in rest or "-h" in rest:
        return None
    options = command_options(function)
    for i, arg in enumerate(rest):
        if arg == "--":  # what follows is not an option
            return None
        name, equals, value = arg.partition("=")
        if not name.startswith("--") or name in options or name.startswith("--tyro-"):
            continue
        if not equals:
            following = rest[i + 1] if i + 1 < len(rest) else ""
            value = following if following and not following.startswith("--") else "VALUE"
        import dataclasses
        import difflib

        from gdi.config import Config  # loads torch: only for an option that is not there

        field = name[2:].replace("-", "_")
        fields = [f.name for f in dataclasses.fields(Config)]
        takes_set = "--set" in options
        head = f"gdi {command} has no option {name}"
        if takes_set and field.split(".")[0] in fields:
            return (f"{head}; did you mean --set {field}={value}? (a config field: `gdi config` "
                    "lists them)")
        shown = sorted(o for o in options if "_" not in o and not o.startswith("--no-"))

        def likeness(typed: str, real: str) -> float:  # a name's start counts as close
            return 0.8 if real.startswith(typed) else \
                difflib.SequenceMatcher(None, typed, real).ratio()

        # (likeness, an option before a field alike, the name): fields with an option of
        # their own (--env, --frames) are named by it.
        near = max([(likeness(field, o[2:].replace("-", "_")), 1, o) for o in shown]
                   + [(likeness(field, f), 0, f) for f in fields
                      if takes_set and f"--{f.replace('_', '-')}" not in options])
        if near[0] < 0.6:
            return f"{head}; allowed: {', '.join(shown)}"
        if near[1]:
            return f"{head}; did you mean {near[2]}? (`gdi {command} --help` lists the options)"
        return (f"{head}; did you mean --set {near[2]}={value}? (a config field: `gdi config` "
                "lists them)")
    return None


def main(argv: list[str] | None = None) -> None:
    """Run one subcommand; exits with the command's code (`gdi train --help` lists them)."""
    from gdi.atomic import StorageError
    from gdi.runtime.errors import RunFailure

    # A user's environment module (--env gym:my_envs:Corridor-v0) in the folder gdi runs in is
    # found as `python -m` finds it; appended, so that an installed package of that name wins.
    # Spawned actor processes inherit the path.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    args = merged_option(sys.argv[1:] if argv is None else list(argv))
    if args in (["--version"], ["-V"]):
        print(f"gdi {gdi.__version__}")
        return
    unknown = unknown_option(args)  # before tyro, whose answer is a box pointing at --help
    if unknown:
        fail(ValueError(unknown), EXIT_USER_ERROR)
    try:
        code = tyro.extras.subcommand_cli_from_dict(
            _commands_with_one_line_args(),
            prog="gdi",
            description=(f"gdi {gdi.__version__}: Generalized Data Distribution Iteration. "
                         "`gdi --version` prints the version; `gdi --tyro-write-completion "
                         "bash|zsh|tcsh PATH` writes a shell-completion script to PATH (e.g. "
                         "~/.local/share/bash-completion/completions/gdi)."),
            args=args,
        )
    except USER_ERRORS as err:
        fail(err, EXIT_USER_ERROR)
    except (StorageError, RunFailure) as err:  # they say what failed and what was kept
        fail(err, EXIT_FAILED)
    except KeyboardInterrupt:  # outside training, which turns Ctrl-C into a stop request
        if os.environ.get("GDI_DEBUG"):
            raise
        print("gdi: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    except BrokenPipeError:
        # The reader of stdout left (`gdi config --json | head`): what it read is what it asked
        # for. Python's recommendation: point stdout at devnull so that the flush at exit does
        # not raise again, and exit as a command killed by SIGPIPE would, without a trace.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)
