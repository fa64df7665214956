"""Spec resolution, override validation, the config record, and per-index seeds."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from ale_py import roms

from gdi.envs import ATARI_57_GAMES, AtariConfig, env_seeds, make_vector_env, resolve_env

# The ROM ids ale-py ships them under (snake_case, a few spelled as one word).
ROM_IDS = {
    "MontezumaRevenge": "montezuma_revenge", "MsPacman": "ms_pacman", "UpNDown": "up_n_down",
    "KungFuMaster": "kung_fu_master", "Jamesbond": "jamesbond", "Hero": "hero", "Qbert": "qbert",
    "Riverraid": "riverraid", "WizardOfWor": "wizard_of_wor", "YarsRevenge": "yars_revenge",
}  # fmt: skip


def test_all_57_paper_games_resolve_to_rom_files():
    # That they are the paper's 57: tests/evaluation/test_games.py, against its score tables.
    assert len(ATARI_57_GAMES) == len(set(ATARI_57_GAMES)) == 57
    for game in ATARI_57_GAMES:
        config = resolve_env(f"ale:{game}")
        assert isinstance(config, AtariConfig) and config.name == game
        assert config.rom_id in roms.get_all_rom_ids()
        assert roms.get_rom_path(config.rom_id).is_file()
    for game, rom_id in ROM_IDS.items():
        assert resolve_env(f"ale:{game}").rom_id == rom_id


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("ale:montezuma_revenge", "MontezumaRevenge"),
        ("ale:mspacman", "MsPacman"),
        ("ALE:Pong", "Pong"),
        ("minatar:SpaceInvaders", "space_invaders"),
        ("minatar:breakout", "breakout"),
        ("gym:CartPole-v1", "CartPole-v1"),
    ],
)
def test_names_resolve_to_their_canonical_form(spec, name):
    assert resolve_env(spec).name == name


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("atari:Breakout", ["ale:", "minatar:", "gym:"]),
        ("Breakout", ["ale:", "minatar:", "gym:"]),
        ("ale:Breakot", ["unknown ALE game", "Breakout"]),
        ("ale:Montezuma", ["MontezumaRevenge"]),
        ("ale:SpaceInvader", ["SpaceInvaders"]),
        ("minatar:brekout", ["unknown MinAtar game", "breakout"]),
        ("minatar:pong", ["asterix, breakout, freeway, seaquest, space_invaders"]),
        ("gym:CartPol-v1", ["unknown Gymnasium id", "CartPole-v1"]),
    ],
)
def test_unknown_specs_name_the_allowed_ones(spec, expected):
    with pytest.raises(ValueError) as err:
        resolve_env(spec)
    for text in expected:
        assert text in str(err.value)


@pytest.mark.parametrize(
    ("spec", "key", "allowed"),
    [
        ("ale:Pong", "sticky_actions", "repeat_action_probability"),
        ("ale:Pong", "reward_clipping", "max_episode_frames"),
        ("minatar:breakout", "repeat_action_probability", "sticky_action_prob"),
        ("gym:CartPole-v1", "noop_max", "max_episode_steps"),
    ],
)
def test_unknown_overrides_name_the_allowed_ones(spec, key, allowed):
    with pytest.raises(ValueError, match=key) as err:
        resolve_env(spec, **{key: 1})
    assert allowed in str(err.value)


@pytest.mark.parametrize(
    ("spec", "key", "value", "range_"),
    [
        ("ale:Pong", "repeat_action_probability", 1.5, "[0, 1]"),
        ("ale:Pong", "repeat_action_probability", "0.25", "[0, 1]"),
        ("ale:Pong", "noop_max", -1, "[0,"),
        ("ale:Pong", "action_repeat", 0, "[1,"),
        ("ale:Pong", "action_repeat", 2.5, "[1,"),
        ("ale:Pong", "image_height", 300, "[1, 210]"),
        ("ale:Pong", "full_action_space", 1, "true or false"),
        ("ale:Pong", "max_episode_frames", 0, "[1,"),
        ("minatar:breakout", "sticky_action_prob", -0.1, "[0, 1]"),
        ("minatar:breakout", "max_episode_steps", 0, "None"),
        ("gym:CartPole-v1", "max_episode_steps", True, "None"),
    ],
)
def test_invalid_override_values_name_the_setting_and_its_range(spec, key, value, range_):
    with pytest.raises(ValueError, match=key) as err:
        resolve_env(spec, **{key: value})
    assert range_ in str(err.value)


def test_overrides_apply_and_json_numbers_are_accepted():
    config = resolve_env("ale:Pong", repeat_action_probability=1, max_episode_frames=1e5)
    assert config.repeat_action_probability == 1.0
    assert config.max_episode_frames == 100_000 and isinstance(config.max_episode_frames, int)
    assert resolve_env("ale:Pong", action_repeat=2).frames_per_step == 2


def test_config_record_is_json_and_frozen():
    for spec, frames in [("ale:Breakout", 4), ("minatar:freeway", 1), ("gym:Acrobot-v1", 1)]:
        config = resolve_env(spec)
        record = json.loads(json.dumps(config.as_dict()))
        assert record["spec"] == spec and record["kind"] == spec.split(":")[0]
        assert record["frames_per_step"] == config.frames_per_step == frames
        assert set(config.override_names()) <= set(record)
        with pytest.raises(dataclasses.FrozenInstanceError):
            config.name = "Pong"  # type: ignore[misc]


def test_replace_validates_like_resolve():
    config = resolve_env("ale:Pong")
    assert config.replace(noop_max=0).noop_max == 0
    with pytest.raises(ValueError, match="noop_maxx"):
        config.replace(noop_maxx=0)
    with pytest.raises(ValueError, match="noop_max"):
        make_vector_env(config, 1, seed=0, noop_max=-3)
    with pytest.raises(ValueError, match="unknown ALE game"):
        AtariConfig(name="Pongg")


def test_env_seeds_are_distinct_reproducible_and_in_range():
    seeds = env_seeds(0, 256)
    assert seeds.dtype == np.int64 and len(set(seeds.tolist())) == 256
    assert ((seeds >= 0) & (seeds < 2**31)).all()
    np.testing.assert_array_equal(seeds, env_seeds(0, 256))
    np.testing.assert_array_equal(seeds[:8], env_seeds(0, 8))
    # Neighbouring run seeds do not share streams (unlike seed + index).
    assert not set(env_seeds(1, 256).tolist()) & set(seeds.tolist())
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            env_seeds(bad, 4)
    with pytest.raises(ValueError, match="num_envs"):
        make_vector_env("gym:CartPole-v1", 0, seed=0)
