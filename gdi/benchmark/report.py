"""The report of a grid: each system (the grid's settings and its peers) on each environment
at one frame count, from training curves (``gdi.benchmark.curves``).

- A figure: per environment, each system's mean curve over seeds with its 95 % band.
- A table per environment and system: the score at the frames compared (the mean return of
  the last ``window`` training episodes), its normalized score (HNS on the Atari-57 games), the
  normalized area under the curve (the mean normalized score over the frames), and the frames
  to chosen levels; means over seeds with 95 % percentile-bootstrap intervals (rliable).
- Aggregates over environments (HNS only): IQM and median of the normalized score and of the
  area, and the probability that a setting's run beats a peer's on a game (rliable), each
  with its 95 % interval; each setting against each peer on the environments both have runs
  of at the frames compared.

Only runs that reached the frames compared enter; the others are listed as behind, so that
no number pools runs of different lengths. Each system is one setting (or one peer), so no
interval pools runs of different settings either.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.atomic import write_text
from gdi.benchmark.curves import (
    Normalizer,
    RunCurve,
    normalized_auc,
    normalizer,
    read_gdi_curve,
    read_peer_curve,
)
from gdi.benchmark.grid import Grid, Setting
from gdi.benchmark.state import grid_states
from gdi.evaluation.aggregates import (
    REPS,
    Interval,
    aggregate_intervals,
    curve_band,
    probability_of_improvement,
)
from gdi.runtime.run_folder.meta_log import NoEpisodesYet

#: The levels a table reports frames to when the grid names none: these fractions of the way
#: from random play (or the runs' first episodes) to the lower system's mean score.
DEFAULT_LEVEL_FRACTIONS = (0.5, 0.75)


@dataclass
class System:
    name: str
    label: str
    peer: bool
    closed: str | None = None  # a setting the grid no longer runs: why


@dataclass
class GameRuns:
    """One system's runs of one environment: those at the frames compared, those behind."""

    curves: list[RunCurve]
    behind: list[tuple[int, int]]  # (seed, frames trained): short of the frames, or no episode
    missing: list[int]  # seeds with no run yet


@dataclass
class GameStats:
    n: int
    score: Interval
    normalized: Interval
    auc: Interval
    seeds_score: list[float]
    seeds_auc: list[float]
    frames_to: list[tuple[float | None, int]]  # per level: median frames of those that reached


@dataclass
class GridReport:
    markdown: Path
    figure: Path | None
    table: Path
    lines: list[str]
    sections: dict[str, list[str]]  # the report's sections by heading, for a results page


def interval(values) -> Interval:
    """Mean over seeds with its 95 % percentile-bootstrap interval (rliable); one seed: the
    value itself, with no width."""
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return Interval(float(values[0]), float(values[0]), float(values[0]))
    band = curve_band(values[:, None], reps=REPS)
    return Interval(float(band.mean[0]), float(band.low[0]), float(band.high[0]))


def setting_names(grid: Grid, setting: Setting) -> dict[str, list[tuple[str, str]]]:
    """Each environment's (scale, learning) for ``setting``: the names its runs' own
    config.json records (run folder, else kept records), read as ``gdi report`` reads them
    (``gdi.presets.setting.run_setting``); for an environment with no run yet, what ``gdi
    train`` would resolve (the kind's default scale, the scale's default learning, unless the
    setting names them). Several when its runs disagree."""
    from gdi.presets import learning_for, scale_for
    from gdi.presets.setting import run_setting

    names: dict[str, list[tuple[str, str]]] = {}
    for cell in grid.cells():
        if cell.setting is not setting:
            continue
        found = names.setdefault(cell.env, [])
        for folder in (cell.folder, cell.records):
            if folder is None or not (folder / "config.json").is_file():
                continue
            try:
                ran = run_setting(json.loads((folder / "config.json").read_text("utf-8")))
            except (OSError, ValueError):  # unreadable: the run is named by the grid instead
                continue
            if (ran.scale, ran.learning) not in found:
                found.append((ran.scale, ran.learning))
            break
    for env, found in names.items():
        if not found:
            scale = scale_for(env, setting.scale)
            found.append((scale, learning_for(scale, setting.learning)))
    return names


