"""Reading a run's λ log (``meta.jsonl``: one row per training episode) to show what E learned."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gdi.policy_space import get_policy_space
from gdi.runtime.components import build_controller
from gdi.runtime.run_dir import read_config


def load_meta_log(run_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames [N], λ [N, k], returns [N]) of every finished training episode, in order."""
    path = Path(run_dir) / "meta.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} has no meta.jsonl (is it a gdi train run folder?)")
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{number} is not valid JSON ({err})") from None
    if not rows:
        raise ValueError(f"{path} has no finished episodes yet")
    frames = np.array([r["frames"] for r in rows], dtype=np.int64)
    lambdas = np.array([r["lambda"] for r in rows], dtype=np.float64)
    returns = np.array([r["return"] for r in rows], dtype=np.float64)
    return frames, lambdas, returns


def plot_run_meta(run_dir: Path, out: Path | None = None) -> Path:
    """Draw how P_Λ moved during a run (``gdi plot-meta``)."""
    from gdi.meta.plotting import plot_meta_history

    run_dir = Path(run_dir)
    config, _ = read_config(run_dir)
    frames, lambdas, returns = load_meta_log(run_dir)
    names = get_policy_space(config.policy_space).index_names
    # λ-space ranges from the controller itself (its search coordinates may be transformed).
    ranges = build_controller(config, config.seed).lambda_ranges
    return plot_meta_history(
        frames, lambdas, returns, names, [tuple(float(v) for v in r) for r in ranges],
        out or run_dir / "meta.png", title=f"What E learned: {run_dir.name}",
    )
