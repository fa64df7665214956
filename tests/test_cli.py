"""The command line's options read their choices and defaults from where they are stated once
(the registries, ``Config``, the library functions a command calls), and reading them keeps
``gdi --help`` light: importing ``gdi.cli`` loads neither torch nor matplotlib."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gdi.backend_registry import BACKENDS
from gdi.cli import main
from gdi.cli.options import merged_option
from tests.imports import loaded_after


def test_importing_the_command_line_loads_neither_torch_nor_matplotlib():
    assert loaded_after("import gdi.cli", {"torch", "matplotlib"}) == []
    assert loaded_after("import torch", {"torch", "matplotlib"}) == ["torch"]  # the check sees


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
        # A row per field, or (narrower than the table) a block per field.
        assert re.search(rf"│ {field} +│ (value +│ )?{re.escape(value)} +│", out), field


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


# --- issue 71, item 4: defaults and output ---------------------------------------------------


def test_a_config_field_given_as_an_option_is_answered_with_its_set(capsys):
    from tests.runtime.helpers import one_line_error

    err = one_line_error(["train", "--env", "ale:Breakout", "--protocol", "machado"], capsys)
    assert err == ("gdi: error: gdi train has no option --protocol; did you mean --set "
                   "protocol=machado? (a config field: `gdi config` lists them)")
    assert "--set protocol=machado?" in one_line_error(
        ["config", "--protocol=machado"], capsys)  # the value typed after = as well
    # A field by a name it only starts with, the value a placeholder when none was typed.
    assert "did you mean --set wandb_project=VALUE?" in one_line_error(
        ["train", "--wandb"], capsys)
    assert "did you mean --set env_overrides.repeat_action_probability=0.25?" in one_line_error(
        ["train", "--env-overrides.repeat-action-probability", "0.25"], capsys)


@pytest.mark.parametrize("argv, answer", [
    (["train", "--evn", "ale:Breakout"], "gdi train has no option --evn; did you mean --env?"),
    (["train", "--frame", "100"], "did you mean --frames?"),  # the option, not --set frames
    (["config", "--learnign", "paper"], "did you mean --learning?"),
    (["benchmark", "run", "g.toml", "--paralel", "2"],
     "gdi benchmark run has no option --paralel; did you mean --parallel?"),
    (["train", "--lstm-unit", "64"], "did you mean --set lstm_units=64?"),
    (["evaluate", "RUN", "--frames", "3"],  # no option near it, and no --set: the options
     "gdi evaluate has no option --frames; allowed: --allow-foreign-checkpoint, --checkpoint, "),
])
def test_an_unknown_option_is_answered_with_the_nearest(argv, answer, capsys):
    from tests.runtime.helpers import one_line_error

    assert answer in one_line_error(argv, capsys)


def test_set_and_every_real_option_still_reach_the_command(capsys):
    import json

    main(["config", "--env", "ale:Breakout", "--json", "--set", "protocol=machado"])
    assert json.loads(capsys.readouterr().out)["protocol"] == "machado"


def test_the_options_checked_are_those_each_command_takes():
    """Every option a command's --help shows is one ``unknown_option`` lets through."""
    from gdi.cli.dispatch import _commands, unknown_option
    from gdi.cli.grids import BENCHMARK_COMMANDS
    from gdi.cli.options import command_options
    from gdi.cli.reports import ANALYSES

    commands = {name: f for name, f in _commands().items()
                if name not in ("analyze", "benchmark")}
    commands |= {f"analyze {n}": f for n, f in ANALYSES.items()}
    commands |= {f"benchmark {n}": f for n, f in BENCHMARK_COMMANDS.items()}
    for name, function in commands.items():
        shown = subprocess.run([sys.executable, "-m", "gdi.cli", *name.split(), "--help"],
                               capture_output=True, text=True, env={"COLUMNS": "200"}).stdout
        starts = re.findall(r"^│ ((?:-h, )?--[a-z][a-z-]*(?:, --[a-z][a-z-]*)*)", shown, re.M)
        options = {o for start in starts for o in re.findall(r"--[a-z][a-z-]*", start)}
        assert options and options <= command_options(function), (name, options)
        assert unknown_option([*name.split(), *sorted(options)]) is None, name


