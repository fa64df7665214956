"""Video files through imageio: H.264 mp4 with imageio-ffmpeg (its own ffmpeg binary), GIF
(Pillow) otherwise or when asked for."""

from __future__ import annotations

import errno
import importlib.util
import os
from pathlib import Path

import numpy as np

from gdi.atomic import StorageError, probe_writable, why_not_writable

VIDEO_SUFFIXES = (".mp4", ".gif")


def has_mp4_encoder() -> bool:
    return importlib.util.find_spec("imageio_ffmpeg") is not None


def video_path(path: str | os.PathLike) -> tuple[Path, str | None]:
    """The file a video asked for as ``path`` is written to, and a note when it differs: an
    ``.mp4`` becomes a ``.gif`` beside it when imageio-ffmpeg is not installed. ValueError for
    any other suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ValueError(f"video file must end in .mp4 or .gif, got {str(path)!r}")
    if suffix == ".mp4" and not has_mp4_encoder():
        gif = path.with_suffix(".gif")
        return gif, (f"no mp4 encoder (pip install imageio-ffmpeg): writing {gif} instead "
                     f"of {path}")
    return path, None


def check_writable(path: str | os.PathLike) -> None:
    """A ValueError of one line unless a video can be written at ``path``: its folder made
    (with any missing parents) and a file created there (then removed) or, if one is there,
    opened for writing. Tried before any episode is played, so that a folder that cannot be
    written is said at once rather than as a traceback once the episodes are played."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        if path.exists():
            with open(path, "r+b"):
                pass
        else:
            with open(path, "xb"):
                pass
            path.unlink()
        probe_writable(path.parent, "the video")  # room for it, not only a name
    except StorageError as err:
        raise ValueError(f"{err}; choose another --video path") from None
    except OSError as err:
        reason = f"{path} is a folder" if isinstance(err, IsADirectoryError) else \
            why_not_writable(path, err)
        raise ValueError(f"cannot write the video {path}: {reason}; choose another --video "
                         "path") from None


class VideoWriter:
    """Append ``uint8 [H, W, 3]`` frames of one size; ``close()`` finishes the file. mp4 frames
    stream to ffmpeg as they come; GIF frames are kept until ``close()`` (Pillow writes a GIF
    in one call)."""

    def __init__(self, path: str | os.PathLike, fps: float) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() not in VIDEO_SUFFIXES:
            raise ValueError(f"video file must end in .mp4 or .gif, got {str(self.path)!r}")
        if not fps > 0:
            raise ValueError(f"fps must be positive, got {fps!r}")
        self.fps = float(fps)
        self.frames = 0
        self._gif: list[np.ndarray] = []
        self._mp4 = None
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, frame: np.ndarray) -> None:
        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        if self.path.suffix.lower() == ".gif":
            self._gif.append(frame)
        else:
            if self._mp4 is None:
                import imageio.v2 as imageio

                # macro_block_size 2: frames are captioned to even sizes, which yuv420p needs;
                # the default (16) would rescale them.
                self._mp4 = imageio.get_writer(
                    self.path, format="FFMPEG", fps=self.fps, codec="libx264", quality=7,
                    pixelformat="yuv420p", macro_block_size=2,
                )
            self._mp4.append_data(frame)
        self.frames += 1

    def close(self) -> Path:
        if self.frames == 0:
            raise ValueError(f"no frames to write to {self.path}")
        if self._mp4 is not None:
            self._mp4.close()
        elif self._gif:
            import imageio.v3 as iio

            # GIF delays are in hundredths of a second: 1000/fps ms rounds to that grid.
            iio.imwrite(self.path, np.stack(self._gif), extension=".gif",
                        duration=1000.0 / self.fps, loop=0)
            self._gif = []
        return self.path
