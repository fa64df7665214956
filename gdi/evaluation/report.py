"""``gdi report``: a Markdown report with figures and CSV files for a set of run folders.

Runs are grouped by setting (:mod:`gdi.presets.setting`: preset, scale, learning, protocol,
budget and ``--set`` changes; one group = the seeds and games of one agent), and the report
opens with what each group ran. Every run gets its learning curve (return against environment
frames, App. "Atari Games Learning Curves"). Runs on the paper's 57 Atari games are further
reported in raw score, HNS, HWRNS and SABER beside the paper's algorithms, with aggregates and
confidence intervals across seeds and the learning efficiency plane (App. "Evaluation Metrics
for ALE"); other environments (MinAtar, Gymnasium) have no random or human reference scores, so
they are reported in raw returns only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.evaluation import markdown, plots
from gdi.evaluation.aggregates import REPS, aggregate_intervals
from gdi.evaluation.atari_report import write_atari_section
from gdi.evaluation.baselines import baselines
from gdi.evaluation.curves import group_curve, training_return
from gdi.evaluation.games import is_atari57, spec_to_game
from gdi.evaluation.paper_scores import DEFAULT_COMPARE, algorithm
from gdi.evaluation.report_io import ReportFiles
from gdi.presets.setting import RunSetting, run_setting, value_text
from gdi.run_files import BUNDLE_REPORTS, is_bundle, list_checkpoints, outside_bundle
from gdi.scores import CONFIG_FILE, EVAL_DIR, RunEvals, load_run
from gdi.upgrade import todays_config_fields

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
    """``RUN/report`` for one run, ``reports/<bundle name>`` for a bundle of ``gdi export``
    (``gdi.run_files.BUNDLE_REPORTS``: a bundle is never written into); ``report`` in the
    runs' common parent folder otherwise."""
    if len(run_dirs) == 1:
        if is_bundle(run_dirs[0]):
            return outside_bundle(run_dirs[0], BUNDLE_REPORTS)
        return Path(run_dirs[0]) / "report"
    parent = Path(os.path.commonpath([Path(r).resolve().parent for r in run_dirs]))
    return parent / "report"


def _env_title(env: str) -> str:
    return spec_to_game(env) if is_atari57(env) else env


def group_settings(runs: Sequence[RunEvals]) -> dict[Path, RunSetting]:
    """Each run's setting (:func:`gdi.presets.setting.run_setting`), by run folder."""
    return {run.run_dir: run_setting(run.config) for run in runs}


def group_labels(runs: Sequence[RunEvals],
                 settings: dict[Path, RunSetting] | None = None) -> dict[Path, str]:
    """Each run's group: the runs of one setting (:mod:`gdi.presets.setting`: one preset,
    scale, learning, protocol and budget, with the same ``--set`` changes), whatever their
    seed and where and how they ran. Runs that differ in any of these are never seeds of one
    agent: four seed-0 runs of four budgets are four groups of one seed, not "4 seeds" with a
    confidence interval across them. The label is the setting's, short enough for a legend,
    e.g. ``gdi-i3 · ale-cpu · policy-head-ale · entropy_floor=0`` (never the paper's
    ``GDI-I³``, whose published scores stand beside it). It is the group's name on every
    environment, so that the Atari aggregates pool one setting's games; where two settings
    would read alike (another budget, changes cut short, a preset this gdi cannot resolve),
    what tells them apart is added, the budget first: ``... · 2M frames``."""
    settings = group_settings(runs) if settings is None else settings
    by_label: dict[str, dict[tuple, list[RunEvals]]] = {}
    for run in runs:
        setting = settings[run.run_dir]
        by_label.setdefault(setting.label(), {}).setdefault(setting.key, []).append(run)
    labels = {}
    for label, keyed in by_label.items():
        members = [run for group in keyed.values() for run in group]
        told_apart = _told_apart(members, settings) if len(keyed) > 1 else {}
        for run in members:
            labels[run.run_dir] = " · ".join([label, *told_apart.get(run.run_dir, [])])
    return labels


def _told_apart(runs: Sequence[RunEvals], settings: dict[Path, RunSetting]
                ) -> dict[Path, list[str]]:
    """For settings whose labels read alike: what each run differs in from the others."""
    parts = {}
    for run in runs:
        setting = settings[run.run_dir]
        frames = setting.frames
        parts[run.run_dir] = {
            "frames": f"{plots.compact_number(frames)} frames" if frames else "budget ?",
            "protocol": f"protocol={setting.protocol}",
            **{k: f"{k}={value_text(v)}" for k, v in json.loads(setting.fields).items()},
        }
    keys = list(dict.fromkeys(k for p in parts.values() for k in p))
    varying = [k for k in keys if len({p.get(k, f"{k}=?") for p in parts.values()}) > 1]
    return {run: [p.get(k, f"{k}=?") for k in varying] for run, p in parts.items()}


