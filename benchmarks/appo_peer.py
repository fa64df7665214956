"""The APPO peer for time-to-score comparisons: Sample Factory 2.1.1 on MinAtar Breakout (the
default) or on an Atari game through ale-py (``--env ale:Breakout``), optionally for a
wall-clock budget (``--minutes M``), writing a learning curve to put beside gdi's.

Runs in a virtual environment of its own (Sample Factory needs gymnasium 0.29.1 and numpy < 2,
gdi needs newer), never imported by gdi or its tests:

    python3.11 -m venv /tmp/sfvenv
    /tmp/sfvenv/bin/pip install "sample-factory==2.1.1" "gymnasium==0.29.1" "ale-py==0.9.0" \\
        "numpy<2" "torch==2.13.0" minatar

    # MinAtar Breakout, 1M frames (the issue "time to score"):
    /tmp/sfvenv/bin/python benchmarks/appo_peer.py --seed 0 --train_dir /tmp/sf-runs
    # Atari Battle Zone to 3M frames, resumable (run it again with --resume after a stop:
    # Ctrl-C or SIGINT to this process, which saves a checkpoint), its records kept in the
    # repository, with the newest checkpoint while it is short of the budget, so that another
    # machine's --resume goes on from there:
    nice /tmp/sfvenv/bin/python benchmarks/appo_peer.py --env ale:BattleZone --frames 3e6 \\
        --seed 0 --train_dir runs/appo --resume \\
        --records benchmarks/results/ale-cpu/appo_ale_battle_zone_seed0
    # the same after a kill without a checkpoint at the stop (SIGKILL): keep what is there
    /tmp/sfvenv/bin/python benchmarks/appo_peer.py --env ale:BattleZone --frames 3e6 \\
        --seed 0 --train_dir runs/appo --records benchmarks/results/ale-cpu/... --keep
    # Atari Breakout for 120 minutes of wall time:
    nice -n 10 /tmp/sfvenv/bin/python benchmarks/appo_peer.py --env ale:Breakout --minutes 120 \\
        --seed 0 --train_dir /tmp/sf-runs

ale-py 0.9.0 ships the ROMs. Any ALE game works after ``ale:`` (CamelCase as gdi spells it, or
ale-py's snake_case ROM id). Other arguments go through to Sample Factory (they override the
settings below). Sample Factory prints its FPS and mean training-episode return as it goes.

**MinAtar mode** (unchanged): the settings the issue "time to score" measured the peer with:
APPO, an MLP encoder 256-256 on the flattened 10×10×4 observation, an LSTM of 256, 2 workers × 8
environments, rollout 32, batch 1024, on the CPU, for 1M environment steps (one MinAtar frame
each, as gdi counts them).

**ALE mode**: the algorithm is Sample Factory's published Atari configuration
(``sf_examples.atari.atari_params.atari_override_defaults``, run by its Atari benchmark with
``--algo=APPO``: the Nature-DQN conv encoder ``convnet_atari``, no RNN, synchronous PPO-style
updates with ``async_rl=False``, rollout 128, 4 epochs × 4 minibatches of 256, lr 2.5e-4
decaying linearly by SF's formula from ``train_for_env_steps`` = 10M frames (it reaches 0 only
at 40M frames here, so a 2-hour run keeps > 90 % of it), γ 0.99, GAE λ 0.95, clip 0.1,
entropy 0.01, normalized inputs and returns), scaled to a 2-core machine: 2 workers × 4
environments (SF's 8 environments, so each training iteration is still its 4 × 256 =
2 × 4 × 128 samples), ``--device=cpu``. The experiment folder is overwritten
(``--restart_behavior=overwrite``) so a budgeted run always starts fresh, unless ``--resume``
is given: then Sample Factory continues from its newest checkpoint in the folder (saved every
10 minutes and when training stops) and the curve files are appended to. On the 2-core VM
(beside two nice-19 gdi runs) a 3-minute check ran at ~410 frames/s by SF's meter, 286 frames/s
end to end with its ~38 s of start-up; the CPU learner bounds it (one iteration of 4,096 frames
every ~10 s).

The environment is Sample Factory's own Atari wrapper chain (``sf_examples.atari.atari_utils.
make_atari_env``: its ``NoopResetEnv``, ``MaxAndSkipEnv``, ``ClipRewardEnv``, gymnasium's resize
and frame stack) set to gdi's ALE pre-processing (``gdi.envs.spec.AtariConfig``): frame skip 4
with a max-pool of the last two frames, grayscale, 84×84 (area interpolation), a stack of 4,
30 no-op starts, sticky actions off (``repeat_action_probability=0``), no FIRE on reset, losing
a life is not an episode end, episodes capped at 108,000 emulator frames (27,000 agent steps,
reported as truncated), the full action set of 18 (gdi's default; ``--full_action_space False``
gives the minimal set). SF's ``EpisodicLifeEnv`` and ``FireResetEnv`` are left out for that;
the emulator is ``ale_py.env.AtariEnv`` built with every setting explicit, grayscale (ALE's
palette luminance, as ale-py's vector env gives gdi) before the max-pool and the resize, as in
gdi. Differences from gdi that Sample Factory's wrappers keep:

- No-ops: SF draws 1 … 30 NOOP frames after a reset, gdi (ale-py's vector env) 0 … 29.
- The 108,000-frame cap is the ALE's, which counts the reset no-op frames too (≤ 30 frames
  earlier than gdi's cap, which does not).
- At an episode's start the stack holds 4 copies of the first frame (gymnasium's FrameStack);
  gdi's stack holds zeros before the first frame.
- The learner sees rewards clipped to their sign (SF's Atari setting, part of its algorithm);
  gdi's learner shapes raw rewards itself. Scores reported here are raw in both.

**Wall-clock budget**: ``--minutes M`` stops training at the first training iteration that ends
M minutes or more after the process started (Sample Factory's own ``--train_for_seconds`` has no
effect in 2.1.1: the runner never advances the clock it checks; this script advances it after
each training iteration, so SF stops itself the usual way, saving its checkpoint; shutting down
takes a few seconds more). Training also stops at ``train_for_env_steps`` (ALE mode: 10M frames,
SF's default) if that comes first; ``--frames N`` sets it (frames as gdi counts them, below).
SF schedules the learning rate's linear decay from it, in minibatch steps
(``train_for_env_steps // batch_size × num_epochs``, frames over samples), so it reaches 0
16× later than the budget here: a ``--frames 3e6`` run ends at 94 % of the rate, a 10M one
at 98 % at 3M frames.

**Learning curve**: two CSV files in the experiment folder (``<train_dir>/<experiment>/``, or
``--curve PATH`` and the same name with ``_episodes`` added), flushed as the run goes:

- ``curve.csv``: ``wall_s,frames,mean_return,episodes`` after a training iteration, at most one
  row per ``--curve_every`` seconds (10), and once at the end: seconds since the process
  started, environment frames the learner has trained on so far, the mean raw score of the last
  100 finished *training* episodes (as gdi's progress line averages its last 100), and the
  number of episodes finished so far.
- ``curve_episodes.csv``: ``wall_s,frames,return,length_frames`` for each training episode, its
  frames the learner's count when the episode was reported (behind the sampler by up to one
  iteration), its length in emulator frames with the reset no-ops.

Frames are counted as gdi counts them: agent steps × 4 on the ALE (SF's env steps with
``summaries_use_frameskip``), agent steps on MinAtar. Returns are raw game scores of whole games
(all lives) from gymnasium's ``RecordEpisodeStatistics`` under the reward clipping on the ALE,
the episode return on MinAtar; they are training episodes of the behaviour policy (sampled
actions), not a separate evaluation.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import shutil
import signal
import sys
import time
from collections import deque

import gymnasium as gym
import numpy as np
import psutil
import torch
from peer_stats import LEARNER_FILE, write_learner_csv  # beside this script, on its path
from sample_factory.algo.runners.runner import AlgoObserver
from sample_factory.algo.utils.misc import EPISODIC, ExperimentStatus
from sample_factory.cfg.arguments import parse_full_cfg, parse_sf_args
from sample_factory.envs.env_utils import register_env
from sample_factory.train import make_runner
from sample_factory.utils.utils import experiment_dir, log, str2bool


def allow_numpy_scalars_in_checkpoints() -> None:
    """Let ``torch.load`` read Sample Factory's checkpoints without unpickling code.

    SF 2.1.1 saves ``best_performance`` as a NumPy float and loads with ``torch.load``'s
    default, which since PyTorch 2.6 reads weights only and refuses NumPy's scalar: the load
    fails three times and SF *starts the run again from zero frames*, saying so only in its
    log. Allowing the scalar and its dtype (data, not code) keeps ``weights_only`` loading.
    Called at import: SF's learner is a spawned process, which imports this script again."""
    from numpy.core.multiarray import scalar  # its home under the venv's numpy < 2

    torch.serialization.add_safe_globals([scalar, np.dtype, type(np.dtype(np.float64))])


