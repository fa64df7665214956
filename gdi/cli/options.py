"""What the ``gdi`` commands share in reading their options: whole-number counts typed as
1e6, defaults stated once in the library, options that are None unless typed, nested
subcommands, help text that tyro wraps, ``--set`` groups merged, and the options a command
takes."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Annotated, Any

import tyro
from tyro.constructors import PrimitiveConstructorSpec


class NotACount(str):
    """A --frames value that is not a whole number, kept as typed so that the command can
    refuse it in one line (tyro's own refusal is a box of a dozen lines)."""


def count_from_str(args: list[str]) -> int | NotACount:
    """1000000, 1_000_000 and 1e6 alike; anything else is refused by the command."""
    text = args[0].strip().replace("_", "")
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            return NotACount(args[0])
        if not value.is_integer():
            return NotACount(args[0])
        value = int(value)
    return value


#: An integer option that also takes scientific notation when it is a whole number (1e6).
Count = Annotated[int, PrimitiveConstructorSpec(
    nargs=1, metavar="INT", instance_from_str=count_from_str,
    is_instance=lambda value: isinstance(value, int), str_from_instance=lambda v: [str(v)])]


def defaults_of(function) -> SimpleNamespace:
    """``function``'s parameter defaults by name, for a command whose options go straight to
    it: their defaults are then stated once, in the library (as those of options that set a
    config field are the field's, ``Config.<field>``)."""
    return SimpleNamespace(**{name: p.default for name, p in
                              inspect.signature(function).parameters.items()
                              if p.default is not p.empty})


def check_count(option: str, value) -> None:
    if isinstance(value, NotACount):
        raise ValueError(f"{option} {str(value)!r} is not a whole number; allowed: an integer "
                         "such as 1000000, 1_000_000 or 1e6")


def typed_or_none(kind: type, default: Any) -> Any:
    """An option that is None unless typed (so that a resume can tell a typed value from
    none), shown with ``default``, what a new run takes when it is not typed."""
    return Annotated[kind | None, tyro.conf.arg(
        metavar=kind.__name__.upper(), help_behavior_hint=f"(default: {default})")]


def subcommands(constructors: dict) -> tuple:
    """A nested subcommand's members, one per name → function (tyro builds one from a union of
    constructors)."""
    return tuple(Annotated[Any, tyro.conf.subcommand(name=name, constructor=function)]
                 for name, function in constructors.items())


def one_line_args(doc: str | None) -> str | None:
    """``doc`` with each entry of its ``Args:`` section on one line: a line indented deeper than
    the entry it follows is joined onto it. tyro shows a function's argument descriptions with
    their line breaks kept (a dataclass field's it joins), so an option's help broke where the
    source did, mid-sentence; joined, tyro wraps it to the terminal."""
    if not doc:
        return doc
    lines: list[str] = []
    section = entry = None  # indents: of the "Args:" line, of its entries
    for line in doc.splitlines():
        indent = len(line) - len(line.lstrip())
        if section is not None and (not line.strip() or indent <= section):
            section = entry = None  # a blank line or a dedent ends the section
        if section is not None:
            if entry is None:
                entry = indent
            if indent > entry:
                lines[-1] += " " + line.strip()
                continue
        elif line.strip() == "Args:":
            section = indent
        lines.append(line)
    return "\n".join(lines) + ("\n" if doc.endswith("\n") else "")


def merged_option(args: list[str], option: str = "--set") -> list[str]:
    """``args`` with every ``option`` group joined into the first: ``--set a=1 --set b=2`` as
    ``--set a=1 b=2`` (argparse, under tyro, would keep only the last group's values and drop
    the others without a word). ``--set=a=1`` counts as a group of one."""
    merged: list[str] = []
    values: list[str] = []
    first = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == option or arg.startswith(option + "="):
            if first is None:
                first = len(merged)
                merged.append(option)
            if arg != option:
                values.append(arg.split("=", 1)[1])
            i += 1
            while i < len(args) and not args[i].startswith("-"):  # its field=value words
                values.append(args[i])
                i += 1
            continue
        merged.append(arg)
        i += 1
    if first is not None:
        merged[first + 1:first + 1] = values
    return merged


def command_options(function) -> set[str]:
    """The options a subcommand's ``function`` takes, as tyro spells them: ``--name`` with
    hyphens or underscores, ``--no-name`` for a flag, ``--help``; no positional parameter."""
    options = {"--help"}
    for name, parameter in inspect.signature(function).parameters.items():
        if "Positional" in str(parameter.annotation):
            continue
        for spelled in {name, name.replace("_", "-")}:
            options.add(f"--{spelled}")
            if isinstance(parameter.default, bool):
                options.add(f"--no-{spelled}")
    return options
