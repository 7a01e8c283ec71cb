"""Offline rendering of recorded runs into video (see :func:`render_run`)."""

from __future__ import annotations

from flocksim.render.camera import Camera, CameraError, View, parse_camera
from flocksim.render.movie import COLOR_MODES, RenderError, RenderReport, parse_size, render_run
from flocksim.render.writers import GifWriter, Mp4Writer, open_writer

__all__ = [
    "COLOR_MODES",
    "Camera",
    "CameraError",
    "GifWriter",
    "Mp4Writer",
    "RenderError",
    "RenderReport",
    "View",
    "open_writer",
    "parse_camera",
    "parse_size",
    "render_run",
]
