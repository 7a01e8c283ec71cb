"""Busy processes for contended benchmarks: ``flocksim bench --background-load K``.

A laptop that runs flocksim also runs a browser, a notebook, an IDE. :class:`BackgroundLoad`
starts K processes that each keep one core busy with a pure Python loop (no I/O, no memory
traffic to speak of), before the timing, and stops them when its ``with`` block ends, also when
the block raises or is interrupted (Ctrl-C): they ignore SIGINT themselves, are terminated, then
killed if they do not go, and are daemons, so they also end with the benchmark's process.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from types import TracebackType

MAX_BACKGROUND_LOAD = 64
"""Most busy processes one benchmark may start."""
STOP_TIMEOUT_S = 5.0
"""How long a busy process gets to end after SIGTERM before it is killed [s]."""


def check_background_load(k: object) -> int:
    """``k`` as an int in 0..MAX_BACKGROUND_LOAD; ValueError naming ``--background-load`` otherwise."""
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_BACKGROUND_LOAD:
        raise ValueError(f"--background-load: must be an integer from 0 to {MAX_BACKGROUND_LOAD}, got {k!r}")
    return k


def spin() -> None:
    """Keep one core busy until terminated (SIGINT is left to the parent, which stops us)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    x = 0
    while True:
        x += 1


class BackgroundLoad:
    """``with BackgroundLoad(k) as load:`` runs k busy processes (``load.pids``) inside the block."""

    def __init__(self, k: int):
        self.k = check_background_load(k)
        self.processes: list[multiprocessing.Process] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes if p.pid is not None]

    def __enter__(self) -> BackgroundLoad:
        # fork: the children run only ``spin`` (no numba, no threads of ours), and start at once
        ctx = multiprocessing.get_context("fork")
        try:
            for _ in range(self.k):
                p = ctx.Process(target=spin, name="flocksim-background-load", daemon=True)
                p.start()
                self.processes.append(p)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while not all(p.is_alive() for p in self.processes) and time.monotonic() < deadline:
                time.sleep(0.01)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Terminate every busy process, kill those still there after :data:`STOP_TIMEOUT_S`, reap all."""
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()
        self.processes = []
