"""The 57 Atari games of the paper's benchmark and their gdi.envs specs.

App. "Atari Benchmark" and the score tables of App. "Experimental Results" name the games as
the paper prints them ("Chopper Command", "Montezuma Revenge", "Up N Down"); gdi.envs names an
Atari environment ``ale:<Name>`` with the ALE ROM's CamelCase name, as in Gymnasium's
``ALE/<Name>-v5`` ("ale:ChopperCommand", "ale:MontezumaRevenge", "ale:UpNDown"). The games are
those of ``gdi.envs.ATARI_57_GAMES``; ``data/games.csv`` ships the paper's spelling of each (with
its baselines), matched to the ALE name by ignoring case, spaces and punctuation.
"""

from __future__ import annotations

import csv
import difflib
from functools import cache
from importlib import resources

ATARI_PREFIX = "ale:"


@cache
def _table() -> tuple[tuple[str, str], ...]:
    """(the paper's name, ``ale:<Name>`` spec) of every game, in the paper's order."""
    # Imported here: gdi.envs loads gymnasium, which reading a report's tables does not need.
    from gdi.envs.spec import ATARI_57_GAMES

    with resources.files(__package__).joinpath("data/games.csv").open(encoding="utf-8") as f:
        names = [row["game"] for row in csv.DictReader(f)]
    ale_names = {_key(name): name for name in ATARI_57_GAMES}
    matched = [ale_names.get(_key(name)) for name in names]
    unmatched = [name for name, ale in zip(names, matched, strict=True) if ale is None]
    missing = sorted(set(ATARI_57_GAMES) - set(matched))
    if unmatched or missing or len(names) != len(ATARI_57_GAMES):
        raise RuntimeError(
            f"data/games.csv and gdi.envs.ATARI_57_GAMES name different games (only in the "
            f"CSV: {unmatched}; only in gdi.envs: {missing}; {len(names)} CSV rows)")
    return tuple((name, f"{ATARI_PREFIX}{ale}") for name, ale in zip(names, matched, strict=True))


def atari_games() -> tuple[str, ...]:
    """The 57 game names, in the paper's (alphabetical) order."""
    return tuple(game for game, _ in _table())


def atari_specs() -> tuple[str, ...]:
    """The 57 env specs ``ale:<Name>``, in the order of :func:`atari_games`."""
    return tuple(spec for _, spec in _table())


def _key(name: str) -> str:
    """Case, spaces, punctuation and a possessive "'s" do not matter when matching names."""
    name = name.lower().replace("'s", "").replace("\u2019s", "")
    return "".join(ch for ch in name if ch.isalnum())


def _unknown(kind: str, name: str, known: tuple[str, ...]) -> ValueError:
    by_lower = {k.lower(): k for k in known}
    close = [
        by_lower[c] for c in difflib.get_close_matches(name.lower(), by_lower, n=3, cutoff=0.5)
    ]
    hint = f"; close matches: {', '.join(close)}" if close else ""
    return ValueError(f"unknown {kind} {name!r}: not one of the paper's 57 Atari games{hint}")


def game_to_spec(game: str) -> str:
    """``"Chopper Command"`` -> ``"ale:ChopperCommand"``.

    Matching ignores case, spaces and punctuation ("montezuma's revenge" works); an unknown
    name raises ValueError listing close matches.
    """
    spec = {_key(g): spec for g, spec in _table()}.get(_key(game))
    if spec is None:
        raise _unknown("game", game, atari_games())
    return spec


def spec_to_game(spec: str) -> str:
    """``"ale:ChopperCommand"`` -> ``"Chopper Command"``; ValueError (with close matches) for a
    spec that is not ``ale:`` plus one of the 57 ALE names."""
    by_spec = {s: g for g, s in _table()}
    if spec in by_spec:
        return by_spec[spec]
    if not spec.startswith(ATARI_PREFIX):
        raise ValueError(
            f"{spec!r} is not an Atari env spec (expected 'ale:<Name>', e.g. 'ale:Pong')"
        )
    raise _unknown("Atari env spec", spec, atari_specs())


def canonical_game(name: str) -> str:
    """The paper's name of a game from any accepted spelling or from its ``ale:`` spec."""
    return spec_to_game(name if name.startswith(ATARI_PREFIX) else game_to_spec(name))


def is_atari57(spec: str) -> bool:
    """Whether ``spec`` names one of the 57 games the paper's baselines cover."""
    return spec in {s for _, s in _table()}
