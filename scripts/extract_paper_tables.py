"""Extract the GDI paper's per-game Atari score tables into the CSV files of gdi.evaluation.

The paper (Fan & Xiao, ICML 2022) prints the raw score of every algorithm it compares in
fifteen tables of App. "Experimental Results": five groups of algorithms (200M model-free with
GDI-I³, the same with GDI-H³, 10B+ model-free, model-based, other) times three normalizations
(subsections "Atari Games Table of Scores Based on Human Average Records", "... Human World
Records" and "... SABER"). The same raw score is therefore printed up to fifteen times, and the
copies do not always agree. This script parses every table cell, reconciles the copies into one
raw score per (algorithm, game), and writes what ``gdi.evaluation`` reads:

``games.csv``          game, random, human_average, human_world_record (57 rows; the ``ale:``
                       spec of each is gdi.evaluation.games', matched to gdi.envs)
``algorithms.csv``     algorithm, label, training_frames, category, source
``scores.csv``         algorithm, game, raw_score, training_frames (one row per pair;
                       an empty raw_score is the paper's N/A, never zero)
``paper_summary.csv``  algorithm, statistic, printed: the ``\\def`` macros of the preamble that
                       the "Full Performance Comparison" table prints
``paper_cells.csv``    the audit trail: every printed (raw, normalized) cell with its table and
                       line, so each kept value can be traced back to the paper

Reconciliation rule for one (algorithm, game): among the distinct raw values printed, keep the
one that reproduces the most printed normalized scores (HNS, HWRNS, SABER of the same cells,
to the printed precision); ties go to the more precise value, then to the value printed most
often. ``--errata`` prints every disagreement and the kept value as Markdown
(docs/paper-errata.md holds the reviewed copy).

Usage (from the repository root)::

    python scripts/extract_paper_tables.py [PAPER.tex] [--out DIR] [--errata]

PAPER.tex defaults to ../shared/paper/gdi-paper.tex, DIR to gdi/evaluation/data.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TEX = REPO.parent / "shared" / "paper" / "gdi-paper.tex"
DEFAULT_OUT = REPO / "gdi" / "evaluation" / "data"

# Column header in the tables -> (id, label, category, \def prefix, source of the scores as
# App. "Atari Games Table of Scores Based on Human Average Records" states it).
ALGORITHMS = {
    "GDI-I$^3$": ("gdi-i3", "GDI-I³", "200M model-free", "GDII", "this paper"),
    "GDI-H$^3$": ("gdi-h3", "GDI-H³", "200M model-free", "GDIH", "this paper"),
    "RAINBOW": ("rainbow", "Rainbow", "200M model-free", "rainbow", "Hessel et al. 2018"),
    "IMPALA": ("impala", "IMPALA", "200M model-free", "impala", "Espeholt et al. 2018"),
    "LASER": ("laser", "LASER", "200M model-free", "laser", "Schmitt et al. 2020"),
    "R2D2": ("r2d2", "R2D2", "10B+ model-free", "rtdt", "Kapturowski et al. 2019"),
    "NGU": ("ngu", "NGU", "10B+ model-free", "ngu", "Badia et al. 2020b"),
    "AGENT57": ("agent57", "Agent57", "10B+ model-free", "agent", "Badia et al. 2020a"),
    "MuZero": ("muzero", "MuZero", "model-based", "muzero", "Schrittwieser et al. 2020"),
    "DreamerV2": ("dreamerv2", "DreamerV2", "model-based", "dreamer", "Hafner et al. 2021"),
    "SimPLe": ("simple", "SimPLe", "model-based", "simple", "Kaiser et al. 2020"),
    "Muesli": ("muesli", "Muesli", "other", "muesli", "Hessel et al. 2021"),
    "Go-Explore": ("go-explore", "Go-Explore", "other", "goexplore", "Ecoffet et al. 2021"),
}
BASELINE_COLUMNS = {"RND": "random", "HUMAN": "human_average", "HWR": "human_world_record"}
METRICS = ("HNS", "HWRNS", "SABER")
# Suffix of each \def macro -> statistic name in paper_summary.csv.
SUMMARY_MACROS = {
    "numframes": "training_frames",
    "gametime": "playtime_days",
    "HWRB": "hwrb",
    "meanhns": "mean_hns",
    "medianhns": "median_hns",
    "meanHWRNS": "mean_hwrns",
    "medianHWRNS": "median_hwrns",
    "meanSABER": "mean_saber",
    "medianSABER": "median_saber",
}
SCALE_UNITS = {"M": 10**6, "B": 10**9}
SECTION_START = r"\subsection{Atari Games Table of Scores Based on Human Average Records}"
SECTION_END = r"\subsection{Atari Games Learning Curves}"


@dataclass(frozen=True)
class Cell:
    """One printed (raw score, normalized score) pair of a score table."""

    table: str
    line: int
    metric: str
    algorithm: str
    game: str
    raw: str
    normalized: str


@dataclass(frozen=True)
class Conflict:
    """Raw-score copies of one (algorithm, game) that disagree, and the value kept."""

    algorithm: str
    game: str
    printed: dict[str, list[str]]  # printed text -> tables printing it
    kept: str
    reason: str


def _clean(cell: str) -> str:
    cell = re.sub(r"\\(?:textbf|best)\{([^{}]*)\}", r"\1", cell)
    return cell.replace("(\\%)", "").replace("\t", " ").strip()


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _split_row(line: str) -> list[str]:
    # A row ends in "\\\\" (two rows of the SABER tables carry a stray third backslash).
    return [_clean(c) for c in re.sub(r"\\+\s*$", "", line.strip()).split("&")]


def _table_id(caption: str) -> str:
    metric = re.search(r"on (HNS|HWRNS|SABER)", caption).group(1)
    if "200M" in caption:
        group = "200m-i3" if "GDI-I" in caption else "200m-h3"
    elif "10B+" in caption:
        group = "10b"
    elif "model-based" in caption:
        group = "model-based"
    else:
        group = "other"
    return f"{metric.lower()}-{group}"


def parse_tables(tex: str) -> tuple[list[Cell], dict, dict, list[str]]:
    """Parse the fifteen score tables.

    Returns the algorithm cells, the baseline cells ``{game: {column: [(table, text)]}}``,
    the training scales ``{algorithm: [(table, text)]}`` and notes on structural defects.
    """
    start = tex.index(SECTION_START)
    end = tex.index(SECTION_END)
    line_offset = tex.count("\n", 0, start) + 1
    cells: list[Cell] = []
    baselines: dict = defaultdict(lambda: defaultdict(list))
    scales: dict = defaultdict(list)
    defects: list[str] = []
    for match in re.finditer(r"\\begin\{table\}.*?\\end\{table\}", tex[start:end], re.S):
        block = match.group(0)
        first_line = line_offset + tex.count("\n", start, start + match.start())
        table = _table_id(re.search(r"\\caption\{(.*?)\}\n", block).group(1))
        metric = table.split("-")[0].upper()
        rows = [(first_line + i, line) for i, line in enumerate(block.split("\n")) if "&" in line]
        header = _split_row(rows[0][1])
        scale_row = _split_row(rows[1][1])
        for j, name in enumerate(header):
            if name in ALGORITHMS:
                algorithm = ALGORITHMS[name][0]
                scale = scale_row[j] or (scale_row[j + 1] if j + 1 < len(scale_row) else "")
                if not scale_row[j]:
                    defects.append(
                        f"`{table}` (line {rows[1][0]}): the Scale row puts {algorithm}'s "
                        f"training scale under the normalized-score column."
                    )
                scales[algorithm].append((table, scale))
        for line_number, line in rows[2:]:
            row = _split_row(line)
            if row[0].startswith(("MEAN", "MEDIAN")):
                continue
            game = row[0]
            if len(row) == len(header) - 1:
                # The only short row of the paper lacks the raw score of the last algorithm;
                # its last cell is the normalized score (checked against the other tables
                # when the copies are reconciled).
                defects.append(
                    f"`{table}` (line {line_number}), {game}: the row has {len(row)} cells "
                    f"for {len(header)} columns; the raw score of {header[-2]} is missing "
                    f"and only its normalized score {row[-1]} is printed."
                )
                row = [*row[:-1], "", row[-1]]
            elif len(row) != len(header):
                raise ValueError(f"line {line_number}: {len(row)} cells for {len(header)} columns")
            for j, name in enumerate(header):
                if name in BASELINE_COLUMNS:
                    baselines[game][BASELINE_COLUMNS[name]].append((table, row[j]))
                elif name in ALGORITHMS:
                    cells.append(
                        Cell(
                            table,
                            line_number,
                            metric,
                            ALGORITHMS[name][0],
                            game,
                            row[j],
                            row[j + 1],
                        )
                    )
    return cells, baselines, scales, defects


def normalized(metric: str, raw: float, base: dict[str, float]) -> float:
    """HNS, HWRNS or SABER in percent (App. "Evaluation Metrics for ALE")."""
    reference = base["human_average"] if metric == "HNS" else base["human_world_record"]
    score = 100.0 * (raw - base["random"]) / (reference - base["random"])
    return min(max(score, 0.0), 200.0) if metric == "SABER" else score


def reproduces(cell: Cell, raw: float, base: dict[str, float]) -> bool:
    """Whether ``raw`` gives the cell's printed normalized score to the printed precision."""
    printed = _number(cell.normalized)
    if printed is None:
        return False
    tolerance = 0.5 * 10.0 ** -_decimals(cell.normalized) + 1e-9
    return abs(normalized(cell.metric, raw, base) - printed) <= tolerance


