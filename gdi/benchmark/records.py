"""A run's records kept apart from its run folder (a grid setting's ``records`` pattern): what
its curves, tables and reports are made of, small enough for a repository, without what only
a resume needs (checkpoints) or what is made again from the records (TensorBoard events,
reports)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from gdi.atomic import atomic_write, write_text
from gdi.run_files import EVAL_DIR

#: The files copied as they are; ``meta.jsonl`` (every training episode) is kept compressed.
KEPT_FILES = ("config.json", "metrics.jsonl")
META = "meta.jsonl"


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
