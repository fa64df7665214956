"""benchmarks.input_stats: what input_norm=running learned, drawn from a run's checkpoint."""

import pytest

from benchmarks.input_stats import main as input_stats
from gdi.cli import main
from tests.runtime.helpers import TINY


def test_a_run_with_input_statistics_is_drawn_and_its_statistics_counted(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--env", "ale:Breakout", "--scale", "ale-cpu", "--frames", "1200",
          "--seed", "0", "--backend", "inline", "--run-dir", str(run), "--no-report",
          "--set", *TINY, "input_norm=running", "eval_every=0"])
    capsys.readouterr()
    out = tmp_path / "stats.png"
    assert input_stats(["--run", str(run), "--steps", "30", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.stat().st_size > 10_000  # four images drawn
    count = int(printed.split("statistics of ")[1].split(" observations")[0].replace(",", ""))
    assert count > 0 and count % 4 == 0  # whole sequences' steps (TINY's 4 sequences a batch)


def test_a_run_without_them_is_refused_in_one_line(tmp_path):
    run = tmp_path / "run"
    main(["train", "--env", "ale:Breakout", "--scale", "ale-cpu", "--frames", "400",
          "--seed", "0", "--backend", "inline", "--run-dir", str(run), "--no-report",
          "--learning", "paper", "--set", *TINY, "eval_every=0"])
    with pytest.raises(SystemExit, match="trained with input_norm=none"):
        input_stats(["--run", str(run), "--out", str(tmp_path / "x.png")])
