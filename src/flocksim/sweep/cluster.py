"""Checks before a sweep or a fit uses Dask: that a ``--scheduler`` address is a Dask
scheduler that answers in time, and how many worker processes a local cluster may start.

``distributed.Client(address, timeout=...)`` bounds the TCP connect, but not the Dask
handshake that follows it: pointed at a server that accepts the connection and then says
nothing Dask understands (a plain HTTP server, say), it waits forever. :func:`check_scheduler`
asks the address who it is, with one deadline over connect, handshake and answer.

A local cluster gets at most one worker process per usable core (more only queue for the same
cores) and at most one per :data:`WORKER_MEMORY_BYTES` of the memory this process can still
allocate (:func:`flocksim.budgets.memory_headroom`): :func:`local_workers`.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from typing import Any

from flocksim.budgets import memory_headroom
from flocksim.readable import nbytes
from flocksim.sweep.spec import SweepError

SCHEDULER_TIMEOUT_S = 10.0
"""Seconds a --scheduler address has to connect and answer as a Dask scheduler."""

WORKER_MEMORY_BYTES = 768 * 2**20
"""Memory budgeted per local worker process [bytes]: a Dask worker with numba and flocksim loaded,
compiling and running a preset's kernels, peaked at 590-670 MiB (ru_maxrss of boids-2d and
starlings-3d, 50 steps, x86_64)."""

_ALLOWED = "allowed: the address of a running Dask scheduler, e.g. tcp://host:8786"


def _reason(exc: BaseException) -> str:
    """The exception's message on one line, without Python's type name (at most 300 characters)."""
    text = " ".join(str(exc).split()) or "no reason given"
    return text if len(text) <= 300 else text[:297] + "..."


async def _identity(address: str, timeout: float) -> dict[str, Any]:
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def check_scheduler(address: str, timeout: float = SCHEDULER_TIMEOUT_S) -> None:
    """Raise :class:`SweepError` (one line, naming --scheduler) unless a Dask scheduler answers
    at ``address`` within ``timeout`` seconds. Runs on a thread of its own, so it works under a
    running event loop (a notebook) too."""
    outcome: dict[str, Any] = {}

    def probe() -> None:
        try:
            outcome["identity"] = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))
        except BaseException as exc:  # handed to the caller's thread, judged there
            outcome["error"] = exc

    thread = threading.Thread(target=probe, name="flocksim-scheduler-check", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)  # the probe's own deadline ends it; this only guards against a stuck loop
    error = outcome.get("error")
    identity = outcome.get("identity")
    if isinstance(error, ValueError):  # a malformed address or an unknown scheme
        raise SweepError(f"--scheduler: {address!r} is not a Dask address ({_reason(error)}); {_ALLOWED}")
    if isinstance(error, OSError) and not isinstance(error, TimeoutError):
        raise SweepError(f"--scheduler: cannot connect to {address!r} ({_reason(error)}); {_ALLOWED}")
    if thread.is_alive() or isinstance(error, TimeoutError | asyncio.TimeoutError):
        raise SweepError(
            f"--scheduler: nothing at {address!r} answered as a Dask scheduler within {timeout:g} s "
            f"(something may listen there, but it does not speak Dask); {_ALLOWED}"
        )
    if error is not None or not isinstance(identity, dict):
        reason = _reason(error) if error is not None else "an answer that is not Dask's"
        raise SweepError(f"--scheduler: {address!r} does not answer as a Dask scheduler ({reason}); {_ALLOWED}")
    kind = str(identity.get("type") or "server")
    if "Scheduler" not in kind:
        raise SweepError(f"--scheduler: {address!r} is a Dask {kind}, not a scheduler; {_ALLOWED}")


def _cgroup_cpus() -> int | None:
    """Cores granted by the cgroup (v2 ``cpu.max``, rounded up); None where there is no quota."""
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as handle:
            quota, period = handle.read().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max" or not quota.isdigit() or not period.isdigit() or int(period) == 0:
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity, within the cgroup's CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity (macOS, Windows)
        cores = os.cpu_count() or 1
    quota = _cgroup_cpus()
    return max(1, min(cores, quota) if quota is not None else cores)


def local_workers(workers: int | None) -> tuple[int, str | None]:
    """Worker processes for a local cluster, and a line to show when the default was lowered.

    ``workers``: asked for (None: one per usable core). More than the cores or the memory allow
    (see the module) is refused with :class:`SweepError`, naming both limits; the default is
    lowered to what memory allows, with a line saying so."""
    cores = usable_cores()
    room = memory_headroom()
    by_memory = None if room is None else room // WORKER_MEMORY_BYTES
    most = cores if by_memory is None else min(cores, by_memory)
    per_worker = f"about {nbytes(WORKER_MEMORY_BYTES)} per worker process"
    if most < 1:
        raise SweepError(
            f"--workers: this process can still allocate {nbytes(room or 0)} of memory, less than one local "
            f"worker needs ({per_worker}); allowed: free memory first, or --scheduler for a cluster"
        )
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"--workers: {workers!r}; allowed: a whole number from 1 to {most}")
    limits = f"{cores} usable cores" + ("" if room is None else f", {nbytes(room)} of free memory at {per_worker}")
    if workers is not None and workers > most:
        raise SweepError(
            f"--workers: {workers} is more than this machine can run ({limits}); allowed: 1 to {most}, "
            "or --scheduler for a cluster"
        )
    if workers is None and most < cores:
        return most, f"--workers: {most} worker processes, not one per core ({limits})"
    return (workers if workers is not None else cores), None
