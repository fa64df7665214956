"""One command for a GPU machine: the paper's preset on the ALE for a few minutes, with the
learner on the GPU and actors on the other cores, and what bounds it.

It runs ``gdi train`` (the ``local`` backend, ``learner_device`` cuda) for ``--minutes`` of
training after start-up, stops it as a user would (SIGINT: it checkpoints and exits 130), and
reads the run folder:

* frames/s end to end (frames over the wall time of training, start-up excluded, and the mean
  of the logged ``perf/fps`` over the second half);
* the learner's busy share (``perf/learner_share``: learner steps over wall time) and its
  waiting share (``perf/wait_share``: waiting for windows);
* the actors' idle share (1 − the shares of their phases: inference, environments,
  recording, E, pulls), i.e. time an actor waits for its credit or for the learner;
* policy lag (learner steps between the parameters that acted a window and those that learn
  from it) and the evaluation returns.

Everything is printed and written to ``--out`` (JSON). ``num_actors`` defaults to the
machine's cores minus one (the learner's process keeps one), each actor stepping
``envs_per_actor`` environments; the ALE preset is otherwise the paper's table unchanged.

    python -m benchmarks.gpu_atari                       # ale:Breakout, 8 minutes, on cuda
    python -m benchmarks.gpu_atari --minutes 3 --set envs_per_actor=16
    python -m benchmarks.gpu_atari --actor-device cuda   # actors' inference on the GPU too
    python -m benchmarks.gpu_atari --learning policy-head --set input_norm=running
    python -m benchmarks.gpu_atari --device cpu --minutes 1 --set batch_size=4 ...  # a CPU check

On a machine without CUDA, ``--device cuda`` is refused in one line (the config validation).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ACTOR_PHASES = ("inference", "env", "record", "meta", "pull")
DEFAULT_MINUTES = 8.0


def default_actors() -> int:
    """One actor per core but one (the learner's process and the driver keep one)."""
    from gdi.runtime.components import available_cores

    return max(1, available_cores() - 1)


def train_command(args: argparse.Namespace, run_dir: Path) -> list[str]:
    settings = [f"learner_device={args.device}", f"actor_device={args.actor_device}",
                f"num_actors={args.actors}", *args.set]
    learning = ["--learning", args.learning] if args.learning else []
    return [sys.executable, "-m", "gdi.cli", "train", "--preset", args.preset, "--env", args.env,
            *learning, "--seed", str(args.seed), "--backend", "local", "--run-dir",
            str(run_dir), "--no-report", "--set", *settings]


def _rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarize(run_dir: Path, wall_s: float) -> dict:
    """The figures of a finished (or interrupted) run folder, as the module docstring lists
    them. ``wall_s`` is the wall time of training proper: from its start (the first logged
    row less the interval it reports) to its end."""
    rows = [r for r in _rows(run_dir / "metrics.jsonl") if "perf/fps" in r]
    if not rows:
        raise ValueError(f"{run_dir} logged no training rows: it did not get past start-up "
                         "(see its output above)")
    half = rows[len(rows) // 2:]

    def mean(key: str) -> float | None:
        values = [r[key] for r in half if key in r]
        return float(np.mean(values)) if values else None

    actor_busy = [sum(r.get(f"perf/actor_{p}_share", 0.0) for p in ACTOR_PHASES) for r in half]
    evals = []
    for path in sorted((run_dir / "eval").glob("*.json")):
        record = json.loads(path.read_text())
        evals.append({"frames": int(record["frames"]),
                      "mean_return": float(np.mean([e["return"] for e in record["episodes"]]))})
    config = json.loads((run_dir / "config.json").read_text())
    frames = int(rows[-1]["frames"])
    return {
        "env": config["env"], "preset": config["preset"],
        "learning": config.get("learning", "paper"),
        "learner_device": config["learner_device"],
        "actor_device": config.get("actor_device", "cpu"), "num_actors": config["num_actors"],
        "envs_per_actor": config["envs_per_actor"], "batch_size": config["batch_size"],
        "frames": frames,
        "wall_s": wall_s,
        "frames_per_s_end_to_end": frames / wall_s if wall_s > 0 else None,
        "frames_per_s_second_half": mean("perf/fps"),
        "learner_busy_share": mean("perf/learner_share"),
        "learner_wait_share": mean("perf/wait_share"),
        "actor_idle_share": float(1.0 - np.mean(actor_busy)),
        "policy_lag": mean("perf/policy_lag"),
        "learner_steps_per_s": mean("perf/learner_steps_per_s"),
        "evaluations": evals,
    }


def run(args: argparse.Namespace) -> dict:
    run_dir = Path(args.run_dir or f"runs/gpu-atari__{args.env.replace(':', '-')}__"
                   f"{time.strftime('%Y%m%d-%H%M%S')}")
    command = train_command(args, run_dir)
    print("$", " ".join(command), flush=True)
    process = subprocess.Popen(command)
    metrics = run_dir / "metrics.jsonl"
    started, first_row = time.monotonic(), None
    try:
        # --minutes of training, counted from the first logged row: start-up (processes,
        # environments, the first window) takes what it takes on a loaded machine, up to
        # --startup-minutes.
        deadline = started + 60 * args.startup_minutes
        while process.poll() is None and time.monotonic() < deadline:
            if first_row is None and any("perf/fps" in r for r in _rows(metrics)):
                first_row = time.monotonic()  # training under way: start-up is over
                deadline = first_row + 60 * args.minutes
            time.sleep(1.0)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # checkpoints and exits 130, as for a user
        code = process.wait(timeout=600)
    except KeyboardInterrupt:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=600)
        raise
    ended = time.monotonic()
    if code not in (0, 130):
        raise RuntimeError(f"gdi train exited {code} (its output is above; run folder {run_dir})")
    # Wall time of training proper: from the first logged row back by one log interval (the
    # row reports the interval before it) to the end.
    rows = [r for r in _rows(metrics) if "perf/fps" in r]
    first_interval = rows[0]["frames"] / rows[0]["perf/fps"] if rows else 0.0
    wall_s = ended - (first_row or started) + first_interval
    summary = {**summarize(run_dir, wall_s), "run_dir": str(run_dir), "exit_code": code,
               "command": command}
    out = Path(args.out or run_dir / "gpu_atari.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print_summary(summary)
    print(f"wrote {out}")
    return summary


def print_summary(s: dict) -> None:
    def share(v):
        return "n/a" if v is None else f"{v:.0%}"

    print(f"{s['env']} {s['preset']} ({s['learning']} T): {s['num_actors']} actors × "
          f"{s['envs_per_actor']} envs acting on {s['actor_device']}, learner on "
          f"{s['learner_device']}, "
          f"batch {s['batch_size']}")
    print(f"  frames {s['frames']:,} in {s['wall_s']:.0f} s: "
          f"{s['frames_per_s_end_to_end']:,.0f} frames/s end to end "
          f"({s['frames_per_s_second_half'] or 0:,.0f} over the second half)")
    print(f"  learner busy {share(s['learner_busy_share'])}, waiting "
          f"{share(s['learner_wait_share'])}; actors idle {share(s['actor_idle_share'])}; "
          f"policy lag {s['policy_lag'] or 0:.1f} learner steps")
    for e in s["evaluations"]:
        print(f"  evaluation at {e['frames']:,} frames: mean return {e['mean_return']:.2f}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_atari",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="ale:Breakout")
    parser.add_argument("--preset", default="gdi-i3")
    parser.add_argument("--learning", default=None,
                        help="gdi train --learning NAME (default: the scale's, the paper's T)")
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES,
                        help=f"wall time of training, from its first logged row (default "
                             f"{DEFAULT_MINUTES:g})")
    parser.add_argument("--startup-minutes", type=float, default=10.0,
                        help="the longest start-up waited for before training is stopped")
    parser.add_argument("--device", default="cuda", help="learner_device (cuda, cuda:1, cpu)")
    parser.add_argument("--actor-device", default="cpu",
                        help="actor_device: where each actor's network acts, batched over its "
                             "environments (cpu, or cuda to share the learner's GPU)")
    parser.add_argument("--actors", type=int, default=None,
                        help="num_actors (default: the cores minus one)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                        help="further config overrides (gdi train --set)")
    parser.add_argument("--run-dir", default=None, help="run folder (must not exist)")
    parser.add_argument("--out", default=None, help="JSON file (default RUN_DIR/gpu_atari.json)")
    args = parser.parse_args(argv)
    for name in ("minutes", "startup_minutes"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got "
                         f"{getattr(args, name):g}")
    if args.actors is None:
        args.actors = default_actors()
    elif args.actors < 1:
        parser.error(f"--actors must be at least 1, got {args.actors}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        run(args)
    except (ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
