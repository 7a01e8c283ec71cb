"""Compile progress for the viewer (docs/protocol.md, ``compiling``).

The first start after an install or an update compiles the numba kernels (20 to 55 s a scene on
a quiet two-core machine, ``flocksim/compile_estimates.json``) before the flock moves.
:class:`CompileTracker` listens to numba's compile events (``numba:compile``, sent for every
kernel compiled, not for one loaded from the cache) in every thread of the process (registered
as the one-line notice of :mod:`flocksim.compile_notice` is);
:func:`report_compiling` tells a connection about it twice a second while a compile runs, and once
more when it is over.

A busy stretch starts with the first compile after at least :data:`QUIET_S` seconds without one
and ends :data:`QUIET_S` seconds after the last one ended, so the short gaps between the kernels
of one step do not end it.

What the kernels are compiled for (the scene) and the estimate come from the compiling thread's
notice scope, the one that prints the server's own line; a stretch whose compiles run outside
any scope (a frame packed on another thread, or a busy machine's gap longer than
:data:`QUIET_S` splitting one scene's compile in two) keeps the last scope seen, and a
connection that has seen none names its own scene with the same measured figure
(``report_compiling``'s ``fallback``). The page so never shows an estimate of its own: on a busy
machine it said "1 to 3 minutes" while the server's line said "about 30 s".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from numba.core import event

from flocksim.compile_notice import (
    CompileNotice,
    compile_estimate,
    current_scope,
    describe,
    duration_text,
    kernel_name,
    register_listener,
)

REPORT_INTERVAL_S = 0.5
"""Time between two ``compiling`` messages while a compile runs [s]."""
QUIET_S = 1.0
"""A stretch without compiling this long ends a busy stretch [s]."""


@dataclass(frozen=True)
class CompileStatus:
    """Where compiling stands: ``active`` while a busy stretch lasts; ``kernels`` compiled in the
    stretch so far; ``seconds`` since it began; ``current`` the kernel being compiled ("" when
    none or unknown); ``scene`` what they are compiled for (a preset's name, or the model's
    description; "" when unknown) and ``estimate`` the words the server's own line used for how
    long it takes ("about 50 s", from the measured figures; "" when unknown)."""

    active: bool
    kernels: int
    seconds: float
    current: str
    scene: str = ""
    estimate: str = ""

    def message(self) -> str:
        """The ``compiling`` message (JSON text)."""
        return json.dumps(
            {
                "type": "compiling",
                "active": self.active,
                "kernels": self.kernels,
                "seconds": round(self.seconds, 1),
                "current": self.current,
                "scene": self.scene,
                "estimate": self.estimate,
            }
        )


class CompileTracker(event.Listener):
    """Counts numba compiles in every thread (a numba event listener; thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._running: list[str] = []  # kernels being compiled, innermost last
        self._kernels = 0
        self._began = 0.0
        self._ended: float | None = None  # when the last compile ended (None: never)
        self._scope: CompileNotice | None = None  # the compiling thread's notice: what compiles

    def _quiet(self, now: float) -> bool:
        """Whether no busy stretch is on at ``now`` (call with the lock held)."""
        return not self._running and (self._ended is None or now - self._ended >= QUIET_S)

    def on_start(self, ev: event.Event) -> None:
        now = self._clock()
        scope = current_scope()  # this runs in the compiling thread
        with self._lock:
            if self._quiet(now):
                self._began, self._kernels = now, 0  # a new busy stretch (the last scope stays until another)
            if scope is not None:
                self._scope = scope
            self._running.append(kernel_name(ev.data))

    def on_end(self, ev: event.Event) -> None:
        now = self._clock()
        with self._lock:
            if self._running:
                self._running.pop()
            elif self._quiet(now):
                # the end of a compile that began before this tracker listened (the server's
                # warm-up, say): the stretch begins now, as far as anyone here can tell
                self._began, self._kernels = now, 0
            self._kernels += 1
            self._ended = now

    def status(self) -> CompileStatus:
        now = self._clock()
        with self._lock:
            running = bool(self._running)
            active = running or (self._ended is not None and now - self._ended < QUIET_S)
            end = now if running or self._ended is None else self._ended
            seconds = end - self._began if (running or self._ended is not None) else 0.0
            current = self._running[-1] if running else ""
            scope = self._scope
        scene = scope.what if scope is not None else ""
        estimate = scope.duration if scope is not None else ""  # "" until the scope has announced
        return CompileStatus(active, self._kernels, max(seconds, 0.0), current, scene, estimate)


def scene_estimate(params: Any, preset: str | None) -> tuple[str, str]:
    """(scene, estimate) for a ``compiling`` message about ``params`` (the preset ``preset``, or
    none): the name and the "about ..." words the server's own line gives them
    (:func:`flocksim.compile_notice.notice_line`), from the same measured figures."""
    name = preset if preset else describe(params)
    return name, duration_text(compile_estimate(params, preset))


_tracker: CompileTracker | None = None
_tracker_lock = threading.Lock()


def tracker() -> CompileTracker:
    """The process's tracker, registered with numba on first use."""
    global _tracker
    with _tracker_lock:
        if _tracker is None:
            _tracker = CompileTracker()
            register_listener(_tracker)
        return _tracker


async def report_compiling(
    send: Callable[[str], Awaitable[None]],
    interval: float = REPORT_INTERVAL_S,
    fallback: Callable[[], tuple[str, str]] | None = None,
    source: CompileTracker | None = None,
) -> None:
    """Send ``compiling`` messages with ``send`` every ``interval`` seconds while a compile runs,
    and one with ``active: false`` when it is over; runs until cancelled. ``fallback()``: (scene,
    estimate) of the connection's own scene, for a compile no notice scope has named yet (the
    estimate in the words of the server's line, :func:`scene_estimate`). ``source``: the tracker
    (default: the process's)."""
    source = source if source is not None else tracker()
    was_active = False
    while True:
        status = source.status()
        if status.active and not status.scene and fallback is not None:
            with contextlib.suppress(Exception):  # a message must never fail for want of a name
                scene, estimate = fallback()
                status = dataclasses.replace(status, scene=scene, estimate=estimate)
        if status.active or was_active:
            await send(status.message())
        was_active = status.active
        await asyncio.sleep(interval)


__all__ = [
    "QUIET_S",
    "REPORT_INTERVAL_S",
    "CompileStatus",
    "CompileTracker",
    "report_compiling",
    "scene_estimate",
    "tracker",
]
