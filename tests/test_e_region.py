"""benchmarks/e_region.py: where E samples over a run against its control (issue 42, item 2),
by hand on a fabricated grid."""

import csv
import json
import math

import pytest
from matplotlib.image import imread

from benchmarks import e_region
from gdi.presets import resolve_config
from tests.test_minatar_grid import fake_run
from tests.tolerance import assert_close


def test_the_uniform_share_above_a_threshold_in_each_coordinate():
    assert_close(e_region.uniform_share_above(50, 0, 1000, "log1p"),
                 1 - math.log(51) / math.log(1001), terms=4)
    assert_close(e_region.uniform_share_above(40, 0, 50, "identity"), 0.2, terms=3)
    assert e_region.uniform_share_above(60, 0, 50, "identity") == 0.0
    with pytest.raises(ValueError, match="transform: unknown value 'sqrt'"):
        e_region.uniform_share_above(1, 0, 2, "sqrt")
    with pytest.raises(ValueError, match=r"range \[1, 1\] is empty"):
        e_region.uniform_share_above(1, 1, 1, "identity")


def test_a_box_searched_in_log_coordinates_puts_the_uniform_line_at_its_share(tmp_path):
    # The positive control's box: 1/τ ∈ [0, 1000] in log(1 + 1/τ); the λ log holds λ itself.
    root = tmp_path / "grid"
    for cell in e_region.CELLS:
        for seed in (0, 1):
            run = fake_run(root, "breakout", cell, seed, [1, 2, 3, 4, 5],
                           lambdas={250 + 500 * k: (200.0, 20.0, 0.5) for k in range(10)})
            config = resolve_config(cell, "minatar:breakout", search="log1p-1000",
                                    frames=5000, seed=seed, backend="inline").to_dict()
            (run / "config.json").write_text(json.dumps({**config, "name": run.name}))
    table, expected = e_region.shares(root, 50.0)
    assert_close(expected[("breakout", "inv_tau1")], 1 - math.log(51) / math.log(1001),
                 terms=4)
    assert table[("breakout", "gdi-i3", "inv_tau1")].tolist() == [[1.0] * 10] * 2
    assert table[("breakout", "gdi-i3-uniform", "inv_tau2")].tolist() == [[0.0] * 10] * 2


def test_a_run_without_episodes_is_a_clear_error(tmp_path, capsys):
    root = tmp_path / "grid"
    for cell in e_region.CELLS:
        fake_run(root, "breakout", cell, 0, [1, 2, 3, 4, 5])  # meta.jsonl without a row
    assert e_region.main(["--root", str(root), "--above", "10",
                          "--out", str(tmp_path / "r.png")]) == 2
    assert "breakout__gdi-i3__0/meta.jsonl has no finished episodes yet" in \
        capsys.readouterr().err


def test_the_command_plots_and_tabulates_the_share_per_tenth(tmp_path, capsys):
    root = tmp_path / "grid"
    # Budget 5,000 frames: one episode in each tenth of 500 frames. E's runs leave 1/τ₁ > 40
    # after the first half; the control's stay at 45 (τ₁) throughout. 1/τ₂ is 10 everywhere.
    for seed in (0, 1):
        fake_run(root, "breakout", "gdi-i3", seed, [1, 2, 3, 4, 5],
                 lambdas={250 + 500 * k: (45.0 if k < 5 else 5.0 + seed, 10.0, 0.5)
                          for k in range(10)})
        fake_run(root, "breakout", "gdi-i3-uniform", seed, [1, 2, 3, 4, 5],
                 lambdas={250 + 500 * k: (45.0, 10.0, 0.5) for k in range(10)})
    out = tmp_path / "figs" / "region.png"
    assert e_region.main(["--root", str(root), "--above", "40", "--out", str(out)]) == 0
    assert imread(out).shape[0] > 300
    table = list(csv.reader(out.with_suffix(".csv").open()))
    assert table[0] == e_region.HEADER
    found = {(row[1], row[2]): row for row in table[1:]}
    # The box is the MinAtar scale's [0, 50] in λ itself: uniform puts 0.2 above 40.
    assert found[("gdi-i3", "inv_tau1")][4:] == ["0.20", "1.00 [1.00, 1.00]",
                                                  "0.00 [0.00, 0.00]"]
    assert found[("gdi-i3-uniform", "inv_tau1")][5:] == ["1.00 [1.00, 1.00]",
                                                        "1.00 [1.00, 1.00]"]
    assert found[("gdi-i3", "inv_tau2")][5:] == ["0.00 [0.00, 0.00]", "0.00 [0.00, 0.00]"]
    assert "| breakout | gdi-i3 | inv_tau1 | 2 |" in capsys.readouterr().out
    assert e_region.main(["--root", str(root), "--above", "40", "--cells", "gdi-i3,gdi-i0",
                          "--out", str(out)]) == 2
    assert "no finished runs of gdi-i0; its cells: gdi-i3, gdi-i3-uniform" in \
        capsys.readouterr().err
