"""`gdi benchmark`: the grid file, the run folders as the grid's state, the queue through a
kill and a move to another folder, and the report's numbers against independent
computations from the runs' own episode records."""

import csv
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
import torch

from gdi.benchmark.curves import AUC_POINTS, RunCurve, normalized_auc, normalizer
from gdi.benchmark.grid import load_grid, parse_grid, rom_id
from gdi.benchmark.records import CARRIED
from gdi.benchmark.state import CARRIED as CARRIED_STATE
from gdi.benchmark.state import DONE, NEW, RESUMABLE, UNSTARTED, cell_state, peer_states
from gdi.cli import main
from gdi.run_files import list_checkpoints
from tests.runtime.helpers import TINY, one_line_error
from tests.tolerance import assert_close

GRID = """\
frames = {frames}
seeds = [0, 1]
envs = ["gym:CartPole-v1", "gym:Acrobot-v1"]
parallel = 2

[settings.gdi]
preset = "gdi-i3"
set = {overrides}
records = "results/{{setting}}/{{env}}-{{seed}}"

[peers.peer]
folder = "peer/{{env}}-{{seed}}"
"""
#: The runtime tests' tiny network and batches, inline, a checkpoint every 1,000 frames.
OVERRIDES = [*TINY, "backend=inline", "checkpoint_every_frames=1000", "eval_every=2000"]


def write_grid(folder: Path, frames: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny.toml"
    path.write_text(GRID.format(frames=frames, overrides=json.dumps(OVERRIDES)))
    return path


def naive_score(frames, returns, at, window):
    """The mean of the last ``window`` episode returns that ended by ``at`` frames."""
    done = [r for f, r in sorted(zip(frames, returns, strict=True), key=lambda p: p[0])
            if f <= at]
    return sum(done[-window:]) / len(done[-window:])


# -- the grid file --------------------------------------------------------------------------


def test_a_grid_lists_every_run_with_its_own_folder(tmp_path):
    grid = load_grid(write_grid(tmp_path, 3000))
    cells = grid.cells()
    assert [(c.env, c.seed) for c in cells] == [
        ("gym:CartPole-v1", 0), ("gym:CartPole-v1", 1), ("gym:Acrobot-v1", 0),
        ("gym:Acrobot-v1", 1)]
    assert cells[0].folder == tmp_path / "runs" / "tiny" / "gdi" / "gym-CartPole-v1-0"
    assert grid.target == 3000 and grid.parallel == 2
    assert grid.peer_folder(grid.peers[0], "gym:Acrobot-v1", 1) == tmp_path / "peer" / \
        "gym-Acrobot-v1-1"


def test_a_run_of_part_of_the_grid_runs_those_cells_alone(tmp_path, capsys):
    path = write_grid(tmp_path, 1000)
    grid = load_grid(path)
    part = grid.select(envs=["gym:Acrobot-v1"], seeds=[1])
    assert [(c.setting.name, c.env, c.seed) for c in part.cells()] == [
        ("gdi", "gym:Acrobot-v1", 1)]
    assert part.select() == part and grid.select(settings=["gdi"]).cells() == grid.cells()
    capsys.readouterr()
    main(["benchmark", "run", str(path), "--env", "gym:Acrobot-v1", "--seed", "1"])
    assert "1 of 1 chosen runs done" in capsys.readouterr().out
    states = {(c.env, c.seed): cell_state(c, grid).state for c in grid.cells()}
    assert states == {("gym:CartPole-v1", 0): NEW, ("gym:CartPole-v1", 1): NEW,
                      ("gym:Acrobot-v1", 0): NEW, ("gym:Acrobot-v1", 1): DONE}
    for option, value, allowed in (("--setting", "gdi-scaled", "allowed: gdi"),
                                   ("--env", "ale:Pong", "allowed: gym:CartPole-v1, "
                                                         "gym:Acrobot-v1"),
                                   ("--seed", "7", "allowed: 0, 1")):
        said = one_line_error(["benchmark", "run", str(path), option, value], capsys)
        assert f"{option} {value}: not in the grid tiny.toml; {allowed}" in said


def test_rom_ids_are_ale_pys():
    assert rom_id("BattleZone") == "battle_zone"
    assert rom_id("Qbert") == "qbert"
    assert rom_id("MsPacman") == "ms_pacman"


@pytest.mark.parametrize(("text", "said"), [
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\nbudget = 3\n"
     "[settings.a]\npreset = 'gdi-i3'\n", "unknown key(s) budget"),
    ("frames = 10\nseeds = [0, 0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'x'\n",
     "repeats a seed"),
    ("frames = 10\nstop_at = 20\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n"
     "[settings.a]\npreset = 'gdi-i3'\n", "stop_at = 20 is past frames = 10"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\nscale = 'x'\n",
     "needs preset"),
    ("frames = 10\nseeds = [0, 1]\nenvs = ['gym:CartPole-v1']\n[settings.a]\n"
     "preset = 'gdi-i3'\nfolder = 'runs/{setting}'\n", "two runs share a folder"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'nope'\n",
     "nope"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "set = ['lstm_unit=3']\n", "lstm_unit"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "folder = 'runs/{nope}-{seed}'\n", "does not fill"),
    ("frames = 1.5\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n",
     "frames = 1.5"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "[report]\nlevels = { 'gym:Acrobot-v1' = [1] }\n", "not one of the grid's envs"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "carry = true\n", "carry = true needs records"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "records = 'r/{seed}'\ncarry = 'yes'\n", "carry = 'yes'; allowed: true or false"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "closed = ' '\n", "closed = \"\"; allowed: the reason it is closed"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "[peers.p]\nfolder = 'p/{seed}'\ncommand = ['run', '--in={where}']\n",
     "'--in={where}' has the placeholder {where}; allowed: {spec}, {env}"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[settings.a]\npreset = 'gdi-i3'\n"
     "[peers.p]\nfolder = 'p/{seed}'\ncommand = 'run --seed {seed}'\n",
     "allowed: a list of non-empty strings"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[defaults]\nclosed = 'old'\n"
     "[settings.a]\npreset = 'gdi-i3'\n", "[defaults]: unknown key(s) closed"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\ndefaults = 3\n"
     "[settings.a]\npreset = 'gdi-i3'\n", "defaults must be a table"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n[defaults]\ncarry = 'yes'\n"
     "records = 'r/{seed}'\n[settings.a]\npreset = 'gdi-i3'\n",
     "[settings.a] (with [defaults]) carry = 'yes'; allowed: true or false"),
    ("frames = 10\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n", "missing settings"),
    ("frames = [", "is not valid TOML"),
])
def test_a_bad_grid_is_one_line_naming_what_is_wrong(tmp_path, capsys, text, said):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert said in one_line_error(["benchmark", "run", str(path)], capsys)


