"""Compatibility with what earlier versions of gdi wrote, in one place: the rest of gdi reads
today's formats only.

- **config.json** of a run written before a field existed: ``todays_config_fields`` fills
  in the fields added since (``FIELDS_ADDED_LATER``, each with the value that gives the
  behaviour runs had before it) and derives the labels (``LABELS_DERIVED_ON_LOAD``). Every
  reader of a config.json goes through it (``gdi.config.Config.from_dict``,
  ``gdi.runtime.run_folder.run_dir.read_config``, ``gdi.scores.read_config``), so committed
  records of any age stay readable without being rewritten.
- **Checkpoints** of gdi before 0.2 (pickle files, ``checkpoints/ckpt_<frames>.pt``):
  ``gdi upgrade FOLDER`` converts them once into the data files of
  :mod:`gdi.runtime.run_folder.checkpoint`, in today's layout (``todays_payload``), so that no
  part of the runtime reads an older one.

Even here nothing is unpickled with Python's full unpickler: the old files are read with
PyTorch's ``weights_only=True`` loader, which rebuilds tensors, containers and numbers and
refuses any other global, widened by exactly the globals gdi's old checkpoints hold (NumPy
arrays, dtypes and scalars, and gdi's ``EpisodeRecord`` under each module it has lived in). A
file that needs anything else is refused with the global it asked for, and its folder is left
as it was. An inline actor's environments, pickled inside the old checkpoint as bytes, are the
one part that cannot be read without running that pickle: they are dropped, so an upgraded
inline run restarts its episodes on resume (everything else resumes exactly), and the
conversion says so. Each converted checkpoint is written beside its original, which is kept as
``ckpt_<frames>.pt.upgraded`` (never loaded again), so nothing is lost.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gdi.run_files import CHECKPOINT_SUFFIX, list_checkpoints, list_pickle_checkpoints
from gdi.run_spec import RunSpec

# Light to import (the config and the read side import it): numpy, torch and the runtime are
# imported by the functions that convert checkpoints.

__all__ = ["FIELDS_ADDED_LATER", "KEPT_SUFFIX", "LABELS_DERIVED_ON_LOAD", "MOVED_MODULES",
           "Upgrade", "todays_config_fields", "todays_payload", "upgrade_folder"]


# --- config.json of earlier versions --------------------------------------------------------
#: Fields that only name where a config came from and that ``Config.from_dict`` derives when a
#: config saved before they existed lacks them (``scale``: the environment kind's; ``learning``:
#: the paper's, the only one there was, its fields as saved).
LABELS_DERIVED_ON_LOAD = ("scale", "learning")


def derived_labels(saved: typing.Mapping[str, Any]) -> dict[str, str]:
    """The ``LABELS_DERIVED_ON_LOAD`` a saved config's fields (``saved``) lack, derived: a run
    saved before scales had names took its environment kind's scale, and one saved before T's
    readings had names the paper's learning, the only one there was (a run that changed its
    fields with --set keeps them as saved, the label as resolved)."""
    derived = {}
    if "scale" not in saved and ":" in str(saved.get("env", "")):
        derived["scale"] = str(saved["env"]).split(":", 1)[0].lower()
    if "learning" not in saved:
        derived["learning"] = RunSpec.learning
    return derived


#: Config fields added after run folders were first written, each with the value that gives
#: the behaviour runs had before the field existed (checkpoint_every_frames: today's default;
#: before it, only checkpoint_every_s bounded the work a crash loses). Only these are filled in
#: when a config.json lacks them, each at what runs before it did (most say where and how a
#: run runs; those that change what it learns, from torso_init to policy_init_scale, are filled
#: with the behaviour the run had); any other missing field is an error. Filled in by
#: ``todays_config_fields``.
FIELDS_ADDED_LATER = {
    "ray_address": "",
    "ray_cpus_per_actor": 1.0,
    "ray_placement": "spread",
    "actor_failures_max": 3,
    "actor_failure_window_s": 600.0,
    "actor_timeout_s": 300.0,  # before it, a hung actor was waited for forever
    "skipped_updates_max": 100,
    "checkpoint_every_frames": 1_000_000,
    "learner_compile": False,
    "actor_device": "cpu",  # before it, actors always acted on the CPU
    # What runs had before the field: he for nature (since He initialization came in, before
    # any recorded nature run but the one in benchmarks/results/ale-cpu/breakout-default-init-0,
    # whose config.json says pytorch), PyTorch's default for the others.
    "torso_init": "auto",
    "q_loss_trains_value": True,  # before it, L_Q always reached V through Q = Ā + V
    "pg_advantage_norm": "none",  # before it, ρ_s δ weighed log π as V-trace gave it
    "pg_clip": 0.0,  # before it, the V-trace policy gradient, no clipped surrogate
    "wandb_project": "",  # before it, no run went to Weights & Biases
    "protocol": "paper",  # before it, the paper's ALE settings (env_overrides on top)
    "policy_head": "advantage",  # before it, π_λ always read A (the paper)
    "core": "lstm",  # before it, every network had the paper's LSTM
    "clip_pg_rho": None,  # before it, the policy gradient's ρ was truncated at ρ̄ (the paper)
    "trace_lambda": 1.0,  # before it, traces were cut by c̄ only (the paper)
    "input_norm": "none",  # before it, observations entered the torso as scaled (the paper)
    "value_norm": "none",  # before it, the A and V heads spoke in the returns' units (the paper)
    "entropy_floor": 0.0,  # before it, no floor on π_λ's entropy
    "entropy_floor_scale": 1.0,  # (its weight, read only with a floor)
    "policy_init_scale": 1.0,  # before it, the policy head started as PyTorch initializes it
}



def todays_config_fields(saved: typing.Mapping[str, Any], fill_added_later: bool = True
                         ) -> dict[str, Any]:
    """A saved config's fields (``saved``: a config.json's object, or part of one) as today's
    gdi names them: the labels derived where it lacks them (``derived_labels``) and, with
    ``fill_added_later``, every field of ``FIELDS_ADDED_LATER`` it lacks at the value runs had
    before it. Fields it has are kept as saved."""
    added = {k: v for k, v in FIELDS_ADDED_LATER.items() if k not in saved} \
        if fill_added_later else {}
    return {**added, **saved, **derived_labels(saved)}


# --- checkpoints of earlier versions ---------------------------------------------------------

#: What an old checkpoint is renamed to once converted.
KEPT_SUFFIX = ".upgraded"

#: Where the runtime's modules were before they moved into folders by role (issue 43), for the
#: classes that old checkpoints hold by their old module: old module → module now.
MOVED_MODULES = {
    "gdi.runtime.acting": "gdi.runtime.acting.step",
    "gdi.runtime.actor": "gdi.runtime.acting.actor",
    "gdi.runtime.evaluator": "gdi.runtime.acting.evaluator",
    "gdi.runtime.steps": "gdi.runtime.storage.steps",
    "gdi.runtime.sequences": "gdi.runtime.storage.sequences",
    "gdi.runtime.collector": "gdi.runtime.storage.collector",
    "gdi.runtime.reservoir": "gdi.runtime.storage.reservoir",
    "gdi.runtime.learner": "gdi.runtime.training.learner",
    "gdi.runtime.parameter_server": "gdi.runtime.training.parameter_server",
    "gdi.runtime.trainer": "gdi.runtime.training.trainer",
    "gdi.runtime.backend": "gdi.runtime.backends.base",
    "gdi.runtime.inline": "gdi.runtime.backends.inline",
    "gdi.runtime.local": "gdi.runtime.backends.local",
    "gdi.runtime.ray_backend": "gdi.runtime.backends.ray_backend",
    "gdi.runtime.run_dir": "gdi.runtime.run_folder.run_dir",
    "gdi.runtime.checkpoint": "gdi.runtime.run_folder.checkpoint",
    "gdi.runtime.meta_log": "gdi.runtime.run_folder.meta_log",
}


def _allowed_globals() -> list:
    """The globals of gdi's old checkpoints, each under every name it was pickled with."""
    import numpy as np

    from gdi.runtime.acting.actor import EpisodeRecord

    reconstruct = np._core.multiarray._reconstruct
    scalar = np._core.multiarray.scalar
    allowed = [np.dtype, np.ndarray, reconstruct, scalar,
               (reconstruct, "numpy.core.multiarray._reconstruct"),
               (scalar, "numpy.core.multiarray.scalar"),
               *(getattr(np.dtypes, name) for name in dir(np.dtypes) if name.endswith("DType"))]
    record = "EpisodeRecord"
    allowed += [(EpisodeRecord, f"{old}.{record}") for old, new in MOVED_MODULES.items()
                if new == EpisodeRecord.__module__]
    allowed.append(EpisodeRecord)
    return allowed