def collect(grid: Grid, at: int) -> tuple[list[System], dict[tuple[str, str], GameRuns]]:
    """Every system's curves per environment, split by whether they reached ``at`` frames."""
    systems = [System(s.name, s.label(setting_names(grid, s)), False, s.closed)
               for s in grid.settings]
    systems += [System(p.name, f"{p.name} (peer, curves from "
                               f"{os.path.normpath(grid.path.parent / p.folder)})", True)
                for p in grid.peers]
    runs = {(s.name, env): GameRuns([], [], []) for s in systems for env in grid.envs}
    for state in grid_states(grid):
        cell, entry = state.cell, runs[(state.cell.setting.name, state.cell.env)]
        if state.source is None:
            entry.missing.append(cell.seed)
            continue
        frames = state.frames or state.kept_frames
        try:
            curve = read_gdi_curve(state.source, cell.setting.name, cell.env, cell.seed, frames)
        except NoEpisodesYet:  # a run just started: behind, not an error (a bad log raises)
            entry.behind.append((cell.seed, frames))
            continue
        (entry.curves.append(curve) if frames >= at
         else entry.behind.append((cell.seed, frames)))
    for peer in grid.peers:
        for env in grid.envs:
            entry = runs[(peer.name, env)]
            for seed in peer.seeds:
                try:
                    curve = read_peer_curve(grid.peer_folder(peer, env, seed), peer.name, env,
                                            seed)
                except FileNotFoundError:
                    entry.missing.append(seed)
                    continue
                (entry.curves.append(curve) if curve.trained >= at and curve.returns.size
                 else entry.behind.append((seed, curve.trained)))
    return systems, runs


def levels_of(grid: Grid, env: str, runs: dict[tuple[str, str], GameRuns], systems, at: int,
              norm: Normalizer) -> tuple[float, ...]:
    """The scores whose frames the table reports: the grid's own, else fractions of the way
    from random play (off the Atari-57: the runs' first returns) to the lower system's mean
    score at ``at``. A closed setting's runs are reported at these levels but do not set them
    while an open system has runs of ``env`` at ``at`` (until then they do, so the levels may
    move as the open runs arrive): levels drawn from a superseded setting's low score sit in
    the noise of random play (Double Dunk's old default at −17.94 put them 0.3 and 0.5 points
    above random's −18.6)."""
    if env in grid.levels:
        return grid.levels[env]
    ran = [s for s in systems if runs[(s.name, env)].curves]
    judged = [s for s in ran if s.closed is None] or ran
    finals = [np.mean([c.score_at(at, grid.window) for c in runs[(s.name, env)].curves])
              for s in judged]
    if not finals:
        return ()
    if norm.name == "HNS":
        start = norm.random
    else:
        start = float(np.median([c.returns[0] for s in judged
                                 for c in runs[(s.name, env)].curves]))
    end = min(finals)
    if end <= start:
        return ()
    return tuple(round(start + q * (end - start), 2) for q in DEFAULT_LEVEL_FRACTIONS)


def game_stats(curves: list[RunCurve], at: int, window: int, norm: Normalizer,
               levels: tuple[float, ...]) -> GameStats:
    scores = [c.score_at(at, window) for c in curves]
    aucs = [normalized_auc(c, at, window, norm) for c in curves]
    frames_to = []
    for level in levels:
        reached = [f for c in curves if (f := c.frames_to(level, window, at)) is not None]
        frames_to.append((float(np.median(reached)) if reached else None, len(reached)))
    return GameStats(len(curves), interval(scores), interval(norm(scores)), interval(aucs),
                     scores, aucs, frames_to)


def _iv(value: Interval, digits: int = 2) -> str:
    if value.low == value.high:
        return f"{value.point:.{digits}f}"
    return f"{value.point:.{digits}f} [{value.low:.{digits}f}, {value.high:.{digits}f}]"