allow_numpy_scalars_in_checkpoints()

#: When this process started: the clock of --minutes and of the curve's wall_s.
START = psutil.Process().create_time()

ENV = "minatar_breakout"
SETTINGS = [
    f"--env={ENV}", "--algo=APPO", "--device=cpu", "--train_for_env_steps=1000000",
    "--num_workers=2", "--num_envs_per_worker=8", "--rollout=32", "--batch_size=1024",
    "--use_rnn=True", "--rnn_type=lstm", "--rnn_size=256", "--encoder_mlp_layers", "256", "256",
    "--experiment_summaries_interval=10", "--save_every_sec=600",
]

# On top of SF's Atari defaults (atari_override_defaults): its 8 environments on 2 workers.
ALE_SETTINGS = [
    "--algo=APPO", "--device=cpu", "--num_workers=2", "--num_envs_per_worker=4",
    "--experiment_summaries_interval=10", "--save_every_sec=600",
]

#: gdi's ALE pre-processing (gdi.envs.spec.AtariConfig) as far as SF's wrappers go.
ALE_FRAMESKIP = 4
ALE_FRAMESTACK = 4
ALE_NOOP_MAX = 30
ALE_MAX_FRAMES = 108_000
ALE_SIZE = 84
RECENT = 100  # episodes in the curve's mean, as gdi's progress line


