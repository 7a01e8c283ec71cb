"""The C allocator of a long-lived server (``flocksim serve``): memory that viewers freed goes back
to a steady level (docs/reliability.md, "Long-lived server").

glibc's malloc gives threads that allocate at the same time their own arenas, up to 8 per core,
and keeps the memory freed in each for later use there. Every viewer connection steps its
simulation on a thread of its own, so connections that come and go spread their builds over
more and more arenas, and the memory the server holds crept up wave after wave of clients
(+22 MB over ten waves of ten clients, in use unchanged; measured with ``mallinfo2``). So the
server limits the arenas to :data:`SERVER_ARENAS` (:func:`limit_arenas`, at start, before its
threads run) and hands the pages freed by a connection that ended back to the system
(:func:`release_free_memory`, ``malloc_trim``). Elsewhere (musl, macOS, Windows) both do nothing.
A user's ``MALLOC_ARENA_MAX`` wins.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
from typing import Any

SERVER_ARENAS = 2
"""malloc arenas of ``flocksim serve``: a build at a time (builds are serialised) and the stepping
of the others share them."""
M_ARENA_MAX = -8
"""glibc's mallopt parameter number for the most arenas (malloc.h)."""


def _glibc() -> Any | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def limit_arenas(count: int = SERVER_ARENAS) -> bool:
    """Let glibc's malloc make at most ``count`` arenas from now on (call before threads start);
    False where it cannot (not glibc, or ``MALLOC_ARENA_MAX`` set by the user)."""
    libc = _glibc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(count)))


def release_free_memory() -> bool:
    """Return the memory malloc holds free to the system (glibc ``malloc_trim(0)``, every arena);
    False where there is no such call."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(ctypes.c_size_t(0))
    return True
