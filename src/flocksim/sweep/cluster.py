"""Checks before a sweep or a fit uses Dask: that a ``--scheduler`` address is a Dask
scheduler that answers in time.

``distributed.Client(address, timeout=...)`` bounds the TCP connect, but not the Dask
handshake that follows it: pointed at a server that accepts the connection and then says
nothing Dask understands (a plain HTTP server, say), it waits forever. :func:`check_scheduler`
asks the address who it is, with one deadline over connect, handshake and answer.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from flocksim.sweep.spec import SweepError

SCHEDULER_TIMEOUT_S = 10.0
"""Seconds a --scheduler address has to connect and answer as a Dask scheduler."""

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
