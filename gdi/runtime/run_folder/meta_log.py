"""Reading a run's λ log (``meta.jsonl``: one row per training episode) to show what E learned."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gdi.policy_space import get_policy_space
from gdi.run_files import read_jsonl
from gdi.runtime.components import build_controller
from gdi.runtime.run_folder.run_dir import read_config


class NoEpisodesYet(ValueError):
    """A run's ``meta.jsonl`` holds no finished episode yet (a run just started)."""


def load_meta_rows(run_dir: Path, notes: list[str] | None = None) -> list[dict]:
    """Every row of ``meta.jsonl`` (frames, actor, λ, return, length of a training episode), in
    the order the actors reported them to E. A finished run kept in an archive may hold it
    compressed, as ``meta.jsonl.gz`` (``benchmarks/minatar_ablation.py`` does).

    An incomplete last line (a write cut short by a crash, as a resume tolerates it) is left
    out, and said so in ``notes`` when given; a bad line elsewhere is a ValueError naming it;
    a log with no row yet is :class:`NoEpisodesYet`."""
    path = Path(run_dir) / "meta.jsonl"
    if not path.is_file() and not path.with_name(path.name + ".gz").is_file():
        raise FileNotFoundError(f"{run_dir} has no meta.jsonl (is it a gdi train run folder?)")
    rows = read_jsonl(path, notes)
    if not rows:
        raise NoEpisodesYet(f"{path} has no finished episodes yet")
    return rows


def load_meta_log(run_dir: Path, notes: list[str] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames [N], λ [N, k], returns [N]) of every finished training episode, in order."""
    rows = load_meta_rows(run_dir, notes)
    frames = np.array([r["frames"] for r in rows], dtype=np.int64)
    lambdas = np.array([r["lambda"] for r in rows], dtype=np.float64)
    returns = np.array([r["return"] for r in rows], dtype=np.float64)
    return frames, lambdas, returns


def plot_run_meta(run_dir: Path, out: Path | None = None, notes: list[str] | None = None
                  ) -> Path:
    """Draw how P_Λ moved during a run (``gdi plot-meta``); what was left out of the λ log
    goes to ``notes``."""
    from gdi.meta.plotting import plot_meta_history

    run_dir = Path(run_dir)
    config, _ = read_config(run_dir)
    frames, lambdas, returns = load_meta_log(run_dir, notes)
    names = get_policy_space(config.policy_space).index_names
    # λ-space ranges from the controller itself (its search coordinates may be transformed).
    ranges = build_controller(config, config.seed).lambda_ranges
    return plot_meta_history(
        frames, lambdas, returns, names, [tuple(float(v) for v in r) for r in ranges],
        out or run_dir / "meta.png", title=f"What E learned: {run_dir.name}",
    )
