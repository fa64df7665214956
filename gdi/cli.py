"""The ``gdi`` command line: one typed function per subcommand (tyro turns the signatures and
docstrings into ``--help``). Commands only parse, call into the library and print; the work
lives in the packages they import.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Literal, Union

import tyro
from tyro.conf import Positional
from tyro.constructors import PrimitiveConstructorSpec

import gdi
from gdi.analysis.richness_report import analyze_richness as run_richness
from gdi.backend_registry import BACKENDS
from gdi.evaluation.aggregates import REPS
from gdi.evaluation.paper_scores import DEFAULT_COMPARE
from gdi.meta.registry import CONTROLLERS
from gdi.meta.synthetic import run_demo
from gdi.run_files import EVALUATION_POLICIES, LATEST, POPULATION, is_bundle
from gdi.run_spec import RunSpec
from gdi.scores import PAPER_EVAL_EPISODES

# Errors a user can cause with bad input. They are printed as one line and exit with code 2;
# GDI_DEBUG=1 shows the traceback instead.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError, KeyError)
# Exit codes (documented in `gdi train --help` and README "Troubleshooting").
EXIT_FAILED = 1  # a failure named in one line (full disk, actors failing, a diverged learner)
EXIT_USER_ERROR = 2  # bad input: nothing was trained
EXIT_INTERRUPTED = 130  # Ctrl-C outside training (128 + SIGINT), as the shell reports it
EXIT_BROKEN_PIPE = 141  # stdout's reader left (128 + SIGPIPE), as the shell reports it


class NotACount(str):
    """A --frames value that is not a whole number, kept as typed so that the command can
    refuse it in one line (tyro's own refusal is a box of a dozen lines)."""


def _count_from_str(args: list[str]) -> int | NotACount:
    """1000000, 1_000_000 and 1e6 alike; anything else is refused by the command."""
    text = args[0].strip().replace("_", "")
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            return NotACount(args[0])
        if not value.is_integer():
            return NotACount(args[0])
        value = int(value)
    return value


#: An integer option that also takes scientific notation when it is a whole number (1e6).
Count = Annotated[int, PrimitiveConstructorSpec(
    nargs=1, metavar="INT", instance_from_str=_count_from_str,
    is_instance=lambda value: isinstance(value, int), str_from_instance=lambda v: [str(v)])]


def _defaults(function) -> SimpleNamespace:
    """``function``'s parameter defaults by name, for a command whose options go straight to
    it: their defaults are then stated once, in the library (as those of options that set a
    config field are the field's, ``Config.<field>``)."""
    return SimpleNamespace(**{name: p.default for name, p in
                              inspect.signature(function).parameters.items()
                              if p.default is not p.empty})


_DEMO = _defaults(run_demo)
_RICHNESS = _defaults(run_richness)


def _check_count(option: str, value) -> None:
    if isinstance(value, NotACount):
        raise ValueError(f"{option} {str(value)!r} is not a whole number; allowed: an integer "
                         "such as 1000000, 1_000_000 or 1e6")


def _typed_or_none(kind: type, default: Any) -> Any:
    """An option that is None unless typed (so that a resume can tell a typed value from
    none), shown with ``default``, what a new run takes when it is not typed."""
    return Annotated[kind | None, tyro.conf.arg(
        metavar=kind.__name__.upper(), help_behavior_hint=f"(default: {default})")]


def train(
    preset: _typed_or_none(str, RunSpec.preset) = None,
    env: _typed_or_none(str, RunSpec.env) = None,
    scale: str | None = None,
    learning: str | None = None,
    search: str | None = None,
    frames: Count | None = None,
    seed: _typed_or_none(int, RunSpec.seed) = None,
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

    _check_count("--frames", frames)
    _check_count("--stop-at", stop_at)
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


def config(preset: str = RunSpec.preset, env: str = RunSpec.env, scale: str | None = None,
           learning: str | None = None, search: str | None = None, set: tuple[str, ...] = (),
           json: bool = False) -> None:
    """Print the fully resolved config of a preset on an environment, every field with its
    value and meaning (what `gdi train --set field=value` can change), and what a named scale
    changes from its kind's default.

    Args:
        preset: Preset name.
        env: Environment spec.
        scale: Scale knobs (`gdi scales`); default: the environment kind's.
        learning: How T steps the network (paper, policy-head; `gdi presets`), as
            `gdi train --learning`; default: the scale's.
        search: How E searches each inverse temperature (table, log1p-50, log1p-1000), in
            place of the scale's, as `gdi train --search`.
        set: Overrides field=value, applied as `gdi train` would.
        json: Print the config as JSON instead, as a run's config.json holds it.
    """
    from rich.console import Console

    from gdi.config import apply_overrides, field_docs
    from gdi.presets import (
        LEARNING_NOTES,
        SCALE_KINDS,
        SCALE_NOTES,
        resolve_config,
        scale_differences,
    )

    resolved = apply_overrides(resolve_config(preset, env, scale, search, learning), set)
    if json:
        import json as json_module

        print(json_module.dumps(resolved.to_dict(), indent=2, ensure_ascii=False))
        return
    docs = field_docs()
    rows = [{"field": name, "value": repr(value), "meaning": docs.get(name, "")}
            for name, value in resolved.to_dict().items()]
    console = Console()
    console.print(fitted_table(
        console, rows, title=f"{preset} on {env}, scale {resolved.scale}: "
                             f"{SCALE_NOTES[resolved.scale]}; learning {resolved.learning}: "
                             f"{LEARNING_NOTES[resolved.learning]}"))
    changed = scale_differences(resolved.scale)
    if changed:
        console.print(f"Scale {resolved.scale} changes from {SCALE_KINDS[resolved.scale]}: "
                      + "; ".join(f"{k} {a!r} → {b!r}" for k, (a, b) in changed.items()))


def keeps_words(console, renderable, texts: list[str]) -> bool:
    """Whether ``renderable``, printed at ``console``'s width, shows every word of ``texts``
    whole on one line (rich breaks a word that is wider than its column)."""
    import io

    from rich.console import Console

    plain = Console(file=io.StringIO(), width=console.width, color_system=None)
    plain.print(renderable)
    lines = plain.file.getvalue().splitlines()
    return all(any(word in line for line in lines) for text in texts for word in text.split())


def fitted_table(console, rows: list[dict[str, str]], **title_and_caption: str):
    """``rows`` (one dict per row, the same keys) as a rich table that keeps every word whole
    at ``console``'s width: a column per key where that fits, else a block per row (its first
    value, then each other key and its value on a line of their own), which fits 80 columns.
    The values are shown as they are, never read as rich's markup (``pip install
    'gdi-rl[wandb]'`` keeps its ``[wandb]``)."""
    from rich.table import Table
    from rich.text import Text

    texts = [text for row in rows for text in row.values()]
    wide = Table(**title_and_caption, caption_justify="left")
    for column in rows[0]:
        wide.add_column(column, overflow="fold")
    for row in rows:
        wide.add_row(*map(Text, row.values()))
    if keeps_words(console, wide, texts):
        return wide
    from rich.table import Column

    first, *others = rows[0]
    longest = max(len(word) for key in others for word in key.split())
    table = Table(first, Column("", max_width=max(longest, 16)), "", **title_and_caption,
                  caption_justify="left")
    for row in rows:
        for i, key in enumerate(others):
            table.add_row(Text(row[first] if i == 0 else ""), key, Text(row[key]),
                          end_section=i == len(others) - 1)
    return table


def scales() -> None:
    """List the scales (`gdi train --scale NAME`): the knobs a preset takes from where it runs
    (torso, LSTM, batch, sequences, actors), never the algorithm; what each changes from its
    environment kind's default."""
    from rich.console import Console

    from gdi.presets import SCALE_KINDS, SCALE_NOTES, scale_differences

    rows = [{"scale": name, "for": f"{kind}:", "what it is": SCALE_NOTES[name],
             "changes from the kind's default": ", ".join(
                 f"{k}={b!r}" for k, (_, b) in scale_differences(name).items()) or "—"}
            for name, kind in SCALE_KINDS.items()]
    console = Console()
    console.print(fitted_table(console, rows, title="gdi scales"))


def presets() -> None:
    """List the presets as the paper's Tab. "Summary of Algorithms of Ablation Study" does:
    category, π_λ, Λ, P_Λ⁽⁰⁾, E and T; then the readings of T a preset can run with
    (`gdi train --learning NAME`) and the scales that take each by default."""
    from rich.console import Console

    from gdi.presets import index_set_note, learning_table, preset_table

    console = Console()
    console.print(fitted_table(
        console, preset_table(),
        title="gdi presets (paper Tab. \"Summary of Algorithms of Ablation Study\")",
        caption=index_set_note()))
    console.print(fitted_table(console, learning_table(),
                               title="readings of T (gdi train --learning NAME)"))


def evaluate(
    run: Positional[Path],
    checkpoint: str = LATEST,
    episodes: int = PAPER_EVAL_EPISODES,
    envs: int = 32,
    seed: int | None = None,
    policy: Literal[tuple(EVALUATION_POLICIES)] = POPULATION,
    allow_foreign_checkpoint: bool = False,
    fixed_lambda: tuple[float, ...] | None = None,
    out: Path | None = None,
) -> None:
    """Play evaluation episodes with a run's checkpoint on fresh environments (raw,
    undiscounted returns, the paper's episode cap) and write eval/<checkpoint>.json
    (eval_<policy>/<checkpoint>.json with another --policy, which reports do not read). A
    bundle of `gdi export` is never written into: its evaluations go to --out.

    Args:
        run: The run folder, or a bundle of `gdi export`.
        checkpoint: latest, or a checkpoint file's path.
        episodes: Evaluation episodes, one environment each, distinct seeds; the default is
            the paper's number (config field eval_episodes).
        envs: Environments stepped at once.
        seed: Seed of the first evaluation environment (default: derived from the run's seed).
        policy: population: λ drawn from E per episode (the paper's "population of agents",
            as in training's evaluations); greedy: E's greedy λ in every episode, no
            exploration (tells the network's skill from E's exploratory draws); uniform: λ
            uniform over Λ as E searches it (runs with different E's played alike); fixed:
            the λ of --fixed-lambda in every episode.
        allow_foreign_checkpoint: Evaluate a --checkpoint that lies outside RUN or was saved
            by a run of another environment, preset or architecture, and file its scores
            under RUN anyway (refused otherwise: they would pass for RUN's own).
        fixed_lambda: With --policy fixed, the λ to play, one number per coordinate of the
            run's policy space (GDI-I³: 1/τ₁ 1/τ₂ ε, e.g. --fixed-lambda 3 3 0.5).
        out: With a bundle: the folder its evaluations go to, beside a copy of its
            config.json, so that `gdi report OUT` reads them (default
            evaluations/<bundle name>/). A run's evaluations stay in the run.
    """
    from rich.progress import Progress

    from gdi.agent import evaluate_checkpoint

    with Progress(transient=True) as progress:
        task = progress.add_task("evaluating", total=episodes)
        path, results = evaluate_checkpoint(
            run, checkpoint, episodes, envs, seed,
            on_episode=lambda: progress.advance(task), policy=policy,
            allow_foreign_checkpoint=allow_foreign_checkpoint, fixed_lambda=fixed_lambda,
            out=out,
        )
    returns = [r["return"] for r in results]
    if is_bundle(run):  # filed as <folder>/<eval folder of the policy>/<name>.json
        print(f"{run} is a bundle of `gdi export`, kept as exported: its evaluations go to "
              f"{path.parent.parent} (--out)")
    print(f"{len(returns)} episodes: mean return {sum(returns) / len(returns):.2f} "
          f"(min {min(returns):.2f}, max {max(returns):.2f}) -> {path}")


def enjoy(
    run: Positional[Path],
    episodes: int = 1,
    video: Path | None = None,
    policy: Literal[tuple(EVALUATION_POLICIES)] = POPULATION,
    checkpoint: str = LATEST,
    seed: int | None = None,
    max_steps: int | None = None,
    allow_foreign_checkpoint: bool = False,
    fixed_lambda: tuple[float, ...] | None = None,
) -> None:
    """Watch a run's agent: play episodes one after another on one environment and print each
    return; with --video, write them as a video (ALE: the emulator's RGB screen; MinAtar: its
    channel planes in MinAtar's GUI colours; Gymnasium: render_mode="rgb_array"), every frame
    captioned with the episode's return so far and its λ.

    Args:
        run: The run folder.
        episodes: Episodes to play.
        video: out.mp4 (H.264 through imageio-ffmpeg; a GIF beside it when that is not
            installed) or out.gif.
        policy: population: λ drawn from E per episode; greedy: E's greedy λ; uniform: λ
            uniform over Λ as E searches it; fixed: the λ of --fixed-lambda.
        checkpoint: latest, or a checkpoint file's path inside the run.
        seed: Seed of the environment and of action sampling (default: derived from the
            run's seed, apart from training's and evaluation's).
        max_steps: Stop after this many agent steps in all (cuts the last episode).
        allow_foreign_checkpoint: Play a --checkpoint that lies outside RUN or was saved by a
            run of another environment, preset or architecture (refused otherwise).
        fixed_lambda: With --policy fixed, the λ to play (one number per coordinate of λ).
    """
    from gdi.video.enjoy import enjoy as play

    result = play(run, episodes=episodes, video=video, policy=policy, checkpoint=checkpoint,
                  seed=seed, max_steps=max_steps,
                  on_episode=lambda i, ret: print(f"episode {i + 1}: return {ret:g}"),
                  allow_foreign_checkpoint=allow_foreign_checkpoint, fixed_lambda=fixed_lambda)
    if result.cut:
        print(f"episode {len(result.returns)} was cut at --max-steps {max_steps}")
    if result.note:
        print(result.note)
    if result.video is not None:
        print(f"video: {result.video} ({result.frames} frames)")


def export(run: Positional[Path], out: Positional[Path], video: bool = True) -> None:
    """Export a run's agent as a self-contained bundle in the new folder OUT, laid out as a
    Hugging Face model repository: README.md (a model card with the run's final score and the
    command that trains it again), config.json, the latest checkpoint without its optimizer,
    the final evaluation and a replay.gif. `gdi enjoy OUT` and gdi.load_agent(OUT) load it;
    `huggingface-cli upload USER/NAME OUT` publishes it.

    Args:
        run: The run folder (its newest checkpoint must be the one its last evaluation played).
        out: The bundle's folder (new, or empty).
        video: Play one episode (up to 1,000 steps) into OUT/replay.gif.
    """
    from gdi.export import export_agent

    bundle = export_agent(run, out, video=video)
    print(f"bundle: {bundle.path} (model card {bundle.card.name}, checkpoint "
          f"{bundle.checkpoint.relative_to(bundle.path)}"
          + (f", {bundle.video.name}" if bundle.video else "") + ")")
    if bundle.note:
        print(f"note: {bundle.note}")


def upgrade(folder: Positional[Path]) -> None:
    """Convert a run folder or bundle of gdi before 0.2 (pickle checkpoints, ckpt_N.pt) once
    into the data format that every other command loads. The old files are read with
    PyTorch's weights_only loader, which runs no code, and kept as ckpt_N.pt.upgraded; an inline
    run's pickled environments are dropped (its episodes restart on resume). Convert only
    folders you trust: a file that needs more than tensors, numbers and gdi's records is
    refused and the folder left as it was.

    Args:
        folder: The run folder or bundle.
    """
    from gdi.upgrade import upgrade_folder

    done = upgrade_folder(folder)
    for note in done.notes:
        print(note)


def plot_meta(run: Positional[Path], out: Path | None = None) -> None:
    """Plot what E learned in a run: the sampled λ over frames and the return per λ region
    (from the run's meta.jsonl); writes a PNG (default RUN/meta.png).

    Args:
        run: The run folder.
        out: Where to write the PNG.
    """
    from gdi.runtime.run_folder.meta_log import plot_run_meta

    notes: list[str] = []
    path = plot_run_meta(run, out, notes)
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    print(path)


def meta_demo(
    controller: Literal[tuple(CONTROLLERS)] = _DEMO.controller,
    dims: Literal[1, 3] = _DEMO.dims,
    episodes: int = _DEMO.episodes,
    noise: float = _DEMO.noise,
    seed: int = _DEMO.seed,
    out: Path = Path("meta-demo.png"),
) -> None:
    """Watch operator E at work without an environment: a controller samples λ against a
    synthetic return surface (smooth, one optimum λ*, a lower decoy bump, Gaussian noise);
    writes a PNG of the sampled λ over episodes and prints how many of the last 500 samples
    are near λ* next to uniform sampling's share.

    Args:
        controller: Operator E, by its name in gdi.meta.CONTROLLERS (bandit: the paper's).
        dims: 1 (λ = 1/τ, GDI-I¹) or 3 (λ = (1/τ₁, 1/τ₂, ε), GDI-I³/H³).
        episodes: Episodes (sample → return → update rounds).
        noise: Standard deviation of the return noise (the peak return is 1).
        seed: Seed of the controller and of the noise.
        out: Where to write the PNG.
    """
    from gdi.meta.synthetic import demo_summary, save_demo_plot

    result = run_demo(controller, dims=dims, episodes=episodes, noise=noise, seed=seed)
    print(demo_summary(result))
    print(f"wrote {save_demo_plot(result, out)}")


def report(
    runs: tyro.conf.Positional[tuple[Path, ...]] = (),
    compare: str = ",".join(DEFAULT_COMPARE),
    out: Path | None = None,
    paper: bool = False,
    reps: int = REPS,
    video: bool = False,
) -> None:
    """Report runs beside the paper's algorithms: Markdown, PNG figures and a CSV of every
    number. Atari runs get raw score, HNS, HWRNS and SABER per game, aggregates with
    confidence intervals across seeds, learning curves and learning efficiency (paper App.
    "Evaluation Metrics for ALE"); other environments get raw returns only.

    Args:
        runs: Run folders (each with config.json and eval/*.json).
        compare: The paper's algorithms shown beside Atari runs, comma-separated ids or
            labels (the rows of `gdi report --paper`; an unknown name is refused with the list
            of ids).
        out: Report folder (default: RUN/report for one run, reports/<bundle name> for a
            bundle of `gdi export`, which is never written into, report/ beside several).
        paper: Print the paper's "Full performance comparison" table, recomputed from its
            per-game scores.
        reps: Bootstrap resamples of each confidence interval (rliable).
        video: Embed a GIF of each run's agent at its last evaluation (one episode, at most
            1,000 steps; made now, with the checkpoint behind that evaluation).
    """
    from gdi.evaluation.paper import format_full_comparison
    from gdi.evaluation.report import write_report

    if not runs and not paper:
        raise ValueError("give run folders to report on, or --paper")
    if paper:
        print(format_full_comparison())
    if runs:
        result = write_report(runs, out, compare=compare, reps=reps, video=video)
        for line in result.skipped:
            print(line, file=sys.stderr)
        print(f"report: {result.markdown} ({len(result.files)} files)")


def analyze_richness(
    run_a: Positional[Path],
    run_b: Positional[Path],
    stages: int = _RICHNESS.stages,
    states: int = _RICHNESS.states,
    out: Path | None = None,
    seed: int = _RICHNESS.seed,
    grid: int = _RICHNESS.grid,
    clusters: int = _RICHNESS.clusters,
    threads: int = _RICHNESS.threads,
) -> None:
    """Data richness of two runs' visited states (paper App. "Ablation Study", "t-SNE"): a
    joint t-SNE of states from each training stage, each run highlighted (A_i, B_i), and
    richness = conditions a run visited / conditions either visited, by t-SNE grid cells,
    k-means clusters and exact observations. Writes richness.png, richness.json and
    embedding.csv. Both runs need observations.npz: train with
    `--set observation_reservoir=1000`.

    Args:
        run_a: Run A (the paper's A_i: GDI-I³).
        run_b: Run B (the paper's B_i: GDI-I¹, or any other preset), same environment.
        stages: Training stages compared (paper: 3); must divide the runs' reservoir_stages.
        states: States drawn per stage from each run (paper: 1000), equally many from both.
        out: Output folder (default richness_<A>_vs_<B>/).
        seed: Seed of the state sampling, PCA, t-SNE and k-means.
        grid: Cells per side of the grid laid over the t-SNE embedding.
        clusters: k-means clusters of the embedding-free richness (0: distinct states / 5).
        threads: CPU threads of t-SNE and k-means (more than the free cores run slower).
    """
    from gdi.analysis.richness import summary_lines

    written = run_richness(run_a, run_b, stages=stages, states=states, out=out, seed=seed,
                           grid=grid, clusters=clusters, threads=threads)
    print("\n".join(summary_lines(written.result)))
    print(f"wrote {written.figure}, {written.numbers}, {written.embedding}")


def _subcommands(constructors: dict) -> tuple:
    """A nested subcommand's members, one per name → function (tyro builds one from a union of
    constructors)."""
    return tuple(Annotated[Any, tyro.conf.subcommand(name=name, constructor=function)]
                 for name, function in constructors.items())


#: `gdi analyze <analysis>`'s analyses.
ANALYSES = {"richness": analyze_richness}
# The suppressed None member lets the union hold a single analysis.
AnalyzeCommand = Union[(*_subcommands(ANALYSES), Annotated[None, tyro.conf.Suppress])]


def analyze(command: tyro.conf.OmitArgPrefixes[AnalyzeCommand]) -> None:
    """Analyses of finished runs: `gdi analyze richness RUN_A RUN_B` (data richness of the
    visited states, paper App. "Ablation Study", "t-SNE")."""


def benchmark_run(
    grid: Positional[Path],
    parallel: int | None = None,
    ray_address: str | None = None,
    cpus_per_run: float = 2.0,
    setting: tuple[str, ...] = (),
    env: tuple[str, ...] = (),
    seed: tuple[int, ...] = (),
    peer: tuple[str, ...] = (),
) -> int:
    """Run a benchmark grid (a TOML file: environments × seeds × settings; docs/benchmark-grids.md):
    every run that is not done, as `gdi train` into its folder: new runs start, checkpointed
    ones resume, finished ones are skipped, so running it again after a stop, a crash or a
    move to another machine (with the run folders, or with records that carry a checkpoint)
    goes on where the grid stands. A setting the grid marks `closed` is never run. With
    --peer, the peer's runs that are not done too, each with the command the grid gives it.
    Ctrl-C, SIGTERM or SIGHUP stop every run with a checkpoint.

    Exit codes: 0 every run done; 1 a run failed (its log is named); 2 bad input; 130/143/129
    stopped by a signal (run it again to continue).

    Args:
        grid: The grid's TOML file.
        parallel: Runs at a time on this machine (default: the grid's `parallel`, else 1).
        ray_address: Run each as a task on this Ray cluster instead (`local` starts one on
            this machine); the run folders must be on storage every node sees.
        cpus_per_run: With --ray-address, the CPUs Ray reserves for each run.
        setting: Only these settings' runs (default: every setting of the grid).
        env: Only these environments' runs, as the grid spells them (default: all).
        seed: Only these seeds' runs (default: all).
        peer: Also these peers' runs, each with its `command` in the grid (run in the grid
            file's folder; on this machine only): environment by environment and seed by
            seed, after the settings' runs of each.
    """
    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.queue import run_local, run_ray

    chosen = load_grid(grid).select(setting, env, seed)
    peers = chosen.runnable_peers(peer)
    if peers and ray_address is not None:
        raise ValueError(f"--peer {' '.join(peers)} with --ray-address: a peer's command runs "
                         "on this machine only; allowed: one of the two")
    for closed in (s for s in chosen.settings if s.closed is not None):
        print(f"{closed.name}: closed ({closed.closed}): its runs are reported, not run")
    chosen = chosen.open()
    if parallel is not None and parallel < 1:
        raise ValueError(f"--parallel {parallel}: allowed: at least 1")
    if cpus_per_run <= 0:
        raise ValueError(f"--cpus-per-run {cpus_per_run}: allowed: a positive number")
    if ray_address is not None:
        result = run_ray(chosen, ray_address, cpus_per_run, print)
    else:
        result = run_local(chosen, parallel or chosen.parallel, print, peers)
    total = len(chosen.cells()) + sum(len(chosen.envs) * len(p.seeds) for p in chosen.peers
                                      if p.name in peers)
    # The part of the grid named on the command line, as options to run it again.
    options = "".join(f" --{option} {' '.join(map(str, names))}" for option, names in
                      (("setting", setting), ("env", env), ("seed", seed), ("peer", peers))
                      if names)
    part = " chosen" if setting or env or seed else ""
    print(f"{grid}: {len(result.done_before) + len(result.finished)} of {total}{part} runs done"
          + (f", {len(result.failed)} failed" if result.failed else "")
          + (f", {len(result.stopped)} stopped with a checkpoint" if result.stopped else "")
          + (f", {len(result.elsewhere)} running in other processes" if result.elsewhere
             else ""))
    if result.signal is not None:
        print(f"stopped: continue with gdi benchmark run {grid}{options}")
        return 128 + int(result.signal)
    return EXIT_FAILED if result.failed else 0


def benchmark_status(grid: Positional[Path]) -> None:
    """Where each run of a grid stands (new, running, resumable, unstarted, done; kept or
    carried: records of a run whose folder is elsewhere; "(closed)": of a setting the grid no
    longer runs), read from the run folders and the kept records, and each peer's run (new,
    partial, carried, done, read from its curve; running: a queue's `--peer` is making it).

    Args:
        grid: The grid's TOML file.
    """
    from rich.console import Console
    from rich.table import Table

    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.state import grid_states, peer_states

    chosen = load_grid(grid)
    states = grid_states(chosen)
    counts: dict[str, int] = {}
    rows = []
    for state in states:
        # A closed setting's runs that are not done stay as they are: the queue never runs them.
        shown = state.state + (" (closed)" if state.cell.setting.closed and state.pending
                               else "")
        counts[shown] = counts.get(shown, 0) + 1
        frames = f"{state.frames:,}" if state.frames or not state.kept_frames else \
            f"{state.kept_frames:,} kept"  # records of a run whose folder is not here
        rows.append([state.cell.setting.name, state.cell.env, str(state.cell.seed),
                     shown + (f" (PID {state.holder})" if state.holder else ""), frames,
                     _shown_path(state.source or state.cell.folder)])
    peers = peer_states(chosen)
    for peer in peers:  # the peers' runs, from their curve files
        counts[f"{peer.peer} {peer.state}"] = counts.get(f"{peer.peer} {peer.state}", 0) + 1
        rows.append([peer.peer, peer.env, str(peer.seed), peer.state,
                     f"{peer.frames:,}", _shown_path(peer.folder)])
    console = Console()

    def table(columns: tuple[str, ...]) -> Table:
        shown = Table(title=f"{grid}: target {chosen.target:,} frames")
        for column in columns:
            shown.add_column(column, overflow="fold")
        for row in rows:
            shown.add_row(*row[:len(columns)])
        return shown

    columns = ("setting", "env", "seed", "state", "frames", "folder")
    wide = table(columns)
    if keeps_words(console, wide, [text for row in rows for text in row]):
        console.print(wide)
    else:  # the folders do not fit beside the rest: where each setting's are, after the table
        console.print(table(columns[:-1]))
        for setting in chosen.settings:
            mine = [state for state in states if state.cell.setting is setting]
            places = [("run folders", [s.cell.folder for s in mine]),
                      ("records kept", [s.cell.records for s in mine if s.cell.records])]
            console.print(f"{setting.name}: " + "; ".join(
                f"{what} in {_shown_path(Path(os.path.commonpath(folders)))}"
                for what, folders in places if folders), highlight=False)
        for name in dict.fromkeys(peer.peer for peer in peers):
            folders = [peer.folder for peer in peers if peer.peer == name]
            console.print(f"{name}: curves in "
                          f"{_shown_path(Path(os.path.commonpath(folders)))}", highlight=False)
    console.print(", ".join(f"{n} {name}" for name, n in counts.items()))


def benchmark_keep(grid: Positional[Path]) -> None:
    """Keep each stopped or finished run's records beside the grid (its setting's `records`)
    and, with the setting's `carry`, the newest checkpoint of each run short of the target, as
    the queue does whenever a run stops: for runs whose queue was killed before it could (a
    SIGKILL, a lost terminal), before the records move to another machine. Runs still running
    are named and left alone.

    Args:
        grid: The grid's TOML file.
    """
    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.queue import keep_cell
    from gdi.benchmark.state import DONE, RESUMABLE, RUNNING, grid_states

    kept = running = 0
    for state in grid_states(load_grid(grid)):
        if state.cell.records is None:
            continue
        if state.state == RUNNING:
            running += 1
            print(f"{state.cell.name}: running in process {state.holder}; left alone (stop "
                  "its queue or run first: it keeps its records when it stops)")
        elif state.state in (DONE, RESUMABLE):
            keep_cell(state.cell, state.state == DONE, print)
            kept += 1
    print(f"{grid}: records of {kept} run(s) kept" + (f", {running} running" if running else ""))


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when it lies inside it, else as it is."""
    relative = os.path.relpath(os.path.abspath(path))
    return str(path) if relative.startswith("..") else relative


def benchmark_report(
    grid: Positional[Path],
    at: Count | None = None,
    out: Path | None = None,
    reps: int = REPS,
    page: Path | None = None,
) -> None:
    """Write a grid's report: per-environment curves of every setting and peer (mean and 95 %
    band over seeds), a table of score, normalized score (HNS), normalized area under the
    curve and frames to levels with 95 % CIs, and aggregates (IQM, median, probability of
    improvement against each peer; rliable).

    Args:
        grid: The grid's TOML file.
        at: Compare at this many frames (default: the grid's target); runs short of it are
            listed, not counted.
        out: Report folder (default: <grid out>/report).
        reps: Bootstrap resamples of each interval.
        page: A results page (Markdown) to put the figure, the table and the aggregates in,
            between its generated block's markers (appended when it has none); the rest of
            the page is kept.
    """
    from gdi.benchmark.grid import load_grid
    from gdi.benchmark.report import write_grid_report, write_page_block

    _check_count("--at", at)
    chosen = load_grid(grid)
    written = write_grid_report(chosen, at=at, out=out, reps=reps)
    print(f"report: {written.markdown}" + (f" (figure {written.figure.name})"
                                           if written.figure else ""))
    if page is not None:
        if page.suffix != ".md":
            raise ValueError(f"--page {page}: allowed: a Markdown file (.md)")
        write_page_block(page, written, chosen, chosen.target if at is None else at)
        print(f"page: {page} (its generated block)")


#: `gdi benchmark run|status|report|keep GRID`, as `gdi analyze`.
BENCHMARK_COMMANDS = {"run": benchmark_run, "status": benchmark_status,
                      "report": benchmark_report, "keep": benchmark_keep}
BenchmarkCommand = Union[_subcommands(BENCHMARK_COMMANDS)]  # noqa: UP007 (a tuple of members)


def benchmark(command: tyro.conf.OmitArgPrefixes[BenchmarkCommand]) -> Any:
    """A grid of runs (environments × seeds × settings, a TOML file) as a resumable queue, and
    its report beside peers' curves: `gdi benchmark run GRID`, `gdi benchmark status GRID`,
    `gdi benchmark report GRID`, `gdi benchmark keep GRID` (docs/benchmark-grids.md)."""
    return command


def _commands() -> dict:
    return {
        "train": train,
        "presets": presets,
        "scales": scales,
        "config": config,
        "evaluate": evaluate,
        "enjoy": enjoy,
        "export": export,
        "upgrade": upgrade,
        "plot-meta": plot_meta,
        "meta-demo": meta_demo,
        "report": report,
        "analyze": analyze,
        "benchmark": benchmark,
    }


def one_line_args(doc: str | None) -> str | None:
    """``doc`` with each entry of its ``Args:`` section on one line: a line indented deeper than
    the entry it follows is joined onto it. tyro shows a function's argument descriptions with
    their line breaks kept (a dataclass field's it joins), so an option's help broke where the
    source did, mid-sentence; joined, tyro wraps it to the terminal."""
    if not doc:
        return doc
    lines: list[str] = []
    section = entry = None  # indents: of the "Args:" line, of its entries
    for line in doc.splitlines():
        indent = len(line) - len(line.lstrip())
        if section is not None and (not line.strip() or indent <= section):
            section = entry = None  # a blank line or a dedent ends the section
        if section is not None:
            if entry is None:
                entry = indent
            if indent > entry:
                lines[-1] += " " + line.strip()
                continue
        elif line.strip() == "Args:":
            section = indent
        lines.append(line)
    return "\n".join(lines) + ("\n" if doc.endswith("\n") else "")


def _commands_with_one_line_args() -> dict:
    """The commands, each function tyro reads (the nested ones too) with its ``Args:``
    entries on one line (``one_line_args``)."""
    commands = _commands()
    for function in (*commands.values(), *ANALYSES.values(), *BENCHMARK_COMMANDS.values()):
        function.__doc__ = one_line_args(function.__doc__)
    return commands


def merged_option(args: list[str], option: str = "--set") -> list[str]:
    """``args`` with every ``option`` group joined into the first: ``--set a=1 --set b=2`` as
    ``--set a=1 b=2`` (argparse, under tyro, would keep only the last group's values and drop
    the others without a word). ``--set=a=1`` counts as a group of one."""
    merged: list[str] = []
    values: list[str] = []
    first = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == option or arg.startswith(option + "="):
            if first is None:
                first = len(merged)
                merged.append(option)
            if arg != option:
                values.append(arg.split("=", 1)[1])
            i += 1
            while i < len(args) and not args[i].startswith("-"):  # its field=value words
                values.append(args[i])
                i += 1
            continue
        merged.append(arg)
        i += 1
    if first is not None:
        merged[first + 1:first + 1] = values
    return merged


def command_options(function) -> set[str]:
    """The options a subcommand's ``function`` takes, as tyro spells them: ``--name`` with
    hyphens or underscores, ``--no-name`` for a flag, ``--help``; no positional parameter."""
    options = {"--help"}
    for name, parameter in inspect.signature(function).parameters.items():
        if "Positional" in str(parameter.annotation):
            continue
        for spelled in {name, name.replace("_", "-")}:
            options.add(f"--{spelled}")
            if isinstance(parameter.default, bool):
                options.add(f"--no-{spelled}")
    return options


def unknown_option(args: list[str]) -> str | None:
    """One line for the first ``--option`` that the subcommand in ``args`` does not take: the
    config field it names as `--set field=value` (with the value typed), else the nearest
    option, else the options there are. None when every option is known (or no subcommand is
    named, or help is asked for): tyro then parses ``args``."""
    nested = {"analyze": ANALYSES, "benchmark": BENCHMARK_COMMANDS}
    if not args or args[0] not in _commands():
        return None
    command, function, rest = args[0], _commands()[args[0]], args[1:]
    if command in nested:
        if not rest or rest[0] not in nested[command]:
            return None
        command, function, rest = f"{command} {rest[0]}", nested[command][rest[0]], rest[1:]
    if "--help" in rest or "-h" in rest:
        return None
    options = command_options(function)
    for i, arg in enumerate(rest):
        if arg == "--":  # what follows is not an option
            return None
        name, equals, value = arg.partition("=")
        if not name.startswith("--") or name in options or name.startswith("--tyro-"):
            continue
        if not equals:
            following = rest[i + 1] if i + 1 < len(rest) else ""
            value = following if following and not following.startswith("--") else "VALUE"
        import dataclasses
        import difflib

        from gdi.config import Config  # loads torch: only for an option that is not there

        field = name[2:].replace("-", "_")
        fields = [f.name for f in dataclasses.fields(Config)]
        takes_set = "--set" in options
        head = f"gdi {command} has no option {name}"
        if takes_set and field.split(".")[0] in fields:
            return (f"{head}; did you mean --set {field}={value}? (a config field: `gdi config` "
                    "lists them)")
        shown = sorted(o for o in options if "_" not in o and not o.startswith("--no-"))

        def likeness(typed: str, real: str) -> float:  # a name's start counts as close
            return 0.8 if real.startswith(typed) else \
                difflib.SequenceMatcher(None, typed, real).ratio()

        # (likeness, an option before a field alike, the name): fields with an option of
        # their own (--env, --frames) are named by it.
        near = max([(likeness(field, o[2:].replace("-", "_")), 1, o) for o in shown]
                   + [(likeness(field, f), 0, f) for f in fields
                      if takes_set and f"--{f.replace('_', '-')}" not in options])
        if near[0] < 0.6:
            return f"{head}; allowed: {', '.join(shown)}"
        if near[1]:
            return f"{head}; did you mean {near[2]}? (`gdi {command} --help` lists the options)"
        return (f"{head}; did you mean --set {near[2]}={value}? (a config field: `gdi config` "
                "lists them)")
    return None


def main(argv: list[str] | None = None) -> None:
    """Run one subcommand; exits with the command's code (`gdi train --help` lists them)."""
    from gdi.atomic import StorageError
    from gdi.runtime.errors import RunFailure

    # A user's environment module (--env gym:my_envs:Corridor-v0) in the folder gdi runs in is
    # found as `python -m` finds it; appended, so that an installed package of that name wins.
    # Spawned actor processes inherit the path.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    args = merged_option(sys.argv[1:] if argv is None else list(argv))
    if args in (["--version"], ["-V"]):
        print(f"gdi {gdi.__version__}")
        return
    unknown = unknown_option(args)  # before tyro, whose answer is a box pointing at --help
    if unknown:
        _fail(ValueError(unknown), EXIT_USER_ERROR)
    try:
        code = tyro.extras.subcommand_cli_from_dict(
            _commands_with_one_line_args(),
            prog="gdi",
            description=(f"gdi {gdi.__version__}: Generalized Data Distribution Iteration. "
                         "`gdi --version` prints the version; `gdi --tyro-write-completion "
                         "bash|zsh|tcsh PATH` writes a shell-completion script to PATH (e.g. "
                         "~/.local/share/bash-completion/completions/gdi)."),
            args=args,
        )
    except USER_ERRORS as err:
        _fail(err, EXIT_USER_ERROR)
    except (StorageError, RunFailure) as err:  # they say what failed and what was kept
        _fail(err, EXIT_FAILED)
    except KeyboardInterrupt:  # outside training, which turns Ctrl-C into a stop request
        if os.environ.get("GDI_DEBUG"):
            raise
        print("gdi: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    except BrokenPipeError:
        # The reader of stdout left (`gdi config --json | head`): what it read is what it asked
        # for. Python's recommendation: point stdout at devnull so that the flush at exit does
        # not raise again, and exit as a command killed by SIGPIPE would, without a trace.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


def _fail(err: BaseException, code: int):
    """Print ``err`` as one line and exit with ``code`` (GDI_DEBUG=1: the traceback)."""
    if os.environ.get("GDI_DEBUG"):
        raise err
    message = err.args[0] if isinstance(err, KeyError) and err.args else err
    print(f"gdi: error: {message}", file=sys.stderr)
    raise SystemExit(code) from None


if __name__ == "__main__":
    main()