class FlatFloat(gym.ObservationWrapper):
    """MinAtar's boolean 10×10×4 planes as 400 floats, for Sample Factory's MLP encoder."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        size = int(np.prod(env.observation_space.shape))
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)

    def observation(self, observation):
        return np.asarray(observation, np.float32).reshape(-1)


def make_breakout(full_env_name, cfg=None, env_config=None, render_mode=None):
    import minatar.gym  # noqa: F401  (registers MinAtar/*-v1 with gymnasium)

    return FlatFloat(gym.make("MinAtar/Breakout-v1", render_mode=render_mode))


def ale_rom_id(game: str) -> str:
    """ale-py's ROM id for a game named as gdi does (``Breakout``, ``MontezumaRevenge``) or as
    ale-py does (``montezuma_revenge``)."""
    from ale_py.roms import get_all_rom_ids

    key = game.replace("_", "").lower()
    for rom in get_all_rom_ids():
        if rom.replace("_", "") == key:
            return rom
    raise SystemExit(f"unknown ALE game {game!r}")


def make_ale(full_env_name, cfg=None, env_config=None, render_mode=None):
    """SF's Atari wrapper chain (sf_examples.atari.atari_utils.make_atari_env) with gdi's
    settings: no EpisodicLifeEnv, no FireResetEnv, grayscale from the ALE, explicit emulator."""
    from ale_py.env import AtariEnv
    from sample_factory.envs.env_wrappers import (
        ClipRewardEnv,
        MaxAndSkipEnv,
        NoopResetEnv,
        NumpyObsWrapper,
    )

    env = AtariEnv(
        game=full_env_name.removeprefix("ale_"),
        obs_type="grayscale",
        frameskip=1,  # SF's MaxAndSkipEnv repeats and max-pools
        repeat_action_probability=0.0,
        full_action_space=cfg.full_action_space,
        max_num_frames_per_episode=ALE_MAX_FRAMES,
        render_mode=render_mode,
    )
    env = gym.wrappers.RecordEpisodeStatistics(env)  # raw score and frames of whole games
    env = NoopResetEnv(env, noop_max=ALE_NOOP_MAX)
    env = MaxAndSkipEnv(env, skip=cfg.env_frameskip)
    env = ClipRewardEnv(env)
    env = gym.wrappers.ResizeObservation(env, (ALE_SIZE, ALE_SIZE))
    env = gym.wrappers.FrameStack(env, cfg.env_framestack)
    return NumpyObsWrapper(env)


#: The signals that asked this run to stop (SIGTERM, SIGINT): it stops after the training
#: iteration under way, the way it stops at its budget, saving its checkpoint (Sample Factory's
#: own Ctrl-C handling stops without one, and a process started in the background by a
#: non-interactive shell ignores SIGINT).
STOP_ASKED: list[int] = []


def ask_stop(signum, frame) -> None:
    if STOP_ASKED:  # a second one: stop now, the default way (no checkpoint)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    log.info("Signal %d: stopping after this training iteration, with a checkpoint (again: "
             "at once, without one)", signum)
    STOP_ASKED.append(signum)


class Curve(AlgoObserver):
    """Applies the wall-clock budget and writes the learning curve (see the module docstring)."""

    def __init__(self, path: str | None, every: float, resume: bool = False):
        self.path = path
        self.every = every
        self.resume = resume
        self.wall_offset = 0.0  # a resumed run's wall time before this process
        self.returns: deque[float] = deque(maxlen=RECENT)
        self.episodes = 0
        self.last_row = -float("inf")
        self.curve = self.episode_file = None
        self.frames = 0  # the learner's frames when the run stopped

    def _open(self, runner) -> None:
        path = self.path or os.path.join(experiment_dir(cfg=runner.cfg), "curve.csv")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        root, ext = os.path.splitext(path)
        episodes_path = f"{root}_episodes{ext or '.csv'}"
        # A resumed run appends: its earlier episodes stay, the last 100 of them seed the mean,
        # and the wall clock goes on from the last row (the stop in between is not counted).
        earlier = self.resume and os.path.isfile(path) and os.path.isfile(episodes_path)
        if earlier:
            with open(episodes_path, newline="") as f:
                rows = list(csv.DictReader(f))
            self.returns.extend(float(r["return"]) for r in rows[-RECENT:])
            self.episodes = len(rows)
            with open(path, newline="") as f:
                curve_rows = list(csv.DictReader(f))
            walls = [float(r["wall_s"]) for r in curve_rows + rows]
            self.wall_offset = max(walls, default=0.0)
        mode = "a" if earlier else "w"
        self.curve = open(path, mode, newline="")
        self.episode_file = open(episodes_path, mode, newline="")
        self.curve_csv, self.episode_csv = csv.writer(self.curve), csv.writer(self.episode_file)
        if not earlier:
            self.curve_csv.writerow(["wall_s", "frames", "mean_return", "episodes"])
            self.episode_csv.writerow(["wall_s", "frames", "return", "length_frames"])
        log.info("Learning curve: %s%s", path, " (resumed: appending)" if earlier else "")

    def wall(self) -> float:
        """Seconds of this run's wall time: this process's, after a resumed run's earlier ones."""
        return self.wall_offset + time.time() - START

    def on_start(self, runner) -> None:
        self._open(runner)

    def episode(self, runner, msg, policy_id) -> None:
        stats = msg[EPISODIC]
        # RecordEpisodeStatistics gives arrays of one element
        raw = np.asarray(stats.get("RecordEpisodeStatistics_reward", stats["reward"])).item()
        length = np.asarray(stats.get("RecordEpisodeStatistics_len", stats["len"])).item()
        self.returns.append(float(raw))
        self.episodes += 1
        if self.episode_file is not None:
            frames = runner.env_steps.get(policy_id, 0)
            self.episode_csv.writerow(
                [f"{self.wall():.2f}", frames, f"{float(raw):g}", int(length)])

    def _row(self, runner) -> None:
        if self.curve is None:
            return
        mean = f"{np.mean(self.returns):.4f}" if self.returns else ""
        self.curve_csv.writerow([f"{self.wall():.2f}", runner.env_steps.get(0, 0), mean,
                                 self.episodes])
        self.curve.flush()
        self.episode_file.flush()

    def on_training_step(self, runner, training_iteration_since_resume: int) -> None:
        now = time.time() - START
        # SF 2.1.1 never advances it; its stop check reads it (a resumed run's earlier wall
        # time counts towards --minutes, as it does in the curve)
        runner.total_train_seconds = self.wall()
        if STOP_ASKED:
            runner.total_train_seconds = float("inf")  # past any budget: SF stops and saves
        if now - self.last_row >= self.every:
            self.last_row = now
            self._row(runner)

    def on_stop(self, runner) -> None:
        self._row(runner)
        wall = time.time() - START
        frames = self.frames = runner.env_steps.get(0, 0)
        mean = f"{np.mean(self.returns):.2f}" if self.returns else "-"
        log.info("Peer done: %.0f s of wall time, %d frames (%.0f frames/s end to end), %d "
                 "training episodes, mean raw return of the last %d: %s", wall, frames,
                 frames / max(wall, 1e-9), self.episodes, len(self.returns), mean)
        for f in (self.curve, self.episode_file):
            if f is not None:
                f.close()
        self.curve = self.episode_file = None


