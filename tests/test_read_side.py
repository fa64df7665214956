"""The commands that read a run and write beside it (`evaluate`, `report`, `plot-meta`,
`enjoy --video`) on a folder they cannot write, a full disk or a read-only one, and on a λ log
cut short by a crash (issue 45, items 8 and 11): one line before the work, never a traceback
or an empty file."""

import shutil
import subprocess

import pytest

from gdi.cli import main
from gdi.runtime.wiring import train
from tests.conftest import fill_up
from tests.runtime.helpers import one_line_error, tiny_config


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("read_side") / "run"
    return train(tiny_config(frames=800), folder, show_progress=False, tensorboard=False).run_dir


def failed_in_one_line(argv, capsys, code: int) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == code
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_plot_meta_takes_a_cut_last_line_as_resume_does(run, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    with (copy / "meta.jsonl").open("a") as meta:
        meta.write('{"frames": 900, "actor": 0, "lamb')  # a write cut short by a crash
    lines = len((copy / "meta.jsonl").read_text().splitlines())
    main(["plot-meta", str(copy)])
    captured = capsys.readouterr()
    assert captured.err.strip() == (f"warning: {copy / 'meta.jsonl'}: left out its incomplete "
                                    f"last line {lines} (a write cut short by a crash)")
    assert (copy / "meta.png").stat().st_size > 10_000


@pytest.fixture(params=["full", "read-only"])
def unwritable_run(request, run, full_disk):
    """The run copied onto a file system that is then full, or remounted read-only."""
    (full_disk / ".filler").unlink()
    copy = full_disk / "run"
    shutil.copytree(run, copy)
    if request.param == "full":
        fill_up(full_disk)
        return copy, "No space left on device"
    remounted = subprocess.run(["mount", "-o", "remount,ro", str(full_disk)],
                               capture_output=True, text=True)
    if remounted.returncode != 0:
        pytest.skip(f"cannot remount read-only: {remounted.stderr.strip()}")
    return copy, "is on a read-only file system"


def test_read_side_commands_on_a_full_or_read_only_folder_are_one_line(unwritable_run, capsys):
    copy, reason = unwritable_run
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    err = failed_in_one_line(["evaluate", str(copy), "--episodes", "2"], capsys, 1)
    assert err.startswith(f"gdi: error: cannot write the evaluation in {copy / 'eval'}: ")
    assert reason in err and err.endswith("; nothing was done")
    err = failed_in_one_line(["plot-meta", str(copy)], capsys, 1)
    assert err.startswith(f"gdi: error: could not write the figure {copy / 'meta.png'}: ")
    assert reason in err
    err = failed_in_one_line(["report", str(copy)], capsys, 1)
    assert err.startswith(f"gdi: error: cannot write the report in {copy / 'report'}")
    err = one_line_error(["enjoy", str(copy), "--video", str(copy / "play.gif")], capsys)
    assert "cannot write the video" in err and reason in err
    # Nothing was left behind: no empty figure, eval file or temporary file.
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before