def whole_words(text: str, cells: list[str], width: int = 80) -> list[str]:
    """The words of ``cells`` that ``text`` does not show whole on one line, and any line wider
    than ``width`` terminal cells (a combining mark, ρ̄'s bar, takes none)."""
    from rich.cells import cell_len

    lines = text.splitlines()
    broken = [word for cell in cells for word in cell.split()
              if not any(word in line for line in lines)]
    return broken + [line for line in lines if cell_len(line) > width]


def test_presets_and_scales_fit_80_columns_without_breaking_a_word(capsys, monkeypatch):
    from gdi.presets import SCALE_KINDS, SCALE_NOTES, learning_table, preset_table

    monkeypatch.setenv("COLUMNS", "80")
    main(["presets"])
    cells = [text for rows in (preset_table(), learning_table()) for row in rows
             for text in (*row, *row.values())]
    assert whole_words(capsys.readouterr().out, cells) == []
    main(["scales"])
    assert whole_words(capsys.readouterr().out, [*SCALE_KINDS, *SCALE_NOTES.values(),
                                                 "checkpoint_every_frames=250000,"]) == []
    monkeypatch.setenv("COLUMNS", "240")  # a wide terminal gets the paper's table, a row each
    main(["presets"])
    assert re.search(r"│ gdi-i3 +│ GDI-I³ +│", capsys.readouterr().out)


@pytest.mark.parametrize("env, scale", [("ale:Breakout", "ale-cpu"), ("gym:CartPole-v1", None)])
def test_config_fits_80_columns_without_breaking_a_word(env, scale, capsys, monkeypatch):
    from gdi.config import field_docs
    from gdi.presets import LEARNING_NOTES, SCALE_NOTES, resolve_config

    monkeypatch.setenv("COLUMNS", "80")
    main(["config", "--env", env, *(["--scale", scale] if scale else [])])
    resolved = resolve_config("gdi-i3", env, scale)
    docs = field_docs()
    cells = [text for name, value in resolved.to_dict().items()
             for text in (name, repr(value), docs.get(name, ""))]
    out = capsys.readouterr().out
    assert whole_words(out, [*cells, SCALE_NOTES[resolved.scale],
                             LEARNING_NOTES[resolved.learning]]) == []
    assert "docs/learning-per-frame.md)." in out  # a word wider than a narrow column's


def test_benchmark_status_fits_80_columns_and_says_where_the_folders_are(
        tmp_path, capsys, monkeypatch):
    from tests.test_benchmark import write_grid

    grid = write_grid(tmp_path / "a" / "folder" / "deep" / "enough" / "to" / "be" / "long", 6000)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    main(["benchmark", "status", str(grid.relative_to(tmp_path))])
    out = capsys.readouterr().out
    assert whole_words(out, ["gym:CartPole-v1", "gym:Acrobot-v1", "new"]) == []
    folders = grid.parent.relative_to(tmp_path) / "runs" / "tiny" / "gdi"
    assert f"gdi: run folders in {folders};" in out and "4 new" in out
    monkeypatch.setenv("COLUMNS", "200")  # wide enough: each run's folder on its row
    main(["benchmark", "status", str(grid.relative_to(tmp_path))])
    assert f"│ {folders}/gym-CartPole-v1-0 " in capsys.readouterr().out