def _groups(runs: Sequence[RunEvals], labels: dict[Path, str]) -> dict[str, list[RunEvals]]:
    groups: dict[str, list[RunEvals]] = {}
    for run in runs:
        groups.setdefault(labels[run.run_dir], []).append(run)
    return groups


def _groups_section(runs: Sequence[RunEvals], files: ReportFiles, labels: dict[Path, str],
                    settings: dict[Path, RunSetting]) -> list[str]:
    """The report's header: what ran in each group, in full."""
    header = ["group", "preset", "scale", "learning", "protocol", "changes", "runs", "seeds",
              "envs", "budget_frames", "final_eval_frames_min", "final_eval_frames_max"]
    rows, md_rows = [], []
    for label, group in _groups(runs, labels).items():
        setting = settings[group[0].run_dir]
        seeds = sorted({r.seed for r in group})
        envs = list(dict.fromkeys(_env_title(r.env) for r in group))
        evaluated = sorted(r.final.frames for r in group)
        rows.append([label, setting.preset, setting.scale, setting.learning,
                     setting.protocol or "", setting.differences(), len(group),
                     " ".join(map(str, seeds)), " ".join(envs), setting.frames or "",
                     evaluated[0], evaluated[-1]])
        # Three digits: an evaluation lands a window past its mark (3,000,320 frames: 3M).
        shown = [plots.compact_number(float(f"{f:.3g}")) for f in (evaluated[0], evaluated[-1])]
        md_rows.append([
            label, setting.preset, setting.scale, setting.learning, setting.protocol or "—",
            setting.differences(), ", ".join(envs), ", ".join(map(str, seeds)),
            plots.compact_number(setting.frames) if setting.frames else "?",
            shown[0] if shown[0] == shown[1] else f"{shown[0]}–{shown[1]}",
        ])
    files.csv("groups.csv", header, rows)
    return [
        "## What ran",
        "",
        "One group per setting: its runs share the preset (`--preset`), the scale (`--scale`), "
        "the learning (`--learning`), the ALE protocol, the frame budget and every field "
        "changed on top of them (`--set`, `--search`); they differ only in their seed and "
        "where and how they ran. *Changed* lists, as `--set` takes them, the fields in which the runs' config.json "
        "differs from what this gdi resolves the preset, scale and learning to (a field added "
        "since an older run was written counts at the value the run had). The group's name "
        "in the tables and figures below is its label. Numbers: `groups.csv`.",
        "",
        markdown.table(
            ["Group", "Preset", "Scale", "Learning", "Protocol", "Changed (`--set`)", "Environments",
             "Seeds", "Budget", "Final evaluation at"],
            md_rows,
            align_left=7,
        ),
    ]


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


def _runs_section(runs: Sequence[RunEvals], files: ReportFiles, labels: dict[Path, str]
                  ) -> list[str]:
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
            labels[r.run_dir],
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
            labels[r.run_dir],
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
                "Group",
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
    """The ALE protocol a run used (read as today's fields: a run written before the field
    ran the paper's), — elsewhere."""
    if not run.env.startswith("ale:"):
        return "—"
    return str(todays_config_fields(run.config)["protocol"])


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
    out = Path(out_dir) if out_dir is not None else default_out_dir(paths)
    bundle = next((p for p in paths if is_bundle(p)
                   and out.resolve().is_relative_to(p.resolve())), None)
    if bundle is not None:
        raise ValueError(f"out {out} lies inside {bundle}, a bundle of gdi export, which is "
                         "kept as exported; allowed: a folder outside it (default "
                         f"{outside_bundle(bundle, BUNDLE_REPORTS)})")
    files = ReportFiles(out)
    atari = [r for r in runs if is_atari57(r.env)]
    other = [r for r in runs if not is_atari57(r.env)]
    text = ["# gdi evaluation report", ""]
    text.append(
        f"{len(runs)} run(s): {len(atari)} on the paper's Atari 57 games, {len(other)} on other "
        f"environments. Figures are PNG files beside this report; every number shown is in the "
        f"CSV files beside it.\n"
    )
    settings = group_settings(runs)
    labels = group_labels(runs, settings)
    text += _groups_section(runs, files, labels, settings)
    text += _runs_section(runs, files, labels)
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
