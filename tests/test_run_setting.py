"""What a run's config.json says ran (gdi.presets.setting, issue 71): the preset, scale,
learning and protocol it names, and each field --set or --search changed on top of them."""

import pytest

from gdi.config import apply_overrides
from gdi.presets import resolve_config
from gdi.presets.setting import LABEL_MAX, run_setting


def saved(config, **extra):
    """``config`` as config.json holds it (the fields, and what a run folder adds)."""
    return {**config.to_dict(), "name": "run", "provenance": {}, "env_settings": {}, **extra}


def ale_cpu(*sets, **fields):
    """An ale-cpu config of the atari10 grid's ``gdi`` setting (``policy-head-ale``, named: the
    scale's default was that until the ten-game screens), with ``sets`` applied."""
    fields.setdefault("learning", "policy-head-ale")
    return apply_overrides(resolve_config("gdi-i3", "ale:Breakout", "ale-cpu", **fields), sets)


def test_a_run_as_resolved_is_its_names_and_nothing_changed():
    setting = run_setting(saved(ale_cpu()))
    assert (setting.preset, setting.scale, setting.learning, setting.protocol) == (
        "gdi-i3", "ale-cpu", "policy-head-ale", "paper")
    assert setting.frames == 6_000_000 and setting.changes == ()
    assert setting.label() == "gdi-i3 · ale-cpu · policy-head-ale"
    assert setting.differences() == "—"


def test_each_set_is_named_as_set_takes_it_and_where_a_run_ran_is_not():
    setting = run_setting(saved(ale_cpu("entropy_floor=0", "learning_rate=1e-3",
                                        "env_overrides.frame_stack=2", "backend=inline",
                                        "torch_threads=1", "eval_episodes=3")))
    assert setting.changes == (("entropy_floor", 0.0), ("env_overrides.frame_stack", 2),
                               ("learning_rate", 0.001))
    # The label as long as a legend allows (LABEL_MAX), the table's column in full.
    assert setting.label() == "gdi-i3 · ale-cpu · policy-head-ale · entropy_floor=0 · +2 more"
    assert setting.differences() == ("entropy_floor=0, env_overrides.frame_stack=2, "
                                     "learning_rate=0.001")
    # Another seed, backend or thread count is the same setting; another budget is not.
    base = run_setting(saved(ale_cpu()))
    assert run_setting(saved(ale_cpu("backend=inline", "torch_threads=1"), seed=4)).key == base.key
    assert run_setting(saved(ale_cpu(), frames=2_000_000)).key != base.key


def test_a_search_and_a_protocol_are_named():
    setting = run_setting(saved(resolve_config("gdi-i3", "ale:Breakout", "ale-cpu",
                                               search="log1p-50")))
    assert setting.changes == (("search", "log1p-50"),)  # not meta_kwargs' keys one by one
    machado = run_setting(saved(ale_cpu("protocol=machado")))
    assert machado.protocol == "machado" and machado.changes == ()
    assert machado.label() == "gdi-i3 · ale-cpu · policy-head-ale · protocol=machado"
    minatar = run_setting(saved(resolve_config("gdi-i3", "minatar:breakout")))
    assert minatar.protocol is None and minatar.label() == "gdi-i3 · minatar · paper"


def test_an_older_config_is_read_as_the_run_ran():
    # Saved before entropy_floor existed: the run had no floor, which policy-head-ale sets today.
    record = saved(ale_cpu())
    del record["entropy_floor"], record["entropy_floor_scale"]
    assert run_setting(record).changes == (("entropy_floor", 0.0),)
    # Saved before scales and learnings had names: its kind's scale, the paper's learning.
    old = saved(resolve_config("gdi-i3", "minatar:breakout"))
    del old["scale"], old["learning"]
    setting = run_setting(old)
    assert (setting.scale, setting.learning, setting.changes) == ("minatar", "paper", ())
    # A partial, hand-made config.json: only the fields it has are compared.
    assert run_setting({"env": "ale:Pong", "preset": "gdi-i3", "seed": 0,
                        "name": "r"}).label() == "gdi-i3 · ale · paper"


def test_a_setting_this_gdi_cannot_resolve_is_said_so_and_kept_apart():
    record = saved(ale_cpu(), preset="gdi-i9")
    setting = run_setting(record)
    assert setting.unresolved.startswith("unknown preset 'gdi-i9'")
    assert setting.label() == "gdi-i9 · ale-cpu · policy-head-ale · ?"
    assert setting.differences().startswith("not known: unknown preset 'gdi-i9'")
    assert run_setting({**record, "learning_rate": 1.0}).key != setting.key


SETS = ("replay=3", "burn_in=5", "seq_len=10", "warmup_steps=7", "adam_beta1=0.8",
        "weight_decay=0", "max_grad_norm=9")


@pytest.mark.parametrize("count", [1, 2, 7])
def test_a_label_stays_short_enough_for_a_legend(count):
    setting = run_setting(saved(ale_cpu(*SETS[:count])))
    assert len(setting.changes) == count
    label = setting.label()
    assert len(label) <= LABEL_MAX
    shown = sum(f" · {s}" in label for s in SETS)
    assert shown == count or (shown and label.endswith(f" · +{count - shown} more"))

