"""Output files that never clobber: what a writer does with the path it was given.

- A regular file, or nothing yet: the output is written to a temporary file beside it and
  renamed over it once complete, so a crash, an exception or Ctrl-C never leaves a
  half-written file there, and an existing file stays intact until the new one is complete
  (it keeps its permission bits; a new file gets those ``open()`` would give).
- A symbolic link: the same, at the file the link points to (the link stays a link). A link
  to a FIFO or a device is written like the FIFO or device.
- A FIFO, a character or block device, a socket, or a path naming a file descriptor
  (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``): written straight into, never
  replaced. Text outputs stream into it as they are produced; outputs that a library writes
  by path (figures, videos, Parquet) are written to a temporary file first and copied in
  once complete, so a failure sends nothing.
- ``-``: standard output, for the text outputs that offer it (see :func:`check_output`).
- A regular file in a directory that cannot be written (so no temporary file can sit beside
  it) but that itself can: written in place, as a shell's ``>`` would.

A directory, a symlink loop or a path in a missing or read-only directory is refused by
:func:`check_output` before any work starts, with one line naming the option; so is an
existing file (or a link to one) when the caller passes ``replace=False`` (every ``flocksim``
command does, unless given ``--force``): a result already written is never replaced by
mistake. Writing into a FIFO or device replaces nothing, so it is never refused as existing.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Literal

STDOUT = "-"
"""The path that names standard output."""

_FD_PREFIXES = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/")

Kind = Literal["stdout", "file", "stream", "in-place"]


class OutputError(ValueError):
    """An output path that cannot be written: one line naming the option and what is allowed."""


def is_stdout(path: str | Path | None) -> bool:
    return path is not None and str(path) == STDOUT


def _names_a_descriptor(path: Path) -> bool:
    """True for /dev/stdout, /dev/fd/N, /proc/<pid>/fd/N and links whose chain passes through them."""
    current = Path(os.path.abspath(path))
    for _ in range(40):
        text = str(current)
        if text.startswith(_FD_PREFIXES) or (text.startswith("/proc/") and "/fd/" in text):
            return True
        if not current.is_symlink():
            return False
        current = Path(os.path.abspath(current.parent / os.readlink(current)))
    return False


def resolve(path: str | Path) -> tuple[Kind, Path]:
    """How ``path`` is written and the path actually written: ("stdout", -), ("stream", path)
    for a FIFO, device or descriptor, ("file", target) for a regular file or a new one
    (target: the end of any symlink chain), ("in-place", target) for an existing regular file
    whose directory is read-only. Raises :class:`OutputError` for a directory or a link loop."""
    if is_stdout(path):
        return "stdout", Path(STDOUT)
    path = Path(path)
    if _names_a_descriptor(path):
        return "stream", path
    target = Path(os.path.realpath(path))
    if target.is_symlink():  # realpath gives up inside a loop
        raise OutputError(f"{path}: a loop of symbolic links; allowed: a file path")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return "file", target
    except OSError as exc:
        raise OutputError(f"{path}: cannot be examined ({exc.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{path} is a directory; allowed: a file path in an existing directory")
    if not stat.S_ISREG(info.st_mode):
        return "stream", path
    if not os.access(target.parent, os.W_OK | os.X_OK) and os.access(target, os.W_OK):
        return "in-place", target
    return "file", target


def check_output(option: str, path: str | Path | None, stdout_ok: bool = False, replace: bool = True) -> None:
    """Refuse, before any work starts, an output that cannot be written: ``-`` where standard
    output is not offered, a directory, a link loop, a missing or read-only directory, a
    read-only FIFO or device, and (with ``replace=False``) an existing regular file or a link
    to one. One line naming ``option``; :class:`OutputError`."""
    if path is None:
        return
    if is_stdout(path):
        if not stdout_ok:
            raise OutputError(f"{option}: '-' (standard output) is not offered here; allowed: a file path")
        return
    try:
        kind, target = resolve(path)
    except OutputError as exc:
        raise OutputError(f"{option}: {exc}") from None
    if kind == "stream":
        if not os.access(path, os.W_OK):
            raise OutputError(f"{option}: {path} is not writable")
        return
    if not replace and kind in ("file", "in-place") and os.path.lexists(target):
        where = f" (a link to {target})" if os.path.islink(path) else ""
        raise OutputError(f"{option}: {path} already exists{where}; allowed: --force to replace it, or another path")
    if kind == "in-place":
        return
    folder = target.parent
    if not folder.is_dir():
        raise OutputError(f"{option}: directory {folder} does not exist; allowed: a file path in an existing directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{option}: directory {folder} is not writable")


def _mode_for(target: Path) -> int:
    """Permission bits for the new file: those of the file it replaces, else what ``open()`` gives."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class PendingFile:
    """A temporary file that becomes ``path`` on :meth:`commit` (see the module docstring for
    what that means for links, FIFOs and devices) or disappears on :meth:`discard`. Write it
    by its name, :attr:`tmp`."""

    def __init__(self, path: str | Path, suffix: str = ".part"):
        if is_stdout(path):
            raise OutputError("'-' (standard output) is not offered for this output; allowed: a file path")
        self.path = Path(path)
        self.kind, self.target = resolve(self.path)
        folder = self.target.parent if self.kind == "file" else None  # beside it, so the rename is atomic
        fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=suffix, dir=folder)
        os.close(fd)
        self.tmp = Path(tmp)

    def commit(self) -> None:
        """Put the finished temporary file in place."""
        try:
            if self.kind == "file":
                os.chmod(self.tmp, _mode_for(self.target))
                os.replace(self.tmp, self.target)
                return
            with open(self.tmp, "rb") as src, open(self.target, "wb") as dst:  # a stream, or in place
                shutil.copyfileobj(src, dst, 2**20)
        finally:
            self.tmp.unlink(missing_ok=True)

    def discard(self) -> None:
        self.tmp.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | Path, suffix: str = ".part") -> Iterator[Path]:
    """Yield a temporary path to write completely; it becomes ``path`` only if the block
    succeeds, and is removed otherwise."""
    pending = PendingFile(path, suffix)
    try:
        yield pending.tmp
        pending.commit()
    finally:
        pending.discard()


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs) -> Iterator[IO]:
    """An open file for ``path``: standard output for ``-`` (left open), the FIFO or device
    itself for a stream (written as it goes), else a temporary file that replaces ``path``
    only if the block succeeds. ``mode`` is "w" or "wb"; ``kwargs`` go to :func:`open`."""
    if is_stdout(path):
        handle = sys.stdout.buffer if "b" in mode else sys.stdout
        yield handle
        handle.flush()
        return
    kind, _target = resolve(path)
    if kind == "stream":
        with open(path, mode, **kwargs) as handle:
            yield handle
        return
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as handle:
        yield handle
