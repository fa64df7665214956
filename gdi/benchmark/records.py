"""A run's records kept apart from its run folder (a grid setting's ``records`` pattern): what
its curves, tables and reports are made of, small enough for a repository, without what only
a resume needs (checkpoints) or what is made again from the records (TensorBoard events,
reports). With the setting's ``carry``, an unfinished run's newest checkpoint is kept there
too (``carried/``), and the run folder can be rebuilt from the records to resume on a machine
that has nothing else of it."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from gdi.atomic import atomic_write, write_text
from gdi.run_files import CHECKPOINT_DIR, EVAL_DIR, list_checkpoints

#: The files copied as they are; ``meta.jsonl`` (every training episode) is kept compressed.
KEPT_FILES = ("config.json", "metrics.jsonl")
META = "meta.jsonl"
#: Where a carried checkpoint lies in a records folder (laid out as a run folder's
#: ``checkpoints/``, so that the same names and readers apply).
CARRIED = "carried"


def keep_records(run: Path, records: Path) -> None:
    """Copy ``run``'s records into ``records`` (made if missing; its earlier records of this
    run are replaced, file by file, each written atomically)."""
    records.mkdir(parents=True, exist_ok=True)
    for name in KEPT_FILES:
        if (run / name).is_file():
            write_text(records / name, (run / name).read_text(encoding="utf-8"))
    if (run / META).is_file():
        packed = gzip.compress((run / META).read_bytes(), mtime=0)
        atomic_write(records / f"{META}.gz", lambda f: f.write(packed))
    if (run / EVAL_DIR).is_dir():
        (records / EVAL_DIR).mkdir(exist_ok=True)
        for path in sorted((run / EVAL_DIR).glob("*.json")):
            shutil.copy2(path, records / EVAL_DIR / path.name)


def carried_checkpoint(records: Path) -> Path | None:
    """The checkpoint carried in ``records`` (the newest, should there be several), if any."""
    carried = list_checkpoints(records / CARRIED) if (records / CARRIED).is_dir() else []
    return carried[-1] if carried else None


def carry_checkpoint(run: Path, records: Path) -> Path | None:
    """Keep ``run``'s newest checkpoint in ``records/carried/`` (written atomically, then the
    ones carried before it deleted), beside the records that :func:`keep_records` keeps;
    ``None`` when the run has no checkpoint."""
    checkpoints = list_checkpoints(run)
    if not checkpoints:
        return None
    newest = checkpoints[-1]
    folder = records / CARRIED / CHECKPOINT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with newest.open("rb") as source:
        kept = atomic_write(folder / newest.name, lambda f: shutil.copyfileobj(source, f))
    for older in list_checkpoints(records / CARRIED):
        if older != kept:
            older.unlink()
    return kept


def drop_carried(records: Path) -> None:
    """Delete what ``records`` carries for a resume (the run is done: its records are enough)."""
    shutil.rmtree(records / CARRIED, ignore_errors=True)


def restore_run(records: Path, run: Path) -> Path:
    """Rebuild the run folder ``run`` (which must not exist) from ``records`` and its carried
    checkpoint, as the run's folder stood when it was carried: config, metrics, episodes,
    evaluations and the checkpoint a resume loads (TensorBoard events start afresh). Returns
    the checkpoint."""
    checkpoint = carried_checkpoint(records)
    if checkpoint is None:
        raise FileNotFoundError(f"{records} carries no checkpoint (looked in "
                                f"{records / CARRIED / CHECKPOINT_DIR})")
    building = run.with_name(f"{run.name}.restoring")
    shutil.rmtree(building, ignore_errors=True)  # what a restore cut short left behind
    (building / CHECKPOINT_DIR).mkdir(parents=True)
    for name in KEPT_FILES:
        if (records / name).is_file():
            shutil.copy2(records / name, building / name)
    if (records / f"{META}.gz").is_file():
        (building / META).write_bytes(gzip.decompress((records / f"{META}.gz").read_bytes()))
    if (records / EVAL_DIR).is_dir():
        shutil.copytree(records / EVAL_DIR, building / EVAL_DIR)
    shutil.copy2(checkpoint, building / CHECKPOINT_DIR / checkpoint.name)
    run.parent.mkdir(parents=True, exist_ok=True)
    building.rename(run)  # the folder appears whole or not at all
    return run / CHECKPOINT_DIR / checkpoint.name
