"""Config validation, --set overrides and presets."""

import dataclasses
import inspect
import json
import math

import pytest

from gdi.config import Config, apply_overrides, field_docs
from gdi.meta import make_controller
from gdi.policy_space import get_policy_space
from gdi.presets import PRESETS, index_set_note, preset_table, resolve_config
from tests.tolerance import tolerance


def test_every_field_has_a_docstring():
    docs = field_docs()
    assert {f.name for f in dataclasses.fields(Config)} == set(docs)
    assert all(docs.values())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"families": 0}, "families"),
        ({"families": 3, "reward_shapes": ("log",) * 3}, "soft_entropy.*families=3"),
        ({"reward_shapes": ("log", "root")}, "reward_shapes"),
        ({"backend": "mpi"}, "backend"),
        ({"discount": 1.5}, "discount"),
        ({"seq_stride": 100, "seq_len": 80}, "seq_stride"),
        ({"min_replay": 10}, "min_replay"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"policy_init_scale": 0.0}, "policy_init_scale must be a positive number, got 0.0"),
        ({"frames": 0}, "frames"),
        ({"replay_capacity": 100}, "replay_capacity"),
        ({"learner_device": "tpu"}, "learner_device"),
        ({"clip_rho": -0.5}, r"clip_rho: must be a number >= 0 \(inf: no truncation\), got -0.5"),
        ({"clip_c": float("nan")}, "clip_c: must be a number >= 0"),
        ({"clip_pg_rho": "wide"}, "clip_pg_rho: must be a number >= 0"),
        ({"backend": "ray", "actor_device": "auto"},
         r"actor_device='auto' needs the local or inline backend.*allowed with backend ray: cpu"),
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


def test_truncations_take_inf_and_the_policy_gradients_own_from_the_command_line(tmp_path):
    # LossConfig documents inf as "no truncation"; the run's config now takes it too, from
    # --set as from Python, and clip_pg_rho (the policy gradient's ρ truncation, null: ρ̄) is
    # a field of the run.
    cfg = apply_overrides(Config(), ["clip_rho=inf", "clip_c=Infinity", "clip_pg_rho=0.5"])
    assert cfg.clip_rho == math.inf and cfg.clip_c == math.inf and cfg.clip_pg_rho == 0.5
    assert apply_overrides(cfg, ["clip_pg_rho=null"]).clip_pg_rho is None
    assert Config().clip_pg_rho is None  # the paper: ρ̄ for the policy gradient too
    with pytest.raises(ValueError, match="clip_pg_rho takes a number or null"):
        apply_overrides(cfg, ["clip_pg_rho=wide"])
    # config.json writes inf as JSON's Infinity and reads it back.
    from gdi.runtime.run_folder.run_dir import read_config, write_config

    write_config(tmp_path, cfg, {})
    assert read_config(tmp_path)[0] == cfg


