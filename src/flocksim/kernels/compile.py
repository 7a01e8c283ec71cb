"""How kernel functions are compiled for the CPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numba

from flocksim._numba_cache import configure

configure()  # before any function of the package is compiled with cache=True
F = TypeVar("F", bound=Callable)


def device(fn: F) -> F:
    """Compile a scalar kernel function with numba for the CPU, inlined into its callers.

    Inlined at numba's IR level: a call between separately compiled numba functions
    passes every array as several scalars, which costs more than a small per-pair
    function's body (measured: 3x on the k-nearest search). No fastmath: results
    must not depend on instruction scheduling, so that fast paths can be compared
    bitwise with the reference. The plain Python function stays available as
    ``.py_func`` for other back ends.
    """
    return numba.njit(cache=True, nogil=True, inline="always")(fn)  # type: ignore[return-value]


def block_device(fn: F) -> F:
    """A per-cell function that takes tuples of arrays: compiled as a call, not inlined
    (numba's IR inliner crashes on such functions inside parallel loops)."""
    return numba.njit(cache=True, nogil=True)(fn)  # type: ignore[return-value]
