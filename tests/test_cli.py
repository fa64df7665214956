"""The command line's options read their choices and defaults from where they are stated once
(the registries, ``Config``, the library functions a command calls), and reading them keeps
``gdi --help`` light: importing ``gdi.cli`` loads neither torch nor matplotlib."""

import subprocess
import sys

import pytest

from gdi.backends import BACKENDS
from gdi.cli import main


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
