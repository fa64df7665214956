"""What a run prints when its output is a file or a pipe (``nohup gdi train ... > log``): one
line per update with frames, frames/s, ETA, the recent mean return and the policy lag."""

import re

from gdi.runtime.progress import TrainingProgress, _eta, short_title


def test_eta_is_frames_left_over_rate_as_h_mm_ss():
    assert _eta(7_200_000, 2_000.0) == "1:00:00"
    assert _eta(95_000, 1_000.0) == "0:01:35"
    assert _eta(0, 1_000.0) == "0:00:00"
    assert _eta(-5, 1_000.0) == "0:00:00"  # the last window may overshoot the budget
    assert _eta(1_000, 0.0) == "-:--:--"  # no rate yet


def test_plain_lines_show_every_field(capsys):
    progress = TrainingProgress(1_000_000, 0, "minatar-breakout__gdi-i3__0")
    progress.update(250_000, [4.0, 6.0], lag=11.25)
    progress.update(1_000_000, [8.0], lag=10.0)  # the last update always prints
    progress.message("done")
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "minatar-breakout__gdi-i3__0: training to 1,000,000 frames"
    pattern = r"frames ([\d,]+)/1,000,000  ([\d,]+|-) f/s  eta (\S+)  return (\S+)  lag (\S+)"
    first, last = re.fullmatch(pattern, lines[1]), re.fullmatch(pattern, lines[2])
    assert first and last, lines
    # The first update is the first window: the wait for it was start-up, so there is no
    # rate and no time left to show yet (issue 44: "130 f/s eta 0:06:21" on a 48-s run).
    assert first.groups() == ("250,000", "-", "-:--:--", "5.0", "11.2")
    assert last.group(1, 3, 4, 5) == ("1,000,000", "0:00:00", "8.0", "10.0")
    assert last.group(2) != "-"
    assert lines[3] == "done"


def test_long_lines_are_not_wrapped(capsys):
    progress = TrainingProgress(10**12, 0, "run")
    progress.update(10**12, [123456789.0], lag=1.0)
    progress.message("warning: " + "x" * 200)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and lines[2] == "warning: " + "x" * 200


def test_a_long_run_name_is_cut_from_the_left_for_the_bar():
    from gdi.runtime.progress import TITLE_WIDTH

    name = "ale-MontezumaRevenge__gdi-h3__12__20261127-120000"
    assert short_title(name) == "…" + name[-(TITLE_WIDTH - 1):] and len(short_title(name)) == 28
    assert short_title("cp") == "cp"


def test_the_bar_labels_its_times_and_fits_80_columns():
    """On a terminal: the run, the bar and the frames, then each figure with its label (issue
    71: two unlabelled times), every one whole within 80 columns."""
    import io

    from rich.console import Console, Group

    from gdi.runtime.progress import progress_bar

    console = Console(file=io.StringIO(), width=80, color_system=None)
    bar = progress_bar(console)
    bar.add_task(short_title("ale-MontezumaRevenge__gdi-h3__12__20261127-120000"),
                 total=200_000_000, completed=123_456_789, fps="20,085", eta="1:23:45",
                 ret="-1234.5", lag=12.25)
    console.print(Group(*bar.get_renderables()))
    lines = console.file.getvalue().splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines), lines
    assert lines[0].endswith(" 123,456,789/200,000,000 frames")
    assert re.fullmatch(r"20,085 f/s  elapsed \d:\d\d:\d\d  eta 1:23:45  return -1234\.5  "
                        r"lag 12\.2 *", lines[1]), lines[1]
