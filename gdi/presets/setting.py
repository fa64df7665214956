"""What ran: a run's setting, read from its ``config.json``.

A run is ``gdi train --preset P --scale S --learning L [--search N] [--set field=value ...]``.
Its setting is those names, its ALE protocol, its budget and what ``--set`` (and
``--search``) changed: the fields in which its config differs from what ``resolve_config``
makes of P, S and L today. Reports group runs by setting (``gdi report``: runs that differ in
any part of it are never seeds of one agent) and label each group by it.

The names come from the config itself: ``config.json`` records ``preset``, ``scale`` and
``learning``; a config saved before ``scale`` or ``learning`` existed is given the ones its run
took (``gdi.upgrade.derived_labels``: its environment kind's scale, the paper's learning), as
``Config.from_dict`` gives them when it loads the run. The differences are found by resolving
the names again and comparing field by field, with two rules for configs written by an older
gdi:

- a field added since the config was written (``gdi.upgrade.FIELDS_ADDED_LATER``) has the value
  that gives the behaviour the run had, e.g. ``entropy_floor=0`` for a ``policy-head-ale`` run
  made before that learning had its floor: a difference, and rightly so, since the run ran
  without it;
- any other field the file lacks is not compared (a hand-made or partial config.json).

So a difference is measured against today's presets: a run made before a preset changed shows
the change as a difference, which is what a reader comparing it with a run made today needs
to know. Fields that say where and how a run ran, never what it learns
(``NOT_WHAT_IT_LEARNS``), are never differences.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gdi.config import PLACEMENT_FIELDS
from gdi.presets import resolve_config
from gdi.presets.scales import SEARCHES
from gdi.upgrade import todays_config_fields

#: config.json entries that say who a run is or where and how it ran, never what it learns:
#: runs that differ only in these are seeds of one agent.
NOT_WHAT_IT_LEARNS = frozenset({
    "seed", "name", "provenance", "env_settings", "skipped_updates_max", "log_every",
    "eval_every", "eval_episodes", *PLACEMENT_FIELDS,
})
#: The entries a setting names rather than lists as differences.
NAMED = ("preset", "env", "scale", "learning", "protocol", "frames")
#: Config fields that are dicts: a difference is named per key, as ``--set KEY.SUB=VALUE``.
DICT_FIELDS = ("env_overrides", "meta_kwargs")
#: A group's label stays this short (a figure legend's entry); the full list of differences is
#: in the report's table of groups.
LABEL_MAX = 64
#: A dict key one of two configs lacks.
UNSET = "unset"


def _plain(value: Any) -> Any:
    """``value`` as config.json holds it (tuples as lists)."""
    return json.loads(json.dumps(value, default=list))


def value_text(value: Any) -> str:
    """A value as ``--set`` takes it: 0.5, 0, true, null, [0,50], text as is."""
    if value is UNSET:
        return UNSET
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True)
class RunSetting:
    """What a run ran: the names it was resolved from and what was changed on top of them."""

    preset: str
    scale: str
    learning: str
    protocol: str | None
    """The ALE protocol (``paper``, ``machado``); None off the ALE, where there is none."""
    frames: int | None
    """The budget, in environment frames (None where the config does not say)."""
    changes: tuple[tuple[str, Any], ...] = ()
    """``(field, value)`` for each field ``--set`` or ``--search`` changed, sorted: a dict's
    key as ``field.key``; the search by its name, as ``search``."""
    unresolved: str = ""
    """Why today's gdi cannot resolve the names (an unknown preset, say), so that the changes
    are not known; empty when they are."""
    fields: str = ""
    """Every compared field, as JSON: what tells unresolved settings apart."""

    @property
    def key(self) -> tuple:
        """Equal for runs of one setting, and only for them."""
        return (self.preset, self.scale, self.learning, self.protocol, self.frames,
                json.dumps(self.changes, sort_keys=True, default=str),
                self.fields if self.unresolved else "")

    def change_texts(self) -> list[str]:
        """Each change as ``--set`` takes it: ``entropy_floor=0``, ``search=log1p-50``; the
        protocol first when it is not the paper's (``protocol=machado``)."""
        texts = [f"protocol={self.protocol}"] if self.protocol not in (None, "paper") else []
        return texts + [f"{name}={value_text(value)}" for name, value in self.changes]

    def differences(self) -> str:
        """The changes in full, for a table: ``—`` when there are none."""
        if self.unresolved:
            return f"not known: {self.unresolved}"
        return ", ".join(self.change_texts()) or "—"

    def label(self, max_len: int = LABEL_MAX) -> str:
        """``gdi-i3 · ale-cpu · policy-head-ale · entropy_floor=0``: the preset, the scale,
        the learning and the changes, as many as fit in ``max_len`` characters, then
        ``+N more``."""
        text = " · ".join((self.preset, self.scale, self.learning))
        if self.unresolved:
            return text + " · ?"
        changes = self.change_texts()
        for i, change in enumerate(changes):
            rest = len(changes) - i - 1
            more = f" · +{rest} more" if rest else ""
            if i and len(text) + 3 + len(change) + len(more) > max_len:
                return f"{text} · +{len(changes) - i} more"
            text += f" · {change}"
        return text


