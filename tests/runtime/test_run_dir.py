"""The run folder: one writer at a time (a lock held by a real second process), config.json
read back strictly (never filled from today's defaults), folders that cannot be created, and
JSON-lines files cut short by a crash."""

import dataclasses
import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gdi.runtime.run_folder.run_dir import (
    RunLock,
    create_run_dir,
    drop_rows_after,
    read_config,
    write_config,
)
from tests.runtime.helpers import one_line_error, tiny_config

HOLD_LOCK = (
    "import sys, time\n"
    "from gdi.runtime.run_folder.run_dir import RunLock\n"
    "RunLock().acquire(sys.argv[1])\n"
    "print('held', flush=True)\n"
    "time.sleep(120)\n"
)


def saved_run(tmp_path) -> Path:
    run = create_run_dir(tmp_path / "run")
    write_config(run, tiny_config(), {})
    return run


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path):
    run = saved_run(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(run)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ValueError, match=rf"being written by another gdi process "
                                             rf"\(PID {holder.pid}\)"):
            RunLock().acquire(run)
    finally:
        holder.kill()  # SIGKILL: the kernel drops the lock with the process
        holder.wait()
    with RunLock() as lock:  # never stale: free as soon as its holder is gone
        lock.acquire(run)
        assert (run / ".lock").read_text().strip() == str(__import__("os").getpid())
    with RunLock() as again:  # and free again once released
        again.acquire(run)


