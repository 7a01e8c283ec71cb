"""The viewer's worker-thread plumbing: the measured step rate and the process-wide engine locks.

:class:`StepRate` is status value 4 (steps over the last :data:`RATE_WINDOW` seconds).
:func:`engine_guard` serialises simulation work across sessions under numba's ``workqueue``
threading layer, which must not be entered from two threads at once; :data:`BUILD_LOCK` lets one
session build a simulation at a time, so the memory peak of a build is not multiplied by the
connections.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from typing import Any

RATE_WINDOW = 1.0
"""Window of the measured step rate [s]."""

ENGINE_LOCK = threading.Lock()
BUILD_LOCK = threading.Lock()
"""Held while a session builds a simulation: one build at a time in the process."""


def engine_guard() -> Any:
    """The process-wide lock under numba's workqueue layer (or before any parallel kernel ran,
    when the layer is not known yet); a no-op under the thread-safe omp and tbb layers."""
    from flocksim._threading import layer_in_use

    return ENGINE_LOCK if layer_in_use() in ("workqueue", "none") else contextlib.nullcontext()


class StepRate:
    """Steps per second over the last :data:`RATE_WINDOW` seconds (at least the last two steps).
    Thread-safe: the worker ticks, the event loop clears."""

    def __init__(self) -> None:
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._times.clear()

    def tick(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._times.append(now)
            while len(self._times) > 2 and now - self._times[0] > RATE_WINDOW:
                self._times.popleft()

    @property
    def rate(self) -> float:
        """[steps/s]; 0 before two steps."""
        with self._lock:
            if len(self._times) < 2:
                return 0.0
            span = self._times[-1] - self._times[0]
            return (len(self._times) - 1) / span if span > 0 else 0.0


__all__ = ["BUILD_LOCK", "ENGINE_LOCK", "RATE_WINDOW", "StepRate", "engine_guard"]
