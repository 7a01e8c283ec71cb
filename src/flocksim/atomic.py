"""Atomic file output: write to a temporary file beside the target, then rename it over.

A crash, an exception or Ctrl-C never leaves a half-written file at the target path, and
an existing file there stays intact until the new one is complete.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temporary_beside(path: Path, suffix: str = ".part") -> Path:
    """A new, empty temporary file in ``path``'s directory (hidden, named after it)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    return Path(tmp)


def publish(tmp: Path, path: Path) -> None:
    """Move the finished ``tmp`` over ``path``, with the mode ``open()`` would have given
    (mkstemp creates files readable by the owner only)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


@contextmanager
def atomic_path(path: Path, suffix: str = ".part") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; it replaces ``path`` only if the block
    succeeds, and is removed otherwise."""
    tmp = temporary_beside(path, suffix)
    try:
        yield tmp
        publish(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