def reconcile_baselines(baselines: dict) -> tuple[dict[str, dict[str, float]], list[str]]:
    """One random / human / record value per game; every disagreement is a defect."""
    kept: dict[str, dict[str, float]] = {}
    notes = []
    for game, columns in baselines.items():
        kept[game] = {}
        for column, copies in columns.items():
            values = Counter(float(text) for _, text in copies)
            if len(values) > 1:
                notes.append(f"{game}: {column} printed as {sorted(values)}")
            kept[game][column] = values.most_common(1)[0][0]
    return kept, notes


def reconcile_scores(
    cells: list[Cell], base: dict[str, dict[str, float]]
) -> tuple[dict[tuple[str, str], str], list[Conflict]]:
    """Keep one raw score per (algorithm, game) by the rule of the module docstring."""
    by_pair: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for cell in cells:
        by_pair[(cell.algorithm, cell.game)].append(cell)
    kept: dict[tuple[str, str], str] = {}
    conflicts: list[Conflict] = []
    for (algorithm, game), copies in by_pair.items():
        texts = Counter(c.raw for c in copies if c.raw)
        numeric = {t: _number(t) for t in texts}
        if all(v is None for v in numeric.values()):
            if set(texts) != {"N/A"}:
                raise ValueError(f"{algorithm} {game}: no numeric raw score in {dict(texts)}")
            kept[(algorithm, game)] = ""
            continue
        candidates = {t: v for t, v in numeric.items() if v is not None}
        distinct_values = set(candidates.values())
        support = {
            t: sum(reproduces(c, v, base[game]) for c in copies) for t, v in candidates.items()
        }
        best = max(candidates, key=lambda t: (support[t], _decimals(t), texts[t]))
        kept[(algorithm, game)] = best
        if (
            len(distinct_values) > 1
            or len(texts) > len(candidates)
            or "" in {c.raw for c in copies}
        ):
            printed: dict[str, list[str]] = defaultdict(list)
            for c in copies:
                printed[c.raw or "(missing)"].append(c.table)
            n_printed = sum(_number(c.normalized) is not None for c in copies)
            others = [f"{t}: {support[t]}" for t in candidates if t != best]
            reason = f"reproduces {support[best]} of the {n_printed} printed normalized scores"
            reason += f" (other values: {', '.join(others)})" if others else " (the only value)"
            conflicts.append(Conflict(algorithm, game, dict(printed), best, reason))
    return kept, conflicts


