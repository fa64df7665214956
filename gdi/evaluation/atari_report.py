"""The Atari part of a report: per-game raw and normalized scores beside the paper's
algorithms, aggregates with confidence intervals across seeds, the paper-style summary and the
learning-efficiency plane (App. "Evaluation Metrics for ALE", "Experimental Results").

Normalized scores are in percent throughout, as the paper prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from gdi.evaluation import markdown, plots
from gdi.evaluation.aggregates import STATISTICS, aggregate_intervals, point_estimates
from gdi.evaluation.baselines import normalize
from gdi.evaluation.games import atari_games, game_to_spec, spec_to_game
from gdi.evaluation.metrics import learning_efficiency
from gdi.evaluation.paper import summarize
from gdi.evaluation.paper_scores import algorithm, paper_algorithms, paper_scores
from gdi.evaluation.report_io import ReportFiles
from gdi.scores import RunEvals

METRICS = {"hns": "HNS", "hwrns": "HWRNS", "saber": "SABER"}
REFERENCES = {"hns": "human average", "hwrns": "human world record", "saber": "human world record"}
STATISTIC_HEADERS = {
    "iqm": "IQM",
    "mean": "Mean",
    "median": "Median",
    "optimality_gap": "Optimality gap",
}
SUMMARY_COLUMNS = (
    ("hwrb", "HWRB", 2),
    ("mean_hns", "Mean HNS (%)", 2),
    ("median_hns", "Median HNS (%)", 2),
    ("mean_hwrns", "Mean HWRNS (%)", 2),
    ("median_hwrns", "Median HWRNS (%)", 2),
    ("mean_saber", "Mean SABER (%)", 2),
    ("median_saber", "Median SABER (%)", 2),
)


class GroupScores(NamedTuple):
    """Final scores of one group of Atari runs: ``seeds × games`` (rows sorted by seed)."""

    games: tuple[str, ...]
    raw: np.ndarray
    seeds_per_game: dict[str, int]
    training_frames: float


def group_scores(runs: Sequence[RunEvals]) -> GroupScores:
    """Arrange a group's final scores as a rectangular ``seeds × games`` matrix; a game with
    more seeds than the others contributes its lowest seeds only (rliable needs a matrix)."""
    by_game: dict[str, list[RunEvals]] = {}
    for run in runs:
        by_game.setdefault(spec_to_game(run.env), []).append(run)
    games = tuple(g for g in atari_games() if g in by_game)
    n = min(len(v) for v in by_game.values())
    raw = np.array(
        [[r.final.mean_return for r in sorted(by_game[g], key=lambda r: r.seed)[:n]] for g in games]
    ).T
    frames = float(np.mean([run.final.frames for run in runs]))
    return GroupScores(games, raw, {g: len(by_game[g]) for g in games}, frames)


class PerGame(NamedTuple):
    """Per-game scores of one source (a group of runs or a paper algorithm): for "raw" and each
    metric, mean / min / max over its rows (seeds), arrays over ``games``."""

    source: str
    kind: str  # "run" or "paper"
    games: tuple[str, ...]
    n_seeds: int
    values: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]

    def cell(self, metric: str, game: str) -> str:
        """The mean as a table shows it: "N/A" for the paper's N/A, "—" for a game not run."""
        if game not in self.games:
            return "—"
        return markdown.fmt(float(self.values[metric][0][self.games.index(game)]))

    def over(self, metric: str, games: Sequence[str]) -> tuple[np.ndarray, ...]:
        """Mean, min and max of ``metric`` on ``games`` (NaN for a game not run)."""
        return tuple(
            np.array([a[self.games.index(g)] if g in self.games else np.nan for g in games])
            for a in self.values[metric]
        )


def per_game(source: str, kind: str, games: tuple[str, ...], raw: np.ndarray) -> PerGame:
    """Summarize a ``rows × games`` raw-score matrix per game; normalized scores in percent."""
    matrices = {"raw": raw, **{m: 100 * normalize(raw, games, m) for m in METRICS}}
    values = {
        k: (np.mean(v, axis=0), np.min(v, axis=0), np.max(v, axis=0)) for k, v in matrices.items()
    }
    return PerGame(source, kind, games, raw.shape[0], values)


def _per_game_csv(entries: Sequence[PerGame], files: ReportFiles) -> None:
    header = ["source", "kind", "game", "spec", "n_seeds"]
    for metric in ("raw", *METRICS):
        unit = "" if metric == "raw" else "_pct"
        header += [f"{metric}{unit}_mean", f"{metric}{unit}_min", f"{metric}{unit}_max"]
    rows = []
    for e in entries:
        for j, game in enumerate(e.games):
            row = [e.source, e.kind, game, game_to_spec(game), e.n_seeds if e.kind == "run" else ""]
            for metric in ("raw", *METRICS):
                row += [float(a[j]) for a in e.values[metric]]
            rows.append(row)
    files.csv("atari_per_game.csv", header, rows)