def _score(value: float) -> str:
    """A raw score as a reader takes it in: whole thousands grouped (Battle Zone's 13,670),
    two decimals below a thousand (Breakout's 27.92)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.2f}"


def _score_iv(value: Interval) -> str:
    if value.low == value.high:
        return _score(value.point)
    return f"{_score(value.point)} [{_score(value.low)}, {_score(value.high)}]"


def _frames(value: float | None) -> str:
    return "—" if value is None else f"{value / 1e6:.2f}M" if value >= 1e5 else f"{value:,.0f}"


def comparison(setting: GameStats, peer: GameStats) -> str:
    """Where the peer's interval of the normalized area lies against the setting's. One seed
    has no interval (its value alone): a comparison needs two seeds or more on each side."""
    if min(setting.n, peer.n) < 2:
        return "one seed: not compared"
    if peer.auc.low > setting.auc.high:
        return "peer above"
    if peer.auc.high < setting.auc.low:
        return "peer below"
    return "overlap"


def comparison_groups(systems: list[System], stats: dict,
                      envs: list[str]) -> list[tuple[list[System], list[str]]]:
    """The sets of systems the aggregates compare, each with the environments where every one
    of them has runs at the frames compared: each setting against each peer (a setting's
    runs on one game are not held back by another setting's that have not run there), or,
    in a grid without peers, all its settings together."""
    settings = [s for s in systems if not s.peer]
    peers = [s for s in systems if s.peer]
    groups = [[s, p] for s in settings for p in peers] if peers else [settings]
    return [(group, [env for env in envs if all((s.name, env) in stats for s in group)])
            for group in groups]


def aggregates(systems: list[System], stats: dict, envs: list[str], reps: int) -> list[str]:
    """IQM and median over games of the normalized score and area, and P(setting > peer),
    for each comparison group on the environments its systems share at these frames."""
    lines: list[str] = []
    for group, shared in comparison_groups(systems, stats, envs):
        names = " against ".join(s.name for s in group)
        if not shared:
            lines += [f"- **{names}**: no environment has runs of "
                      f"{'both' if len(group) == 2 else 'all'} at these frames yet.", ""]
            continue
        which = "every environment" if len(shared) == len(envs) else \
            f"{len(shared)} of {len(envs)} environments ({', '.join(shared)})"
        lines += [f"**{names}** on {which}:", ""]
        lines += group_aggregates(group, stats, shared, reps)
    return lines[:-1] if lines and not lines[-1] else lines


@dataclass
class SystemAggregate:
    """One system's aggregates over a comparison group's environments (human-normalized
    scores only: None elsewhere)."""

    system: str
    runs_per_game: int  # rliable takes as many runs on every game: the fewest any game has
    iqm_hns: Interval | None
    median_hns: Interval | None
    iqm_auc: Interval | None
    median_auc: Interval | None


@dataclass
class Improvement:
    """P(a run of ``setting`` beats a run of ``peer`` on a game), on the score at the frames
    compared and on the normalized area (rliable's probability of improvement)."""

    setting: str
    peer: str
    score: Interval
    auc: Interval


def group_numbers(group: list[System], stats: dict, envs: list[str],
                  reps: int) -> tuple[list[SystemAggregate], list[Improvement]]:
    """One group's aggregates over ``envs``, where each of its systems has runs: IQM and
    median of HNS and of the normalized area per system (when every environment has human
    scores), and P(setting > peer) for each setting and peer of the group (on HNS then, on
    raw scores otherwise)."""
    matrices = {}
    for s in group:
        n = min(stats[(s.name, env)].n for env in envs)  # rliable: as many runs on every game
        matrices[s.name] = (
            np.array([[stats[(s.name, env)].seeds_score[i] for env in envs] for i in range(n)]),
            np.array([[stats[(s.name, env)].seeds_auc[i] for env in envs] for i in range(n)]),
            n)
    rows = []
    human = all(normalizer(env).name == "HNS" for env in envs)
    norms = [normalizer(env) for env in envs]
    for s in group:
        score, auc, n = matrices[s.name]
        if not human:
            rows.append(SystemAggregate(s.name, n, None, None, None, None))
            continue
        hns = np.column_stack([norm(score[:, j]) for j, norm in enumerate(norms)])
        agg = aggregate_intervals({"hns": hns, "auc": auc}, ("iqm", "median"), reps=reps)
        rows.append(SystemAggregate(s.name, n, agg["hns"]["iqm"], agg["hns"]["median"],
                                    agg["auc"]["iqm"], agg["auc"]["median"]))
        matrices[s.name] = (hns, auc, n)
    improvements = [
        Improvement(s.name, p.name,
                    probability_of_improvement(matrices[s.name][0], matrices[p.name][0],
                                               reps=reps),
                    probability_of_improvement(matrices[s.name][1], matrices[p.name][1],
                                               reps=reps))
        for s in group if not s.peer for p in group if p.peer]
    return rows, improvements


def group_aggregates(group: list[System], stats: dict, envs: list[str], reps: int) -> list[str]:
    """One group's aggregates over ``envs`` (``group_numbers``), as the report's lines."""
    rows, improvements = group_numbers(group, stats, envs, reps)
    lines = []
    if rows[0].iqm_hns is not None:
        lines += ["| system | runs per game | IQM HNS | median HNS | IQM normalized AUC | "
                  "median normalized AUC |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        lines += [f"| {row.system} | {row.runs_per_game} | {_iv(row.iqm_hns, 3)} | "
                  f"{_iv(row.median_hns, 3)} | {_iv(row.iqm_auc, 3)} | "
                  f"{_iv(row.median_auc, 3)} |" for row in rows]
        lines.append("")
    else:
        lines += ["IQM and median need one scale across environments (human-normalized "
                  "scores, Atari-57 games only): not computed for these environments.", ""]
    for better in improvements:
        lines += [f"- P({better.setting} > {better.peer}): {_iv(better.score, 3)} on the score "
                  f"at these frames, {_iv(better.auc, 3)} on the normalized area (0.5: neither "
                  "is ahead).", ""]
    return lines


def drawn_systems(systems: list[System], runs: dict, envs: list[str]) -> list[int]:
    """The indices of the systems with a curve in at least one of ``envs``."""
    return [k for k, s in enumerate(systems) if any(runs[(s.name, env)].curves for env in envs)]


def legend_label(system: System) -> str:
    """A system's name in the figure: what ran, and whether the grid still runs it."""
    return system.label + (" (closed)" if system.closed else "")


#: Characters of 7 pt a plot's title line holds (a plot is 3.6 inches wide).
TITLE_CHARS = 55


def seeds_title(game: str, seeds: str) -> str:
    """The seeds' title of a game's plot, right of the game's name (9 pt, ~9/7 of a 7-pt
    character each) on the same line: wrapped to the room the name leaves, so more systems or
    a longer name add lines above, never text over the name."""
    room = TITLE_CHARS - math.ceil(len(game) * 9 / 7) - 3
    return textwrap.fill(f"seeds: {seeds}", max(room, 12))


def figure(grid: Grid, systems: list[System], runs: dict, at: int, path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = [env for env in grid.envs if any(runs[(s.name, env)].curves for s in systems)]
    if not envs:
        return None
    cols = min(5, len(envs))
    rows = -(-len(envs) // cols)
    width = 60 * cols  # characters of 7 pt a line of the figure's width holds
    # Colours follow the grid's order of systems, so a system keeps its colour in every
    # figure; the legend names only those drawn (a peer with no run yet is left out).
    drawn = drawn_systems(systems, runs, envs)
    labels = [textwrap.fill(legend_label(systems[k]), width) for k in drawn]
    title = textwrap.fill(f"Training return (mean of the last {grid.window} episodes), mean over "
                          "seeds and 95 % band (dashed: one seed; dotted: random play)",
                          int(width * 0.75))
    # Inches above the plots for the title and below them for the legend, line by line.
    title_in = 0.17 * (title.count("\n") + 1) + 0.1
    legend_in = 0.13 * sum(label.count("\n") + 1 for label in labels) + 0.15
    height = 2.9 * rows + title_in + legend_in
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, height), squeeze=False)
    x = np.linspace(0, at, 120)
    unit, unit_name = (1e6, "millions") if at >= 1e6 else (1e3, "thousands")
    for ax, env in zip(axes.flat, envs, strict=False):
        norm = normalizer(env)
        for k, s in enumerate(systems):
            curves = runs[(s.name, env)].curves
            if not curves:
                continue
            values = np.stack([c.at(x, grid.window) for c in curves])
            color = f"C{k}"
            if len(curves) > 1:
                band = curve_band(values, reps=REPS)
                ax.fill_between(x / unit, band.low, band.high, color=color, alpha=0.2, lw=0)
                ax.plot(x / unit, band.mean, color=color, lw=1.5)
            else:
                ax.plot(x / unit, values[0], color=color, lw=1.5, ls="--")
        if norm.name == "HNS":
            ax.axhline(norm.random, color="0.6", lw=0.8, ls=":")
        seeds = ", ".join(f"{s.name} {len(runs[(s.name, env)].curves)}" for s in systems)
        game = env.split(":", 1)[-1]
        ax.set_title(game, fontsize=9, loc="left")
        ax.set_title(seeds_title(game, seeds), fontsize=7, loc="right", color="0.35")
        ax.tick_params(labelsize=7)
        ax.set_xlabel(f"frames ({unit_name})", fontsize=7)
    for ax in list(axes.flat)[len(envs):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], color=f"C{k}", lw=2) for k in drawn]
    fig.legend(handles, labels, loc="lower center", ncol=1, fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, legend_in / height, 1, 1))  # it makes room for the suptitle
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


