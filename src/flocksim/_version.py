"""The installed flocksim's version (``flocksim.__version__``), for the modules that write it into
their outputs without importing the package's public names above them."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("flocksim")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"
