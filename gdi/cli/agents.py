"""Commands on a trained agent (a run folder, or a bundle of ``gdi export``): ``gdi evaluate``,
``gdi enjoy`` (watch it, or a video), ``gdi export`` (a bundle) and ``gdi upgrade`` (a folder of
gdi before 0.2 into the format that loads without running code)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tyro.conf import Positional

from gdi.run_files import EVALUATION_POLICIES, LATEST, POPULATION, is_bundle
from gdi.scores import PAPER_EVAL_EPISODES


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