@dataclass
class GridNumbers:
    """What a grid's report is computed from, at one frame count: its systems, each one's
    curves per environment (those that reached the frames and those behind), their per-game
    statistics and the levels each environment's frames are reported to."""

    at: int
    systems: list[System]
    runs: dict[tuple[str, str], GameRuns]  # (system, env) → its runs
    stats: dict[tuple[str, str], GameStats]  # (system, env) with runs at ``at`` → statistics
    levels: dict[str, tuple[float, ...]]  # env → the scores whose frames are reported


def checked_frames(grid: Grid, at: int | None) -> int:
    """The frames to compare at: ``at``, else the grid's target; refused below 1."""
    at = grid.target if at is None else at
    if at < 1:
        raise ValueError(f"--at {at}: allowed: a frame count of at least 1")
    return at


def grid_numbers(grid: Grid, at: int) -> GridNumbers:
    """Every system's runs, per-game statistics and levels at ``at`` frames."""
    systems, runs = collect(grid, at)
    stats, levels = {}, {}
    for env in grid.envs:
        norm = normalizer(env)
        levels[env] = levels_of(grid, env, runs, systems, at, norm)
        for s in systems:
            curves = runs[(s.name, env)].curves
            if curves:
                stats[(s.name, env)] = game_stats(curves, at, grid.window, norm, levels[env])
    return GridNumbers(at, systems, runs, stats, levels)


