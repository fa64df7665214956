"""Where a run folder keeps its checkpoints and evaluations, and what they are called.

The runtime writes ``checkpoints/ckpt_<frames>.safetensors`` (``gdi.runtime.run_folder.checkpoint``:
atomic writes, loading, pruning; the format is ``gdi.data_file``'s) and the evaluation files of ``gdi.scores``; reports and tools outside
the runtime only need to find them, so the names live here, below both. So do the evaluation
policies, which decide the folder an evaluation is filed in, and what marks a bundle of ``gdi
export`` (a read-only run folder) and where what is made from one goes. Standard library only:
every layer (the command line's signatures included) may import it.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

__all__ = [
    "BUNDLE_EVALUATIONS",
    "BUNDLE_FRONT_MATTER",
    "BUNDLE_REPORTS",
    "CHECKPOINT_DIR",
    "CHECKPOINT_SUFFIX",
    "EVALUATION_POLICIES",
    "EVAL_DIR",
    "FIXED",
    "LATEST",
    "OBSERVATIONS_FILE",
    "PICKLE_SUFFIX",
    "POPULATION",
    "checkpoint_name",
    "eval_folder",
    "eval_name",
    "is_bundle",
    "lambda_text",
    "latest_checkpoint",
    "list_checkpoints",
    "list_pickle_checkpoints",
    "no_checkpoints",
    "outside_bundle",
    "read_jsonl",
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
#: A checkpoint's file ending: safetensors with its tree in the metadata (gdi.data_file).
CHECKPOINT_SUFFIX = ".safetensors"
#: The ending of the pickle checkpoints gdi wrote before 0.2, which only ``gdi upgrade`` reads.
PICKLE_SUFFIX = ".pt"
_CHECKPOINT_NAME = re.compile(r"^ckpt_(\d{12})\.safetensors$")
_PICKLE_NAME = re.compile(r"^ckpt_(\d{12})\.pt$")


def checkpoint_name(frames: int) -> str:
    """``ckpt_<frames>.safetensors`` with the frames zero-padded to 12 digits, so that names
    sort as the frames do."""
    return f"ckpt_{frames:012d}{CHECKPOINT_SUFFIX}"


def list_checkpoints(run_dir: Path) -> list[Path]:
    """Checkpoints of a run, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _CHECKPOINT_NAME.match(p.name))


def list_pickle_checkpoints(run_dir: Path) -> list[Path]:
    """The pickle checkpoints (``ckpt_<frames>.pt``, gdi before 0.2) of a run, oldest first:
    never loaded, only named (and converted by ``gdi upgrade``)."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _PICKLE_NAME.match(p.name))


def latest_checkpoint(run_dir: Path) -> Path:
    """The newest checkpoint of a run; FileNotFoundError when it has none."""
    found = list_checkpoints(run_dir)
    if not found:
        raise no_checkpoints(run_dir)
    return found[-1]


def no_checkpoints(run_dir: Path) -> Exception:
    """The error for a run without checkpoints of the current format: a ValueError saying how
    to convert them when it holds pickle checkpoints of gdi before 0.2, else FileNotFoundError."""
    old = list_pickle_checkpoints(run_dir)
    if old:
        return ValueError(
            f"{run_dir} holds checkpoints in the pickle format gdi wrote before 0.2 "
            f"({old[-1].name}{f' and {len(old) - 1} more' if len(old) > 1 else ''}), which are "
            f"never loaded as they are (unpickling can run code); if you trust the folder, "
            f"convert it once with: gdi upgrade {run_dir}")
    return FileNotFoundError(
        f"{run_dir} has no checkpoints (looked in {run_dir}/{CHECKPOINT_DIR})")


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


#: The first lines of a bundle's model card (``README.md``, ``gdi.export.model_card``): what
#: marks a folder as a bundle of ``gdi export``.
BUNDLE_FRONT_MATTER = "---\nlibrary_name: gdi\n"
#: A bundle is never written into: its evaluations (``gdi evaluate BUNDLE``,
#: ``gdi.agent.evaluate_checkpoint``) go to ``<this>/<bundle name>`` unless told where, and its
#: report (``gdi report BUNDLE``) to ``<BUNDLE_REPORTS>/<bundle name>``, under the current folder.
BUNDLE_EVALUATIONS = Path("evaluations")
BUNDLE_REPORTS = Path("reports")


def is_bundle(folder: str | Path) -> bool:
    """Whether ``folder`` is a bundle of ``gdi export``: its model card opens with
    :data:`BUNDLE_FRONT_MATTER` and it has no training rows (``metrics.jsonl``)."""
    card = Path(folder) / "README.md"
    if not card.is_file() or (Path(folder) / "metrics.jsonl").exists():
        return False
    front = BUNDLE_FRONT_MATTER.encode()
    with card.open("rb") as handle:
        return handle.read(len(front)) == front


def outside_bundle(bundle: str | Path, where: Path) -> Path:
    """``where/<bundle name>``: the default folder of what is made from ``bundle``
    (:data:`BUNDLE_EVALUATIONS`, :data:`BUNDLE_REPORTS`)."""
    return Path(where) / Path(bundle).resolve().name


def read_jsonl(path: Path, notes: list[str] | None = None) -> list[dict]:
    """The rows of a JSON-lines file a run writes (``metrics.jsonl``, ``meta.jsonl``), or of
    ``<path>.gz`` beside it when the file itself is not there (an archived run keeps it
    compressed). An incomplete last line (a write cut short by a crash, as a resume tolerates
    it) is left out, and said so in ``notes`` when given; a line elsewhere that is not a JSON
    object is a ValueError naming the file and line. FileNotFoundError when neither exists."""
    path = Path(path)
    packed = path.with_name(path.name + ".gz")
    if path.is_file():
        text = path.read_text(encoding="utf-8", errors="replace")
    elif packed.is_file():
        text, path = gzip.decompress(packed.read_bytes()).decode("utf-8", "replace"), packed
    else:
        raise FileNotFoundError(f"no {path.name} (nor {packed.name}) in {path.parent}")
    rows = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            if number == len(lines) and not text.endswith("\n"):
                if notes is not None:
                    notes.append(f"{path}: left out its incomplete last line {number} (a "
                                 "write cut short by a crash)")
                continue
            raise ValueError(f"{path}:{number} is not valid JSON ({err})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number} is not a JSON object")
        rows.append(row)
    return rows