def test_each_layer_declares_its_fields_once_and_the_run_config_is_composed_of_them():
    # The network's, the loss's and the optimizer's fields are declared (with their defaults,
    # docstrings and checks) by their layers; Config inherits them and redeclares none, so
    # their defaults and choices cannot drift apart.
    from gdi.learning.loss import LossConfig
    from gdi.learning.optimizer import OptimizerConfig
    from gdi.meta.config import MetaConfig
    from gdi.nets.config import NetworkConfig
    from gdi.run_spec import RunSpec

    layers = (RunSpec, NetworkConfig, LossConfig, MetaConfig, OptimizerConfig)
    assert all(issubclass(Config, layer) for layer in layers)
    own = set(inspect.get_annotations(Config))
    for layer in layers:
        declared = {f.name for f in dataclasses.fields(layer)}
        assert not own & declared, f"Config redeclares {sorted(own & declared)} of {layer}"
    # config.json stays one flat object, what to run first.
    names = [f.name for f in dataclasses.fields(Config)]
    assert names[:4] == ["preset", "scale", "learning", "env"] and len(names) == len(set(names))
    # Each layer checks its own fields with the same words inside a run's config as alone.
    for layer, bad in ((NetworkConfig, {"torso": "resnet"}), (LossConfig, {"pg_clip": 2.0}),
                       (OptimizerConfig, {"adam_beta2": 1.0}),
                       (MetaConfig, {"meta_controller": "ucb"})):
        with pytest.raises(ValueError) as alone:
            layer(**bad)
        with pytest.raises(ValueError) as in_run:
            Config(**bad)
        assert str(alone.value) == str(in_run.value)


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
    # App. "Hyperparameters": "Num. Environments 160", as 5 actors of 32, each with its own E.
    assert (atari.num_actors, atari.envs_per_actor) == (5, 32)
    small = resolve_config("gdi-i3", "minatar:breakout")
    assert small.torso == "minatar" and small.frames == 1_000_000
    h3 = resolve_config("gdi-h3", "gym:CartPole-v1")
    assert h3.families == 2 and h3.reward_shapes == ("log", "root") and h3.torso == "mlp"
    i0 = resolve_config("gdi-i0", "minatar:breakout")
    assert i0.meta_controller == "fixed" and tuple(i0.meta_kwargs["value"]) == (1.0, 0.0, 1.0)
    i1 = resolve_config("gdi-i1", "minatar:breakout")
    assert i1.policy_space == "boltzmann" and len(i1.meta_kwargs["ranges"]) == 1


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_ale_cpu_scale_changes_scale_knobs_only(preset):
    paper = resolve_config(preset, "ale:Breakout").to_dict()
    # ale-cpu's default learning is policy-head-ale-scaled (the next test); the paper's T named.
    small = resolve_config(preset, "ale:Breakout", scale="ale-cpu", learning="paper").to_dict()
    changed = {k for k in paper if paper[k] != small[k]}
    # The algorithm (Λ, P_Λ, E, T, the replay ratio, γ, the optimizer) and the preprocessing
    # stay the paper's; what moves is the network's size, the batch, the sequences, the actors
    # and the bookkeeping intervals.
    assert changed == {"scale", "frames", "torso", "num_actors", "envs_per_actor", "burn_in",
                       "seq_len", "seq_stride", "batch_size", "min_replay", "replay_capacity",
                       "warmup_steps", "pull_every", "push_every", "eval_every", "eval_episodes",
                       "log_every", "checkpoint_every_frames", "torch_threads"}
    assert (paper["scale"], small["scale"], small["torso"]) == ("ale", "ale-cpu", "nature")
    for key in ("replay", "discount", "learning_rate", "env_overrides", "meta_kwargs",
                "policy_space", "meta_controller", "lstm_units"):
        assert small[key] == paper[key], key


def test_the_ale_cpu_scale_takes_the_head_with_standardized_inputs_advantages_and_values():
    # The evidence of docs/learning-per-frame.md and docs/atari10-screens.md: on ale-cpu the
    # paper's T plays at random on Boxing and needs three times the frames on Breakout, and
    # policy-head-ale had half APPO's Battle Zone at 1M frames. The paper's own scale and MinAtar
    # keep the paper's T; --learning paper still names it on ale-cpu.
    default = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu")
    head = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu", learning="policy-head")
    assert (default.learning, default.input_norm, default.pg_advantage_norm,
            default.entropy_floor, default.value_norm, default.policy_init_scale) == (
        "policy-head-ale-scaled", "running", "standardize", 0.5, "running", 0.01)
    changed = {k for k, v in default.to_dict().items() if head.to_dict()[k] != v}
    assert changed == {"learning", "input_norm", "pg_advantage_norm", "entropy_floor",
                       "value_norm", "policy_init_scale"}
    assert resolve_config("gdi-i3", "ale:Breakout").learning == "paper"
    assert resolve_config("gdi-i3", "minatar:breakout").learning == "paper"
    paper = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu", learning="paper")
    assert (paper.policy_head, paper.input_norm, paper.pg_advantage_norm,
            paper.entropy_floor, paper.value_norm, paper.policy_init_scale) == (
        "advantage", "none", "none", 0.0, "none", 1.0)
    # The default before the floor (the runs of 2026-11-29) is one --set away from the
    # default before the screens (the atari10 grid's `gdi` setting), itself one --learning away.
    before = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu",
                            learning="policy-head-ale", entropy_floor=0.0)
    assert (before.entropy_floor, before.value_norm, before.policy_init_scale) == (0.0, "none",
                                                                                   1.0)


def test_the_scaled_head_is_policy_head_ale_with_value_norm_and_a_near_zero_policy_layer():
    # The two levers of the ten-game screens (docs/atari10-screens.md), and nothing else.
    ale = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu", learning="policy-head-ale")
    scaled = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu",
                            learning="policy-head-ale-scaled")
    changed = {k for k, v in scaled.to_dict().items() if ale.to_dict()[k] != v}
    assert changed == {"learning", "value_norm", "policy_init_scale"}
    assert (scaled.value_norm, scaled.policy_init_scale) == ("running", 0.01)
    assert (ale.value_norm, ale.policy_init_scale) == ("none", 1.0)