def write_atari_section(
    groups: Mapping[str, Sequence[RunEvals]],
    compare: Sequence[str],
    files: ReportFiles,
    *,
    reps: int,
    seed: int,
) -> str:
    """Write the Atari CSVs and figures; return the Markdown section."""
    scores = {label: group_scores(runs) for label, runs in groups.items()}
    all_games = tuple(g for g in atari_games() if any(g in s.games for s in scores.values()))
    baseline = paper_scores(compare, all_games)
    labels = {a: algorithm(a).label for a in compare}
    runs = [per_game(label, "run", s.games, s.raw) for label, s in scores.items()]
    papers = [
        per_game(labels[a], "paper", all_games, baseline.raw[i : i + 1])
        for i, a in enumerate(compare)
    ]
    _per_game_csv([*runs, *papers], files)
    text = ["## Atari: per-game scores", ""]
    text.append(
        "Final score of each run (its evaluation with the most frames), mean over seeds, beside "
        "the paper's published scores ("
        + "; ".join(
            f"{labels[a]}: {algorithm(a).source}, "
            f"{plots.compact_number(algorithm(a).training_frames)} frames"
            for a in compare
        )
        + '). HNS, HWRNS and SABER in percent (App. "Evaluation Metrics for ALE"); N/A where '
        "the paper has no score. Every number is in `atari_per_game.csv`.\n"
    )
    for metric in ("raw", *METRICS):
        title = "Raw score" if metric == "raw" else f"{METRICS[metric]} (%)"
        rows = [[game, *(e.cell(metric, game) for e in (*runs, *papers))] for game in all_games]
        text += [
            f"### {title}",
            "",
            markdown.table(["Game", *(e.source for e in (*runs, *papers))], rows),
        ]
        if metric == "raw":
            continue
        bars = {
            e.source: plots.GameBars(*(a / 100 for a in e.over(metric, all_games))) for e in runs
        }
        png = plots.per_game_bars(
            all_games,
            bars,
            {e.source: e.values[metric][0] / 100 for e in papers},
            metric=METRICS[metric],
            reference=REFERENCES[metric],
            path=files.path(f"{metric}_per_game.png"),
            log=metric != "saber",
        )
        text += [f"![{METRICS[metric]} per game]({png.name})", ""]
    text += _aggregate_section(scores, baseline, compare, labels, files, reps=reps, seed=seed)
    text += _summary_section(scores, files, reps=reps, seed=seed)
    return "\n".join(text)


def _aggregate_section(scores, baseline, compare, labels, files, *, reps, seed) -> list[str]:
    text = ["## Atari: aggregates across games", ""]
    text.append(
        f"IQM, mean, median and optimality gap (threshold 100%) of the normalized scores, over "
        f"each group's runs × games, with 95% stratified-bootstrap confidence intervals across "
        f"seeds (rliable, {reps} resamples). The paper's algorithms are single published "
        f"scores on the same games, so they have no interval.\n"
    )
    header = [
        "group",
        "source",
        "kind",
        "metric",
        "statistic",
        "point",
        "ci_low",
        "ci_high",
        "n_runs",
        "n_games",
    ]
    rows = []
    for label, s in scores.items():
        idx = [baseline.games.index(g) for g in s.games]
        text.append(f"### {label}: {s.raw.shape[0]} seed(s) × {len(s.games)} game(s)\n")
        dropped = {g: n for g, n in s.seeds_per_game.items() if n > s.raw.shape[0]}
        if dropped:
            text.append(
                f"Games with more seeds than the others contribute their {s.raw.shape[0]} lowest seeds "
                f"to the aggregates: {', '.join(f'{g} ({n})' for g, n in dropped.items())}.\n"
            )
        for metric, name in METRICS.items():
            matrix = normalize(s.raw, s.games, metric)
            estimates = aggregate_intervals({label: matrix}, reps=reps, seed=seed)[label]
            table_rows = [
                [
                    label,
                    *(
                        markdown.fmt_interval(*(100 * v for v in estimates[st]))
                        for st in STATISTICS
                    ),
                ]
            ]
            for st in STATISTICS:
                point, low, high = (100 * v for v in estimates[st])
                rows.append(
                    [label, label, "run", name, st, point, low, high, matrix.shape[0], len(s.games)]
                )
            missing = []
            for i, a in enumerate(compare):
                values = normalize(baseline.raw[i : i + 1, idx], s.games, metric)
                if not np.all(np.isfinite(values)):
                    missing.append(labels[a])
                    continue
                points = point_estimates(values)
                table_rows.append(
                    [labels[a], *(markdown.fmt(100 * points[st]) for st in STATISTICS)]
                )
                rows += [
                    [
                        label,
                        labels[a],
                        "paper",
                        name,
                        st,
                        100 * points[st],
                        np.nan,
                        np.nan,
                        1,
                        len(s.games),
                    ]
                    for st in STATISTICS
                ]
            text += [
                f"{name} (%):",
                "",
                markdown.table(["", *(STATISTIC_HEADERS[st] for st in STATISTICS)], table_rows),
            ]
            if missing:
                text.append(f"Not aggregated (N/A on some of these games): {', '.join(missing)}.\n")
    files.csv("atari_aggregates.csv", header, rows)
    return text