#: What ``--records`` keeps of a run: Sample Factory's config and the two curve files (and
#: ``learner.csv``, its learner statistics, written from its events: benchmarks/peer_stats.py).
RECORD_FILES = ("config.json", "curve.csv", "curve_episodes.csv")
#: Where a run short of its budget leaves its newest checkpoint in ``--records`` (as in the
#: experiment folder: ``carried/checkpoint_p0/checkpoint_*.pth``).
CARRIED = "carried"
CHECKPOINTS = "checkpoint_p0"


def newest_checkpoint(folder: str) -> str | None:
    found = sorted(glob.glob(os.path.join(folder, CHECKPOINTS, "checkpoint_*.pth")))
    return found[-1] if found else None


def refuse_unloadable_checkpoint(path: str) -> None:
    """Exit with one line unless ``path`` loads as SF's learner loads it (weights only): a
    checkpoint SF cannot read makes it start again from zero frames without stopping."""
    try:
        torch.load(path, map_location="cpu")
    except Exception as error:  # any failure to load is this one message
        # torch's first line is a generic warning in terminal colours; the cause is the line
        # naming the global it refused, when there is one
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(error).splitlines()]
        lines = [line for line in lines if line] or [type(error).__name__]
        cause = next((line for line in lines if "Unsupported global" in line), lines[0])
        raise SystemExit(f"cannot resume: {path} does not load ({cause}); Sample Factory "
                         "would start the run again from zero frames") from None


