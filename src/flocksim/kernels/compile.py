"""How kernel functions are compiled for the CPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numba

from flocksim._numba_cache import configure

configure()  # before any function of the package is compiled with cache=True
F = TypeVar("F", bound=Callable)


def device(fn: F) -> F:
    """Compile a scalar kernel function with numba for the CPU.

    No fastmath: results must not depend on instruction scheduling, so that
    fast paths can be compared bitwise with the reference. The plain Python
    function stays available as ``.py_func`` for other back ends.
    """
    return numba.njit(cache=True, nogil=True)(fn)  # type: ignore[return-value]