def _summary_section(scores, files, *, reps, seed) -> list[str]:
    common = tuple(g for g in atari_games() if all(g in s.games for s in scores.values()))
    text = ["## Atari: paper-style summary and learning efficiency", ""]
    if not common:
        text.append("The groups of runs share no game, so no common summary is drawn.\n")
        return text
    text.append(
        f'The statistics of the paper\'s "Full performance comparison" over the {len(common)} '
        f"game(s) every group of runs covers ({', '.join(common) if len(common) <= 8 else 'see atari_summary.csv'}); "
        f"runs use their mean final score over seeds and their mean final frames as training "
        f'scale; learning efficiency is mean HNS per training frame (App. "Learning Efficiency").\n'
    )
    paper = paper_scores(games=common)
    entries = []
    for label, s in scores.items():
        idx = [s.games.index(g) for g in common]
        entries.append(
            (
                label,
                "run",
                summarize(np.mean(s.raw[:, idx], axis=0), common, s.training_frames),
                s.raw[:, idx],
            )
        )
    left_out = []
    for i, algo in enumerate(paper_algorithms()):
        if np.all(np.isfinite(paper.raw[i])):
            entries.append(
                (algo.label, "paper", summarize(paper.raw[i], common, algo.training_frames), None)
            )
        else:
            left_out.append(algo.label)
    if left_out:
        text.append(f"Left out (N/A in the paper on some of these games): {', '.join(left_out)}.\n")
    header = ["source", "kind", "n_games", "training_frames", "playtime_days"]
    header += [c for c, _, _ in SUMMARY_COLUMNS] + [
        "efficiency_mean_hns_pct_per_frame",
        "efficiency_median_hns_pct_per_frame",
    ]
    rows, md_rows = [], []
    for label, kind, v, _ in entries:
        eff_mean = float(learning_efficiency(v["mean_hns"], v["training_frames"]))
        eff_median = float(learning_efficiency(v["median_hns"], v["training_frames"]))
        rows.append(
            [
                label,
                kind,
                len(common),
                v["training_frames"],
                v["playtime_days"],
                *(v[c] for c, _, _ in SUMMARY_COLUMNS),
                eff_mean,
                eff_median,
            ]
        )
        md_rows.append(
            [
                label,
                plots.compact_number(v["training_frames"]),
                markdown.fmt(v["playtime_days"]),
                f"{v['hwrb']:g}",
            ]
            + [markdown.fmt(v[c], d) for c, _, d in SUMMARY_COLUMNS[1:]]
            + [f"{eff_mean:.3e}"]
        )
    files.csv("atari_summary.csv", header, rows)
    text.append(
        markdown.table(
            [
                "Source",
                "Training frames",
                "Playtime (day)",
                "HWRB",
                *(h for _, h, _ in SUMMARY_COLUMNS[1:]),
                "Mean HNS / frame (%)",
            ],
            md_rows,
        )
    )
    panels, eff_rows = {}, []
    for statistic, title in (("mean", "mean HNS"), ("median", "median HNS")):
        points = []
        for label, kind, v, matrix in entries:
            value = v[f"{statistic}_hns"]
            low = high = None
            if matrix is not None:
                ci = aggregate_intervals(
                    {label: normalize(matrix, common, "hns")}, (statistic,), reps=reps, seed=seed
                )[label][statistic]
                low, high = 100 * ci.low, 100 * ci.high
            points.append(
                plots.EfficiencyPoint(
                    label, v["training_frames"], value, low, high, is_run=kind == "run"
                )
            )
            eff_rows.append(
                [
                    title,
                    label,
                    kind,
                    v["training_frames"],
                    value,
                    low,
                    high,
                    float(learning_efficiency(value, v["training_frames"])),
                ]
            )
        panels[title] = points
    png = plots.efficiency_scatter(
        panels,
        files.path("efficiency.png"),
        games_note=f"{len(common)} game(s)"
        + (f"; {', '.join(left_out)} left out: N/A on some" if left_out else ""),
    )
    files.csv(
        "efficiency.csv",
        [
            "metric",
            "source",
            "kind",
            "training_frames",
            "value_pct",
            "ci_low",
            "ci_high",
            "efficiency_pct_per_frame",
        ],
        eff_rows,
    )
    text += ["", f"![learning efficiency]({png.name})", ""]
    return text