def test_the_papers_ale_scale_on_a_cpu_says_so_and_names_ale_cpu(capsys, monkeypatch):
    import torch

    import gdi.runtime.wiring
    from gdi.cli.train import paper_scale_note
    from gdi.presets import resolve_config

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    note = paper_scale_note(resolve_config("gdi-i3", "ale:Breakout"))
    assert note == ("note: ale:Breakout at the paper's scale (5 actors × 32 environments, "
                    "impala_deep torso, batch 64) learns on this machine's CPU (no CUDA): at "
                    "the ~80 frames/s of 2 cores, 200,000,000 frames take about 29 days; "
                    "--scale ale-cpu runs the same algorithm sized for a CPU")
    assert paper_scale_note(resolve_config("gdi-i3", "ale:Breakout", "ale-cpu")) is None
    assert paper_scale_note(resolve_config("gdi-i3", "minatar:breakout")) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU the learner leaves
    assert paper_scale_note(resolve_config("gdi-i3", "ale:Breakout")).endswith(
        "learns on the CPU (learner_device=cpu): at the ~80 frames/s of 2 cores, 200,000,000 "
        "frames take about 29 days; --set learner_device=cuda learns on this machine's GPU "
        "(docs/scaling.md), --scale ale-cpu sizes it for a CPU")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # Config checks the device
    on_gpu = resolve_config("gdi-i3", "ale:Breakout").replace(learner_device="cuda")
    assert paper_scale_note(on_gpu) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    # `gdi train` says it at start, before any part is built (the training stubbed out: as
    # if stopped during start-up).
    monkeypatch.setattr(gdi.runtime.wiring, "train", lambda *a, **k: None)
    with pytest.raises(SystemExit):
        main(["train", "--env", "ale:Breakout", "--no-report"])
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("note: ale:Breakout at the paper's scale")


def test_a_resume_names_its_checkpoint_and_frames(tmp_path, capsys):
    from tests.runtime.helpers import TINY

    run = tmp_path / "run"
    main(["train", "--env", "gym:CartPole-v1", "--frames", "1600", "--stop-at", "800",
          "--backend", "inline", "--run-dir", str(run), "--no-report", "--set", *TINY])
    capsys.readouterr()
    main(["train", "--resume", str(run), "--no-report"])
    said = re.search(rf"^start-up: resuming {re.escape(str(run))} from checkpoints/ckpt_0*(\d+)"
                     r"\.safetensors at ([\d,]+) frames \(budget 1,600\)$",
                     capsys.readouterr().err, re.M)
    assert said and int(said[1]) == int(said[2].replace(",", "")) >= 800


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from gdi.export import export_agent
    from gdi.runtime.wiring import train
    from tests.runtime.helpers import tiny_config

    folder = tmp_path_factory.mktemp("bundle")
    run = train(tiny_config(frames=800), folder / "run", show_progress=False,
                tensorboard=False).run_dir
    return export_agent(run, folder / "breakout-bundle", video=False).path


def bundle_files(bundle) -> dict:
    """Every file of ``bundle``, by its path in it, with its bytes."""
    return {p.relative_to(bundle): p.read_bytes() for p in bundle.rglob("*") if p.is_file()}


def test_evaluating_a_bundle_leaves_it_as_exported(bundle, tmp_path, capsys, monkeypatch):
    from tests.runtime.helpers import one_line_error

    def files() -> dict:
        return bundle_files(bundle)

    before = files()
    monkeypatch.chdir(tmp_path)
    main(["evaluate", str(bundle), "--episodes", "2", "--envs", "2"])
    out = capsys.readouterr().out.splitlines()
    assert files() == before
    written = tmp_path / "evaluations" / "breakout-bundle" / "eval" / "ckpt_000000000808.json"
    assert out[-2:] == [f"{bundle} is a bundle of `gdi export`, kept as exported: its "
                        "evaluations go to evaluations/breakout-bundle (--out)",
                        out[-1]] and out[-1].endswith("-> evaluations/breakout-bundle/eval/"
                                                      "ckpt_000000000808.json")
    assert written.is_file()
    # The folder reads as a run's (its config.json beside the evaluations); a second policy
    # goes beside the first, and --out chooses another folder.
    main(["evaluate", str(bundle), "--episodes", "2", "--envs", "2", "--policy", "greedy"])
    main(["evaluate", str(bundle), "--episodes", "2", "--envs", "2", "--out", "elsewhere"])
    assert (written.parent.parent / "eval_greedy" / written.name).is_file()
    assert (tmp_path / "elsewhere" / "eval" / written.name).is_file()
    assert files() == before
    capsys.readouterr()
    # Refused in one line: --out into the bundle, into a run, or with a run (whose
    # evaluations stay in it); a refused evaluation leaves no folder behind.
    assert "is a run folder or a bundle" in one_line_error(
        ["evaluate", str(bundle), "--out", str(bundle)], capsys)
    assert "a run's evaluations are filed in the run" in one_line_error(
        ["evaluate", str(bundle.parent / "run"), "--out", "x"], capsys)
    one_line_error(["evaluate", str(bundle), "--policy", "fixed", "--out", "new/deep"], capsys)
    assert not (tmp_path / "new").exists() and files() == before


