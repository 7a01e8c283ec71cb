"""One compile of a kernel across processes that share a kernel cache.

numba checks its disk cache when a kernel is first needed and, on a miss, compiles it, so processes
started together on an empty cache (``flocksim compile -j 2``, pytest workers, a Dask cluster's
workers on one machine, two terminals) each compile the same kernels: the same seconds spent
twice, on the same cores. :func:`install` wraps numba's ``Dispatcher.compile`` so that, for
flocksim's kernels only, the cache lookup and the compile that may follow hold an exclusive lock
on a file beside the kernel's cache index, one file per kernel and signature. A process that
finds the lock held waits, then loads what the other process saved (after
:data:`NOTICE_AFTER_S` it says so, once per process, on stderr); after :data:`WAIT_LIMIT_S` it
compiles anyway. The lock is taken inside numba's own compiler lock, so that the threads of one
process never hold file locks in another order than their compiles. A lock the system cannot
give (no ``fcntl``, a read-only cache) is skipped: the kernel compiles as numba would.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # not POSIX: no lock, numba as it is
    fcntl = None

NOTICE_AFTER_S = 2.0
"""Seconds of waiting for another process's compile before one line says so."""
WAIT_LIMIT_S = 1800.0
"""Seconds after which a process compiles a kernel itself rather than wait longer."""
POLL_S = 0.05
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
"""An object's address in a type's text (a function passed as an argument): not part of the key."""

_state = threading.local()
_spoke = False
_original_compile = None


def lock_name(index_name: str, args: tuple, return_type: object) -> str:
    """The lock file's name for a kernel (its cache index's name, ``module.func-LINE.py311.nbi``) and a
    signature: the index's stem and a hash of the signature's text, the same in every process."""
    text = ADDRESS.sub("", repr((tuple(str(a) for a in args), str(return_type))))
    stem = index_name[:-4] if index_name.endswith(".nbi") else index_name
    return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.lock"


def _lock_path(dispatcher, sig) -> str | None:
    """The lock file of ``dispatcher`` compiled for ``sig``; None when no lock is needed or possible:
    not one of flocksim's cached kernels, or already compiled in this process."""
    from numba.core import sigutils

    cache = getattr(dispatcher, "_cache", None)
    impl = getattr(cache, "_impl", None)
    if impl is None or type(getattr(impl, "locator", None)).__name__ != "PackageCacheLocator":
        return None
    args, return_type = sigutils.normalize_signature(sig)
    if dispatcher.overloads.get(tuple(args)) is not None:
        return None
    index_name = cache._cache_file._index_name
    return os.path.join(cache._cache_path, lock_name(index_name, args, return_type))


@contextmanager
def file_lock(path: str, what: str) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block; yields whether it was
    taken (False: the file could not be opened or locked, or :data:`WAIT_LIMIT_S` passed). ``what``:
    the kernel's name, for the line said after :data:`NOTICE_AFTER_S` of waiting."""
    global _spoke
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    try:
        started = time.monotonic()
        taken = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                taken = True
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited > WAIT_LIMIT_S:
                    break
                if waited > NOTICE_AFTER_S and not _spoke:
                    _spoke = True
                    print(
                        f"flocksim: another process is compiling {what} for the same cache; waiting for it",
                        file=sys.stderr,
                        flush=True,
                    )
                time.sleep(POLL_S)
            except OSError:  # a file system without locks
                break
        yield taken
    finally:
        os.close(fd)  # releases the lock


def _compile(self, sig):
    """numba's ``Dispatcher.compile``, the lookup and the compile under the kernel's file lock."""
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        path = _lock_path(self, sig)
        held = getattr(_state, "held", None)
        if held is None:
            held = _state.held = set()
        if path is None or path in held:
            return _original_compile(self, sig)
        with file_lock(path, self.py_func.__qualname__):
            held.add(path)
            try:
                return _original_compile(self, sig)
            finally:
                held.discard(path)


def install() -> bool:
    """Wrap numba's CPU ``Dispatcher.compile`` (once); False where there is no ``fcntl`` or
    ``FLOCKSIM_COMPILE_LOCK=0`` (numba as it is)."""
    global _original_compile
    if fcntl is None or os.environ.get("FLOCKSIM_COMPILE_LOCK", "1") == "0":
        return False
    from numba.core.dispatcher import Dispatcher

    if _original_compile is None:
        _original_compile = Dispatcher.compile
        Dispatcher.compile = _compile
    return True
