"""Config validation, --set overrides and presets."""

import dataclasses

import pytest

from gdi.config import Config, apply_overrides, field_docs
from gdi.presets import PRESETS, preset_table, resolve_config


def test_every_field_has_a_docstring():
    docs = field_docs()
    assert {f.name for f in dataclasses.fields(Config)} == set(docs)
    assert all(docs.values())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"families": 3}, "families"),
        ({"reward_shapes": ("log", "root")}, "reward_shapes"),
        ({"backend": "ray"}, "backend"),
        ({"discount": 1.5}, "discount"),
        ({"seq_stride": 100, "seq_len": 80}, "seq_stride"),
        ({"min_replay": 10}, "min_replay"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"frames": 0}, "frames"),
        ({"replay_capacity": 100}, "replay_capacity"),
        ({"learner_device": "tpu"}, "learner_device"),
    ],
)
def test_bad_values_name_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        Config(**changes)


def test_overrides_parse_by_field_type():
    cfg = apply_overrides(Config(), [
        "envs_per_actor=8", "discount=0.99", "aux_tasks=false", "torso=mlp",
        "env_overrides.repeat_action_probability=0.25", "reward_shapes=root",
    ])
    assert cfg.envs_per_actor == 8 and cfg.discount == 0.99 and cfg.aux_tasks is False
    assert cfg.torso == "mlp" and cfg.reward_shapes == ("root",)
    assert cfg.env_overrides == {"repeat_action_probability": 0.25}


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("lerning_rate=1", "did you mean learning_rate"),
        ("envs_per_actor=eight", "integer"),
        ("discount", "field=value"),
        ("torso.x=1", "dotted"),
        ("aux_tasks=maybe", "true or false"),
    ],
)
def test_bad_overrides(assignment, message):
    with pytest.raises(ValueError, match=message):
        apply_overrides(Config(), [assignment])


def test_round_trip_through_dict():
    cfg = resolve_config("gdi-h3", "minatar:breakout")
    assert Config.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown config field"):
        Config.from_dict({**cfg.to_dict(), "nope": 1})


def test_presets_fix_the_algorithm_and_scale_with_the_env():
    atari = resolve_config("gdi-i3", "ale:Breakout")
    assert (atari.torso, atari.lstm_units, atari.burn_in, atari.seq_len) == \
        ("impala_deep", 256, 40, 80)
    assert (atari.discount, atari.learning_rate, atari.warmup_steps) == (0.997, 5e-4, 4000)
    assert atari.frames == 200_000_000
    small = resolve_config("gdi-i3", "minatar:breakout")
    assert small.torso == "minatar" and small.frames == 1_000_000
    h3 = resolve_config("gdi-h3", "gym:CartPole-v1")
    assert h3.families == 2 and h3.reward_shapes == ("log", "root") and h3.torso == "mlp"
    i0 = resolve_config("gdi-i0", "minatar:breakout")
    assert i0.meta_controller == "fixed" and tuple(i0.meta_kwargs["value"]) == (1.0, 0.0, 1.0)
    i1 = resolve_config("gdi-i1", "minatar:breakout")
    assert i1.policy_space == "boltzmann" and len(i1.meta_kwargs["ranges"]) == 1


def test_unknown_preset_and_env_kind():
    with pytest.raises(ValueError, match="did you mean gdi-i3"):
        resolve_config("gdi-13", "minatar:breakout")
    with pytest.raises(ValueError, match="must start with one of"):
        resolve_config("gdi-i3", "atari:Breakout")


def test_preset_table_has_the_papers_columns():
    rows = preset_table()
    assert [r["name"] for r in rows] == list(PRESETS)
    assert set(rows[0]) == {"name", "category", "π_λ", "Λ", "P_Λ⁽⁰⁾", "E", "T"}