def test_a_bundle_evaluated_from_python_is_left_as_exported(bundle, tmp_path, monkeypatch):
    """``gdi.agent.evaluate_checkpoint`` files a bundle's evaluation where ``gdi evaluate``
    does (evaluations/<bundle name>, or ``out``), never in the bundle; ``out`` with a run is
    refused in one line."""
    from gdi.agent import evaluate_checkpoint

    before = bundle_files(bundle)
    monkeypatch.chdir(tmp_path)
    path, results = evaluate_checkpoint(bundle, episodes=2, envs=2)
    assert path == Path("evaluations/breakout-bundle/eval/ckpt_000000000808.json")
    assert path.is_file() and len(results) == 2 and bundle_files(bundle) == before
    assert (path.parent.parent / "config.json").read_bytes() == before[Path("config.json")]
    elsewhere, _ = evaluate_checkpoint(bundle, episodes=2, envs=2, policy="greedy",
                                       out=tmp_path / "mine")
    assert elsewhere == tmp_path / "mine" / "eval_greedy" / "ckpt_000000000808.json"
    assert elsewhere.is_file() and bundle_files(bundle) == before
    with pytest.raises(ValueError) as refused:
        evaluate_checkpoint(bundle.parent / "run", episodes=2, out=tmp_path / "x")
    assert str(refused.value) == (
        f"out={str(tmp_path / 'x')!r} (--out): a run's evaluations are filed in the run "
        f"({bundle.parent / 'run'}/eval, which its reports read); allowed: out only with a "
        "bundle of gdi export")
    assert not (tmp_path / "x").exists()


def test_a_bundles_report_goes_outside_it(bundle, tmp_path, capsys, monkeypatch):
    from tests.runtime.helpers import one_line_error

    before = bundle_files(bundle)
    monkeypatch.chdir(tmp_path)
    main(["report", str(bundle)])
    assert capsys.readouterr().out.startswith("report: reports/breakout-bundle/report.md (")
    assert (tmp_path / "reports" / "breakout-bundle" / "report.md").is_file()
    assert bundle_files(bundle) == before and not (bundle / "report").exists()
    err = one_line_error(["report", str(bundle), "--out", str(bundle / "report")], capsys)
    assert err == (f"gdi: error: out {bundle / 'report'} lies inside {bundle}, a bundle of gdi "
                   "export, which is kept as exported; allowed: a folder outside it (default "
                   "reports/breakout-bundle)")
    assert bundle_files(bundle) == before and not (bundle / "report").exists()


def test_an_options_help_is_one_paragraph_wrapped_to_the_terminal_not_to_the_source():
    from gdi.cli.options import one_line_args

    doc = ("Do it.\n\n    Args:\n        a: First line\n            goes on\n"
           "            (and on).\n        b: Short.\n\n    More text\n        indented.\n")
    assert one_line_args(doc) == ("Do it.\n\n    Args:\n        a: First line goes on (and on).\n"
                                  "        b: Short.\n\n    More text\n        indented.\n")
    assert one_line_args(None) is None and one_line_args("One line.") == "One line."
    # As a user sees it, on a wide terminal: each option's help on one line, wherever the
    # source broke it (train's --frames, and a nested command's, benchmark run's --peer).
    for command, words in ((["train"], "Frame budget, e.g. 1000000 or 1e6 (default: the "
                            "scale's budget, which `gdi config --env ENV` prints)."),
                           (["benchmark", "run"], "(run in the grid file's folder; on this "
                            "machine only): environment by environment and seed by seed")):
        shown = subprocess.run([sys.executable, "-m", "gdi.cli", *command, "--help"],
                               capture_output=True, text=True, env={"COLUMNS": "250"}).stdout
        assert words in shown, (command, shown)
