"""Does a refactor keep what runs write? Seeded inline runs of a checkout, and a comparison of
two such sets of records (issue 43: each behaviour-preserving step must leave them identical).

    git worktree add /tmp/before <commit>                # the code before the change
    python scripts/same_records.py run /tmp/before /tmp/records-before
    python scripts/same_records.py run . /tmp/records-after
    python scripts/same_records.py compare /tmp/records-before /tmp/records-after

``run`` trains, from the checkout CODE (its ``gdi`` package first on the path), three seeded
inline runs that cover both parameter-family counts and stacked frames: MinAtar Breakout GDI-I³
and GDI-H³ (12k frames) and ``ale:Breakout`` GDI-H³ at a shrunken ale-cpu scale (6k frames);
about a minute on 2 cores. A seeded inline run is exactly reproducible (one process, one torch
thread). ``compare`` checks every row of metrics.jsonl (but the wall-time and throughput
fields) and meta.jsonl, and every evaluation's episode returns and λ, and exits 1 at the first
difference it reports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

RUNS = {
    "minatar-i3": ["--env", "minatar:breakout", "--preset", "gdi-i3", "--frames", "12000",
                   "--seed", "0", "--set", "eval_every=6000", "eval_episodes=2",
                   "log_every=1000"],
    "minatar-h3": ["--env", "minatar:breakout", "--preset", "gdi-h3", "--frames", "12000",
                   "--seed", "1", "--set", "eval_every=6000", "eval_episodes=2",
                   "log_every=1000"],
    "ale-h3": ["--env", "ale:Breakout", "--preset", "gdi-h3", "--scale", "ale-cpu",
               "--frames", "6000", "--seed", "2", "--set", "envs_per_actor=4", "batch_size=4",
               "min_replay=8", "replay_capacity=32", "lstm_units=32", "burn_in=4", "seq_len=8",
               "seq_stride=4", "eval_every=3000", "eval_episodes=1", "log_every=500"],
}
#: Fields of a metrics row that measure the machine, not the run.
MACHINE_FIELDS = ("perf/", "time/")


def run(code: Path, out: Path) -> int:
    if out.exists():
        print(f"same_records: {out} exists; give a new folder", file=sys.stderr)
        return 1
    out.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(code.resolve())}
    for name, args in RUNS.items():
        command = [sys.executable, "-m", "gdi.cli", "train", "--backend", "inline",
                   "--run-dir", str(out / name), *args, "torch_threads=1"]
        with (out / f"{name}.log").open("w") as log:
            done = subprocess.run(command, cwd=code, env=env, stdout=log, stderr=subprocess.STDOUT)
        if done.returncode:
            print(f"same_records: {name} failed (exit {done.returncode}); see {out}/{name}.log",
                  file=sys.stderr)
            return 1
        print(f"{name}: done")
    return 0


def rows(path: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if not k.startswith(MACHINE_FIELDS)}
            for line in path.read_text(encoding="utf-8").splitlines()]


def compare(before: Path, after: Path) -> int:
    same = True
    for name in RUNS:
        for records in ("metrics.jsonl", "meta.jsonl"):
            a, b = rows(before / name / records), rows(after / name / records)
            if a != b:
                same = False
                # The first row that differs, or the shorter file's end.
                first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                             min(len(a), len(b)))
                print(f"{name}/{records}: differs from row {first} ({len(a)} rows against "
                      f"{len(b)})")
            else:
                print(f"{name}/{records}: {len(a)} rows, identical")
        for path in sorted((before / name / "eval").glob("*.json")):
            other = after / name / "eval" / path.name
            episodes = [json.loads(p.read_text())["episodes"] if p.is_file() else None
                        for p in (path, other)]
            kept = [None if e is None else [(x["return"], x.get("lambda")) for x in e]
                    for e in episodes]
            if kept[0] != kept[1]:
                same = False
                print(f"{name}/eval/{path.name}: differs")
            else:
                print(f"{name}/eval/{path.name}: identical")
    print("IDENTICAL" if same else "DIFFERENT")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    runs = sub.add_parser("run", help="train the seeded runs of checkout CODE into OUT")
    runs.add_argument("code", type=Path)
    runs.add_argument("out", type=Path)
    comparison = sub.add_parser("compare", help="compare two folders of records")
    comparison.add_argument("before", type=Path)
    comparison.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.code, args.out)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