def checkpoint_frames(path: str) -> int:
    """The frames in SF's checkpoint name (``checkpoint_<policy version>_<env steps>.pth``)."""
    return int(os.path.basename(path).rsplit(".", 1)[0].rsplit("_", 1)[1])


def copy_atomically(source: str, target: str) -> None:
    """Copy under a name SF's ``checkpoint_*`` glob never matches, then rename: a copy cut
    short never passes for a checkpoint."""
    partial = os.path.join(os.path.dirname(target), f".partial-{os.path.basename(target)}")
    shutil.copy2(source, partial)
    os.replace(partial, target)


def saved_budget(experiment: str, default: int) -> int:
    """The frame budget the run's saved ``config.json`` holds (``default`` without one)."""
    path = os.path.join(experiment, "config.json")
    if not os.path.isfile(path):
        return default
    with open(path) as f:
        return int(json.load(f).get("train_for_env_steps", default))


def trim_curves(experiment: str, frames: int) -> None:
    """Drop the curve rows past ``frames`` (the checkpoint a resume loads): a run killed
    without a checkpoint at its stop recorded episodes that the resume plays again."""
    for name in ("curve.csv", "curve_episodes.csv"):
        path = os.path.join(experiment, name)
        if not os.path.isfile(path):
            continue
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        if not rows:
            continue
        column = rows[0].index("frames")
        kept = [rows[0]] + [r for r in rows[1:] if r and int(float(r[column])) <= frames]
        if len(kept) < len(rows):
            with open(f"{path}.tmp", "w", newline="") as f:
                csv.writer(f).writerows(kept)
            os.replace(f"{path}.tmp", path)
            log.info("%s: %d rows past the checkpoint's %d frames dropped", name,
                     len(rows) - len(kept), frames)