#: The columns of a report's runs.csv, one row per run at the frames compared (``run_rows``).
RUN_COLUMNS = ("system", "env", "seed", "frames_trained", "score", "normalized",
               "normalized_auc", "source")


def run_rows(grid: Grid, runs: dict[tuple[str, str], GameRuns], at: int) -> list[tuple]:
    """Each run that reached ``at`` frames: its system, environment, seed, frames trained,
    score, normalized score (HNS on the Atari-57, else the score) and normalized area, and
    where its curve was read (``RUN_COLUMNS``)."""
    rows = []
    for (name, env), entry in runs.items():
        norm = normalizer(env)
        for c in entry.curves:
            score = c.score_at(at, grid.window)
            rows.append((name, env, int(c.seed), int(c.trained), float(score),
                         float(norm(np.array([score]))[0]),
                         float(normalized_auc(c, at, grid.window, norm)), c.source))
    return rows


def write_grid_report(grid: Grid, at: int | None = None, out: Path | None = None,
                      reps: int = REPS) -> GridReport:
    """Write ``report.md``, ``benchmark.png`` and ``runs.csv`` into ``out`` (default
    ``<grid out>/report``) comparing every system at ``at`` frames (default: the grid's
    target)."""
    at = checked_frames(grid, at)
    out = grid.out / "report" if out is None else Path(out)
    out.mkdir(parents=True, exist_ok=True)
    numbers = grid_numbers(grid, at)
    systems, runs, stats = numbers.systems, numbers.runs, numbers.stats
    table = ["| env | system | seeds | score | normalized | normalized AUC | frames to levels |"
             + "".join(f" vs {p.name} |" for p in systems if p.peer),
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"
             + " --- |" * sum(p.peer for p in systems)]
    for env in grid.envs:
        norm, levels = normalizer(env), numbers.levels[env]
        for s in systems:
            if (s.name, env) not in stats:
                continue
            st = stats[(s.name, env)]
            to = ", ".join(f"{_score(level)}: {_frames(f)}" + (f" ({k}/{st.n})" if k < st.n else "")
                           for level, (f, k) in zip(levels, st.frames_to, strict=True)) or "—"
            versus = "".join(
                " |" if s.peer else f" {comparison(st, stats[(p.name, env)])} |"
                if (p.name, env) in stats else f" no {p.name} yet |" for p in systems if p.peer)
            table.append(f"| {env} | {s.name} | {st.n} | {_score_iv(st.score)} | "
                         f"{_iv(st.normalized, 3) if norm.name == 'HNS' else '—'} | "
                         f"{_iv(st.auc, 3)} | {to} |{versus}")
    # A closed setting's runs that never started never will: only those it left short are
    # listed. A run behind at the frames compared or past them has no episode to read (a long
    # episode, or one a resume restarted): said so, not "at N frames" as if short of them.
    behind = [f"- {s.name} on {env}: " + ", ".join(
                  [f"seed {seed} at {frames:,} frames"
                   + (", with no training episode ended" if frames >= at else "")
                   for seed, frames in entry.behind]
                  + [f"seed {seed} " + ("has no curve file" if s.peer else "not started")
                     for seed in ([] if s.closed else entry.missing)])
              + (" (closed)" if s.closed else "")
              for (name, env), entry in runs.items() for s in systems
              if s.name == name and (entry.behind or (entry.missing and not s.closed))]
    figure_path = figure(grid, systems, runs, at, out / "benchmark.png")
    lines = [f"# Benchmark {grid.path.stem}: {len(grid.envs)} environments at {at:,} frames",
             "",
             f"Grid `{grid.path}`: seeds {', '.join(map(str, grid.seeds))}, budget "
             f"{grid.frames:,} frames" + (f" (runs stop at {grid.stop_at:,})"
                                          if grid.stop_at is not None else "") + ". Systems:", ""]
    lines += [f"- **{s.label}**" + (f" (closed: {s.closed})" if s.closed else "")
              for s in systems]
    lines += ["", "Scores are training returns: the mean raw return of the last "
              f"{grid.window} training episodes that ended by {at:,} frames (the behaviour "
              "policy as it learns, the one measure every system records). Intervals are 95 % "
              "percentile-bootstrap CIs over seeds (rliable); one seed shows its value alone. "
              "Normalized: HNS (paper App. \"Evaluation Metrics for ALE\") on the Atari-57 "
              "games, raw scores elsewhere. Normalized AUC: the mean normalized score over "
              f"[0, {at:,}] frames. Frames to levels: the first frames at which the mean of "
              f"a full window of {grid.window} episodes reached the level, median over the "
              "seeds that reached it (how many, when not all). \"vs peer\": where the peer's "
              "interval of the normalized AUC lies against the setting's (two seeds or more "
              "each).", ""]
    if figure_path is not None:
        lines += [f"![{grid.path.stem}]({figure_path.name})", ""]
    lines += ["## Per environment", "", *table, "", "## Aggregates", ""]
    lines += aggregates(systems, stats, grid.envs, reps)
    if behind:
        lines += ["", "## Not in these numbers", "", *behind]
    lines += ["", "## Commands", "", "```", f"gdi benchmark run {grid.path}",
              f"gdi benchmark report {grid.path}" + (f" --at {at}" if at != grid.target else ""),
              "```", ""]
    markdown = out / "report.md"
    markdown.write_text("\n".join(lines), encoding="utf-8")
    table_path = out / "runs.csv"
    with table_path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RUN_COLUMNS)
        for row in run_rows(grid, runs, at):
            writer.writerow([repr(value) if isinstance(value, float) else value
                             for value in row])  # a float's repr: every digit kept
    sections = {"Per environment": table,
                "Aggregates": lines[lines.index("## Aggregates") + 2:lines.index(
                    "## Not in these numbers" if behind else "## Commands") - 1],
                "Not in these numbers": behind}
    return GridReport(markdown, figure_path, table_path, lines, sections)


