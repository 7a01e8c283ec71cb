"""Images a viewer client may name: ``navigation.image`` over the socket names a file the server
was given, never a path on the server.

``flocksim serve --data-dir DIR`` offers the PNG files directly inside DIR (regular files, listed
once at start-up); a client names one by its file name (``"level.png"``). Any other value (a
path, ``..``, a name not in the list, a file that is missing) gets the same one-line error, so
the answer says nothing about the server's files beyond the list it offers; the file itself is
read without blocking and only when it is still a regular file (a FIFO put there later is
refused, not waited on).
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from flocksim.config import AnyParams
from flocksim.viewer.controls import ControlError

IMAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}\.png", re.IGNORECASE)
"""A name the server may offer: a plain file name ending in .png (no folder, no leading dot)."""
MAX_IMAGES = 1000
"""Most images one data folder may offer (the list goes to every client in ``hello``)."""


class ImageLibrary:
    """The images of ``data_dir`` (None: none), by name."""

    def __init__(self, data_dir: Path | str | None = None):
        self.data_dir = None if data_dir is None else Path(data_dir).resolve()
        self.paths: dict[str, Path] = {}
        if self.data_dir is None:
            return
        if not self.data_dir.is_dir():
            raise ValueError(f"--data-dir: {data_dir} is not a folder; allowed: a folder of PNG images")
        for entry in sorted(self.data_dir.iterdir()):
            if not IMAGE_NAME.fullmatch(entry.name):
                continue
            try:
                regular = stat.S_ISREG(entry.stat().st_mode)
            except OSError:
                continue
            if regular:
                self.paths[entry.name] = entry
            if len(self.paths) >= MAX_IMAGES:
                break

    @property
    def names(self) -> list[str]:
        """The names a client may use, sorted."""
        return sorted(self.paths)

    def path_of(self, name: str) -> Path:
        """The server path of an offered image; ControlError naming the offered ones otherwise."""
        path = self.paths.get(name) if isinstance(name, str) else None
        if path is None:
            offered = ", ".join(self.names[:20]) + (", ..." if len(self.paths) > 20 else "")
            allowed = f"one of {offered}" if self.paths else "none (the server was started without --data-dir)"
            raise ControlError(
                f"navigation.image: {str(name)[:80]!r} is not an image this server offers; allowed: {allowed} "
                "(a name, not a path)"
            )
        return path

    def resolve(self, params: AnyParams) -> AnyParams:
        """``params`` as the server builds them: a ``navigation.image`` name replaced by its path.
        Unchanged when the model has no navigation or the field is empty; ControlError for a name
        the server does not offer."""
        nav = getattr(params, "navigation", None)
        if nav is None or not nav.image:
            return params
        path = self.path_of(nav.image)
        return params.model_copy(update={"navigation": nav.model_copy(update={"image": str(path)})})

    def scrub(self, text: str) -> str:
        """``text`` (an error message) with every offered image's server path replaced by its name."""
        for name, path in self.paths.items():
            text = text.replace(str(path), name)
        return text


__all__ = ["IMAGE_NAME", "MAX_IMAGES", "ImageLibrary"]