def normalized_mismatches(
    cells: list[Cell], kept: dict[tuple[str, str], str], base: dict[str, dict[str, float]]
) -> list[tuple[Cell, str]]:
    """Printed normalized cells that the kept raw score does not reproduce."""
    out = []
    for cell in cells:
        raw = _number(kept[(cell.algorithm, cell.game)])
        if raw is None:
            if cell.normalized != "N/A":
                out.append((cell, "N/A"))
            continue
        if not reproduces(cell, raw, base[cell.game]):
            out.append((cell, f"{normalized(cell.metric, raw, base[cell.game]):.2f}"))
    return out


def parse_scale(text: str) -> int:
    match = re.fullmatch(r"([\d.]+)([MB])", text)
    if match is None:
        raise ValueError(f"unreadable training scale {text!r}")
    return round(float(match.group(1)) * SCALE_UNITS[match.group(2)])


def reconcile_scales(scales: dict, summary: dict[str, dict[str, str]]) -> dict[str, int]:
    """Training frames per algorithm: the tables' Scale rows, checked against the macros."""
    frames = {}
    for algorithm, copies in scales.items():
        values = {parse_scale(text) for _, text in copies if text}
        if len(values) != 1:
            raise ValueError(f"{algorithm}: training scales disagree: {copies}")
        frames[algorithm] = values.pop()
        macro = round(float(summary[algorithm]["training_frames"]))
        if macro != frames[algorithm]:
            raise ValueError(f"{algorithm}: Scale row {frames[algorithm]} != macro {macro}")
    return frames


