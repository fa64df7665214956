"""The paper's per-game tables shipped as CSV: content, N/A handling, regeneration from the
paper's source, and the errata that docs/paper-errata.md documents (sections 2 and 5)."""

import csv
import filecmp
import importlib.util
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from gdi.evaluation import baselines, paper_algorithms, paper_scores
from gdi.evaluation.paper_scores import algorithm
from tests.evaluation.markdown_tables import table_after

REPO = Path(__file__).resolve().parents[2]
DATA = resources.files("gdi.evaluation").joinpath("data")
ERRATA = (REPO / "docs" / "paper-errata.md").read_text(encoding="utf-8")


def _script():
    spec = importlib.util.spec_from_file_location(
        "extract_paper_tables", REPO / "scripts" / "extract_paper_tables.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


EXTRACT = _script()


def _rows(name):
    with DATA.joinpath(name).open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_tidy_scores_one_row_per_algorithm_and_game():
    rows = _rows("scores.csv")
    assert len(rows) == 13 * 57
    assert len({(r["algorithm"], r["game"]) for r in rows}) == 13 * 57
    assert [a.id for a in paper_algorithms()] == list(dict.fromkeys(r["algorithm"] for r in rows))


def test_na_is_missing_never_zero():
    rows = _rows("scores.csv")
    missing = {(r["algorithm"], r["game"]) for r in rows if r["raw_score"] == ""}
    # SimPLe reports 36 games, DreamerV2 and Go-Explore 55 (no Defender, no Surround).
    counts = {
        a: sum(1 for m in missing if m[0] == a) for a in ("simple", "dreamerv2", "go-explore")
    }
    assert counts == {"simple": 21, "dreamerv2": 2, "go-explore": 2}
    assert len(missing) == 25
    assert {("dreamerv2", "Defender"), ("go-explore", "Surround")} <= missing
    scores = paper_scores(["simple"], ["Berzerk", "Boxing"])
    assert np.isnan(scores.raw[0, 0]) and scores.raw[0, 1] == 7.8
    # A true zero stays a zero: IMPALA's Enduro.
    assert paper_scores(["impala"], ["Enduro"]).raw[0, 0] == 0.0


def test_spot_values_from_the_paper():
    raw = paper_scores(["gdi-h3", "laser", "agent57"], ["Ice Hockey", "Alien", "Pitfall"]).raw
    assert raw[0, 0] == 47.11  # missing from one table, printed in eleven
    assert raw[1, 1] == 35565.9  # 976.51 in four tables
    assert raw[2, 2] == 18756.01
    base = baselines(["Crazy Climber", "Montezuma Revenge", "Skiing"])
    np.testing.assert_array_equal(base.random, [10780.5, 0.0, -17098.0])
    np.testing.assert_array_equal(base.human_average, [36829.4, 4753.3, -4336.9])
    np.testing.assert_array_equal(base.human_world_record, [219900.0, 1219200.0, -3272.0])


def test_training_scales_in_frames():
    frames = {a.id: a.training_frames for a in paper_algorithms()}
    assert frames == {
        "gdi-i3": 200_000_000, "gdi-h3": 200_000_000, "rainbow": 200_000_000,
        "impala": 200_000_000, "laser": 200_000_000, "r2d2": 10_000_000_000,
        "ngu": 35_000_000_000, "agent57": 100_000_000_000, "muzero": 20_000_000_000,
        "dreamerv2": 200_000_000, "simple": 1_000_000, "muesli": 200_000_000,
        "go-explore": 10_000_000_000,
    }  # fmt: skip
    assert {r["training_frames"] for r in _rows("scores.csv") if r["algorithm"] == "ngu"} == {
        "35000000000"
    }


def test_algorithm_lookup_with_close_matches():
    assert algorithm("GDI-H³").id == algorithm("gdi-h3").id == "gdi-h3"
    assert algorithm("Go-Explore").id == "go-explore"
    with pytest.raises(ValueError, match="close matches: agent57"):
        algorithm("agent75")


TEX = REPO.parent / "shared" / "paper" / "gdi-paper.tex"


@pytest.mark.skipif(not TEX.is_file(), reason="the paper's source is not beside the repository")
def test_csv_files_regenerate_identically_from_the_paper(tmp_path):
    assert EXTRACT.main([str(TEX), "--out", str(tmp_path)]) == 0
    names = ["games.csv", "algorithms.csv", "scores.csv", "paper_summary.csv", "paper_cells.csv"]
    for name in names:
        assert filecmp.cmp(tmp_path / name, Path(str(DATA.joinpath(name))), shallow=False), name


def _audit():
    """Reconcile again from the shipped audit trail (every printed cell)."""
    cells = [
        EXTRACT.Cell(
            r["table"],
            int(r["line"]),
            r["metric"],
            r["algorithm"],
            r["game"],
            r["raw_printed"],
            r["normalized_printed"],
        )
        for r in _rows("paper_cells.csv")
    ]
    base = {
        r["game"]: {k: float(r[k]) for k in ("random", "human_average", "human_world_record")}
        for r in _rows("games.csv")
    }
    kept, conflicts = EXTRACT.reconcile_scores(cells, base)
    return cells, base, kept, conflicts


def test_kept_raw_scores_follow_the_documented_rule():
    _, _, kept, _ = _audit()
    shipped = {(r["algorithm"], r["game"]): r["raw_score"] for r in _rows("scores.csv")}
    assert shipped == kept


def test_raw_score_disagreements_are_exactly_those_documented():
    _, _, _, conflicts = _audit()
    documented = {
        (r[0], r[1], r[3]) for r in table_after(ERRATA, "## 2. Raw scores printed differently")
    }
    assert {(c.algorithm, c.game, c.kept) for c in conflicts} == documented
    assert len(documented) == 12


def test_normalized_cells_not_reproduced_are_exactly_those_documented():
    cells, base, kept, _ = _audit()
    found = {
        (c.table, str(c.line), c.algorithm, c.game, c.normalized, recomputed)
        for c, recomputed in EXTRACT.normalized_mismatches(cells, kept, base)
    }
    documented = {
        (r[0], r[1], r[2], r[3], r[5], r[6])
        for r in table_after(ERRATA, "## 5. Printed normalized scores")
    }
    assert found == documented
