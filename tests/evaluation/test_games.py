"""Game names of the paper <-> gdi.envs specs ``ale:<Name>``, for all 57 games."""

import pytest
from ale_py.registration import rom_id_to_name
from ale_py.roms import get_all_rom_ids

from gdi.envs import ATARI_57_GAMES
from gdi.evaluation.games import (
    atari_games,
    atari_specs,
    canonical_game,
    game_to_spec,
    is_atari57,
    spec_to_game,
)

GAMES = atari_games()


def test_57_distinct_games_and_specs():
    assert len(GAMES) == len(set(GAMES)) == 57
    assert len(atari_specs()) == len(set(atari_specs())) == 57
    # The games are gdi.envs' 57, in the paper's (alphabetical) order: one list, two spellings.
    assert atari_specs() == tuple(f"ale:{name}" for name in ATARI_57_GAMES)


def test_the_csv_and_gdi_envs_must_name_the_same_games(monkeypatch):
    """The CSV ships the paper's spellings; the games themselves are gdi.envs' list, and a game
    of one that the other lacks is an error, not a silently shorter table."""
    import gdi.envs.spec
    import gdi.evaluation.games

    monkeypatch.setattr(gdi.envs.spec, "ATARI_57_GAMES", (*ATARI_57_GAMES[:-1], "Zaxon"))
    gdi.evaluation.games._table.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"only in the CSV: \['Zaxxon'\]; only in "
                                               r"gdi.envs: \['Zaxon'\]"):
            atari_specs()
    finally:
        monkeypatch.undo()
        gdi.evaluation.games._table.cache_clear()
    assert atari_specs()[-1] == "ale:Zaxxon"


@pytest.mark.parametrize("game", GAMES)
def test_every_game_maps_to_an_ale_rom_and_back(game):
    spec = game_to_spec(game)
    assert spec.startswith("ale:")
    # The ALE ROM ids' CamelCase names, as Gymnasium's ALE/<Name>-v5 uses them.
    assert spec.removeprefix("ale:") in {rom_id_to_name(r) for r in get_all_rom_ids()}
    assert spec_to_game(spec) == game
    assert is_atari57(spec)


@pytest.mark.parametrize(
    ("game", "spec"),
    [
        ("Chopper Command", "ale:ChopperCommand"),
        ("Montezuma Revenge", "ale:MontezumaRevenge"),
        ("montezuma's revenge", "ale:MontezumaRevenge"),
        ("Up N Down", "ale:UpNDown"),
        ("Wizard of Wor", "ale:WizardOfWor"),
        ("Ms Pacman", "ale:MsPacman"),
        ("Jamesbond", "ale:Jamesbond"),
        ("Hero", "ale:Hero"),
        ("PrivateEye", "ale:PrivateEye"),
    ],
)
def test_known_spellings(game, spec):
    assert game_to_spec(game) == spec
    assert canonical_game(game) == canonical_game(spec) == spec_to_game(spec)


def test_unknown_names_raise_with_close_matches():
    with pytest.raises(ValueError, match="close matches: Chopper Command"):
        game_to_spec("Choper Command")
    with pytest.raises(ValueError, match="close matches: ale:Breakout"):
        spec_to_game("ale:Breakot")
    with pytest.raises(ValueError, match="not an Atari env spec"):
        spec_to_game("minatar:breakout")
    assert not is_atari57("ale:Pacman")
