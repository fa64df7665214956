"""Where a run folder keeps its checkpoints and evaluations, and what they are called.

The runtime writes ``checkpoints/ckpt_<frames>.pt`` (``gdi.runtime.run_folder.checkpoint``: atomic
writes, loading, pruning) and the evaluation files of ``gdi.scores``; reports and tools outside
the runtime only need to find them, so the names live here, below both. So do the evaluation
policies, which decide the folder an evaluation is filed in. Standard library only: every layer
(the command line's signatures included) may import it.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "CHECKPOINT_DIR",
    "EVALUATION_POLICIES",
    "EVAL_DIR",
    "FIXED",
    "LATEST",
    "OBSERVATIONS_FILE",
    "POPULATION",
    "checkpoint_name",
    "eval_folder",
    "eval_name",
    "lambda_text",
    "latest_checkpoint",
    "list_checkpoints",
]

CHECKPOINT_DIR = "checkpoints"
EVAL_DIR = "eval"
#: The visited states a run keeps for ``gdi analyze richness`` (``observation_reservoir``).
OBSERVATIONS_FILE = "observations.npz"
#: What names a run's newest checkpoint wherever a checkpoint is asked for.
LATEST = "latest"

#: The default evaluation policy, λ ~ P_Λ: what periodic evaluation during training plays (the
#: paper's "population of agents") and the only one reports read.
POPULATION = "population"

#: How λ is chosen when a checkpoint is played outside training (``gdi evaluate`` and ``gdi
#: enjoy`` ``--policy``, ``gdi.load_agent(policy=...)``), each with the description its score
#: files record.
EVALUATION_POLICIES = {
    POPULATION: "π_λ with λ ~ P_Λ (current E, frozen during evaluation)",
    "greedy": "π_λ with λ = E's greedy λ (highest value estimate, no exploration)",
    "uniform": "π_λ with λ uniform over Λ as E searches it (E's own P_Λ set aside)",
    "fixed": "π_λ with one λ given for every episode",
}
#: The evaluation policy that plays one λ given by the caller (``--lambda``).
FIXED = "fixed"
_CHECKPOINT_NAME = re.compile(r"^ckpt_(\d{12})\.pt$")


def checkpoint_name(frames: int) -> str:
    """``ckpt_<frames>.pt`` with the frames zero-padded to 12 digits, so that names sort as the
    frames do."""
    return f"ckpt_{frames:012d}.pt"


def list_checkpoints(run_dir: Path) -> list[Path]:
    """Checkpoints of a run, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _CHECKPOINT_NAME.match(p.name))


def latest_checkpoint(run_dir: Path) -> Path:
    """The newest checkpoint of a run; FileNotFoundError when it has none."""
    found = list_checkpoints(run_dir)
    if not found:
        raise FileNotFoundError(
            f"{run_dir} has no checkpoints (looked in {run_dir}/{CHECKPOINT_DIR})")
    return found[-1]


def lambda_text(lam) -> str:
    """A λ as written in file names and score files: its numbers by ``%g``, comma-separated."""
    return ",".join(f"{float(x):g}" for x in lam)


def eval_name(checkpoint: str, policy: str, fixed_lambda=None) -> str:
    """The file name (no ``.json``) under :func:`eval_folder` of ``policy`` of an evaluation of
    checkpoint ``checkpoint`` (its stem): the checkpoint's own name, with ``@<λ>`` added for
    the fixed policy, whose evaluations of one checkpoint differ by λ."""
    return f"{checkpoint}@{lambda_text(fixed_lambda)}" if policy == FIXED else checkpoint


def eval_folder(policy: str) -> str:
    """The folder of a run that holds evaluations played with ``policy``: ``eval`` for the
    population (what reports read), ``eval_<policy>`` for any other, so that a run's curve and
    final score stay those of one policy."""
    if policy not in EVALUATION_POLICIES:
        raise ValueError(f"unknown evaluation policy {policy!r}; allowed: "
                         f"{', '.join(EVALUATION_POLICIES)}")
    return EVAL_DIR if policy == POPULATION else f"{EVAL_DIR}_{policy}"
