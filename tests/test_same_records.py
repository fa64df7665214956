"""scripts/same_records.py compare: identical records pass, and a changed learner row, meta row
or evaluation episode is reported (the throughput fields, which measure the machine, are not
compared)."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "same_records.py"
spec = importlib.util.spec_from_file_location("same_records", SCRIPT)
same_records = importlib.util.module_from_spec(spec)
spec.loader.exec_module(same_records)


def write_records(root: Path, loss: float = 1.5, fps: float = 900.0, ret: float = 3.0) -> Path:
    for name in same_records.RUNS:
        run = root / name
        (run / "eval").mkdir(parents=True)
        (run / "metrics.jsonl").write_text(
            json.dumps({"frames": 10, "losses/total": loss, "perf/fps": fps}) + "\n")
        (run / "meta.jsonl").write_text(json.dumps({"frames": 10, "return": 2.0}) + "\n")
        (run / "eval" / "frames_000000000010.json").write_text(json.dumps(
            {"episodes": [{"return": ret, "lambda": [1.0, 1.0, 0.5]}]}))
    return root


@pytest.mark.parametrize(("change", "identical"), [
    ({}, True),
    ({"fps": 123.0}, True),  # the machine's speed is not the run's behaviour
    ({"loss": 1.6}, False),
    ({"ret": 4.0}, False),
])
def test_compare(tmp_path, capsys, change, identical):
    before = write_records(tmp_path / "before")
    after = write_records(tmp_path / "after", **change)
    assert same_records.compare(before, after) == (0 if identical else 1)
    assert capsys.readouterr().out.strip().endswith("IDENTICAL" if identical else "DIFFERENT")
