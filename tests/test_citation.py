"""CITATION.cff (issue 44): valid CFF that names the paper, at the package's version."""

from pathlib import Path

import yaml

import gdi

ROOT = Path(__file__).resolve().parents[1]


def test_citation_file_names_the_paper_at_this_version():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["version"] == gdi.__version__
    paper = cff["preferred-citation"]
    assert paper["title"] == "Generalized Data Distribution Iteration"
    assert [a["family-names"] for a in paper["authors"]] == ["Fan", "Xiao"]
    assert (paper["year"], paper["volume"], paper["start"], paper["end"]) == (2022, 162, 6103, 6184)
    bibtex = (ROOT / "docs" / "index.md").read_text()
    assert "pages     = {6103--6184}" in bibtex and paper["url"] in bibtex
