"""gdi enjoy's frames and videos: MinAtar in its GUI's colours, the ALE's RGB screen from an
emulator in lockstep with the agent's, Gymnasium's rgb_array, captions, mp4 and GIF files."""

import numpy as np
import pytest

from gdi.cli import main
from gdi.envs import make_vector_env, resolve_env
from gdi.runtime.wiring import train
from gdi.video import encode
from gdi.video.encode import VideoWriter, video_path
from gdi.video.enjoy import enjoy
from gdi.video.frames import caption, minatar_rgb, upscale
from gdi.video.sources import video_env
from tests.runtime.helpers import tiny_config


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("video") / "run"
    return train(tiny_config(frames=400), folder, show_progress=False, tensorboard=False).run_dir


@pytest.mark.parametrize("game", ["breakout", "space_invaders", "seaquest"])
def test_minatar_frames_are_minatars_own_rgb_render(game):
    """Against MinAtar's own renderer (minatar.gym, render_mode="rgb_array", the palette of its
    GUI) on states of a played game."""
    from minatar.gym import BaseEnv

    reference = BaseEnv(game, render_mode="rgb_array")
    reference.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        reference.step(int(rng.integers(6)))
        state = reference.game.state()  # [10, 10, C] bool
        expected = np.round(np.asarray(reference.render()) * 255).astype(np.uint8)
        np.testing.assert_array_equal(minatar_rgb(state.transpose(2, 0, 1)), expected)


def test_a_minatar_cell_shows_its_highest_channel_and_empty_cells_are_black():
    planes = np.zeros((3, 2, 2), dtype=np.uint8)
    planes[0, 0, 0] = planes[2, 0, 0] = 1  # channels 0 and 2 set: channel 2's colour
    planes[1, 1, 1] = 1
    rgb = minatar_rgb(planes)
    import seaborn

    palette = np.round(np.asarray(seaborn.color_palette("cubehelix", 3)) * 255)
    np.testing.assert_array_equal(rgb[0, 0], palette[2])
    np.testing.assert_array_equal(rgb[1, 1], palette[1])
    np.testing.assert_array_equal(rgb[0, 1], [0, 0, 0])


def test_upscale_and_caption():
    frame = np.array([[[1, 2, 3], [4, 5, 6]]], dtype=np.uint8)  # 1 x 2
    big = upscale(frame, 3)
    assert big.shape == (3, 6, 3)
    np.testing.assert_array_equal(big[2, 5], [4, 5, 6])
    np.testing.assert_array_equal(big[0, 2], [1, 2, 3])
    out = caption(np.full((11, 7, 3), 200, np.uint8), ["return 3", "λ: ε=0.1"])
    assert out.shape[0] % 2 == 0 and out.shape[1] == 8
    bar = out.shape[0] - 11 - 1  # the frame sits below the bar (one row of padding at the end)
    assert (out[bar:bar + 11, :7] == 200).all()
    assert out[:bar].max() == 255  # white text on the bar


def test_gif_and_mp4_files_hold_the_frames(tmp_path):
    import imageio.v3 as iio

    frames = [np.full((20, 30, 3), 10 * i, np.uint8) for i in range(12)]
    for name in ("v.gif", "v.mp4"):
        writer = VideoWriter(tmp_path / name, fps=15)
        for frame in frames:
            writer.append(frame)
        path = writer.close()
        read = iio.imread(path)
        assert read.shape[0] == 12 and read.shape[1:3] == (20, 30)
        assert abs(int(read[5].mean()) - 50) <= 3  # lossy mp4: close, not equal


def test_a_video_path_must_be_mp4_or_gif_and_falls_back_to_gif_without_ffmpeg(
        tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"must end in \.mp4 or \.gif, got '.*out\.avi'"):
        video_path(tmp_path / "out.avi")
    assert video_path(tmp_path / "a.mp4") == (tmp_path / "a.mp4", None)
    monkeypatch.setattr(encode, "has_mp4_encoder", lambda: False)
    path, note = video_path(tmp_path / "a.mp4")
    assert path == tmp_path / "a.gif" and "pip install imageio-ffmpeg" in note


def test_the_ale_screen_emulator_plays_the_agents_game_with_sticky_actions():
    """The RGB screen comes from a second emulator in lockstep: over a whole episode of random
    actions with sticky actions on, it never diverges, and the screen, grayscaled and shrunk
    to 84 x 84, is the agent's latest observed frame up to the resize's rounding."""
    config = resolve_env("ale:Pong", repeat_action_probability=0.25)
    source = video_env(config, seed=4)
    try:
        obs, screen = source.reset()
        assert screen.shape == (210, 160, 3)
        rng = np.random.default_rng(1)
        ended = False
        for _ in range(1200):
            obs, _, terminated, truncated, final, screen = source.step(rng.integers(0, 18, 1))
            if terminated[0] or truncated[0]:
                assert final is not None and final.shape == (210, 160, 3)
                ended = True
                break
        assert ended
        for _ in range(30):  # check the correspondence mid-episode, off the reset frame
            obs, *_, screen = source.step(rng.integers(0, 18, 1))
        gray = screen.astype(np.float64) @ [0.299, 0.587, 0.114]
        from PIL import Image

        small = np.asarray(Image.fromarray(gray.astype(np.uint8)).resize((84, 84), Image.BOX))
        agent_frame = obs[0, -1].astype(np.float64)
        assert np.corrcoef(small.ravel(), agent_frame.ravel())[0, 1] > 0.95
    finally:
        source.close()