def parse_summary(tex: str) -> dict[str, dict[str, str]]:
    """The ``\\def`` macros of the preamble, per algorithm and statistic, as printed."""
    macros = {name: value.strip() for name, value in re.findall(r"\\def\\(\w+)\{([^}]*)\}", tex)}
    summary: dict[str, dict[str, str]] = {}
    for algorithm, _, _, prefix, _ in ALGORITHMS.values():
        summary[algorithm] = {
            statistic: macros[prefix + suffix] for suffix, statistic in SUMMARY_MACROS.items()
        }
    return summary


def _write(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_csvs(out: Path, tex: str) -> tuple[list[Conflict], list, list[str]]:
    """Parse, reconcile and write the five CSV files; return what the errata report needs."""
    cells, baseline_cells, scale_cells, defects = parse_tables(tex)
    base, baseline_notes = reconcile_baselines(baseline_cells)
    kept, conflicts = reconcile_scores(cells, base)
    summary = parse_summary(tex)
    frames = reconcile_scales(scale_cells, summary)
    games = list(base)
    if len(games) != 57:
        raise ValueError(f"expected 57 games, parsed {len(games)}")
    for cell in cells:
        if cell.normalized and _number(cell.normalized) is None and cell.normalized != "N/A":
            defects.append(
                f"`{cell.table}` (line {cell.line}), {cell.game}, {cell.algorithm}: "
                f"normalized score printed as {cell.normalized!r}."
            )
    defects.extend(f"baselines disagree: {note}" for note in baseline_notes)
    out.mkdir(parents=True, exist_ok=True)
    _write(
        out / "games.csv",
        ["game", "random", "human_average", "human_world_record"],
        [[g, *(_fmt(base[g][c]) for c in BASELINE_COLUMNS.values())] for g in games],
    )
    order = [spec[0] for spec in ALGORITHMS.values()]
    _write(
        out / "algorithms.csv",
        ["algorithm", "label", "training_frames", "category", "source"],
        [[a, label, frames[a], cat, src] for a, label, cat, _, src in ALGORITHMS.values()],
    )
    _write(
        out / "scores.csv",
        ["algorithm", "game", "raw_score", "training_frames"],
        [[a, g, kept[(a, g)], frames[a]] for a in order for g in games],
    )
    _write(
        out / "paper_summary.csv",
        ["algorithm", "statistic", "printed"],
        [[a, s, v] for a in order for s, v in summary[a].items()],
    )
    _write(
        out / "paper_cells.csv",
        ["table", "line", "metric", "algorithm", "game", "raw_printed", "normalized_printed"],
        [[c.table, c.line, c.metric, c.algorithm, c.game, c.raw, c.normalized] for c in cells],
    )
    return conflicts, normalized_mismatches(cells, kept, base), defects


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def errata_markdown(conflicts: list[Conflict], mismatches: list, defects: list[str]) -> str:
    """The three generated sections of docs/paper-errata.md."""
    lines = ["### Raw scores printed differently in different tables", ""]
    lines += [
        "| algorithm | game | printed (tables) | kept | why |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in conflicts:
        printed = "; ".join(f"{t} ({', '.join(tables)})" for t, tables in c.printed.items())
        lines.append(f"| {c.algorithm} | {c.game} | {printed} | {c.kept} | {c.reason} |")
    lines += ["", "### Structural defects", ""]
    lines += [f"- {d}" for d in defects]
    lines += ["", "### Printed normalized scores the kept raw score does not reproduce", ""]
    lines += [
        "| table | line | algorithm | game | raw printed | printed | recomputed |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for cell, recomputed in mismatches:
        lines.append(
            f"| {cell.table} | {cell.line} | {cell.algorithm} | {cell.game} | "
            f"{cell.raw or '(missing)'} | {cell.normalized} | {recomputed} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tex", nargs="?", type=Path, default=DEFAULT_TEX, help="the paper's .tex")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the CSV files")
    parser.add_argument("--errata", action="store_true", help="print the errata as Markdown")
    args = parser.parse_args(argv)
    if not args.tex.is_file():
        parser.error(f"paper not found: {args.tex}")
    conflicts, mismatches, defects = write_csvs(args.out, args.tex.read_text(encoding="utf-8"))
    if args.errata:
        sys.stdout.write(errata_markdown(conflicts, mismatches, defects))
    else:
        print(
            f"wrote {args.out}: {len(conflicts)} raw-score disagreements, "
            f"{len(mismatches)} normalized cells not reproduced, {len(defects)} defects"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