def test_a_settings_label_names_the_scale_and_learning_its_runs_ran_with(tmp_path):
    """Each setting is named by the scale and learning its runs' config.json records, else by
    what gdi train resolves for each environment; one that differs between environments is
    listed with each environment's."""
    from gdi.benchmark.report import write_grid_report
    from gdi.presets import resolve_config

    path = tmp_path / "mixed.toml"
    path.write_text(
        "frames = 1000\nseeds = [0]\nenvs = ['gym:CartPole-v1', 'minatar:breakout', "
        "'ale:Breakout']\n[settings.plain]\npreset = 'gdi-i3'\n"
        "[settings.head]\npreset = 'gdi-i3'\nlearning = 'policy-head'\nset = ['seq_len=8']\n"
        "records = 'results/{setting}/{env}-{seed}'\n")
    grid = load_grid(path)
    lines = write_grid_report(grid).lines
    assert "- **plain (gdi-i3, scale gym on gym:CartPole-v1, minatar on minatar:breakout, ale on "\
        "ale:Breakout, learning paper)**" in lines
    assert "- **head (gdi-i3, scale gym on gym:CartPole-v1, minatar on minatar:breakout, ale on "\
        "ale:Breakout, learning policy-head, seq_len=8)**" in lines
    # A run's own config.json names it (here its kept records: a run made at the ale-cpu
    # scale, whose default learning is policy-head-ale-scaled), wherever the grid is silent.
    records = next(c.records for c in grid.cells() if c.setting.name == "head"
                   and c.env == "ale:Breakout")
    records.mkdir(parents=True)
    (records / "config.json").write_text(json.dumps(
        resolve_config("gdi-i3", "ale:Breakout", "ale-cpu", learning="policy-head").to_dict()))
    assert "- **head (gdi-i3, scale gym on gym:CartPole-v1, minatar on minatar:breakout, "\
        "ale-cpu on ale:Breakout, learning policy-head, seq_len=8)**" in \
        write_grid_report(grid).lines
    # One scale for every environment: one name.
    atari = tmp_path / "atari.toml"
    atari.write_text("frames = 1000\nseeds = [0]\nenvs = ['ale:Breakout', 'ale:Boxing']\n"
                     "[settings.cpu]\npreset = 'gdi-i3'\nscale = 'ale-cpu'\n")
    assert "- **cpu (gdi-i3, scale ale-cpu, learning policy-head-ale-scaled)**" in \
        write_grid_report(load_grid(atari)).lines
    # A scale that is not for an environment's kind is one line naming it and what is allowed.
    atari.write_text("frames = 1000\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n"
                     "[settings.cpu]\npreset = 'gdi-i3'\nscale = 'ale-cpu'\n")
    with pytest.raises(ValueError, match="scale 'ale-cpu' is for ale: environments, not "
                                         "'gym:CartPole-v1'; allowed for gym: gym"):
        write_grid_report(load_grid(atari))


def test_a_closed_setting_is_reported_as_it_ran_and_never_run(tmp_path, capsys):
    """A setting marked closed keeps its place in status and the report, with its reason, but
    the queue starts none of its runs, and naming it is an error that says why."""
    path = tmp_path / "g.toml"
    path.write_text("frames = 1000\nseeds = [0]\nenvs = ['gym:CartPole-v1']\n"
                    "[settings.old]\npreset = 'gdi-i3'\nclosed = 'superseded by new'\n"
                    "[settings.new]\npreset = 'gdi-i3'\n")
    grid = load_grid(path)
    assert [c.setting.name for c in grid.open().cells()] == ["new"]
    err = one_line_error(["benchmark", "run", str(path), "--setting", "old"], capsys)
    assert "--setting old: closed in g.toml (superseded by new); its runs are reported, not " \
        "run. Allowed: new" in err
    path.write_text(path.read_text().replace("[settings.new]\npreset = 'gdi-i3'\n", ""))
    main(["benchmark", "run", str(path)])
    said = capsys.readouterr().out
    assert "old: closed (superseded by new): its runs are reported, not run" in said
    assert "0 of 0 runs done" in said and not (tmp_path / "runs").exists()
    main(["benchmark", "status", str(path)])
    assert "1 new (closed)" in capsys.readouterr().out
    from gdi.benchmark.report import write_grid_report

    lines = write_grid_report(load_grid(path)).lines
    # Its run that never started is not listed as one to wait for: it never will start.
    assert not any(line.startswith("- old on") for line in lines)
    assert any(line.endswith("(closed: superseded by new)") for line in lines)
    from gdi.benchmark.report import System, legend_label

    assert legend_label(System("old", "old (gdi-i3)", False, "superseded")) == \
        "old (gdi-i3) (closed)"
    assert legend_label(System("new", "new (gdi-i3)", False)) == "new (gdi-i3)"


def test_a_closed_setting_does_not_set_the_levels_while_an_open_one_has_run():
    """Levels are fractions (0.5, 0.75) of the way from the runs' first returns to the lower
    system's final score; a superseded setting's low score would pull them into random
    play's noise, so it sets them only when no open system has run the environment."""
    from types import SimpleNamespace

    from gdi.benchmark.report import GameRuns, System, levels_of

    grid = SimpleNamespace(levels={}, window=2)
    norm = normalizer("gym:CartPole-v1")  # raw: the start is the median first return
    old, new, peer = System("old", "old", False, "superseded"), System("new", "new", False), \
        System("P", "P", True)
    runs = {("old", "e"): GameRuns([curve([100, 200], [0, 2])], [], []),   # final mean 1
            ("new", "e"): GameRuns([curve([100, 200], [0, 20])], [], []),  # final mean 10
            ("P", "e"): GameRuns([curve([100, 200], [4, 12])], [], [])}    # final mean 8
    # The open systems' first returns 0 and 4: start 2; their lower final 8: levels 5 and 6.5.
    assert levels_of(grid, "e", runs, [old, new, peer], 200, norm) == (5.0, 6.5)
    # With no open system's runs the closed one's own finals set them: 0 + (0.5, 0.75) · 1.
    runs[("new", "e")] = runs[("P", "e")] = GameRuns([], [], [0])
    assert levels_of(grid, "e", runs, [old, new, peer], 200, norm) == (0.5, 0.75)
    grid.levels = {"e": (3.0,)}  # the grid's own levels win
    assert levels_of(grid, "e", runs, [old, new, peer], 200, norm) == (3.0,)


