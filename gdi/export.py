"""``gdi export``: a trained agent as a self-contained bundle, laid out as a Hugging Face model
repository (``README.md`` with the model card's front matter, and the files beside it).

The bundle is also a read-only run folder, so ``gdi.load_agent``, ``gdi enjoy`` and ``gdi
evaluate --policy greedy`` take it as they take the run; its model card's first lines mark it
(``gdi.run_files.is_bundle``), and what is made from it is never written into it (``gdi
evaluate`` and ``gdi report`` write outside it: ``gdi.run_files.BUNDLE_EVALUATIONS``,
``BUNDLE_REPORTS``):

    BUNDLE/
      README.md                  model card: what it is, its scores, how to use it, the command
      config.json                the run's resolved config, versions and git commit
      checkpoints/ckpt_N.safetensors  the network and E's state at N frames (no optimizer:
                                 lean), data only (gdi.data_file: loading runs no code)
      eval/<name>.json           the evaluation of that checkpoint, every episode
      replay.gif                 one episode played by the exported agent (unless no video)

Upload it with ``huggingface-cli upload USER/NAME BUNDLE`` (or ``git push`` of a clone); any
folder or downloaded copy of it loads again.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdi.atomic import StorageError, atomic_write, why_not_writable
from gdi.config import PLACEMENT_FIELDS, Config
from gdi.run_files import BUNDLE_FRONT_MATTER, CHECKPOINT_DIR, EVAL_DIR, checkpoint_name

#: Agent steps of the bundle's replay video (an ALE episode can last 27,000).
VIDEO_STEPS = 1_000
#: Config fields a reproducing command leaves out of its --set: those it names as flags, and
#: where and how the run ran (gdi.config.PLACEMENT_FIELDS), which do not change what it learns.
NOT_IN_THE_COMMAND = ("preset", "env", "seed", "frames", "scale", "learning", *PLACEMENT_FIELDS)


@dataclass(frozen=True)
class Bundle:
    path: Path
    checkpoint: Path
    video: Path | None
    card: Path
    #: Why the bundle has no replay though one was asked for, and how to add it (else None).
    note: str | None = None


def training_command(config: Config) -> str:
    """The ``gdi train`` command that trains ``config`` again: its preset, environment, scale,
    seed and budget, and a ``--set`` for each field that differs from what they resolve to."""
    from gdi.presets import resolve_config

    base = resolve_config(config.preset, config.env, config.scale, learning=config.learning,
                          frames=config.frames, seed=config.seed).to_dict()
    sets = []
    for name, value in config.to_dict().items():
        if name in NOT_IN_THE_COMMAND or value == base.get(name):
            continue
        text = json.dumps(value, separators=(",", ":")) if isinstance(value, list | dict) \
            else str(value)
        sets.append(f"'{name}={text}'" if any(c in text for c in " []{}\"'") else
                    f"{name}={text}")
    command = (f"gdi train --preset {config.preset} --env {config.env} --scale {config.scale} "
               f"--learning {config.learning} --seed {config.seed} --frames {config.frames}")
    return command + (" --set " + " ".join(sets) if sets else "")


def export_agent(run_dir: str | os.PathLike, out: str | os.PathLike, video: bool = True
                 ) -> Bundle:
    """Write ``run_dir``'s latest checkpoint, config, the evaluation of that checkpoint, a
    model card and (with ``video``) a replay into the new folder ``out``. An existing ``out``
    that is not empty is refused (nothing is overwritten). The bundle is made in a temporary
    folder beside ``out`` and renamed at the end: a failure leaves nothing behind."""
    from gdi.agent import resolve_checkpoint
    from gdi.runtime.run_folder.checkpoint import (
        FORMAT_VERSION,
        checkpoint_controller_states,
        write_data_file,
    )
    from gdi.scores import load_run

    run_dir, out = Path(run_dir), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not an empty folder; export into a new one "
                              "(nothing is overwritten)")
    config, _, payload = resolve_checkpoint(run_dir)
    frames = int(payload["frames"])
    evaluation = evaluation_at(load_run(run_dir), frames)
    if evaluation is None:
        raise ValueError(
            f"{run_dir} has no evaluation of its newest checkpoint ({frames:,} frames), which "
            f"the model card's score must be: gdi evaluate {run_dir} plays one")
    # What acting needs: the network and each actor's E (no optimizer, no replay).
    lean = {"config": payload["config"], "frames": frames,
            "learner": {"net": payload["learner"]["net"], "steps": payload["learner"]["steps"]},
            "controllers": checkpoint_controller_states(payload, config.num_actors)}
    provenance = json.loads((run_dir / "config.json").read_text()).get("provenance", {})
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    except OSError as err:
        raise StorageError(f"could not write the bundle {out}: {why_not_writable(out, err)}") \
            from None
    try:
        (work / CHECKPOINT_DIR).mkdir()
        (work / EVAL_DIR).mkdir()
        name = checkpoint_name(frames)
        write_data_file(work / CHECKPOINT_DIR / name, {"format": FORMAT_VERSION, **lean})
        shutil.copy2(run_dir / "config.json", work / "config.json")
        shutil.copy2(evaluation.path, work / EVAL_DIR / evaluation.path.name)
        replay = note = None
        if video:
            replay, note = _replay(work, out, config.env)
        text = model_card(config, evaluation, frames, replay, provenance)
        atomic_write(work / "README.md", lambda h: h.write(text), binary=False)
        if out.exists():
            out.rmdir()  # empty, checked above
        work.rename(out)
    except OSError as err:
        raise StorageError(f"could not write the bundle {out}: {why_not_writable(out, err)}") \
            from None
    finally:
        shutil.rmtree(work, ignore_errors=True)  # gone already when renamed
    return Bundle(out, out / CHECKPOINT_DIR / name, out / replay if replay else None,
                  out / "README.md", note)


def _replay(work: Path, out: Path, env: str) -> tuple[str | None, str | None]:
    """One episode into ``work/replay.gif``: its name, or None and a note when rendering the
    environment needs what this install lacks (pygame for Gymnasium's classic control, the
    ``video`` extra): the bundle is still made, and the note says how to add the replay."""
    from gymnasium.error import DependencyNotInstalled

    from gdi.video.enjoy import enjoy

    try:
        played = enjoy(work, episodes=1, video=work / "replay.gif", max_steps=VIDEO_STEPS)
    except (DependencyNotInstalled, ModuleNotFoundError) as err:
        (work / "replay.gif").unlink(missing_ok=True)
        why = " ".join(str(err).split()).rstrip(".")
        return None, (f"no replay.gif: rendering {env} needs what this install lacks ({why}); "
                      "install the video extra (pip install 'gdi-rl[video]'), then add it with "
                      f"gdi enjoy {out} --video {out / 'replay.gif'} --max-steps {VIDEO_STEPS}")
    return (played.video.name if played.video is not None else None), None


def evaluation_at(evals, frames: int):
    """The run's evaluation of the network at ``frames``: its own (training's final one),
    else a ``gdi evaluate`` of that checkpoint; None when neither exists."""
    for record in (*reversed(evals.own), *reversed(evals.evaluated_later)):
        if record.frames == frames:
            return record
    return None


def model_card(config: Config, final, frames: int, replay: str | None,
               provenance: dict) -> str:
    """The bundle's README.md: Hugging Face model-card front matter, then what the agent is,
    its score, how to use it and how it was trained."""
    returns = np.array([e.episode_return for e in final.episodes], dtype=float)
    mean, std = float(returns.mean()), float(returns.std())
    env = config.env
    front = "\n".join([
        *BUNDLE_FRONT_MATTER.splitlines(),  # what marks the folder as a bundle (is_bundle)
        "tags:",
        "- reinforcement-learning",
        "- deep-reinforcement-learning",
        "- gdi",
        f"- {env.replace(':', '-')}",
        "model-index:",
        f"- name: {config.preset}",
        "  results:",
        "  - task:",
        "      type: reinforcement-learning",
        "      name: reinforcement-learning",
        "    dataset:",
        f"      name: {env}",
        f"      type: {env}",
        "    metrics:",
        "    - type: mean_reward",
        f"      value: {mean:.2f} +/- {std:.2f}",
        "      name: mean_reward",
        "      verified: false",
        "---",
    ])
    lines = [
        front, "",
        f"# {config.preset} on {env}", "",
        "An agent trained with gdi, an implementation of [Generalized Data Distribution "
        "Iteration](https://proceedings.mlr.press/v162/fan22c.html) (Fan & Xiao, ICML 2022): "
        f"preset `{config.preset}`, "
        f"{frames:,} environment frames, seed {config.seed}, scale `{config.scale}`"
        + (f", ALE protocol `{config.protocol}`" if env.startswith("ale:") else "") + ".", "",
        "## Evaluation", "",
        f"Mean return {mean:.2f} ± {std:.2f} (standard deviation) over {len(returns)} episodes "
        f"at {final.frames:,} frames, the evaluation of this network (`{EVAL_DIR}/"
        f"{final.path.name}`): {final.policy}.", "",
    ]
    if replay is not None:
        lines += [f"![one episode of the agent]({replay})", ""]
    lines += [
        "## Use", "",
        "```bash",
        "# with gdi installed (from its repository: pip install -e .)",
        "gdi enjoy THIS_FOLDER --video play.mp4     # watch it",
        "gdi evaluate THIS_FOLDER --policy greedy   # evaluate it (writes eval_greedy/)",
        "```", "",
        "```python",
        "import gdi",
        "agent = gdi.load_agent(\"THIS_FOLDER\")  # act with agent.act(observations)",
        "```", "",
        "## Training", "",
        "```bash",
        training_command(config),
        "```", "",
    ]
    if provenance.get("versions"):
        lines += ["Trained with " + ", ".join(f"{k} {v}" for k, v in
                                               provenance["versions"].items())
                  + (f"; gdi commit {provenance['git_commit']}" if provenance.get("git_commit")
                     else "") + ".", ""]
    return "\n".join(lines)