def test_scales_belong_to_one_kind_and_are_recorded():
    with pytest.raises(ValueError, match="scale 'ale-cpu' is for ale: environments, not "
                                         "'minatar:breakout'; allowed for minatar: minatar"):
        resolve_config("gdi-i3", "minatar:breakout", scale="ale-cpu")
    with pytest.raises(ValueError, match="unknown scale 'cpu'; allowed: ale, minatar, gym"):
        resolve_config("gdi-i3", "ale:Breakout", scale="cpu")
    assert resolve_config("gdi-i3", "gym:CartPole-v1").scale == "gym"
    # A config.json written before scales had names reads as its environment kind's scale.
    saved = resolve_config("gdi-i3", "minatar:breakout").to_dict()
    del saved["scale"]
    assert Config.from_dict(saved).scale == "minatar"


def test_gym_presets_search_inverse_temperatures_up_to_1000_in_log_coordinates():
    top = math.log1p(1000.0)
    for preset, names in (("gdi-i3", ("inv_tau1", "inv_tau2", "eps")),
                          ("gdi-h3", ("inv_tau1", "inv_tau2", "eps")), ("gdi-i1", ("inv_tau",))):
        cfg = resolve_config(preset, "gym:CartPole-v1")
        assert cfg.discount == 0.99
        kwargs = cfg.meta_kwargs
        assert tuple(kwargs["index_names"]) == names
        for i, name in enumerate(names):
            if name == "eps":  # ε keeps the paper's range and blocks
                assert kwargs["transforms"][i] == "identity"
                assert tuple(kwargs["ranges"][i]) == (0.0, 1.0) and kwargs["accuracies"][i] == 0.1
            else:
                assert kwargs["transforms"][i] == "log1p"
                assert tuple(kwargs["ranges"][i]) == (0.0, top) and kwargs["accuracies"][i] == 0.1
        # The bandit built from it draws 1/τ over [0, 1000].
        lam = make_controller("bandit", 0, **kwargs).sample_many(4000)
        inv_tau = lam[:, [i for i, n in enumerate(names) if n != "eps"]]
        # expm1(log1p(1000)) may round above 1000: both round at the magnitude of 1001.
        assert inv_tau.min() >= 0 and inv_tau.max() <= 1000 + tolerance(1001.0)
        assert inv_tau.max() > 500
    # Other kinds keep the paper's table; the fixed selection of GDI-I⁰ is not a search.
    for env in ("minatar:breakout", "ale:Breakout"):
        kwargs = resolve_config("gdi-i3", env).meta_kwargs
        assert "transforms" not in kwargs
        assert [tuple(r) for r in kwargs["ranges"]] == [(0.0, 50.0), (0.0, 50.0), (0.0, 1.0)]
    assert resolve_config("gdi-i0", "gym:CartPole-v1").meta_kwargs == \
        resolve_config("gdi-i0", "minatar:breakout").meta_kwargs
    # An explicit choice wins over the scale.
    paper = {"ranges": ((0.0, 50.0),) * 2 + ((0.0, 1.0),), "accuracies": (1.0, 1.0, 0.1),
             "index_names": ("inv_tau1", "inv_tau2", "eps")}
    assert "transforms" not in resolve_config("gdi-i3", "gym:CartPole-v1",
                                              meta_kwargs=paper).meta_kwargs


def test_unknown_preset_and_env_kind():
    with pytest.raises(ValueError, match="did you mean 'gdi-i3'"):
        resolve_config("gdi-13", "minatar:breakout")
    with pytest.raises(ValueError, match="must start with one of"):
        resolve_config("gdi-i3", "atari:Breakout")


def test_preset_table_has_the_papers_columns():
    assert "[0, 1000]" in index_set_note() and "log(1 + 1/τ)" in index_set_note()
    rows = preset_table()
    assert [r["name"] for r in rows] == list(PRESETS)
    assert set(rows[0]) == {"name", "category", "π_λ", "Λ", "P_Λ⁽⁰⁾", "E", "T"}
    # Λ and π_λ are the policy space's own texts (its box, its formula), not copies of them.
    by_name = {r["name"]: r for r in rows}
    soft = get_policy_space("soft_entropy")
    assert by_name["gdi-i3"]["Λ"] == soft.index_set_text() == by_name["gdi-h3"]["Λ"]
    assert by_name["gdi-h3"]["π_λ"] == soft.description