#: A peer that trains nothing: it writes a curve reaching the frames it is given (half of
#: them with PEER_SHORT set), and notes each call.
FAKE_PEER = """\
import os, signal, sys, time
folder, frames, spec, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
os.makedirs(folder, exist_ok=True)
end = frames // 2 if os.environ.get("PEER_SHORT") else frames
if os.environ.get("PEER_WAIT"):  # train until a SIGTERM, then keep half the frames
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    open(os.path.join(folder, "started"), "w").close()
    while not stopped:
        time.sleep(0.05)
    open(os.path.join(folder, "stopped by SIGTERM"), "w").close()
    end = frames // 2
with open(os.path.join(folder, "calls.txt"), "a") as f:
    f.write(f"{spec} {seed} {os.getcwd()}\\n")
with open(os.path.join(folder, "curve.csv"), "w") as f:
    f.write(f"wall_s,frames,return\\n1.0,{end},1.0\\n")
with open(os.path.join(folder, "curve_episodes.csv"), "w") as f:
    f.write(f"wall_s,frames,return,length_frames\\n1.0,{end},1.0,10\\n")
"""


def test_peer_runs_are_made_with_the_grids_command_until_their_curve_reaches_the_target(
        tmp_path, capsys, monkeypatch):
    """`--peer NAME` runs the peer's runs that are not done with its command, in the grid
    file's folder, placeholders filled per run; a run is done once its curve.csv reaches the
    target, whatever the command's exit code."""
    (tmp_path / "fake_peer.py").write_text(FAKE_PEER)
    path = tmp_path / "g.toml"
    grid_text = ("frames = {frames}\nseeds = [0, 1]\nenvs = ['gym:CartPole-v1']\n"
                 "[settings.old]\npreset = 'gdi-i3'\nclosed = 'only the peer runs here'\n"
                 "[peers.P]\nfolder = 'peer/{{env}}-{{seed}}'\ncommand = ['" +
                 sys.executable + "', 'fake_peer.py', '{{folder}}', '{{frames}}', '{{spec}}', "
                 "'{{seed}}']\n[peers.hand]\nfolder = 'hand/{{seed}}'\n")
    path.write_text(grid_text.format(frames=1000))
    main(["benchmark", "run", str(path), "--peer", "P"])
    said = capsys.readouterr().out
    assert "P/gym:CartPole-v1/seed 0: starting with its command" in said
    assert "P/gym:CartPole-v1/seed 1: done (1,000 frames)" in said
    assert "2 of 2 runs done" in said
    for seed in (0, 1):
        calls = (tmp_path / "peer" / f"gym-CartPole-v1-{seed}" / "calls.txt").read_text()
        assert calls == f"gym:CartPole-v1 {seed} {tmp_path}\n"  # once, in the grid's folder
        assert (tmp_path / "runs" / "g" / "logs" / "P" / f"gym-CartPole-v1-{seed}.log").is_file()
    # Done runs are skipped; --seed picks among the peer's runs as among the settings', a
    # seed of the peer's own (not the grid's) too.
    main(["benchmark", "run", str(path), "--peer", "P", "--seed", "1"])
    assert "1 of 1 chosen runs done" in capsys.readouterr().out
    own = tmp_path / "own.toml"
    own.write_text(grid_text.format(frames=1000).replace(
        "[peers.hand]", "seeds = [0, 1, 7]\n[peers.hand]"))
    main(["benchmark", "run", str(own), "--peer", "P", "--seed", "7"])
    assert "1 of 1 chosen runs done" in capsys.readouterr().out
    assert (tmp_path / "peer" / "gym-CartPole-v1-7" / "calls.txt").is_file()
    assert (tmp_path / "peer" / "gym-CartPole-v1-1" / "calls.txt").read_text().count("\n") == 1
    # A run whose log another queue holds (its command running there) is left to it.
    path.write_text(grid_text.format(frames=2000))
    import fcntl

    with (tmp_path / "runs" / "g" / "logs" / "P" / "gym-CartPole-v1-0.log").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        main(["benchmark", "run", str(path), "--peer", "P", "--seed", "0"])
        said = capsys.readouterr().out
        assert "P/gym:CartPole-v1/seed 0: already running (another process holds its log" in \
            said and "1 running in other processes" in said
        assert [s.state for s in peer_states(load_grid(path)) if s.peer == "P"] == \
            ["running", "partial"]
    # A run whose command ends short of the target failed, whatever its exit code (0 here).
    monkeypatch.setenv("PEER_SHORT", "1")
    with pytest.raises(SystemExit) as stop:
        main(["benchmark", "run", str(path), "--peer", "P", "--seed", "0"])
    assert stop.value.code == 1
    assert "P/gym:CartPole-v1/seed 0: resuming at 1,000 frames with its command" in \
        (said := capsys.readouterr().out)
    assert "P/gym:CartPole-v1/seed 0: ended at 1,000 of 2,000 frames (exit 0)" in said
    # A stop of the queue reaches the peer's command as SIGTERM (the queue's own here is a
    # SIGHUP), and the command keeps what it has: stopped.
    monkeypatch.delenv("PEER_SHORT")
    queue = subprocess.Popen([sys.executable, "-m", "gdi", "benchmark", "run", str(path),
                              "--peer", "P", "--seed", "1"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, env={**os.environ, "PEER_WAIT": "1"})
    started = tmp_path / "peer" / "gym-CartPole-v1-1" / "started"
    deadline = time.monotonic() + 60
    while not started.exists():
        assert queue.poll() is None and time.monotonic() < deadline, queue.stdout.read().decode()
        time.sleep(0.1)
    queue.send_signal(signal.SIGHUP)
    said = queue.communicate(timeout=60)[0].decode()
    assert queue.returncode == 129, said
    assert (started.parent / "stopped by SIGTERM").is_file()
    assert "P/gym:CartPole-v1/seed 1: stopped at 1,000 frames (exit 0); its command resumes " \
        "it" in said and "continue with gdi benchmark run" in said and "--peer P" in said
    # Without --peer no peer runs; a peer without a command, or one on Ray, is refused.
    main(["benchmark", "run", str(path)])
    assert "0 of 0 runs done" in capsys.readouterr().out
    assert "--peer hand: [peers.hand] in g.toml has no command, so its runs are made by " \
        "hand; allowed: P" in one_line_error(["benchmark", "run", str(path), "--peer", "hand"],
                                             capsys)
    assert "--peer Q: not a peer of the grid g.toml; allowed: P" in \
        one_line_error(["benchmark", "run", str(path), "--peer", "Q"], capsys)
    assert "runs on this machine only" in one_line_error(
        ["benchmark", "run", str(path), "--peer", "P", "--ray-address", "local"], capsys)
    # A command whose program is not there is said before anything runs.
    path.write_text(grid_text.format(frames=2000).replace(sys.executable, "venv/bin/python"))
    assert f"--peer P: its command's program 'venv/bin/python' is not an executable (looked " \
        f"up from {tmp_path})" in one_line_error(["benchmark", "run", str(path), "--peer", "P"],
                                                 capsys)


def test_peers_only_makes_the_peers_runs_and_leaves_the_settings_to_wait(tmp_path, capsys):
    """A peer's runs are needed whatever a grid's settings become: `--peers-only` makes them
    alone, and the settings' runs stay new (no folder made)."""
    (tmp_path / "fake_peer.py").write_text(FAKE_PEER)
    path = tmp_path / "g.toml"
    path.write_text("frames = 1000\nseeds = [0, 1]\nenvs = ['gym:CartPole-v1']\n"
                    "[settings.new]\npreset = 'gdi-i3'\n"
                    "[peers.P]\nfolder = 'peer/{env}-{seed}'\ncommand = ['" + sys.executable +
                    "', 'fake_peer.py', '{folder}', '{frames}', '{spec}', '{seed}']\n")
    main(["benchmark", "run", str(path), "--peer", "P", "--peers-only"])
    said = capsys.readouterr().out
    assert "P/gym:CartPole-v1/seed 1: done (1,000 frames)" in said
    assert "2 of 2 chosen runs done" in said and "new/" not in said
    assert not (tmp_path / "runs" / "g" / "new").exists()
    assert [s.state for s in peer_states(load_grid(path))] == ["done", "done"]
    assert "--peers-only without --peer: no run to make" in one_line_error(
        ["benchmark", "run", str(path), "--peers-only"], capsys)
    assert "--peers-only with --setting new: --peers-only runs no setting" in one_line_error(
        ["benchmark", "run", str(path), "--peer", "P", "--peers-only", "--setting", "new"], capsys)
    # From Python, one peer may be named as a string; the done runs are said done.
    from gdi.benchmark import run_grid

    said = []
    result = run_grid(load_grid(path), peers="P", peers_only=True, say=said.append)
    assert len(result.done_before) == 2 and not result.finished and not said


def test_a_setting_is_its_table_laid_over_the_defaults_key_by_key():
    """[defaults] says once what the settings share: each setting reads as if its table said
    all of it, and a key of its own replaces the default's whole (a set list is not merged)."""
    head = "frames = 10\nseeds = [0, 1]\nenvs = ['gym:CartPole-v1']\n"
    shared = ("preset = 'gdi-i3'\nscale = 'gym'\nset = ['eval_episodes=3']\n"
              "records = 'r/{setting}-{seed}'\ncarry = true\n")
    spelled_out = parse_grid(tomllib.loads(
        head + "[settings.a]\n" + shared + "[settings.b]\n" + shared.replace(
            "['eval_episodes=3']", "['trace_lambda=0.95']") + "closed = 'screened'\n"),
        Path("/tmp/g/g.toml"))
    with_defaults = parse_grid(tomllib.loads(
        head + "[defaults]\n" + shared + "[settings.a]\n"
        "[settings.b]\nset = ['trace_lambda=0.95']\nclosed = 'screened'\n"),
        Path("/tmp/g/g.toml"))
    assert with_defaults.settings == spelled_out.settings
    assert with_defaults.settings[1].overrides == ("trace_lambda=0.95",)
    assert [c.records for c in with_defaults.cells()] == [c.records for c in spelled_out.cells()]


def test_with_peers_each_environment_and_seed_runs_the_settings_then_the_peers():
    """The local queue's order with --peer: environment by environment, seed by seed, every
    setting's run and then each peer's; without peers it stays setting by setting."""
    from gdi.benchmark.queue import PeerRun, QueueResult, _cell_job, _peer_job
    from gdi.benchmark.state import CellState

    grid = parse_grid(tomllib.loads(
        "frames = 10\nseeds = [0, 1]\nenvs = ['gym:CartPole-v1', 'gym:Acrobot-v1']\n"
        "[settings.a]\npreset = 'gdi-i3'\n[settings.b]\npreset = 'gdi-i3'\n"
        "[peers.P]\nfolder = 'p/{env}-{seed}'\ncommand = ['run', '{spec}', '{seed}']\n"),
        Path("/tmp/order/g.toml"))
    result, say = QueueResult(), print
    jobs = [_cell_job(CellState(cell, NEW, 0), grid, result, say) for cell in grid.cells()]
    peer = grid.peers[0]
    jobs += [_peer_job(PeerRun(peer, env, seed, grid.peer_folder(peer, env, seed)), grid,
                       result, say) for env in grid.envs for seed in peer.seeds]
    jobs.sort(key=lambda job: job.order)
    assert [job.started.split(": ", 1)[0] for job in jobs] == [
        f"{who}/gym:{env}/seed {seed}" for env in ("CartPole-v1", "Acrobot-v1")
        for seed in (0, 1) for who in ("a", "b", "P")]
    assert jobs[2].argv == ["run", "gym:CartPole-v1", "0"] and jobs[2].cwd == Path("/tmp/order")


def test_a_missing_grid_file_is_one_line(tmp_path, capsys):
    assert "no grid file" in one_line_error(["benchmark", "status", str(tmp_path / "no.toml")],
                                            capsys)


# -- the curves -----------------------------------------------------------------------------


def curve(frames, returns):
    return RunCurve("s", "gym:CartPole-v1", 0, np.array(frames, float), np.array(returns, float),
                    int(max(frames)), Path("."))


def test_the_trailing_mean_and_its_step_function_follow_the_formula():
    rng = np.random.default_rng(0)
    frames = np.sort(rng.integers(1, 10_000, 300))
    returns = rng.normal(size=300)
    c = curve(frames, returns)
    for at in (frames[0], 777, 5_000, 10_000):
        assert_close(c.score_at(int(at), 100), naive_score(frames, returns, at, 100), terms=100)
    assert_close(c.score_at(0, 100), returns[0])  # before any episode: the first one's


def test_scores_read_as_a_reader_takes_them_in():
    from gdi.benchmark.report import _score

    assert [_score(v) for v in (13670.0, 27.916, -17.94, -2500.4, 999.994)] == \
        ["13,670", "27.92", "-17.94", "-2,500", "999.99"]


def test_the_figure_legend_names_only_systems_drawn_and_keeps_each_ones_colour():
    """A peer with no curve in any panel is left out of the legend, and the systems after it
    keep the colour of their place in the grid (C0, C1, ...), as in every other figure."""
    from gdi.benchmark.report import GameRuns, System, drawn_systems

    systems = [System("a", "a", False), System("APPO", "APPO", True), System("b", "b", False)]
    one = [curve([100, 200], [1, 2])]
    runs = {("a", "e1"): GameRuns(one, [], []), ("a", "e2"): GameRuns([], [], [0]),
            ("APPO", "e1"): GameRuns([], [], [0]), ("APPO", "e2"): GameRuns([], [], [0]),
            ("b", "e1"): GameRuns([], [], [0]), ("b", "e2"): GameRuns(one, [], [])}
    assert drawn_systems(systems, runs, ["e1", "e2"]) == [0, 2]
    assert drawn_systems(systems, runs, ["e1"]) == [0]
    runs[("APPO", "e2")] = GameRuns(one, [], [])
    assert drawn_systems(systems, runs, ["e1", "e2"]) == [0, 1, 2]


def test_each_setting_meets_each_peer_on_the_games_both_have_run():
    """A setting with runs on fewer games does not take the aggregates of another setting
    against the peer down with it: each pair is aggregated on the games both have runs of,
    and a pair with none says so."""
    from scipy.stats import trim_mean

    from gdi.benchmark.report import GameStats, System, aggregates, comparison_groups, interval

    def stats(scores):
        scores = [float(v) for v in scores]
        return GameStats(len(scores), interval(scores), interval(scores), interval(scores),
                         scores, [v / 100 for v in scores], [])

    envs = ["ale:Breakout", "ale:Boxing", "ale:Qbert"]
    systems = [System("old", "old", False), System("new", "new", False),
               System("late", "late", False), System("APPO", "APPO", True)]
    table = {("old", "ale:Breakout"): stats([20, 22]), ("old", "ale:Boxing"): stats([60, 70]),
             ("new", "ale:Breakout"): stats([30, 34]),
             ("APPO", "ale:Breakout"): stats([10, 12]), ("APPO", "ale:Boxing"): stats([50, 55])}
    groups = {tuple(s.name for s in group): shared
              for group, shared in comparison_groups(systems, table, envs)}
    assert groups == {("old", "APPO"): ["ale:Breakout", "ale:Boxing"],
                      ("new", "APPO"): ["ale:Breakout"], ("late", "APPO"): []}
    lines = aggregates(systems, table, envs, reps=200)
    text = "\n".join(lines)
    assert "**old against APPO** on 2 of 3 environments (ale:Breakout, ale:Boxing):" in lines
    assert "**new against APPO** on 1 of 3 environments (ale:Breakout):" in lines
    assert "- **late against APPO**: no environment has runs of both at these frames yet." in lines
    # new's IQM HNS is its Breakout seeds' alone, and APPO's beside it is on Breakout alone
    # too (with Boxing it would be higher): the interquartile mean by scipy.
    hns = normalizer("ale:Breakout")
    block = text.split("**new against APPO**")[1].split("**late")[0]
    for name, seeds in (("new", [30, 34]), ("APPO", [10, 12])):
        iqm = trim_mean(hns(np.array(seeds, float)), 0.25)
        row = next(line for line in block.splitlines() if line.startswith(f"| {name} |"))
        assert row.split("|")[3].split()[0] == f"{iqm:.3f}"  # as printed, to 3 digits
    # Every seed of new beats every seed of APPO on its one game: P = 1 exactly.
    assert "- P(new > APPO): 1.000 on the score at these frames, 1.000 on the normalized area" \
        in block
    # Without peers: one group of every setting, on the games all of them share.
    alone = [s for s in systems if not s.peer][:2]
    assert [(len(g), e) for g, e in comparison_groups(alone, table, envs)] == \
        [(2, ["ale:Breakout"])]


def test_a_game_is_lost_only_when_the_peers_interval_lies_wholly_above():
    """The table's "vs peer": the peer's 95 % interval of the normalized area against the
    setting's; a side with one seed has no interval, so nothing is said of it."""
    from gdi.benchmark.report import GameStats, comparison
    from gdi.evaluation.aggregates import Interval

    def side(n, low, high):
        return GameStats(n, Interval(0, 0, 0), Interval(0, 0, 0),
                         Interval((low + high) / 2, low, high), [], [], [])

    assert comparison(side(2, 0.2, 0.3), side(2, 0.31, 0.4)) == "peer above"
    assert comparison(side(2, 0.2, 0.3), side(3, 0.1, 0.19)) == "peer below"
    assert comparison(side(2, 0.2, 0.3), side(2, 0.3, 0.4)) == "overlap"  # touching: overlap
    assert comparison(side(1, 0.2, 0.2), side(2, 0.3, 0.4)) == "one seed: not compared"
    assert comparison(side(2, 0.2, 0.3), side(1, 0.5, 0.5)) == "one seed: not compared"


def test_frames_to_a_level_and_the_area_by_hand():
    # Returns 0, 10, 20 ending at 100, 200, 300 frames; a window of 2: means 0, 5, 15.
    c = curve([100, 200, 300], [0, 10, 20])
    assert c.frames_to(5, 2, by=1000) == 200
    assert c.frames_to(15, 2, by=250) is None  # reached at 300, after "by"
    # A level counts once a full window has ended: the first episode's 10 alone does not;
    # means of two: 5 at 200, 5 at 300, 10 at 400.
    assert curve([100, 200, 300, 400], [10, 0, 10, 10]).frames_to(8, 2, by=1000) == 400
    # Area over [0, 400] on 100 points x_k = 4k: 0 up to 196 (49 points: k = 1..24 < 100 are
    # before the first episode, the first's value 0), 5 on [200, 300), 15 from 300 on.
    x = 400 * np.arange(1, AUC_POINTS + 1) / AUC_POINTS
    naive = np.mean([0 if f < 200 else 5 if f < 300 else 15 for f in x])
    assert_close(normalized_auc(c, 400, 2, normalizer("gym:CartPole-v1")), naive)


def test_atari_scores_are_human_normalized_with_the_papers_baselines():
    from gdi.evaluation.baselines import baselines

    norm = normalizer("ale:Breakout")
    ref = baselines(["Breakout"])
    assert norm.name == "HNS"
    assert_close(norm(np.array([30.0]))[0],
                 (30 - ref.random[0]) / (ref.human_average[0] - ref.random[0]))
    assert normalizer("minatar:breakout").name == "raw"


# -- the queue and the report, end to end ----------------------------------------------------


def lock_pids(out: Path) -> list[int]:
    pids = []
    for lock in out.rglob(".lock"):
        text = lock.read_text().strip()
        if text.isdigit():
            pids.append(int(text))
    return pids


def write_peer(grid_dir: Path, frames: int) -> None:
    """A peer's curve files as benchmarks/appo_peer.py writes them: every run's episodes, the
    returns of the gdi run of that env and seed less 1."""
    for env in ("gym-CartPole-v1", "gym-Acrobot-v1"):
        for seed in (0, 1):
            run = grid_dir / "runs" / "tiny" / "gdi" / f"{env}-{seed}"
            rows = [json.loads(line) for line in (run / "meta.jsonl").read_text().splitlines()]
            folder = grid_dir / "peer" / f"{env}-{seed}"
            folder.mkdir(parents=True)
            with (folder / "curve_episodes.csv").open("w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["wall_s", "frames", "return", "length_frames"])
                for i, row in enumerate(rows):
                    w.writerow([i, row["frames"], row["return"] - 1, 10])
            (folder / "curve.csv").write_text(f"wall_s,frames,mean_return,episodes\n9,{frames},"
                                              "0,1\n")


def test_a_grid_survives_a_kill_and_a_move_and_reports_beside_its_peer(tmp_path, capsys):
    first = tmp_path / "machine-a"
    grid_path = write_grid(first, 6000)
    out = first / "runs" / "tiny"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    queue = subprocess.Popen([sys.executable, "-m", "gdi", "benchmark", "run", str(grid_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    # Kill the queue and its runs without warning (a machine lost) once a run has a checkpoint.
    deadline = time.monotonic() + 240
    while not any(list_checkpoints(p) for p in out.glob("gdi/*") if p.is_dir()):
        assert queue.poll() is None, queue.stdout.read().decode()
        assert time.monotonic() < deadline, "no checkpoint within 240 s"
        time.sleep(0.2)
    pids = lock_pids(out)
    queue.kill()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    queue.wait()
    time.sleep(0.5)  # the kernel drops the killed runs' locks
    grid = load_grid(grid_path)
    before = {c.folder.name: cell_state(c, grid) for c in grid.cells()}
    assert any(s.state == RESUMABLE for s in before.values())
    assert all(s.state in (NEW, RESUMABLE, UNSTARTED) for s in before.values())

    # The grid and its folders move to another machine (here: another folder) and go on.
    second = tmp_path / "machine-b"
    shutil.move(first, second)
    moved_grid = second / "tiny.toml"
    capsys.readouterr()
    main(["benchmark", "run", str(moved_grid)])
    said = capsys.readouterr().out
    grid = load_grid(moved_grid)
    after = {c.folder.name: cell_state(c, grid) for c in grid.cells()}
    assert all(s.state == DONE for s in after.values()), after
    assert "4 of 4 runs done" in said
    for name, state in before.items():
        if state.state == RESUMABLE:
            assert f"resuming at {state.frames:,} frames" in said
            log = (second / "runs" / "tiny" / "logs" / "gdi" / f"{name}.log").read_text()
            assert "interrupted" not in log.splitlines()[-1]
        if state.state == UNSTARTED:
            assert (second / "runs" / "tiny" / "gdi" / f"{name}.unstarted-1").is_dir()

    # A second pass has nothing to do.
    main(["benchmark", "run", str(moved_grid)])
    assert "starting" not in capsys.readouterr().out

    main(["benchmark", "status", str(moved_grid)])
    assert "4 done" in capsys.readouterr().out

    write_peer(second, 6000)
    main(["benchmark", "report", str(moved_grid)])
    report = second / "runs" / "tiny" / "report"
    text = (report / "report.md").read_text()
    assert (report / "benchmark.png").stat().st_size > 10_000
    assert "| gym:CartPole-v1 | gdi | 2 |" in text and "| gym:Acrobot-v1 | peer | 2 |" in text
    # The setting by the names its runs' config.json records, not the grid's silence.
    label = "- **gdi (gdi-i3, scale gym, learning paper, envs_per_actor=4, burn_in=2,"
    assert label in text
    # Each peer episode is its gdi twin less 1: gdi beats the peer in every pair of the same
    # seed, so P(gdi > peer) is at least one half on each game; the scores are exact.
    assert "P(gdi > peer)" in text
    # The same into a results page, twice: its own text is kept, the block written once.
    page = second / "docs" / "results.md"
    page.parent.mkdir()
    page.write_text("# Results\n\nThe summary a person wrote.\n\n## Reading\n\nMore.\n")
    main(["benchmark", "report", str(moved_grid), "--page", str(page)])
    written = page.read_text()  # no markers yet: the block is appended
    assert written.index("More.") < written.index("<!-- BEGIN gdi benchmark report tiny.toml")
    page.write_text(written + "\n## Commands\n\nBy hand.\n")
    main(["benchmark", "report", str(moved_grid), "--page", str(page)])
    written = page.read_text()  # the block replaced in place, the text around it kept
    assert written.startswith("# Results\n\nThe summary a person wrote.\n")
    assert written.endswith("\n## Commands\n\nBy hand.\n")
    assert written.count("<!-- BEGIN gdi benchmark report tiny.toml") == 1
    assert "| gym:CartPole-v1 | gdi | 2 |" in written and "P(gdi > peer)" in written
    assert (page.parent / "figures" / "tiny-benchmark.png").stat().st_size > 10_000
    with (report / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8
    for row in rows:
        run = second / "runs" / "tiny" / "gdi" / f"{row['env'].replace(':', '-')}-{row['seed']}"
        meta = [json.loads(line) for line in (run / "meta.jsonl").read_text().splitlines()]
        shift = 1 if row["system"] == "peer" else 0
        expected = naive_score([m["frames"] for m in meta], [m["return"] - shift for m in meta],
                               6000, 100)
        assert_close(float(row["score"]), expected, dtype=torch.float64, terms=100)

    # A third machine gets the repository only: the grid, the kept records, the peer's curves.
    third = tmp_path / "machine-c"
    third.mkdir()
    for name in ("tiny.toml", "results", "peer"):
        shutil.move(second / name, third / name)
    assert sorted(p.name for p in (third / "results" / "gdi" / "gym-CartPole-v1-0").iterdir()) \
        == ["config.json", "eval", "meta.jsonl.gz", "metrics.jsonl"]
    main(["benchmark", "run", str(third / "tiny.toml")])
    said = capsys.readouterr().out
    assert "4 of 4 runs done" in said and "starting" not in said
    main(["benchmark", "report", str(third / "tiny.toml")])
    assert label in (third / "runs" / "tiny" / "report" / "report.md").read_text()
    with (third / "runs" / "tiny" / "report" / "runs.csv").open() as f:
        kept_rows = list(csv.DictReader(f))
    assert [{k: v for k, v in r.items() if k != "source"} for r in kept_rows] == \
        [{k: v for k, v in r.items() if k != "source"} for r in rows]


CARRY_GRID = """\
frames = 6000
seeds = [0]
envs = ["gym:CartPole-v1"]

[settings.gdi]
preset = "gdi-i3"
set = {overrides}
records = "results/{{env}}-{{seed}}"
carry = true
"""


def frames_of(jsonl: str) -> list[int]:
    return [json.loads(line)["frames"] for line in jsonl.splitlines() if line.strip()]


def test_a_run_stopped_short_resumes_on_a_machine_with_its_records_alone(tmp_path, capsys):
    first = tmp_path / "machine-a"
    first.mkdir()
    (first / "carry.toml").write_text(CARRY_GRID.format(overrides=json.dumps(OVERRIDES)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    queue = subprocess.Popen([sys.executable, "-m", "gdi", "benchmark", "run",
                              str(first / "carry.toml")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    run = first / "runs" / "carry" / "gdi" / "gym-CartPole-v1-0"
    deadline = time.monotonic() + 240
    while not list_checkpoints(run):
        assert queue.poll() is None, queue.stdout.read().decode()
        assert time.monotonic() < deadline, "no checkpoint within 240 s"
        time.sleep(0.2)
    queue.send_signal(signal.SIGTERM)  # the machine is going: the run checkpoints and stops
    said = queue.communicate(timeout=120)[0].decode()
    assert queue.returncode == 143, said
    records = first / "results" / "gym-CartPole-v1-0"
    carried = list_checkpoints(records / CARRIED)
    assert [p.name for p in carried] == [list_checkpoints(run)[-1].name], said
    assert "carried ckpt_" in said
    stopped_at = int(carried[0].name.split("_")[1].split(".")[0])
    assert 0 < stopped_at < 6000
    episodes_before = frames_of(gzip.decompress((records / "meta.jsonl.gz").read_bytes())
                                .decode())

    # The next machine gets the repository only: the grid file and the records.
    second = tmp_path / "machine-b"
    second.mkdir()
    for name in ("carry.toml", "results"):
        shutil.move(first / name, second / name)
    grid = load_grid(second / "carry.toml")
    state = cell_state(grid.cells()[0], grid)
    assert (state.state, state.frames) == (CARRIED_STATE, stopped_at)
    capsys.readouterr()
    main(["benchmark", "run", str(second / "carry.toml")])
    said = capsys.readouterr().out
    assert "rebuilt" in said and f"resuming at {stopped_at:,} frames" in said, said
    assert "1 of 1 runs done" in said
    assert cell_state(grid.cells()[0], grid).state == DONE
    # Done: the checkpoint is no longer carried; the records hold the whole curve, its part
    # from the first machine included, once.
    assert not (second / "results" / "gym-CartPole-v1-0" / CARRIED).exists()
    kept = second / "results" / "gym-CartPole-v1-0"
    episodes = frames_of(gzip.decompress((kept / "meta.jsonl.gz").read_bytes()).decode())
    early = [f for f in episodes_before if f <= stopped_at]
    assert early and episodes[:len(early)] == early
    assert episodes == sorted(episodes) and episodes[-1] > stopped_at
    rows = [json.loads(line) for line in (kept / "metrics.jsonl").read_text().splitlines()]
    trained = [row["frames"] for row in rows if "learner_steps" in row]  # not evaluations
    assert trained == sorted(set(trained)) and trained[0] < stopped_at <= trained[-1]


def test_keep_carries_what_a_killed_queue_left(tmp_path, capsys):
    (tmp_path / "carry.toml").write_text(CARRY_GRID.format(overrides=json.dumps(OVERRIDES)))
    grid = load_grid(tmp_path / "carry.toml")
    cell = grid.cells()[0]
    # A run stopped short of the grid's 6,000 frames, as a killed queue leaves it.
    main(["train", "--preset", "gdi-i3", "--env", "gym:CartPole-v1", "--seed", "0",
          "--frames", "6000", "--stop-at", "2000", "--run-dir", str(cell.folder),
          "--no-report", "--set", *OVERRIDES])
    assert cell_state(cell, grid).state == RESUMABLE and not cell.records.exists()
    capsys.readouterr()
    main(["benchmark", "keep", str(tmp_path / "carry.toml")])
    assert "records of 1 run(s) kept" in capsys.readouterr().out
    assert [p.name for p in list_checkpoints(cell.records / CARRIED)] == \
        [list_checkpoints(cell.folder)[-1].name]
    assert (cell.records / "metrics.jsonl").read_text() == \
        (cell.folder / "metrics.jsonl").read_text()
    # Another machine took the run further from the records: this older folder is refused,
    # never resumed over that work.
    carried = list_checkpoints(cell.records / CARRIED)[0]
    shutil.copy(carried, carried.with_name("ckpt_000000004000.safetensors"))
    err = one_line_error(["benchmark", "run", str(tmp_path / "carry.toml")], capsys)
    assert "carries the run at 4,000" in err and "move the folder away" in err


def test_status_reads_each_peer_run_from_its_curve(tmp_path, capsys):
    grid_path = write_grid(tmp_path, 6000)
    curves = {("gym-CartPole-v1", 0): 6000, ("gym-CartPole-v1", 1): 4000,
              ("gym-Acrobot-v1", 0): 2000}  # Acrobot's seed 1: no run yet
    for (env, seed), frames in curves.items():
        folder = tmp_path / "peer" / f"{env}-{seed}"
        folder.mkdir(parents=True)
        (folder / "curve.csv").write_text("wall_s,frames,mean_return,episodes\n"
                                          f"1,{frames // 2},0,1\n2,{frames},0,2\n")
    carried = tmp_path / "peer" / "gym-CartPole-v1-1" / CARRIED / "checkpoint_p0"
    carried.mkdir(parents=True)
    (carried / "checkpoint_000000001_4000.pth").write_bytes(b"x")
    states = {(s.env, s.seed): (s.state, s.frames)
              for s in peer_states(load_grid(grid_path))}
    assert states == {("gym:CartPole-v1", 0): ("done", 6000),
                      ("gym:CartPole-v1", 1): ("carried", 4000),
                      ("gym:Acrobot-v1", 0): ("partial", 2000),
                      ("gym:Acrobot-v1", 1): ("new", 0)}
    main(["benchmark", "status", str(grid_path)])
    said = capsys.readouterr().out
    assert "peer done" in said and "1 peer carried, 1 peer partial, 1 peer new" in said


def grid_with_first_run_trained(tmp_path, capsys, seed):
    """A tiny grid of 1,000 frames and its first cell's folder trained by ``gdi train`` (CartPole,
    ``seed``: the grid's own seed 0, or another run's)."""
    grid_path = write_grid(tmp_path, 1000)
    cell = load_grid(grid_path).cells()[0]
    main(["train", "--env", "gym:CartPole-v1", "--seed", str(seed), "--frames", "1000",
          "--run-dir", str(cell.folder), "--no-report", "--set", *OVERRIDES])
    capsys.readouterr()
    return grid_path, cell


def test_the_report_lists_a_run_with_no_finished_episode_as_behind(tmp_path, capsys):
    """A run that has trained but finished no episode yet (meta.jsonl empty) is behind at its
    frames, not an error; a meta.jsonl with a bad line is an error naming the file."""
    grid_path, cell = grid_with_first_run_trained(tmp_path, capsys, seed=0)
    for path in list_checkpoints(cell.folder):
        path.unlink()  # as a run killed before its first checkpoint
    (cell.folder / "meta.jsonl").write_text("")
    main(["benchmark", "report", str(grid_path), "--at", "1000"])
    report = Path(capsys.readouterr().out.split("report: ", 1)[1].strip()).read_text()
    # trained to the frames compared: what keeps it out is named, not a shortfall of frames
    assert "gdi on gym:CartPole-v1: seed 0 at 1,000 frames, with no training episode ended" \
        in report
    (cell.folder / "meta.jsonl").write_text('{"frames": 1}\nnot json\n{"frames": 2}\n')
    assert "meta.jsonl:2 is not valid JSON" in one_line_error(
        ["benchmark", "report", str(grid_path), "--at", "1000"], capsys)


def test_a_folder_of_another_run_is_refused_and_left_alone(tmp_path, capsys):
    grid_path, cell = grid_with_first_run_trained(tmp_path, capsys, seed=7)
    err = one_line_error(["benchmark", "run", str(grid_path)], capsys)
    assert str(cell.folder) in err and "seed (7 there, 0 in the grid)" in err
    assert (cell.folder / "config.json").is_file()


def test_the_grid_can_run_on_a_ray_cluster(tmp_path, capsys):
    path = tmp_path / "ray.toml"
    path.write_text(f"frames = 800\nseeds = [0, 1]\nenvs = ['gym:CartPole-v1']\n"
                    f"[settings.gdi]\npreset = 'gdi-i3'\nset = {json.dumps(OVERRIDES)}\n")
    main(["benchmark", "run", str(path), "--ray-address", "local", "--cpus-per-run", "1"])
    assert "2 of 2 runs done" in capsys.readouterr().out
    grid = parse_grid({"frames": 800, "seeds": [0, 1], "envs": ["gym:CartPole-v1"],
                       "settings": {"gdi": {"preset": "gdi-i3"}}}, path)
    assert all(cell_state(c, grid).state == DONE for c in grid.cells())


def test_the_repository_keeps_carried_checkpoints_and_no_others():
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")

    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", path], cwd=root).returncode == 0

    run = "benchmarks/results/ale-games/Game-head-ale-floor-0"
    assert not ignored(f"{run}/carried/checkpoints/ckpt_000001000000.safetensors")
    assert not ignored("benchmarks/results/ale-cpu/appo_x/carried/checkpoint_p0/checkpoint_1_2.pth")
    assert ignored(f"{run}/checkpoints/ckpt_000001000000.safetensors")
    assert ignored("runs/atari10/gdi/Game-0/checkpoints/ckpt_000001000000.safetensors")


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[1] / "benchmarks"
                                          / "grids").glob("*.toml")), ids=lambda p: p.name)
def test_every_grid_the_repository_keeps_parses(path):
    """The grids the docs' commands name load as they stand (a format change that left one
    behind would fail here, not hours into someone's queue)."""
    grid = load_grid(path)
    assert grid.cells() and all(cell.folder.is_absolute() for cell in grid.cells())


def test_a_plots_seeds_wrap_in_the_room_its_games_name_leaves():
    from gdi.benchmark.report import seeds_title

    # by hand: 55 characters of 7 pt a line, "NameThisGame" at 9 pt takes ceil(12 · 9 / 7) = 16
    # of them, and 3 apart: 36 for the seeds
    title = seeds_title("NameThisGame", "control 2, clip-0.2 1, q-loss-1 1, APPO 1")
    assert title.splitlines() == ["seeds: control 2, clip-0.2 1,", "q-loss-1 1, APPO 1"]
    assert all(len(line) <= 36 for line in title.splitlines())
    # the ten-game grid's: one line beside the longest name, "SpaceInvaders" (room 35)
    assert seeds_title("SpaceInvaders", "gdi 2, gdi-scaled 2, APPO 2") == \
        "seeds: gdi 2, gdi-scaled 2, APPO 2"
