"""``gdi report``: a Markdown report with figures and CSV files for a set of run folders.

Runs are grouped by preset and frame budget (one group = the seeds and games of one agent). Every run gets its
learning curve (return against environment frames, App. "Atari Games Learning Curves"). Runs
on the paper's 57 Atari games are further reported in raw score, HNS, HWRNS and SABER beside
the paper's algorithms, with aggregates and confidence intervals across seeds and the learning
efficiency plane (App. "Evaluation Metrics for ALE"); other environments (MinAtar, Gymnasium)
have no random or human reference scores, so they are reported in raw returns only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.config import PLACEMENT_FIELDS
from gdi.evaluation import markdown, plots
from gdi.evaluation.aggregates import REPS, aggregate_intervals
from gdi.evaluation.atari_report import write_atari_section
from gdi.evaluation.baselines import baselines
from gdi.evaluation.curves import group_curve, training_return
from gdi.evaluation.games import is_atari57, spec_to_game
from gdi.evaluation.paper_scores import DEFAULT_COMPARE, algorithm
from gdi.evaluation.report_io import ReportFiles
from gdi.presets.learnings import LEARNINGS
from gdi.run_files import list_checkpoints
from gdi.scores import CONFIG_FILE, EVAL_DIR, RunEvals, load_run

# Resamples of a learning-curve band: one bootstrap per environment, so fewer than for the
# aggregates, whose intervals are the report's headline numbers.
CURVE_REPS = 500
WHY_RAW_ONLY = (
    "HNS, HWRNS and SABER normalize a score between a random policy's and a human reference "
    'score (App. "Evaluation Metrics for ALE"), which exist for the paper\'s 57 Atari games only; '
    "these runs are therefore reported in raw returns."
)


@dataclass(frozen=True)
class Report:
    """What :func:`write_report` wrote."""

    out_dir: Path
    markdown: Path
    files: tuple[Path, ...]
    skipped: tuple[str, ...] = ()
    """One line per run folder left out: no evaluations yet, or (among several) a damaged one."""


def without_evaluations(run_dir: Path) -> str | None:
    """Why ``run_dir`` (an existing folder) has nothing to report, or None when it has
    evaluations. A run stopped during start-up, or one still before its first evaluation,
    is such a folder; listing it among others (``gdi report runs/*``) must not fail the
    report."""
    if not (run_dir / CONFIG_FILE).is_file() and not (run_dir / EVAL_DIR).is_dir():
        # Not a run folder: an empty one (`gdi report runs/*` over a folder made by hand or
        # left by another tool) is skipped like the others; anything else load_run names.
        if not any(run_dir.iterdir()):
            return f"skipped {run_dir}: an empty folder, not a gdi run folder"
        if (run_dir / "report.md").is_file():  # `gdi report runs/*` after a report in runs/
            return f"skipped {run_dir}: a gdi report, not a run folder"
        return None
    if any((run_dir / EVAL_DIR).glob("*.json")):
        return None
    if list_checkpoints(run_dir):
        hint = f"`gdi evaluate {run_dir}` evaluates its latest checkpoint"
    else:
        hint = "and no checkpoint: it stopped before its first one"
    return f"skipped {run_dir}: no evaluations yet ({EVAL_DIR}/ is empty; {hint})"


def parse_compare(compare: str | Sequence[str]) -> tuple[str, ...]:
    """``"rainbow, Agent57"`` or a sequence -> algorithm ids; ValueError with close matches
    for an unknown name."""
    names = compare.split(",") if isinstance(compare, str) else list(compare)
    ids = tuple(dict.fromkeys(algorithm(n).id for n in names if n.strip()))
    return ids


def default_out_dir(run_dirs: Sequence[Path]) -> Path:
    """``RUN/report`` for one run; ``report`` in the runs' common parent folder otherwise."""
    if len(run_dirs) == 1:
        return Path(run_dirs[0]) / "report"
    parent = Path(os.path.commonpath([Path(r).resolve().parent for r in run_dirs]))
    return parent / "report"


def _env_title(env: str) -> str:
    return spec_to_game(env) if is_atari57(env) else env


#: config.json entries that say who a run is or where and how it ran, never what it learned:
#: runs that differ only in these are seeds of one agent.
NOT_WHAT_IT_LEARNS = frozenset({
    "seed", "name", "provenance", "env_settings", "skipped_updates_max", "log_every",
    "eval_every", "eval_episodes", *PLACEMENT_FIELDS,
})


def _label_value(key: str, value) -> str:
    if key == "frames":
        return f"{plots.compact_number(value)} frames" if value else "budget ?"
    if value is None:
        return f"{key}=?"
    return f"{key}={value}" if not isinstance(value, list | dict) else \
        f"{key}={json.dumps(value, separators=(',', ':'))}"


def group_labels(runs: Sequence[RunEvals]) -> dict[Path, str]:
    """Each run's group: the runs of one agent, i.e. one preset with one config but for its
    seed (and where and how it ran, ``NOT_WHAT_IT_LEARNS``). Runs of another budget or another
    ``--set learning_rate`` are another experiment, never more seeds of this one: four seed-0
    runs of four budgets are four groups of one seed, not "4 seeds" with a confidence interval
    across them. The label is the preset, with the settings in which its runs on one
    environment differ, e.g. ``gdi-i3 (2M frames)`` or ``gdi-i3 (learning_rate=0.001)``
    (runs on other environments are compared per game anyway, and their scales differ)."""
    by_preset: dict[tuple[str, str], list[RunEvals]] = {}
    for run in runs:
        by_preset.setdefault((run.preset, run.env), []).append(run)
    labels = {}
    for (preset, _), members in by_preset.items():
        keys = sorted({k for r in members for k in r.config} - NOT_WHAT_IT_LEARNS
                      - {"preset", "env"})
        # A field missing from some config.json (written before the field existed) is not a
        # difference: only the values written are compared.
        varying = [k for k in keys
                   if len({json.dumps(r.config[k], sort_keys=True)
                           for r in members if k in r.config}) > 1]
        if "learning" in varying:
            # A named reading of T stands for the fields it sets: "learning=policy-head", not
            # the fields one by one, wherever runs of one learning agree on them.
            explained = {k for fields in LEARNINGS.values() for k in fields}
            varying = [k for k in varying if k not in explained or len({
                (r.config.get("learning"), json.dumps(r.config.get(k), sort_keys=True))
                for r in members}) > len({r.config.get("learning") for r in members})]
        if "frames" in varying:  # the budget first, as the label has always begun
            varying.remove("frames")
            varying.insert(0, "frames")
        for run in members:
            parts = [_label_value(k, run.config.get(k)) for k in varying]
            labels[run.run_dir] = preset + (f" ({', '.join(parts)})" if parts else "")
    return labels


def _groups(runs: Sequence[RunEvals], labels: dict[Path, str]) -> dict[str, list[RunEvals]]:
    groups: dict[str, list[RunEvals]] = {}
    for run in runs:
        groups.setdefault(labels[run.run_dir], []).append(run)
    return groups


def seed_finals(group: Sequence[RunEvals]) -> np.ndarray:
    """``[seeds, 1]``: each seed's final return, averaged over the group's runs of that seed
    (a run repeated with the same seed is not another sample of the seeds)."""
    by_seed: dict[int, list[float]] = {}
    for run in group:
        by_seed.setdefault(run.seed, []).append(run.final.mean_return)
    return np.array([[float(np.mean(by_seed[s]))] for s in sorted(by_seed)])


def _curves_section(
    runs: Sequence[RunEvals], files: ReportFiles, labels: dict[Path, str], *, reps: int,
    seed: int
) -> list[str]:
    envs = list(dict.fromkeys(run.env for run in runs))
    panels, run_rows, band_rows, training_rows = [], [], [], []
    for env in envs:
        by_group = _groups([r for r in runs if r.env == env], labels)
        curves, means, training = {}, {}, {}
        for label, group in by_group.items():
            curves[label] = []
            for run in sorted(group, key=lambda r: r.seed):
                frames, returns = run.curve()
                curves[label].append(plots.Curve(frames, returns))
                trained = training_return(run.run_dir)
                if trained is not None:
                    training.setdefault(label, []).append(plots.Curve(*trained))
                    training_rows += [[label, env, run.seed, run.name, int(f), float(r)]
                                      for f, r in zip(*trained, strict=True)]
                run_rows += [
                    [label, env, run.seed, run.name, int(f), float(r)]
                    for f, r in zip(frames, returns, strict=True)
                ]
            mean = group_curve(group, reps=min(reps, CURVE_REPS), seed=seed)
            if mean is not None:
                means[label] = plots.Curve(mean.frames, mean.mean, mean.low, mean.high)
                band_rows += [
                    [label, env, int(f), float(m), float(lo), float(hi), mean.n_runs]
                    for f, m, lo, hi in zip(
                        mean.frames, mean.mean, mean.low, mean.high, strict=True
                    )
                ]
        reference = None
        if is_atari57(env):
            reference = ("human average", float(baselines([env]).human_average[0]))
        panels.append(plots.CurvePanel(_env_title(env), curves, means, reference, training))
    files.csv(
        "learning_curves.csv", ["group", "env", "seed", "run", "frames", "mean_return"], run_rows
    )
    files.csv(
        "learning_curves_band.csv",
        ["group", "env", "frames", "mean", "ci_low", "ci_high", "n_runs"],
        band_rows,
    )
    if training_rows:
        files.csv("training_returns.csv",
                  ["group", "env", "seed", "run", "frames", "training_return"], training_rows)
    png = plots.learning_curves(panels, files.path("learning_curves.png"))
    return [
        "## Learning curves",
        "",
        "Mean evaluation return against environment frames (action repeats included): a thin line "
        "per seed, the mean over seeds on the frames every seed reached and its 95% bootstrap "
        f"confidence band (rliable, {min(reps, CURVE_REPS)} resamples); dotted, each run's "
        "training return from its metrics.jsonl (the mean of its last 100 training episodes, "
        "played as it acts). Numbers: `learning_curves.csv`, `learning_curves_band.csv`"
        + (", `training_returns.csv`" if training_rows else "") + ".",
        "",
        f"![learning curves]({png.name})",
        "",
    ]


def _raw_section(
    runs: Sequence[RunEvals], files: ReportFiles, labels: dict[Path, str], *, reps: int,
    seed: int
) -> list[str]:
    why = WHY_RAW_ONLY
    not57 = sorted({r.env for r in runs if r.env.startswith("ale:")})
    if not57:
        why += f" Not among the 57: {', '.join(not57)}."
    text = ["## Final returns (raw)", "", why, ""]
    text.append(
        f"Final return = mean return of each run's evaluation with the most frames; mean over "
        f"seeds with a 95% stratified-bootstrap confidence interval (rliable, {reps} resamples).\n"
    )
    header = ["env", "group", "n_seeds", "frames_mean", "mean", "ci_low", "ci_high", "min", "max"]
    rows, md_rows = [], []
    for env in dict.fromkeys(r.env for r in runs):
        for label, group in _groups([r for r in runs if r.env == env], labels).items():
            finals = seed_finals(group)
            ci = aggregate_intervals({label: finals}, ("mean",), reps=reps, seed=seed)[label][
                "mean"
            ]
            frames = float(np.mean([r.final.frames for r in group]))
            rows.append(
                [
                    env,
                    label,
                    len(finals),
                    frames,
                    ci.point,
                    ci.low,
                    ci.high,
                    float(finals.min()),
                    float(finals.max()),
                ]
            )
            md_rows.append(
                [
                    env,
                    label,
                    len(finals),
                    plots.compact_number(frames),
                    markdown.fmt_interval(*ci),
                    markdown.fmt(float(finals.min())),
                    markdown.fmt(float(finals.max())),
                ]
            )
    files.csv("final_returns_summary.csv", header, rows)
    text.append(
        markdown.table(
            ["Env", "Group", "Seeds", "Frames", "Mean [95% CI]", "Min", "Max"],
            md_rows,
            align_left=2,
        )
    )
    return text


def _runs_section(runs: Sequence[RunEvals], files: ReportFiles) -> list[str]:
    header = [
        "group",
        "env",
        "seed",
        "run",
        "run_dir",
        "frames",
        "mean_return",
        "episodes",
        "eval_file",
        "checkpoint",
        "policy",
        "protocol",
    ]
    rows = [
        [
            r.preset,
            r.env,
            r.seed,
            r.name,
            str(r.run_dir),
            r.final.frames,
            r.final.mean_return,
            len(r.final.episodes),
            r.final.path.name,
            r.final.checkpoint,
            r.final.policy,
            protocol_of(r),
        ]
        for r in runs
    ]
    files.csv("final_returns.csv", header, rows)
    md_rows = [
        [
            r.name,
            r.env,
            r.preset,
            r.final.path.name,
            r.seed,
            f"{r.final.frames:,}",
            len(r.final.episodes),
            markdown.fmt(r.final.mean_return),
            protocol_of(r),
        ]
        for r in runs
    ]
    return [
        "## Runs",
        "",
        markdown.table(
            [
                "Run",
                "Env",
                "Preset",
                "Final eval file",
                "Seed",
                "Frames",
                "Episodes",
                "Final return",
                "Protocol",
            ],
            md_rows,
            align_left=4,
        ),
        "",
        "Protocol: the ALE settings a run was trained and evaluated with (`protocol` in its "
        "config.json): paper, the paper's table; machado, Machado et al. 2018 (sticky actions "
        "0.25, no reset no-ops); — for other environments.",
        *_evaluated_later_section(runs, files),
    ]


def protocol_of(run: RunEvals) -> str:
    """The ALE protocol a run used (runs written before the field: the paper's), — elsewhere."""
    if not run.env.startswith("ale:"):
        return "—"
    return str(run.config.get("protocol", "paper"))


def _evaluated_later_section(runs: Sequence[RunEvals], files: ReportFiles) -> list[str]:
    """The ``gdi evaluate`` files beside the runs' own evaluations, labelled as such: they are
    never a run's final score or a point of its curve."""
    later = [(r, e) for r in runs for e in r.evaluated_later]
    if not later:
        return []
    header = ["run", "eval_file", "frames", "mean_return", "episodes", "checkpoint", "policy"]
    files.csv("evaluated_later.csv", header, [
        [r.name, e.path.name, e.frames, e.mean_return, len(e.episodes), e.checkpoint, e.policy]
        for r, e in later])
    return [
        "",
        "Evaluated later with `gdi evaluate` (not the runs' final scores, which are their own "
        "last evaluations above):",
        "",
        markdown.table(
            ["Run", "Eval file", "Frames", "Episodes", "Mean return", "Policy"],
            [[r.name, e.path.name, f"{e.frames:,}", len(e.episodes),
              markdown.fmt(e.mean_return), e.policy] for r, e in later],
            align_left=2,
        ),
    ]


def write_report(
    run_dirs: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike | None = None,
    *,
    compare: str | Sequence[str] = DEFAULT_COMPARE,
    reps: int = REPS,
    seed: int = 0,
    video: bool = False,
) -> Report:
    """Write ``report.md``, its PNG figures and a CSV of every number into ``out_dir``
    (default :func:`default_out_dir`); with ``video``, a GIF of each run's agent at its last
    evaluation too (:mod:`gdi.evaluation.report_video`). Errors name the run folder or file at
    fault."""
    if not run_dirs:
        raise ValueError("give at least one run folder")
    compare_ids = parse_compare(compare)
    paths = [Path(r) for r in run_dirs]
    if len({p.resolve() for p in paths}) != len(paths):
        raise ValueError("a run folder is listed twice")
    skipped = tuple(why for why in (without_evaluations(p) for p in paths if p.is_dir()) if why)
    with_evals = [p for p in paths if not (p.is_dir() and without_evaluations(p))]
    if not with_evals:
        raise ValueError(f"nothing to report: none of the {len(paths)} run folder(s) has "
                         f"evaluations yet ({EVAL_DIR}/*.json)")
    runs = []
    for path in with_evals:
        try:
            runs.append(load_run(path))
        except (ValueError, FileNotFoundError) as err:
            if len(paths) == 1 or not path.is_dir():  # a typo is an error, not a skip
                raise
            # One damaged run among many is named and left out, not the end of the report.
            skipped += (f"skipped {path}: {err}",)
    if not runs:
        raise ValueError(f"nothing to report: none of the {len(paths)} run folders could be "
                         "read (" + "; ".join(skipped) + ")")
    files = ReportFiles(Path(out_dir) if out_dir is not None else default_out_dir(paths))
    atari = [r for r in runs if is_atari57(r.env)]
    other = [r for r in runs if not is_atari57(r.env)]
    text = ["# gdi evaluation report", ""]
    text.append(
        f"{len(runs)} run(s): {len(atari)} on the paper's Atari 57 games, {len(other)} on other "
        f"environments. Figures are PNG files beside this report; every number shown is in the "
        f"CSV files beside it.\n"
    )
    text += _runs_section(runs, files)
    labels = group_labels(runs)
    text += _curves_section(runs, files, labels, reps=reps, seed=seed)
    if atari:
        text.append(write_atari_section(_groups(atari, labels), compare_ids, files, reps=reps,
                                        seed=seed))
    if other:
        text += _raw_section(other, files, labels, reps=reps, seed=seed)
    if video:
        from gdi.evaluation.report_video import videos_section

        text += videos_section(runs, files)
    md = files.text("report.md", "\n".join(text).rstrip() + "\n")
    return Report(files.out_dir, md, tuple(files.paths), skipped)


def write_run_report(
    run_dirs: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike | None = None,
    **options,
) -> Path:
    """:func:`write_report` for callers that only need where ``report.md`` went (``gdi train
    --report`` at the end of training)."""
    return write_report(run_dirs, out_dir, **options).markdown