def curve_frames(folder: str) -> int:
    """The frames of the last row of a run's ``curve.csv`` (0 without one)."""
    path = os.path.join(folder, "curve.csv")
    if not os.path.isfile(path):
        return 0
    with open(path, newline="") as f:
        return max((int(r["frames"]) for r in csv.DictReader(f) if r.get("frames")), default=0)


def keep_records(experiment: str, records: str, done: bool) -> None:
    """Copy the run's records into ``records``; short of the budget (``done`` false), its
    newest checkpoint too, into ``records/carried/`` (the one carried before deleted), which a
    ``--resume`` on another machine restores (:func:`restore_experiment`); once done, no
    checkpoint is carried. gdi's ``gdi benchmark`` carries its runs the same way."""
    os.makedirs(records, exist_ok=True)
    for name in RECORD_FILES:
        if os.path.isfile(os.path.join(experiment, name)):
            shutil.copy2(os.path.join(experiment, name), os.path.join(records, name))
    summary = os.path.join(experiment, ".summary", "0")  # policy 0's TensorBoard events
    if os.path.isdir(summary):
        write_learner_csv(summary, os.path.join(records, LEARNER_FILE))
    carried = os.path.join(records, CARRIED)
    if done:
        shutil.rmtree(carried, ignore_errors=True)
        return
    checkpoint = newest_checkpoint(experiment)
    if checkpoint is None:  # nothing to carry; what was carried before stays
        return
    folder = os.path.join(carried, CHECKPOINTS)
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, os.path.basename(checkpoint))
    copy_atomically(checkpoint, target)
    for older in glob.glob(os.path.join(folder, "checkpoint_*.pth")):
        if older != target:
            os.remove(older)
    log.info("Carried %s in %s (a --resume with --records there goes on from it)",
             os.path.basename(checkpoint), carried)


def restore_experiment(records: str, experiment: str) -> bool:
    """Rebuild the experiment folder from ``records`` and its carried checkpoint when the
    folder has no checkpoint of its own (another machine); whether it did. A folder whose
    checkpoint is older than the carried one (another machine took the run further) is
    refused, never trained over."""
    carried = newest_checkpoint(os.path.join(records, CARRIED))
    own = newest_checkpoint(experiment)
    if carried is None or (own is not None and checkpoint_frames(own) >= checkpoint_frames(carried)):
        return False
    if own is not None:
        raise SystemExit(f"{experiment} stops at {checkpoint_frames(own):,} frames, but "
                         f"{records} carries the run at {checkpoint_frames(carried):,} (another "
                         "machine took it further): move the folder away to resume from there")
    os.makedirs(os.path.join(experiment, CHECKPOINTS), exist_ok=True)
    for name in RECORD_FILES:
        if os.path.isfile(os.path.join(records, name)):
            shutil.copy2(os.path.join(records, name), os.path.join(experiment, name))
    copy_atomically(carried, os.path.join(experiment, CHECKPOINTS, os.path.basename(carried)))
    log.info("Rebuilt %s from %s (checkpoint %s)", experiment, records, os.path.basename(carried))
    return True