def test_a_named_search_sets_es_inverse_temperature_box_on_any_scale(capsys):
    # --search log1p-1000 on MinAtar: E (the bandit, and the uniform E of its control) searches
    # each 1/τ over [0, 1000] in x = log(1 + 1/τ), blocks of 0.1 (the bandit's); ε keeps [0, 1].
    from gdi.cli import main

    x_max = math.log1p(1000.0)
    bandit = resolve_config("gdi-i3", "minatar:breakout", search="log1p-1000").meta_kwargs
    assert bandit["transforms"] == ["log1p", "log1p", "identity"]
    assert bandit["ranges"] == [[0.0, x_max], [0.0, x_max], [0.0, 1.0]]
    assert bandit["accuracies"] == [0.1, 0.1, 0.1]
    uniform = resolve_config("gdi-i3-uniform", "minatar:breakout", search="log1p-1000")
    assert uniform.meta_kwargs["ranges"] == bandit["ranges"] and \
        "accuracies" not in uniform.meta_kwargs
    # The table's search is the default outside gym:, and naming it changes nothing there;
    # on gym: it puts the table back.
    assert resolve_config("gdi-i3", "minatar:breakout", search="table") == \
        resolve_config("gdi-i3", "minatar:breakout")
    assert resolve_config("gdi-i3", "gym:CartPole-v1", search="table").meta_kwargs["ranges"] == \
        [[0.0, 50.0], [0.0, 50.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match=r"search: unknown value 'wide'; allowed: table, "
                                         r"log1p-50, log1p-1000"):
        resolve_config("gdi-i3", "minatar:breakout", search="wide")
    with pytest.raises(ValueError, match=r"search 'log1p-50': preset 'gdi-i0'.s E \(fixed\) "
                                         r"searches no box"):
        resolve_config("gdi-i0", "minatar:breakout", search="log1p-50")
    main(["config", "--env", "minatar:breakout", "--search", "log1p-50", "--json"])
    assert json.loads(capsys.readouterr().out)["meta_kwargs"]["transforms"][0] == "log1p"


def test_a_named_learning_sets_its_fields_over_the_scale_and_the_preset(capsys):
    # --learning policy-head: π_λ reads a head of its own, with APPO's clip, entropy term, γ
    # and no auxiliary losses, on any preset and scale; the rest (the learning rate included)
    # as resolved.
    from gdi.cli import main

    paper = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu", learning="paper")
    head = resolve_config("gdi-i3", "ale:Breakout", scale="ale-cpu", learning="policy-head")
    assert (paper.learning, head.learning) == ("paper", "policy-head")
    changed = {k for k, v in head.to_dict().items() if paper.to_dict()[k] != v}
    assert changed == {"learning", "policy_head", "pg_clip", "entropy_scale", "discount",
                       "aux_tasks"}
    assert (head.policy_head, head.pg_clip, head.entropy_scale, head.discount,
            head.learning_rate, head.aux_tasks) == ("separate", 0.1, 0.1, 0.99, 5e-4, False)
    assert (paper.policy_head, paper.pg_clip, paper.entropy_scale, paper.discount,
            paper.learning_rate, paper.aux_tasks) == ("advantage", 0.0, 0.0, 0.997, 5e-4, True)
    # GDI-H³ takes it per family; an explicit field still wins over the learning's.
    assert resolve_config("gdi-h3", "minatar:breakout", learning="policy-head").families == 2
    assert resolve_config("gdi-i3", "minatar:breakout", learning="policy-head",
                          entropy_scale=0.0).entropy_scale == 0.0
    with pytest.raises(ValueError, match=r"learning: unknown value 'ppo'; allowed: paper, "
                                         r"policy-head, policy-head-ale, "
                                         r"policy-head-ale-scaled$"):
        resolve_config("gdi-i3", "minatar:breakout", learning="ppo")
    # The label is chosen by --learning only: a --set of it would rename the config.
    with pytest.raises(ValueError, match=r"--set learning: names what the config was resolved "
                                         r"from; choose it with --learning NAME"):
        apply_overrides(paper, ["learning=policy-head"])
    with pytest.raises(ValueError, match=r"--set scale: .* --scale NAME"):
        apply_overrides(paper, ["scale=ale"])
    main(["config", "--env", "minatar:breakout", "--learning", "policy-head", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert (shown["learning"], shown["policy_head"]) == ("policy-head", "separate")


def test_a_config_saved_before_learnings_had_names_loads_as_the_papers():
    saved = resolve_config("gdi-i3", "minatar:breakout", learning="policy-head").to_dict()
    del saved["learning"]
    loaded = Config.from_dict(saved)
    # The label is the paper's, the only one there was; the fields stay as saved.
    assert (loaded.learning, loaded.policy_head) == ("paper", "separate")
