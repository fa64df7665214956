"""``gdi.train``: train a preset on an environment from Python and get its agent back;
``gdi.load_agent``: the agent of a run (or bundle) already trained; ``gdi.Agent``: the agent
both return.

    agent = gdi.train("gdi-i3", env="gym:CartPole-v1", frames=20_000)
    print(agent.evaluate(episodes=2))      # mean return 21.50 over 2 episodes: 18, 25 (…)
    agent.predict(observation)             # an action of π_λ
    agent.save("bundles/cartpole")         # a bundle that gdi.load_agent loads again

The run is the one ``gdi train`` makes with the same options: the config is resolved by the
same functions (``gdi.presets.resolve_config``, then ``gdi.config.apply_overrides`` for the
fields given as keywords, as ``--set`` gives them), trained by ``gdi.runtime.wiring.train``,
and written to the same run folder. Callbacks (``gdi.Callback``) hear of each metrics row,
evaluation, checkpoint and episode end, and may stop the run early.

``Agent`` is ``gdi.agent.Agent`` (the acting loop, ``predict``, ``evaluate``) with ``save``: a
bundle is written by ``gdi.export``, which plays the agent (its replay) and so builds on
``gdi.agent``; the method that calls it lives here, above both.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from gdi import agent as acting_agent
from gdi.config import Config, apply_overrides
from gdi.export import Bundle, evaluation_at, export_agent
from gdi.presets import resolve_config
from gdi.run_files import LATEST, POPULATION
from gdi.runtime.callbacks import Callback
from gdi.runtime.run_folder.checkpoint import latest_checkpoint
from gdi.scores import load_run

__all__ = ["Agent", "load_agent", "resolve_run_config", "resume", "resume_config",
           "train"]


class Agent(acting_agent.Agent):
    """A trained agent: :class:`gdi.agent.Agent` (the ``reset``/``act``/``observe`` loop,
    ``predict``, ``evaluate``) that also saves itself as a bundle. What :func:`train` and
    :func:`load_agent` return."""

    def save(self, path: str | os.PathLike, video: bool = False) -> Bundle:
        """Write the agent's run as a bundle in the new folder ``path``, as ``gdi export RUN
        PATH`` does (:func:`gdi.export.export_agent`): its checkpoint without the optimizer,
        its config, the evaluation of that checkpoint, a model card and, with ``video``, a
        replay GIF. ``gdi.load_agent(path)`` loads it again.

        The checkpoint must be the run's newest, which a bundle holds; a run stopped before
        its final evaluation (a callback's stop) is first evaluated as ``gdi evaluate RUN``
        evaluates it (``eval_episodes`` episodes, filed in its ``eval/``), so that the card
        states the bundled network's score."""
        if self.run_dir is None or self.checkpoint is None:
            raise ValueError("save writes the bundle of a run, and this agent was built from "
                             "parts; load it with gdi.load_agent(run_dir)")
        newest = latest_checkpoint(self.run_dir)
        if newest.resolve() != Path(self.checkpoint).resolve():
            raise ValueError(f"save bundles the run's newest checkpoint, {newest}; this agent "
                             f"plays {self.checkpoint}: load that run's newest with "
                             f"gdi.load_agent({str(self.run_dir)!r})")
        if not _evaluated(self.run_dir, int(self.frames)):
            acting_agent.evaluate_checkpoint(self.run_dir, episodes=self.config.eval_episodes)
        return export_agent(self.run_dir, path, video=video)


def _evaluated(run_dir: Path, frames: int) -> bool:
    """Whether the run has an evaluation of its network at ``frames``, which a bundle needs
    (training's own at the end, or a ``gdi evaluate`` of the checkpoint)."""
    try:
        return evaluation_at(load_run(run_dir), frames) is not None
    except FileNotFoundError:  # no evaluation at all
        return False


def load_agent(
    run_dir: str | os.PathLike,
    checkpoint: str | os.PathLike = LATEST,
    policy: str = POPULATION,
    device: str | torch.device = "cpu",
    seed: int | None = None,
    allow_foreign_checkpoint: bool = False,
    fixed_lambda: Sequence[float] | None = None,
) -> Agent:
    """The agent of a run folder's (or a bundle's) checkpoint, as :class:`Agent`: what
    :func:`gdi.agent.load_agent` loads, which says what each argument is."""
    return acting_agent.load_agent(run_dir, checkpoint, policy, device, seed,
                                   allow_foreign_checkpoint, fixed_lambda, agent_class=Agent)


def train(
    preset: str = "gdi-i3",
    env: str = "minatar:breakout",
    *,
    frames: int | None = None,
    seed: int = 0,
    scale: str | None = None,
    learning: str | None = None,
    search: str | None = None,
    backend: str | None = None,
    run_dir: str | os.PathLike | None = None,
    callbacks: Sequence[Callback] = (),
    progress: bool = True,
    tensorboard: bool = True,
    report: bool = False,
    **overrides: Any,
) -> Agent:
    """Train ``preset`` on ``env`` into a new run folder, as ``gdi train`` does, and return the
    trained agent (``gdi.load_agent`` of the run's newest checkpoint: ``agent.run_dir`` is the
    folder).

    The defaults are ``gdi train``'s (``gdi.run_spec.RunSpec``'s).

    Args:
        preset: Preset name (``gdi presets`` lists them).
        env: Environment: ale:<Game>, minatar:<game> or gym:<id>.
        frames: Frame budget (default: the scale's, which ``gdi config --env ENV`` prints).
        seed: Seed of every random generator.
        scale: Scale knobs (``gdi scales``); default: the environment kind's.
        learning: How T steps the network (paper, policy-head, ...; ``gdi presets``); default:
            the scale's.
        search: How E searches each inverse temperature (table, log1p-50, log1p-1000), in
            place of the scale's.
        backend: inline (one process: no ``if __name__ == "__main__":`` guard needed), local
            (actor processes, the default: a script calls ``gdi.train`` under that guard, as
            any script that starts processes must) or ray.
        run_dir: Run folder to create (default runs/<env>__<preset>__<seed>__<time>).
        callbacks: :class:`gdi.Callback` objects, called at each metrics row, evaluation,
            checkpoint and episode end; one that calls ``stop_training`` ends the run early,
            with a checkpoint and no final evaluation.
        progress: Show the progress line and start-up stages on stderr.
        tensorboard: Write TensorBoard events beside metrics.jsonl.
        report: Write the run's report (report/) once it ends, as ``gdi train`` does by
            default.
        **overrides: Config fields, as ``--set field=value`` sets them (``gdi config`` lists
            every field), e.g. ``envs_per_actor=8``, ``eval_every=0``,
            ``env_overrides={"repeat_action_probability": 0.25}``.

    A bad preset, environment, field or value is a ``ValueError`` of one line naming it and
    what is allowed, before anything is written. A callback's stop returns the agent of the
    checkpoint the run ended with. Ctrl-C checkpoints the run (once it has trained) and raises
    ``KeyboardInterrupt``, whose message says where the checkpoint is; SIGTERM and SIGHUP
    exit as ``gdi train`` does (``SystemExit`` with 128 + the signal's number).
    """
    _check_not_importing_main()
    config = resolve_run_config(preset, env, frames=frames, seed=seed, scale=scale,
                                learning=learning, search=search, backend=backend,
                                **overrides)
    return _run(config, run_dir, False, callbacks, progress, tensorboard, report)


def resume(
    run_dir: str | os.PathLike,
    *,
    frames: int | None = None,
    backend: str | None = None,
    callbacks: Sequence[Callback] = (),
    progress: bool = True,
    tensorboard: bool = True,
    report: bool = False,
    preset: str | None = None,
    env: str | None = None,
    seed: int | None = None,
    scale: str | None = None,
    learning: str | None = None,
    search: str | None = None,
    **overrides: Any,
) -> Agent:
    """Continue the run in ``run_dir`` from its newest checkpoint, as ``gdi train --resume
    RUN_DIR`` does, and return the agent it ends with: a run a callback stopped (or Ctrl-C,
    or ``gdi train --stop-at``), trained on to its budget, or a finished run to a larger one.

    The run keeps its own config (its ``config.json``). ``frames`` extends the budget;
    ``backend`` and the ``overrides`` (config fields, as ``--set`` sets them) may change where
    and how it runs, never what it learns (``gdi.config.RESUMABLE_FIELDS``; the others are
    refused, checked against the checkpoint). ``preset``, ``env``, ``seed``, ``scale``,
    ``learning`` and ``search`` are checked, never applied: one that differs from the run's
    own is refused (a ``ValueError`` naming each, before anything is written), so that a
    script that repeats its ``gdi.train`` arguments resumes only the run they made.
    ``callbacks``, ``progress``, ``tensorboard`` and ``report`` are :func:`train`'s.

    The metrics rows and episodes written after the checkpoint (a run killed past it) are
    dropped and trained again, so the run's records continue from the checkpoint's frames."""
    _check_not_importing_main()
    frames = None if frames is None else _whole_number("frames", frames)
    seed = None if seed is None else _whole_number("seed", seed)
    try:
        config = resume_config(
            run_dir, preset=preset, env=env, seed=seed, scale=scale, learning=learning,
            search=search, frames=frames, backend=backend, sets=_assignments(overrides),
            who="gdi.resume")
    except ValueError as err:
        raise ValueError(str(err).removeprefix("--set ")) from None  # keywords, not --set
    return _run(config, Path(run_dir), True, callbacks, progress, tensorboard, report)


def resume_config(run_dir: str | os.PathLike, *, preset: str | None = None,
                  env: str | None = None, seed: int | None = None, scale: str | None = None,
                  learning: str | None = None, search: str | None = None,
                  frames: int | None = None, backend: str | None = None,
                  sets: Sequence[str] = (), refused: Sequence[str] = (),
                  who: str = "--resume") -> Config:
    """The config that continues the run in ``run_dir``: its own, with ``frames``,
    ``backend`` and ``sets`` (``--set``'s ``field=value`` texts) applied in one step (``--backend
    ray --set actor_device=cpu`` is never checked with the backend changed and the device not
    yet); what the wiring's resume allows of the change is checked there, against the
    checkpoint. What was given of ``preset``, ``env``, ``seed``, ``scale``, ``learning`` and
    ``search`` (None: not given) must be the run's own, never dropped: a ValueError of one
    line, ``<who> continues RUN with its saved config; conflicting options: {...}``, names each
    that is not, and each option of ``refused`` (given where a resume takes none, as ``gdi
    train --resume`` names ``--run-dir``). What ``gdi train --resume`` and :func:`resume` run."""
    from gdi.envs.spec import canonical_spec
    from gdi.runtime.run_folder.run_dir import read_config

    config, _ = read_config(run_dir)
    # An environment is compared in its canonical form, as the run stored it.
    given = {"preset": preset, "env": env and canonical_spec(env), "seed": seed,
             "scale": scale, "learning": learning}
    conflicts = {k: (getattr(config, k), v) for k, v in given.items()
                 if v is not None and v != getattr(config, k)}
    if search is not None:  # the run's search is in its saved meta_kwargs
        conflicts["search"] = ("its meta_kwargs", search)
    if conflicts or refused:
        raise ValueError(
            f"{who} continues {run_dir} with its saved config; conflicting options: "
            f"{conflicts or ''}{''.join(f' {option}' for option in refused)}"
        )
    changes = {"frames": frames, "backend": backend}
    return apply_overrides(config, sets, **{k: v for k, v in changes.items() if v is not None})


def _run(config: Config, run_dir, resume: bool, callbacks: Sequence[Callback], progress: bool,
         tensorboard: bool, report: bool) -> Agent:
    """Train ``config`` into ``run_dir`` (a new run, or the run continued with ``resume``) and
    return the agent of its newest checkpoint: :func:`train`'s and :func:`resume`'s run."""
    from gdi.runtime.stop import StopRequest
    from gdi.runtime.wiring import train as run_training

    stop = StopRequest()
    result = run_training(config, run_dir, resume=resume, show_progress=progress,
                          tensorboard=tensorboard, stop=stop, callbacks=callbacks)
    if stop.signal is not None:  # Ctrl-C, SIGTERM, SIGHUP: the script stops too
        if result.run_dir is None or not Path(result.run_dir).is_dir():
            message = "interrupted during start-up, before any training; no run folder was kept"
        else:
            message = (f"interrupted at {result.frames:,} frames; checkpoint saved: "
                       f"gdi.load_agent({str(result.run_dir)!r}) loads it, "
                       f"gdi.resume({str(result.run_dir)!r}) (gdi train --resume "
                       f"{result.run_dir}) continues the run")
        if stop.signal == signal.SIGINT:
            raise KeyboardInterrupt(message)
        raise SystemExit(stop.exit_code)
    if report:
        from gdi.evaluation.report import write_run_report

        write_run_report([result.run_dir], out_dir=Path(result.run_dir) / "report")
    return load_agent(result.run_dir)


def _check_not_importing_main() -> None:
    """RuntimeError when called while a spawned process imports the script that started it
    (multiprocessing's bootstrapping, which its own check reads the same way): a script that
    calls ``gdi.train`` at its top level, without ``if __name__ == "__main__":``, would
    otherwise start a run again in each actor the local backend spawns, which fails there
    and is restarted until the run gives up."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError(
            "gdi.train was called while an actor process of the local backend imported the "
            "script that started it: call gdi.train under if __name__ == \"__main__\": (the "
            "local backend's actors are spawned processes, which import that script), or "
            "train with backend=\"inline\"")


def resolve_run_config(preset: str = "gdi-i3", env: str = "minatar:breakout", *,
                       frames: int | None = None, seed: int = 0,
                       scale: str | None = None, learning: str | None = None,
                       search: str | None = None, backend: str | None = None,
                       **overrides: Any) -> Config:
    """The config :func:`train` runs: ``gdi.presets.resolve_config`` of the preset on the
    environment with the named choices, then the ``overrides`` as ``--set`` applies them
    (each value as the text ``--set`` would take: a string as it is, anything else as JSON),
    so that a field is checked once, the same way from Python and from the command line."""
    frames = None if frames is None else _whole_number("frames", frames)
    seed = _whole_number("seed", seed)
    assignments = _assignments(overrides)
    resolved = resolve_config(preset, env, scale, search, learning, frames=frames, seed=seed,
                              backend=backend)
    try:
        return apply_overrides(resolved, assignments)
    except ValueError as err:
        # --set's messages name the option; here the field is a keyword.
        text = str(err)
        raise ValueError(text.removeprefix("--set ")) from None


def _assignments(overrides: dict[str, Any]) -> list[str]:
    """Keyword overrides as ``--set``'s ``field=value`` texts."""
    return [f"{name}={_as_text(name, value)}" for name, value in overrides.items()]


def _whole_number(name: str, value: Any) -> int:
    """``value`` as an int: an int, or a float that is a whole number (1e6); ValueError naming
    ``name`` otherwise."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}={value!r} is not a whole number; allowed: an integer such as "
                         "1000000, 1_000_000 or 1e6")
    return int(value)


def _as_text(name: str, value: Any) -> str:
    """A keyword's value as ``--set`` takes it: a string as it is, anything else as JSON (a
    NumPy number or array as its Python value)."""
    if isinstance(value, str):
        return value

    def plain(item: Any) -> Any:
        if hasattr(item, "tolist"):  # numpy scalars and arrays
            return item.tolist()
        raise TypeError

    try:
        return json.dumps(value, default=plain)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r}: not a value a config field takes; allowed: a "
                         "number, a string, true/false, None, a list or a dict") from None