def page_markers(grid: Grid) -> tuple[str, str]:
    """The lines around a grid's generated block in a results page."""
    name = grid.path.name
    return (f"<!-- BEGIN gdi benchmark report {name} --page: edits inside are overwritten -->",
            f"<!-- END gdi benchmark report {name} --page -->")


def write_page_block(page: Path, report: GridReport, grid: Grid, at: int) -> Path:
    """Put the report's figure, per-environment table and aggregates into the results page
    ``page`` between its markers (appended when they are missing; the rest of the page, its
    summary and reading, is kept), the figure copied to ``figures/<grid>-benchmark.png``
    beside the page: a results page regenerated from the grid in one command."""
    block = []
    if report.figure is not None:
        figure_path = page.parent / "figures" / f"{grid.path.stem}-benchmark.png"
        figure_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report.figure, figure_path)
        block += [f"![Training return per environment at {at:,} frames, mean over seeds and "
                  f"95 % band](figures/{figure_path.name})", ""]
    block += [*report.sections["Per environment"], "", "**Aggregates.**", "",
              *report.sections["Aggregates"]]
    if report.sections["Not in these numbers"]:
        block += ["", "**Not in these numbers** (runs behind, not started or with no episode "
                  "yet):", "", *report.sections["Not in these numbers"]]
    begin, end = page_markers(grid)
    wrapped = "\n".join([begin, *block, end]) + "\n"
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + wrapped + ("\n" + tail if tail else "")
    else:
        text = (text.rstrip("\n") + "\n\n" if text else "") + wrapped
    write_text(page, text)
    return page
