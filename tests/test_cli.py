"""The command line's options read their choices and defaults from where they are stated once
(the registries, ``Config``, the library functions a command calls), and reading them keeps
``gdi --help`` light: importing ``gdi.cli`` loads neither torch nor matplotlib."""

import re
import subprocess
import sys

import pytest

from gdi.backends import BACKENDS
from gdi.cli import main, merged_option


def test_importing_the_command_line_loads_neither_torch_nor_matplotlib():
    code = ("import sys, gdi.cli; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'matplotlib'}))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"


def test_train_offers_every_registered_backend(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--help"])
    assert exit_info.value.code == 0
    assert "--backend {None," + ",".join(BACKENDS) + "}" in capsys.readouterr().out


def test_config_and_scales_say_what_a_named_scale_changes(capsys):
    main(["config", "--preset", "gdi-i3", "--env", "ale:Breakout", "--scale", "ale-cpu"])
    out = " ".join(capsys.readouterr().out.split())  # rich folds long lines
    assert "scale ale-cpu" in out and "Scale ale-cpu changes from ale: torso 'impala_deep' → " \
        "'nature'" in out and "batch_size 64 → 16" in out
    main(["scales"])
    out = " ".join(capsys.readouterr().out.split())
    assert "ale-cpu" in out and "the paper's Atari table" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["config", "--env", "minatar:breakout", "--scale", "ale-cpu"])
    assert exit_info.value.code == 2
    assert "scale 'ale-cpu' is for ale: environments" in capsys.readouterr().err


def test_set_given_twice_keeps_every_value(capsys):
    main(["config", "--env", "minatar:breakout", "--set", "discount=0.95",
          "--set", "batch_size=8", "entropy_scale=0.01", "--set=seed=3"])
    out = " ".join(capsys.readouterr().out.split())
    for field, value in (("discount", "0.95"), ("batch_size", "8"), ("entropy_scale", "0.01"),
                         ("seed", "3")):
        assert re.search(rf"│ {field} +│ {re.escape(value)} +│", out), field


@pytest.mark.parametrize("args, merged", [
    (["train", "--set", "a=1", "--frames", "5", "--set", "b=2"],
     ["train", "--set", "a=1", "b=2", "--frames", "5"]),
    (["train", "--set=a=1", "--set", "b=2", "c=3"], ["train", "--set", "a=1", "b=2", "c=3"]),
    (["train", "--frames", "5"], ["train", "--frames", "5"]),
    (["train", "--set", "a=-1", "--setup"], ["train", "--set", "a=-1", "--setup"]),
])
def test_set_groups_are_merged_into_the_first(args, merged):
    assert merged_option(args) == merged


def test_config_as_json_is_what_config_json_holds(capsys):
    import json

    from gdi.config import Config, apply_overrides
    from gdi.presets import resolve_config

    main(["config", "--env", "ale:Breakout", "--scale", "ale-cpu", "--json", "--set", "seed=4"])
    printed = json.loads(capsys.readouterr().out)
    expected = apply_overrides(resolve_config("gdi-i3", "ale:Breakout", "ale-cpu"), ["seed=4"])
    assert Config.from_dict(printed) == expected and printed["seed"] == 4


def test_the_help_says_how_to_get_the_version_and_shell_completion(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "gdi --version" in out and "--tyro-write-completion bash|zsh|tcsh PATH" in out
    main(["--version"])
    assert capsys.readouterr().out.startswith("gdi ")
    with pytest.raises(SystemExit) as written:  # the command the help gives works
        main(["--tyro-write-completion", "bash", str(tmp_path / "gdi.bash")])
    assert written.value.code in (0, None)
    assert "completion" in (tmp_path / "gdi.bash").read_text().lower()


def test_a_reader_that_leaves_early_ends_the_command_without_a_trace(tmp_path):
    # `gdi config --json | head -1`: head exits after one line and gdi writes into a closed
    # pipe. Here the reader leaves before gdi writes anything (gdi is still importing), so the
    # write always fails; gdi must end as a command killed by SIGPIPE would (141), quietly.
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "gdi.cli", "config", "--env",
                             "minatar:breakout", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert err == ""
