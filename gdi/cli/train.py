"""``gdi train``: a run of GDI's Algorithm 1 from the command line, its stop signals and, when
it ends, its report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

from gdi.backend_registry import BACKENDS
from gdi.cli.options import Count, check_count, typed_or_none
from gdi.run_spec import RunSpec


def train(
    preset: typed_or_none(str, RunSpec.preset) = None,
    env: typed_or_none(str, RunSpec.env) = None,
    scale: str | None = None,
    learning: str | None = None,
    search: str | None = None,
    frames: Count | None = None,
    seed: typed_or_none(int, RunSpec.seed) = None,
    backend: Literal[tuple(BACKENDS)] | None = None,
    set: tuple[str, ...] = (),
    run_dir: Path | None = None,
    resume: Path | None = None,
    stop_at: Count | None = None,
    report: bool = True,
) -> int:
    """Train a preset on an environment (GDI's Algorithm 1: actors sample with π_λ, λ ~ E;
    the learner applies T; E learns from episode returns).

    Writes runs/<env>__<preset>__<seed>__<time>/ (config.json, metrics.jsonl, meta.jsonl,
    TensorBoard events, checkpoints/, eval/) and, with --report, a report of the run.
    Ctrl-C, SIGTERM or SIGHUP checkpoints and stops; --resume RUN_DIR continues.

    Exit codes: 0 finished; 1 failed (the one-line message says why and what is kept, e.g. a
    full disk); 2 bad input (nothing trained); 130 interrupted by Ctrl-C (SIGINT), 143 by
    SIGTERM, 129 by SIGHUP (a checkpoint is saved: --resume continues).

    Args:
        preset: Preset name (`gdi presets` lists them).
        env: Environment: ale:<Game>, minatar:<game> or gym:<id>.
        scale: Scale knobs (torso, batch, sequences, actors; `gdi scales` lists them): the
            environment kind's default (ale: the paper's table), or e.g. ale-cpu, the paper's
            Atari algorithm sized for a 2-core CPU.
        learning: How T steps the network (`gdi presets` lists them): paper (π_λ reads the
            Q-advantage head A, the paper's T) or policy-head (π_λ reads a head of its own,
            with PPO's clip and an entropy term); default: the scale's.
        search: How E searches each inverse temperature, in place of the scale's: table (1/τ
            itself over [0, 50], the paper's), log1p-50 (the appendix's x = log(1 + 1/τ) over
            the same range) or log1p-1000 (x over [0, 1000], the Gymnasium scale's); for an E
            over a box (the bandit, the uniform control).
        frames: Frame budget, e.g. 1000000 or 1e6 (default: the scale's budget, which
            `gdi config --env ENV` prints).
        seed: Seed of every random generator.
        backend: inline (one deterministic process), local (actor processes; the default) or
            ray (Ray actors on a Ray cluster, see --set ray_address). With --resume: continue
            the run on this backend.
        set: Config overrides field=value (`gdi config` lists every field), e.g.
            --set envs_per_actor=16 env_overrides.repeat_action_probability=0.25.
        run_dir: Run folder to create (default runs/<env>__<preset>__<seed>__<time>).
        resume: A run folder to continue from its latest checkpoint. --frames N extends its
            budget; --backend and --set may change where and how it runs (not what it learns).
        stop_at: Stop once this many frames are trained, with a checkpoint (exit code 0), the
            budget's schedules unchanged: the first N frames of a --frames run, to screen a
            setting cheaply and --resume it to the full budget if it earns it.
        report: Write the run's report (report/) when training ends.
    """
    from gdi.runtime.stop import StopRequest

    check_count("--frames", frames)
    check_count("--stop-at", stop_at)
    if stop_at is not None and stop_at < 1:
        raise ValueError(f"--stop-at {stop_at}: allowed: a frame count of at least 1")
    # Installed before anything slow is imported or built: a Ctrl-C during start-up is then a
    # stop request that training sees, never a KeyboardInterrupt swallowed by a library's bare
    # `except:` (minatar's import of matplotlib has one) or shown as a trace.
    stop = (StopRequest() if stop_at is None else
            StopRequest(lambda trained: trained >= stop_at, why=f"--stop-at {stop_at:,}"))
    previous_handlers = stop.install()
    try:
        result = _train(preset, env, scale, learning, search, frames, seed, backend, set, run_dir,
                        resume, stop)
    finally:
        stop.restore(previous_handlers)
    if result is None or result.interrupted:
        if result is None:
            print(f"gdi: interrupted ({stop.reason}) during start-up; nothing was created",
                  file=sys.stderr)
        elif stop.signal is None:  # --stop-at reached: what was asked for
            if report:
                _write_run_report(result.run_dir)
            return 0
        return stop.exit_code
    if report:
        _write_run_report(result.run_dir)
    return 0


def _train(preset, env, scale, learning, search, frames, seed, backend, set, run_dir, resume,
           stop):
    """`gdi train`'s work once the stop handler is in place; None when stopped before a run
    folder was touched."""
    from gdi.config import apply_overrides
    from gdi.presets import resolve_config
    from gdi.runtime.wiring import train as run_training

    if stop.requested:
        return None
    if resume is not None:
        from gdi.api import resume_config

        # The run's own config; --frames, --backend and --set may change what RESUMABLE_FIELDS
        # allow (the budget, where it runs), checked against the checkpoint by the wiring.
        # What was typed (None: not given) must be the run's own or is refused, never dropped.
        config = resume_config(resume, preset=preset, env=env, seed=seed, scale=scale,
                               learning=learning, search=search, frames=frames,
                               backend=backend, sets=set,
                               refused=["--run-dir"] if run_dir is not None else [])
        return run_training(config, resume, resume=True, stop=stop)
    preset = RunSpec.preset if preset is None else preset
    env = RunSpec.env if env is None else env
    seed = RunSpec.seed if seed is None else seed
    config = apply_overrides(
        resolve_config(preset, env, scale, search, learning, frames=frames, seed=seed,
                       backend=backend),
        set
    )
    if config.env != env:  # the config stores the canonical spec (gdi.envs.canonical_spec)
        print(f"environment {env!r} is stored as its canonical spec {config.env!r}")
    note = paper_scale_note(config)
    if note:
        print(note, file=sys.stderr)
    if stop.requested:
        return None
    return run_training(config, run_dir, stop=stop)


#: Frames/s of the paper's Atari scale with its learner on a 2-core CPU
#: (docs/benchmark-summary.md: one learner step of batch 64 takes ~64 s).
PAPER_SCALE_CPU_FPS = 80


def paper_scale_note(config) -> str | None:
    """One line when a new run at the paper's Atari scale (the ``ale`` scale, the default on
    ``ale:`` environments) would learn on a CPU: its learner is sized for a GPU. It names
    ``--scale ale-cpu``, the same algorithm sized for a CPU, and on a machine with CUDA the
    learner_device that uses it. None otherwise."""
    import torch

    from gdi.runtime.components import resolve_device

    if config.scale != "ale" or resolve_device(config.learner_device) != "cpu":
        return None
    hours = config.frames / PAPER_SCALE_CPU_FPS / 3600
    takes = f"{hours / 24:.0f} days" if hours >= 48 else f"{hours:.0f} hours" if hours >= 2 \
        else f"{hours * 60:.0f} minutes"
    where, instead = ("this machine's CPU (no CUDA)", "--scale ale-cpu runs the same algorithm "
                      "sized for a CPU") if not torch.cuda.is_available() else \
        (f"the CPU (learner_device={config.learner_device})", "--set learner_device=cuda "
         "learns on this machine's GPU (docs/scaling.md), --scale ale-cpu sizes it for a CPU")
    return (f"note: {config.env} at the paper's scale ({config.num_actors} actors × "
            f"{config.envs_per_actor} environments, {config.torso} torso, batch "
            f"{config.batch_size}) learns on {where}: at the ~{PAPER_SCALE_CPU_FPS} frames/s "
            f"of 2 cores, {config.frames:,} frames take about {takes}; {instead}")


def _write_run_report(run_dir: Path) -> None:
    from gdi.evaluation.report import write_run_report

    out = write_run_report([run_dir], out_dir=Path(run_dir) / "report")
    print(f"report: {out}")