def main(argv: list[str]) -> int:
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("--env", default=ENV)
    own.add_argument("--seed", default=None)
    own.add_argument("--minutes", type=float, default=None)
    own.add_argument("--curve", default=None)
    own.add_argument("--curve_every", type=float, default=10.0)
    own.add_argument("--full_action_space", type=str2bool, default=True)
    own.add_argument("--frames", type=float, default=None)
    own.add_argument("--resume", action="store_true")
    own.add_argument("--records", default=None)
    own.add_argument("--keep", action="store_true")
    mine, rest = own.parse_known_args(argv)
    if mine.keep and mine.records is None:
        raise SystemExit("--keep needs --records DIR (where to keep the run's records)")
    seed = mine.seed if mine.seed is not None else "0"
    seed_args = [f"--seed={mine.seed}"] if mine.seed is not None else []
    budget = [f"--train_for_seconds={int(mine.minutes * 60)}"] if mine.minutes else []
    if mine.frames is not None:
        budget.append(f"--train_for_env_steps={int(mine.frames)}")

    if mine.env.lower().startswith("ale:"):
        rom = ale_rom_id(mine.env.split(":", 1)[1])
        env = f"ale_{rom}"
        register_env(env, make_ale)
        restart = "resume" if mine.resume else "overwrite"
        args = [f"--env={env}", *ALE_SETTINGS, f"--restart_behavior={restart}",
                f"--experiment=appo_ale_{rom}_seed{seed}",
                *seed_args, *budget, *rest]
        parser, partial = parse_sf_args(argv=args)
        from sf_examples.atari.atari_params import atari_override_defaults

        atari_override_defaults(partial.env, parser)
        parser.add_argument("--full_action_space", type=str2bool, default=True)
        parser.set_defaults(full_action_space=mine.full_action_space,
                            env_frameskip=ALE_FRAMESKIP, env_framestack=ALE_FRAMESTACK)
    else:
        register_env(ENV, make_breakout)
        args = [*SETTINGS, f"--experiment=appo_breakout_seed{seed}", f"--env={mine.env}",
                *seed_args, *budget, *rest]
        parser, _ = parse_sf_args(argv=args)
    cfg = parse_full_cfg(parser, args)
    experiment = experiment_dir(cfg=cfg)  # --train_dir and the experiment name: never the saved
    if mine.keep:  # no training: keep what a killed run left in its experiment folder
        if not os.path.isfile(os.path.join(experiment, "curve.csv")):  # SF makes the folder
            raise SystemExit(f"no run in {experiment} (no curve.csv): check --train_dir, --env "
                             "and --seed")
        budget_frames = (int(mine.frames) if mine.frames is not None
                         else saved_budget(experiment, int(cfg.train_for_env_steps)))
        keep_records(experiment, mine.records, curve_frames(experiment) >= budget_frames)
        return 0
    if mine.resume and mine.records is not None:
        restore_experiment(mine.records, experiment)
    if mine.resume and (own := newest_checkpoint(experiment)) is not None:
        refuse_unloadable_checkpoint(own)
        trim_curves(experiment, checkpoint_frames(own))

    cfg, runner = make_runner(cfg)  # on --resume: the saved config, with this command's args
    budget_frames = int(cfg.train_for_env_steps)
    curve = Curve(mine.curve, mine.curve_every, resume=mine.resume)
    runner.register_observer(curve)
    runner.register_episodic_stats_handler(curve.episode)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, ask_stop)
    status = runner.init()
    if status == ExperimentStatus.SUCCESS:
        status = runner.run()
    if mine.records is not None:  # done: the frames spent, or the minutes (nothing to resume)
        done = curve.frames >= budget_frames or (
            mine.minutes is not None and curve.wall() >= mine.minutes * 60)
        keep_records(experiment, mine.records, done)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
