"""Watching an agent: RGB frames of each environment kind, captions, and video files.

Only ``gdi enjoy`` and ``gdi report --video`` import this package; training never renders.

- :mod:`gdi.video.frames`: pure array work (MinAtar's planes in its GUI's colours, nearest
  upscaling, the caption bar with the episode's return and λ).
- :mod:`gdi.video.sources`: one environment for the agent plus its RGB screen, per kind.
- :mod:`gdi.video.encode`: mp4 through imageio-ffmpeg, GIF otherwise.
- :mod:`gdi.video.enjoy`: a run's agent plays episodes into a video.
"""