def todays_payload(payload: dict) -> dict:
    """An old checkpoint's tree (``read_pickle_checkpoint``) in today's layout, which is all
    the runtime reads:

    - ``controllers`` (every actor's E; it came with the common format): taken from the
      inline actors' states, else fresh;
    - ``trainer.turns`` (which actor acts next; it came with ``ActorTurns``): every actor
      afresh, as a new run starts them; ``trainer.actor_restarts`` (counted since): none;
    - each inline actor's state: ``rng``, NumPy's action sampler (actions were sampled with a
      torch generator: NumPy's seeded from that generator's state); ``pulled_at`` (pulls came
      at multiples of pull_every: the last such multiple); its environments dropped (pickled
      inside the checkpoint; see the module's docstring), so its episodes restart;
    - the data collector's sequences (stored whole before steps were stored once): each whole
      sequence becomes a chunk of its own, in no actor's stream.
    """
    import numpy as np

    config = payload["config"]
    num_actors = config["num_actors"]
    actors = payload.get("actors")
    if "controllers" not in payload:
        payload["controllers"] = ([actor["controller"] for actor in actors] if actors
                                  else [None] * num_actors)
    payload["trainer"].setdefault("turns", {"last_asked": [-1] * num_actors, "requests": 0})
    payload["trainer"].setdefault("actor_restarts", 0)
    for actor in actors or []:
        if "rng" not in actor:
            seed = np.frombuffer(actor.pop("generator").numpy().tobytes(), dtype=np.uint32)
            actor["rng"] = np.random.default_rng(seed).bit_generator.state
        if "pulled_at" not in actor:
            steps, every = actor["steps"], config["pull_every"]
            actor["pulled_at"] = steps - (steps % every or every)
        actor["env"] = None
    if "items" in payload.get("collector", {}):
        payload["collector"] = _collector_of_chunks(payload["collector"], config)
    return payload


