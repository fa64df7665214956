"""mkdocs hooks (``hooks:`` in mkdocs.yml): tables the site renders from gdi's own source at
build time, so that the pages cannot drift from what ``gdi config`` and ``gdi presets`` print.

A page asks for a table with a marker on a line of its own (an HTML comment, so the Markdown
file still reads cleanly on GitHub, where the table is absent):

- ``<!-- gdi:presets -->``: ``gdi.presets.preset_table()`` and ``index_set_note()``, the rows and
  the notes of ``gdi presets``;
- ``<!-- gdi:config-fields -->``: every field of ``gdi.config.Config`` with its docstring
  (``gdi.config.field_docs()``, what ``gdi config`` prints), its dataclass default, and the
  values the ``gdi-i3`` preset resolves it to on each kind of environment where they differ.

An unknown ``gdi:`` marker fails the build (mkdocs.yml builds strictly).

The API reference renders docstrings written for Sphinx here and there (":func:`name`");
``on_page_content`` drops those role names, so the reference reads as code, not as markup.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
import json
import re

MARKER = re.compile(r"^<!-- gdi:([a-z-]+) -->$", re.M)

#: One example spec per kind of environment: the kind, not the game, sets the scale.
EXAMPLE_SPECS = {"ale": "ale:Breakout", "minatar": "minatar:breakout", "gym": "gym:CartPole-v1"}
#: Fields whose resolved value is the example spec or preset itself, not a default of the kind.
PER_RUN_FIELDS = {"env", "preset"}


def on_page_markdown(markdown: str, page, config, files) -> str:
    def render(match: re.Match) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise ValueError(f"{page.file.src_uri}: unknown table marker gdi:{name}; "
                             f"known: {', '.join(TABLES)}")
        return TABLES[name]()

    return MARKER.sub(render, markdown)


#: A Sphinx role before a code span, as some docstrings write references (":func:`resolve_env`");
#: Markdown renders it as the role's text followed by the code.
SPHINX_ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|obj|exc):(?=<code>)")


def on_page_content(html_text: str, page, config, files) -> str:
    """Drop the Sphinx role names that docstrings put before a reference, keeping the code,
    and the second colon of reStructuredText's "text::" that introduces a literal block."""
    return SPHINX_ROLE.sub("", html_text).replace("::</p>", ":</p>")


def _cell(text: str) -> str:
    """Text for one Markdown table cell: line breaks joined, pipes escaped, and outside code
    spans ``<`` ``>`` (``ale:<Game>`` is text, not an HTML tag) and braces (``{ε_l | ...}`` is
    a set, not attr_list's attributes) escaped."""
    parts = " ".join(str(text).split()).replace("|", "\\|").split("`")
    parts[::2] = [html.escape(part, quote=False).replace("{", "\\{").replace("}", "\\}")
                  for part in parts[::2]]
    return "`".join(parts)


def _value(value) -> str:
    """A config value as inline code in a table cell (JSON, as config.json records it)."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    # <code> rather than backticks: a value may hold a backtick-free pipe, which a code span
    # inside a table would not protect.
    return f"<code>{html.escape(text).replace('|', '&#124;')}</code>"


def preset_table() -> str:
    from gdi.presets import index_set_note
    from gdi.presets import preset_table as rows

    table = rows()
    columns = list(table[0])
    lines = ['<div class="gdi-presets" markdown>', "",
             "| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in table:
        cells = [f"`{row['name']}`"] + [_cell(row[c]) for c in columns[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    note = index_set_note().splitlines()
    lines += ["", "</div>", "", _cell(note[0]), "", _cell(note[1]), ""]
    lines += [f"- **`{name}`**: {_cell(text)}" for name, text in
              (line.split(": ", 1) for line in note[2:])]
    return "\n".join(lines) + "\n"


#: The section each layer's config gives its fields on the page (Config is composed of them).
LAYER_SECTIONS = {
    "RunSpec": "what to run",
    "NetworkConfig": "network Θ (gdi.nets.config.NetworkConfig)",
    "LossConfig": "operator T: the loss (gdi.learning.loss.LossConfig)",
    "MetaConfig": "operator E (gdi.meta.config.MetaConfig)",
    "OptimizerConfig": "operator T: the optimizer (gdi.learning.optimizer.OptimizerConfig)",
    "ActorsConfig": "the runtime: actors (gdi.runtime_config.ActorsConfig)",
    "ReplayConfig": "the runtime: sequences, replay and γ (gdi.runtime_config.ReplayConfig)",
    "PlacementConfig": "the runtime: devices, backends and faults "
                       "(gdi.runtime_config.PlacementConfig)",
    "OutputConfig": "what the run writes (gdi.runtime_config.OutputConfig)",
}


def config_sections() -> dict[str, str]:
    """Field name → its section: the layer config that declares it (``LAYER_SECTIONS``), or,
    for Config's own fields, the section comment (``# --- sampling: actors ---``) it stands
    under in ``Config``'s source."""
    from gdi.config import Config

    sections = {}
    for cls in reversed(Config.__mro__[1:]):
        if dataclasses.is_dataclass(cls):
            for field in dataclasses.fields(cls):
                sections[field.name] = LAYER_SECTIONS.get(cls.__name__, cls.__name__)
    current = ""
    for line in inspect.getsource(Config).splitlines():
        heading = re.match(r"\s*# -+ (.+?) -+$", line)
        if heading:
            current = heading.group(1)
            continue
        field = re.match(r"    (\w+): ", line)
        if field:
            sections[field.group(1)] = current
    return sections


def config_fields() -> str:
    from gdi.config import Config, field_docs
    from gdi.presets import resolve_config

    docs = field_docs()
    sections = config_sections()
    defaults = Config().to_dict()
    resolved = {kind: resolve_config("gdi-i3", spec).to_dict()
                for kind, spec in EXAMPLE_SPECS.items()}
    out, section = [], None
    for field in dataclasses.fields(Config):
        if sections.get(field.name) != section:
            section = sections.get(field.name)
            out += ["", f"### {section[0].upper() + section[1:]}", "",
                    "| field | default | `gdi-i3` sets it to | meaning |",
                    "| --- | --- | --- | --- |"]
        if field.default is not dataclasses.MISSING:
            default = field.default
        else:
            default = field.default_factory()  # type: ignore[misc]
        by_value: dict[str, list[str]] = {}  # rendered value → the kinds that resolve to it
        if field.name not in PER_RUN_FIELDS:
            for kind, values in resolved.items():
                if values[field.name] != defaults[field.name]:
                    by_value.setdefault(_value(values[field.name]), []).append(kind)
        scaled = [f"{', '.join(kinds)}: {value}" for value, kinds in by_value.items()]
        # A long name may break after an underscore, never inside a word.
        name = field.name.replace("_", "_<wbr>")
        out.append(f"| <code>{name}</code> | {_value(default)} | {'<br>'.join(scaled)} | "
                   f"{_cell(docs.get(field.name, ''))} |")
    # One width per column in every section's table (docs/stylesheets/extra.css).
    return '<div class="gdi-fields" markdown>\n' + "\n".join(out) + "\n\n</div>\n"


TABLES = {"presets": preset_table, "config-fields": config_fields}
