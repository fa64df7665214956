"""``gdi enjoy``: a run's agent plays episodes on one environment, optionally into a video
whose every frame shows the episode, its return so far and its λ."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gdi.run_files import LATEST, POPULATION
from gdi.runtime import seeds
from gdi.video.encode import VideoWriter, check_writable, video_path
from gdi.video.frames import caption, format_lambda, scale_for, upscale
from gdi.video.sources import video_env


@dataclass
class EnjoyResult:
    """Per episode: return, agent steps and λ; the video written (or None) and its frames."""

    returns: list[float] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    lambdas: list[list[float]] = field(default_factory=list)
    video: Path | None = None
    frames: int = 0
    note: str | None = None
    """Set when the video went elsewhere than asked (a GIF for want of an mp4 encoder)."""
    cut: bool = False
    """True when ``max_steps`` ended the last episode early."""


def enjoy(
    run_dir: str | os.PathLike,
    episodes: int = 1,
    video: str | os.PathLike | None = None,
    policy: str = POPULATION,
    checkpoint: str | os.PathLike = LATEST,
    seed: int | None = None,
    max_steps: int | None = None,
    on_episode: Callable[[int, float], None] | None = None,
    allow_foreign_checkpoint: bool = False,
    fixed_lambda: Sequence[float] | None = None,
) -> EnjoyResult:
    """Play ``episodes`` episodes one after another on one environment (seeded by ``seed``,
    default ``gdi.runtime.seeds.video`` of the run's seed, apart from training's and
    evaluation's) and, with
    ``video``, write them as one video. ``max_steps`` caps the agent steps in all (the last
    episode is then cut, and ``result.cut`` says so). ``allow_foreign_checkpoint``: play a
    ``checkpoint`` from outside the run or from another kind of run (refused otherwise).
    ``fixed_lambda``: the λ of every episode, with ``policy="fixed"``."""
    from gdi.agent import load_agent

    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"max_steps must be >= 1 or None, got {max_steps}")
    agent = load_agent(run_dir, checkpoint, policy=policy,
                       allow_foreign_checkpoint=allow_foreign_checkpoint,
                       fixed_lambda=fixed_lambda)
    seed = seeds.video(agent.config.seed) if seed is None else seed
    agent.rng = np.random.default_rng(seed)
    result = EnjoyResult()
    writer = None
    if video is not None:
        path, result.note = video_path(video)
        check_writable(path)  # before playing: a folder that cannot take it is said at once
    source = video_env(agent.env_config, seed)
    try:
        if video is not None:
            writer = VideoWriter(path, source.fps)
        obs, frame = source.reset()
        agent.reset(source.env)
        factor = scale_for(*frame.shape[:2])
        names = agent.index_names
        title = f"{agent.env_config.spec}  {agent.config.preset}  {agent.frames:,} frames"

        def draw(screen, episode, ret, lam):
            if writer is not None:
                writer.append(caption(upscale(screen, factor), [
                    title,
                    f"episode {episode + 1}/{episodes}  return {ret:g}  ({agent.policy} λ)",
                    format_lambda(lam, names),
                ], font_size=13))

        episode, ret, steps, total = 0, 0.0, 0, 0
        lam = agent.lambdas[0].copy()
        draw(frame, episode, ret, lam)
        while episode < episodes:
            actions = agent.act(obs)
            obs, rewards, terminated, truncated, final, frame = source.step(actions)
            done = bool(agent.observe(rewards, terminated, truncated)[0])
            ret += float(rewards[0])
            steps += 1
            total += 1
            cut = max_steps is not None and total >= max_steps
            if done or cut:
                draw(final if final is not None else frame, episode, ret, lam)
                result.returns.append(ret)
                result.steps.append(steps)
                result.lambdas.append([float(x) for x in lam])
                if on_episode is not None:
                    on_episode(episode, ret)
                episode, ret, steps = episode + 1, 0.0, 0
                lam = agent.lambdas[0].copy()
                if cut:
                    result.cut = not done
                    break
                if episode < episodes:
                    draw(frame, episode, ret, lam)
            else:
                draw(frame, episode, ret, lam)
    finally:
        source.close()
        if writer is not None and writer.frames:
            result.video = writer.close()
            result.frames = writer.frames
    return result