def test_enjoy_writes_a_captioned_video_of_the_episodes(cartpole_run, tmp_path):
    import imageio.v3 as iio

    result = enjoy(cartpole_run, episodes=2, video=tmp_path / "cart.gif", seed=5)
    assert len(result.returns) == 2 and not result.cut
    assert result.returns == [float(s) for s in result.steps]  # CartPole pays 1 per step
    # The first screen of each episode, then one per step.
    assert result.frames == sum(result.steps) + 2
    video = iio.imread(result.video)
    assert video.shape[0] == result.frames and video.shape[-1] == 3
    assert video.shape[1] > 400  # CartPole's 400-pixel screen below the caption bar


def test_enjoy_without_a_video_plays_what_evaluation_plays(cartpole_run):
    """The same agent, environment seed and sampling seed as a plain loop: equal returns."""
    import gdi

    result = enjoy(cartpole_run, episodes=1, seed=9)
    agent = gdi.load_agent(cartpole_run, seed=9)
    env = make_vector_env(agent.env_config, 1, seed=9)
    obs, _ = env.reset()
    agent.reset(env)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(agent.act(obs))
        agent.observe(reward, terminated, truncated)
        total += float(reward[0])
        done = bool(terminated[0] or truncated[0])
    assert result.returns == [total]


def test_enjoy_on_minatar_draws_the_palette(tmp_path):
    import imageio.v3 as iio

    run = train(tiny_config(env="minatar:breakout", frames=200), tmp_path / "run",
                show_progress=False, tensorboard=False).run_dir
    result = enjoy(run, episodes=1, video=tmp_path / "b.mp4", max_steps=40)
    assert result.video == tmp_path / "b.mp4" and result.frames >= 2
    frame = iio.imread(result.video)[1]
    assert frame.shape[0] >= 320 and frame.shape[1] == 320  # 10 x 10 cells of 32 pixels


def test_enjoy_with_a_bad_video_name_is_one_line(cartpole_run, capsys):
    with pytest.raises(SystemExit):
        main(["enjoy", str(cartpole_run), "--video", "out.avi"])
    err = capsys.readouterr().err.strip()
    assert "must end in .mp4 or .gif" in err and len(err.splitlines()) == 1


def test_report_embeds_a_video_of_the_last_evaluations_network(cartpole_run, tmp_path):
    import imageio.v3 as iio

    from gdi.evaluation.report import write_report
    from gdi.evaluation.report_video import evaluated_checkpoint
    from gdi.runtime.run_folder.checkpoint import checkpoint_name
    from gdi.scores import load_run

    run = load_run(cartpole_run)
    checkpoint, note = evaluated_checkpoint(run)
    assert checkpoint.name == checkpoint_name(run.final.frames) and note == ""
    report = write_report([cartpole_run], tmp_path / "report", reps=50, video=True)
    text = report.markdown.read_text()
    gif = tmp_path / "report" / f"video_{run.name}.gif"
    assert "## Videos" in text and f"![{run.name}]({gif.name})" in text
    assert checkpoint.name in text and iio.imread(gif).shape[0] >= 2
    assert gif in report.files


def test_enjoy_into_a_place_it_cannot_write_is_one_line_before_playing(
        cartpole_run, tmp_path, capsys):
    from tests.runtime.helpers import one_line_error

    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    for video, why in [
        ("/proc/out.gif", "/proc takes no new files"),
        ("/proc/out.mp4", "/proc takes no new files"),
        (str(a_file / "out.mp4"), f"{a_file} is a file, not a folder"),
        (str(a_file / "sub" / "out.gif"), f"{a_file} is a file, not a folder"),  # missing subfolder
        (str(tmp_path), "must end in .mp4 or .gif"),
    ]:
        err = one_line_error(["enjoy", str(cartpole_run), "--video", video], capsys)
        assert why in err, err
        assert "episode 1" not in capsys.readouterr().out  # refused before playing
    assert a_file.read_text() == "not a folder"
    # A missing subfolder of a writable folder is made.
    main(["enjoy", str(cartpole_run), "--video", str(tmp_path / "new" / "sub" / "out.gif"),
          "--max-steps", "5"])
    assert (tmp_path / "new" / "sub" / "out.gif").stat().st_size > 0


@pytest.mark.skipif(__import__("os").geteuid() == 0, reason="root writes into read-only folders")
def test_enjoy_into_a_really_read_only_folder_is_one_line(cartpole_run, tmp_path, capsys):
    from tests.runtime.helpers import one_line_error

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    for name in ("out.mp4", "out.gif"):
        err = one_line_error(["enjoy", str(cartpole_run), "--video", str(locked / name)],
                             capsys)
        assert f"no permission to write in {locked}" in err


def test_enjoy_takes_allow_foreign_checkpoint_as_its_refusal_says(cartpole_run, tmp_path,
                                                                  capsys):
    from gdi.runtime.run_folder.checkpoint import latest_checkpoint
    from tests.runtime.helpers import one_line_error

    other = train(tiny_config(frames=200, seed=4), tmp_path / "other", show_progress=False,
                  tensorboard=False).run_dir
    foreign = str(latest_checkpoint(other))
    argv = ["enjoy", str(cartpole_run), "--checkpoint", foreign, "--max-steps", "3"]
    assert "pass --allow-foreign-checkpoint" in one_line_error(argv, capsys)
    main([*argv, "--allow-foreign-checkpoint"])
    assert "episode 1: return" in capsys.readouterr().out