def test_resume_of_a_locked_run_is_one_line_naming_the_pid(tmp_path, capsys):
    run = saved_run(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(run)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        err = one_line_error(["train", "--resume", str(run)], capsys)
    finally:
        holder.kill()
        holder.wait()
    assert f"PID {holder.pid}" in err


@pytest.mark.parametrize(("content", "message"), [
    ("[1, 2, 3]", "must hold a JSON object of config fields, not a list"),
    ('{"preset": "gdi-i3", ', "is not valid JSON"),
    ("\"just a string\"", "not a str"),
])
def test_a_config_that_is_not_an_object_is_one_line(tmp_path, capsys, content, message):
    run = saved_run(tmp_path)
    (run / "config.json").write_text(content)
    with pytest.raises(ValueError, match=r"config\.json"):
        read_config(run)
    err = one_line_error(["train", "--resume", str(run)], capsys)
    assert message in err and str(run / "config.json") in err


@pytest.mark.parametrize("field", ["batch_size", "lstm_units"])
def test_a_missing_field_is_an_error_never_todays_default(tmp_path, capsys, field):
    run = saved_run(tmp_path)
    record = json.loads((run / "config.json").read_text())
    del record[field]
    (run / "config.json").write_text(json.dumps(record))
    err = one_line_error(["train", "--resume", str(run)], capsys)
    assert f"lacks the field(s) {field}" in err and "config.json" in err


def test_a_run_written_before_the_runtime_fields_existed_still_reads(tmp_path):
    # A config.json from before the Ray and fault fields: those (and only those) take the
    # value that reproduces how the run ran; everything it learns with is the file's.
    from gdi.upgrade import FIELDS_ADDED_LATER

    run = saved_run(tmp_path)
    record = json.loads((run / "config.json").read_text())
    written = read_config(run)[0]
    for name in FIELDS_ADDED_LATER:
        del record[name]
    (run / "config.json").write_text(json.dumps(record))
    config, _ = read_config(run)
    assert config == written.replace(**FIELDS_ADDED_LATER)
    assert set(FIELDS_ADDED_LATER) <= {f.name for f in dataclasses.fields(config)}



def test_every_recorded_run_in_the_repository_still_reads():
    """The run records kept in benchmarks/results were written by every version of gdi since
    the first: each must still read back (and so resume, be evaluated, be reported). A Config
    field added without its entry in FIELDS_ADDED_LATER fails here, as input_norm once did for
    a run resumed across the change. Sample Factory's records (no "preset") are not gdi's."""
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
    records = [path for path in sorted(root.rglob("config.json"))
               if "preset" in json.loads(path.read_text(encoding="utf-8"))]
    assert len(records) > 100  # the records are there to be read
    for path in records:
        read_config(path.parent)  # a ValueError names the file and the field

def test_a_run_written_before_scales_had_names_reads_as_its_kinds_scale(tmp_path):
    run = saved_run(tmp_path)
    record = json.loads((run / "config.json").read_text())
    written = read_config(run)[0]
    del record["scale"]
    (run / "config.json").write_text(json.dumps(record))
    assert written.scale == written.env.split(":")[0]  # a run of the kind's default scale
    assert read_config(run)[0] == written


def test_a_bad_value_in_config_json_names_the_file(tmp_path):
    run = saved_run(tmp_path)
    record = json.loads((run / "config.json").read_text())
    record["discount"] = 2.0
    (run / "config.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"config\.json: discount must be in"):
        read_config(run)


def test_a_run_dir_under_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "a_file").write_text("not a folder")
    err = one_line_error(["train", "--env", "gym:CartPole-v1", "--backend", "inline",
                          "--run-dir", str(tmp_path / "a_file" / "run")], capsys)
    assert f"cannot create run folder {tmp_path / 'a_file' / 'run'}" in err
    assert f"{tmp_path / 'a_file'} is a file, not a folder" in err


def test_a_read_only_parent_is_one_line(tmp_path, capsys, monkeypatch):
    # A fault hook: tests may run as root, whom chmod does not stop.
    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    err = one_line_error(["train", "--env", "gym:CartPole-v1", "--backend", "inline",
                          "--run-dir", str(tmp_path / "ro" / "run")], capsys)
    assert f"cannot create run folder {tmp_path / 'ro' / 'run'}: no permission to write in " \
           f"{tmp_path}" in err


@pytest.mark.skipif(sys.platform != "linux" or __import__("os").geteuid() == 0,
                    reason="root writes into read-only folders")
def test_a_really_read_only_parent_is_one_line(tmp_path, capsys):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        err = one_line_error(["train", "--env", "gym:CartPole-v1", "--backend", "inline",
                              "--run-dir", str(parent / "run")], capsys)
    finally:
        parent.chmod(0o755)
    assert f"no permission to write in {parent}" in err


def test_drop_rows_after_drops_an_incomplete_last_line_with_a_warning(tmp_path):
    path = tmp_path / "metrics.jsonl"
    rows = [{"frames": f, "x": f / 10} for f in (100, 200, 300)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"frames": 400, "x"')
    warnings = drop_rows_after(path, 200)
    assert [json.loads(line) for line in path.read_text().splitlines()] == rows[:2]
    assert len(warnings) == 1 and str(path) in warnings[0] and "incomplete last line 4" \
        in warnings[0]
    assert drop_rows_after(path, 200) == []  # nothing left to warn about


def test_drop_rows_after_refuses_a_bad_line_in_the_middle(tmp_path):
    path = tmp_path / "meta.jsonl"
    path.write_text('{"frames": 1}\nnot json\n{"frames": 2}\n')
    with pytest.raises(ValueError, match=r"meta\.jsonl line 2 is not a JSON row"):
        drop_rows_after(path, 10)
    assert path.read_text() == '{"frames": 1}\nnot json\n{"frames": 2}\n'  # left as it was


# --- issue 30: a run that ends before it trains leaves nothing behind ------------------------


@pytest.mark.parametrize(("env", "why"), [
    ("gym:Pendulum-v1", "needs a Discrete action space"),
    ("gym:FrozenLake-v1", "needs a Box observation"),
    ("gym:Blackjack-v1", "needs a Box observation"),
])
def test_a_refused_environment_makes_no_run_folder_so_the_command_can_be_rerun(
        env, why, tmp_path, capsys):
    run = tmp_path / "runs" / "new"
    argv = ["train", "--env", env, "--backend", "inline", "--run-dir", str(run), "--no-report"]
    for _ in range(2):  # the same refusal again, not "already exists"
        assert why in one_line_error(argv, capsys)
        assert not (tmp_path / "runs").exists()


def failing_start(monkeypatch, message="placed 0 of 1 actors in 120 s"):
    from gdi.runtime.backends.inline import InlineBackend

    def start(self, *args, **kwargs):
        raise ValueError(message)

    monkeypatch.setattr(InlineBackend, "start", start)


def start_up_error(argv, capsys) -> str:
    """The CLI must exit 2 with one error line, after at most the start-up stage lines."""
    from gdi.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(lines)
    assert lines[-1].startswith("gdi: error: ") and \
        all(line.startswith("start-up: ") for line in lines[:-1]), lines
    return lines[-1]


def test_a_failure_after_the_folder_was_made_takes_back_only_what_this_run_made(
        tmp_path, capsys, monkeypatch):
    # Like a Ray cluster that cannot place the actors: the folder, its logs and TensorBoard
    # files already exist when start-up fails.
    failing_start(monkeypatch)
    argv = ["train", "--env", "gym:CartPole-v1", "--backend", "inline", "--no-report", "--set",
            "envs_per_actor=4", "--run-dir"]
    made = tmp_path / "a" / "b" / "run"
    assert "placed 0 of 1 actors" in start_up_error([*argv, str(made)], capsys)
    assert not (tmp_path / "a").exists()  # the parents it made too
    mine = tmp_path / "mine"  # an empty folder the user made: kept, and empty again
    mine.mkdir()
    start_up_error([*argv, str(mine)], capsys)
    assert mine.is_dir() and not list(mine.iterdir())
    shared = tmp_path / "shared"  # a parent that holds something else by then is kept
    (shared / "other").mkdir(parents=True)
    start_up_error([*argv, str(shared / "run")], capsys)
    assert sorted(p.name for p in shared.iterdir()) == ["other"]


def test_an_empty_existing_run_dir_is_used_and_a_non_run_folder_is_refused_consistently(
        tmp_path, capsys):
    from gdi.cli import main
    from tests.runtime.helpers import TINY

    empty = tmp_path / "empty"
    empty.mkdir()
    main(["train", "--env", "gym:CartPole-v1", "--backend", "inline", "--frames", "2e2",
          "--run-dir", str(empty), "--no-report", "--set", *TINY, "eval_every=0"])
    assert (empty / "config.json").is_file() and (empty / "checkpoints").is_dir()
    capsys.readouterr()
    err = one_line_error(["train", "--env", "gym:CartPole-v1", "--run-dir", str(empty)], capsys)
    assert f"pass --resume {empty}" in err  # a run: --resume is the way on
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    err = one_line_error(["train", "--env", "gym:CartPole-v1", "--run-dir", str(other)], capsys)
    assert "not a gdi run folder" in err and "--resume" not in err
    assert (other / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("text", ["1.5", "abc", "1e-3"])
def test_frames_takes_whole_numbers_in_any_notation_and_refuses_others_in_one_line(
        text, capsys):
    from gdi.cli.options import count_from_str

    assert count_from_str(["1e6"]) == count_from_str(["1_000_000"]) == 1_000_000
    assert count_from_str(["2000"]) == 2000
    err = one_line_error(["train", "--frames", text, "--env", "gym:CartPole-v1"], capsys)
    assert f"--frames {text!r} is not a whole number" in err