def run_setting(config: Mapping[str, Any]) -> RunSetting:
    """The setting of the run whose ``config.json`` is ``config`` (see the module's doc)."""
    saved = todays_config_fields(config)
    env = str(saved.get("env", ""))
    preset, scale, learning = (str(saved.get(k, "?")) for k in ("preset", "scale", "learning"))
    frames = saved.get("frames")
    protocol = str(saved["protocol"]) if env.startswith("ale:") else None
    compared = {k: _plain(v) for k, v in saved.items()
                if k not in NOT_WHAT_IT_LEARNS and k not in NAMED}
    fields = json.dumps(compared, sort_keys=True)
    parts = {"preset": preset, "scale": scale, "learning": learning, "protocol": protocol,
             "frames": int(frames) if isinstance(frames, int | float)
             and not isinstance(frames, bool) else None}
    try:
        reference = _resolved(preset, env, scale, learning)
    except (ValueError, KeyError, TypeError) as err:
        return RunSetting(**parts, unresolved=str(err).splitlines()[0], fields=fields)
    changes = _changes(compared, reference)
    if any(name.startswith("meta_kwargs.") for name, _ in changes):
        search = _search_of(compared.get("meta_kwargs"), preset, env, scale, learning)
        if search is not None:
            changes = [c for c in changes if not c[0].startswith("meta_kwargs.")]
            changes.append(("search", search))
    return RunSetting(**parts, changes=tuple(sorted(changes)), fields=fields)


def _changes(compared: Mapping[str, Any], reference: Mapping[str, Any]) -> list[tuple]:
    changes = []
    for name, value in compared.items():
        if name not in reference:
            continue  # not a field of today's Config: nothing to compare it with
        if name in DICT_FIELDS and isinstance(value, dict):
            wanted = reference[name]
            changes += [(f"{name}.{key}", value.get(key, UNSET))
                        for key in sorted({*value, *wanted})
                        if value.get(key, UNSET) != wanted.get(key, UNSET)]
        elif value != reference[name]:
            changes.append((name, value))
    return changes


@functools.lru_cache(maxsize=64)
def _resolved(preset: str, env: str, scale: str, learning: str,
              search: str | None = None) -> dict[str, Any]:
    return _plain(resolve_config(preset, env, scale, search, learning).to_dict())


def _search_of(meta_kwargs, preset: str, env: str, scale: str, learning: str) -> str | None:
    """The ``--search`` that gives ``meta_kwargs``, if one does."""
    for name in SEARCHES:
        try:
            if _resolved(preset, env, scale, learning, name)["meta_kwargs"] == meta_kwargs:
                return name
        except ValueError:  # an E that searches no box
            return None
    return None
