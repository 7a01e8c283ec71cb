"""Video writers that take one RGB frame at a time (nothing is held but the frame in hand).

- :class:`Mp4Writer`: H.264 (libx264, yuv420p) in an MP4 container, through PyAV.
- :class:`GifWriter`: an animated GIF through Pillow's GIF encoder, written frame by frame
  (each frame quantized to its own 256-colour table; GIF delays are whole hundredths of a
  second, so 30 fps plays at 1/0.03 = 33.3 fps).

Both write to a temporary file and put it in place on :meth:`close` (renamed over a file, or
over the file a link points to; copied into a FIFO or device: see :mod:`flocksim.atomic`), so
an interrupted render never leaves a half-written video under the target name.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

from flocksim._extras import require
from flocksim.atomic import PendingFile

VIDEO_SUFFIXES = (".mp4", ".gif")


class Mp4Writer:
    """``write(rgb)`` frames of shape (height, width, 3) uint8; even width and height."""

    def __init__(self, path: str | Path, fps: int, width: int, height: int, crf: int = 20, preset: str = "veryfast"):
        require("video", "flocksim.render.Mp4Writer")
        import av

        if width % 2 or height % 2:
            raise ValueError(f"mp4: width and height must be even for H.264 (yuv420p), got {width}x{height}")
        self.file = PendingFile(path)
        self.fps = int(fps)
        self.width = width
        self.height = height
        self.frames = 0
        self.container = av.open(str(self.file.tmp), mode="w", format="mp4")
        self.stream = self.container.add_stream("libx264", rate=self.fps)
        self.stream.width = width
        self.stream.height = height
        self.stream.pix_fmt = "yuv420p"
        self.stream.time_base = Fraction(1, self.fps)
        self.stream.options = {"crf": str(crf), "preset": preset}
        self._av = av

    def write(self, rgb: np.ndarray) -> None:
        frame = self._av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        frame.pts = self.frames
        frame.time_base = Fraction(1, self.fps)
        for packet in self.stream.encode(frame):
            self.container.mux(packet)
        self.frames += 1

    def close(self) -> None:
        for packet in self.stream.encode(None):
            self.container.mux(packet)
        self.container.close()
        self.file.commit()

    def abort(self) -> None:
        try:
            self.container.close()
        finally:
            self.file.discard()


class GifWriter:
    """``write(rgb)`` frames of shape (height, width, 3) uint8; loops forever."""

    def __init__(self, path: str | Path, fps: int, width: int, height: int):
        self.file = PendingFile(path)
        self.handle = open(self.file.tmp, "wb")  # noqa: SIM115  (closed by close/abort)
        self.delay_ms = max(round(100.0 / fps), 2) * 10  # GIF delays are in 1/100 s; < 2 plays slowly
        self.width = width
        self.height = height
        self.frames = 0

    def write(self, rgb: np.ndarray) -> None:
        from PIL import GifImagePlugin, Image

        image = Image.fromarray(np.ascontiguousarray(rgb), mode="RGB")
        paletted = image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
        if self.frames == 0:
            header, _ = GifImagePlugin.getheader(paletted, info={"loop": 0, "duration": self.delay_ms})
            self.handle.write(b"".join(header))
        for chunk in GifImagePlugin.getdata(paletted, duration=self.delay_ms, include_color_table=True):
            self.handle.write(chunk)
        self.frames += 1

    def close(self) -> None:
        self.handle.write(b";")  # GIF trailer
        self.handle.close()
        self.file.commit()

    def abort(self) -> None:
        self.handle.close()
        self.file.discard()


def open_writer(path: str | Path, fps: int, width: int, height: int):
    """The writer for ``path``'s suffix (.mp4 or .gif)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".mp4":
        return Mp4Writer(path, fps, width, height)
    if suffix == ".gif":
        return GifWriter(path, fps, width, height)
    raise ValueError(f"-o: cannot write {Path(path).name!r}; allowed: a file ending in {', '.join(VIDEO_SUFFIXES)}")
