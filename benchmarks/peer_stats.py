"""Sample Factory's learner statistics as a CSV beside a peer run's curves (``learner.csv``), so
that a peer's entropy, PPO-clipped fraction or policy lag travel with its records and read beside
gdi's (``python -m benchmarks.return_by_frames --metric train/entropy``).

Sample Factory writes them only as TensorBoard events in its experiment folder
(``.summary/0``), which the records do not keep (a run's events are ~1 MB, mostly
throughput and memory gauges). ``learner.csv`` holds its ``train/*`` scalars, one row per
training summary: ``frames`` (SF's summary step, frames as gdi counts them under
``summaries_use_frameskip``) and one column per statistic, five significant digits, a cell
empty where SF did not log that one at that step. Its names are Sample Factory's, with their
meanings: ``train/fraction_clipped`` is the share of the last minibatch's ratios π/μ outside
[1/(1 + ε), 1 + ε] on either side, where gdi's ``stats/pg_clipped_frac`` counts only the steps
whose gradient the clip stops (past the bound on the side the advantage pushes): about twice
gdi's count for the same batch where a ratio's side is independent of its advantage's sign,
less where the policy has already moved the way the advantages push.

Imported by ``benchmarks/appo_peer.py`` in Sample Factory's venv (beside it on the path) and
by ``benchmarks/return_by_frames.py`` in gdi's: the standard library and TensorBoard only.
"""

from __future__ import annotations

import csv
import os

#: The file beside ``curve.csv`` in a peer run's records.
LEARNER_FILE = "learner.csv"
#: Sample Factory's learner statistics: every scalar under this TensorBoard prefix.
PREFIX = "train/"


def read_summary(summary_dir: str) -> dict[int, dict[str, float]]:
    """Per summary step, each ``train/*`` scalar of the TensorBoard events in ``summary_dir``.
    A resumed run's later events file replaces what a killed run had logged past its
    checkpoint (TensorBoard's own purge of orphaned steps)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(summary_dir, size_guidance={"scalars": 0})
    events.Reload()
    rows: dict[int, dict[str, float]] = {}
    for tag in events.Tags()["scalars"]:
        if tag.startswith(PREFIX):
            for event in events.Scalars(tag):
                rows.setdefault(int(event.step), {})[tag] = float(event.value)
    return rows


def read_learner_csv(path: str) -> dict[int, dict[str, float]]:
    """The rows of a ``learner.csv`` as :func:`read_summary` gives them (empty cells left out)."""
    with open(path, newline="") as f:
        return {int(row["frames"]): {k: float(v) for k, v in row.items() if k != "frames" and v}
                for row in csv.DictReader(f)}


def write_learner_csv(summary_dir: str, path: str) -> int:
    """Write ``path`` from the events in ``summary_dir``, merged over the ``path`` already there
    (a run moved to another machine resumes without its events: the rows kept before stay, and
    a step logged again takes the new value). Written atomically; returns the rows written (0:
    no statistic anywhere, nothing written)."""
    rows = read_learner_csv(path) if os.path.isfile(path) else {}
    for step, values in read_summary(summary_dir).items():
        rows.setdefault(step, {}).update(values)
    if not rows:
        return 0
    keys = sorted({key for values in rows.values() for key in values})
    partial = f"{path}.tmp"
    with open(partial, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["frames", *keys])
        for step in sorted(rows):
            out.writerow([step, *(f"{rows[step][k]:.5g}" if k in rows[step] else ""
                                  for k in keys)])
    os.replace(partial, path)
    return len(rows)