def _collector_of_chunks(former: dict, config: dict) -> dict:
    """A data collector's state of whole sequences (``items``) as today's chunks: each
    sequence a chunk of its own (``StepChunk.from_sequences``), no stream continued."""
    from gdi.envs import resolve_env
    from gdi.runtime.storage.sequences import SequenceBatch
    from gdi.runtime.storage.steps import StepChunk

    stack = resolve_env(config["env"], protocol=config.get("protocol", "paper"),
                        **config.get("env_overrides", {})).stacked_frames
    chunks = [StepChunk.from_sequences(SequenceBatch(**item), stack) for item in former["items"]]
    return {"chunks": [chunk.as_dict() for chunk in chunks],
            "sequences": [{"pieces": [(n, 0, chunk.steps)], "history": 0, "last": n, "env": 0}
                          for n, chunk in enumerate(chunks)],
            "streams": {}, "uses_left": list(former["uses_left"]), "rng": former["rng"],
            "added": former["added"], "trained": former["trained"]}


@dataclass(frozen=True)
class Upgrade:
    """What :func:`upgrade_folder` did: the checkpoints written, and notes for the user."""

    converted: list[Path]
    notes: list[str]


def read_pickle_checkpoint(path: Path) -> dict:
    """An old checkpoint's tree, by PyTorch's restricted loader (see the module's docstring);
    ValueError in one line for a file it refuses."""
    import torch

    try:
        with torch.serialization.safe_globals(_allowed_globals()):
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        text = " ".join(str(err).split())
        hint = text.split("Unsupported global: ")[-1].split(" ")[0] \
            if "Unsupported global" in text else text[:160]
        raise ValueError(f"{path} is not a checkpoint of gdi before 0.2 that can be converted "
                         f"safely ({hint}); it is left as it was") from None
    if not isinstance(payload, dict) or payload.get("format") != 1:
        raise ValueError(f"{path} is not a checkpoint of gdi before 0.2 (format 1)")
    return payload


def upgrade_folder(folder: str | Path) -> Upgrade:
    """Convert every pickle checkpoint of ``folder`` (a run folder or a bundle). Every old file
    is read before anything is written, so a refusal leaves the folder as it was."""
    from gdi.runtime.run_folder.checkpoint import FORMAT_VERSION, load_checkpoint, write_data_file

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} is not a gdi run folder or bundle (no config.json)")
    old = list_pickle_checkpoints(folder)
    if not old:
        have = list_checkpoints(folder)
        raise ValueError(f"{folder} holds no pickle checkpoints (ckpt_<frames>.pt) to convert"
                         + (f"; its {len(have)} checkpoint(s) are in the current format already"
                            if have else ""))
    payloads = [read_pickle_checkpoint(path) for path in old]
    dropped_envs = False
    converted = []
    for path, payload in zip(old, payloads, strict=True):
        dropped_envs |= any(actor.get("env") is not None for actor in payload.get("actors") or [])
        payload = todays_payload(payload)
        payload["format"] = FORMAT_VERSION
        target = path.with_suffix(CHECKPOINT_SUFFIX)
        write_data_file(target, payload)
        load_checkpoint(target)  # it reads back before the original is set aside
        path.replace(path.with_name(path.name + KEPT_SUFFIX))
        converted.append(target)
    notes = [f"converted {len(converted)} checkpoint(s) of {folder} to the data format of gdi "
             f"0.2 (the originals kept as *.pt{KEPT_SUFFIX}, never loaded again)"]
    if dropped_envs:
        notes.append("the inline actors' environments were saved as pickles, which are not "
                     "read: on resume their episodes restart (everything else resumes exactly)")
    return Upgrade(converted, notes)
