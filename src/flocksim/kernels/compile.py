"""How kernel functions are compiled for the CPU."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TypeVar

import numba
from numba.np.ufunc.parallel import _launch_threads

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


hot_device = device
"""Alias kept for call sites that mark per-pair functions explicitly."""


class AgentLoop:
    """A driver kernel compiled twice: parallel over agents (prange across threads) and
    serial (prange as range). Small flocks run serially, where starting a parallel
    region costs more than the work; both versions do the same per-agent arithmetic,
    so the choice never changes a result."""

    def __init__(self, fn: Callable):
        self.parallel = numba.njit(parallel=True, cache=True)(fn)
        self._serial = numba.njit(cache=True)(_renamed(fn, "_serial"))
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __call__(self, *args):
        return self.parallel(*args)

    @property
    def serial(self):
        # the serial version still calls numba.get_thread_id(), which needs the threading
        # layer started; a serial function loaded from the on-disk cache does not start it
        _launch_threads()
        return self._serial


def _renamed(fn: Callable, suffix: str) -> Callable:
    """A copy of fn with its own name, so numba's on-disk cache keeps both versions apart."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


def agent_loop(fn: Callable) -> AgentLoop:
    """Decorator: see :class:`AgentLoop`."""
    return AgentLoop(fn)
