"""One viewer connection's simulation: stepping in the background, controls, frames (docs/protocol.md).

A :class:`ViewerSession` owns a :class:`~flocksim.simulation.Simulation` built from a preset
and overrides and talks to its client through one ``send`` coroutine (text = JSON, bytes =
frame); the transport (the WebSocket of :mod:`flocksim.viewer.server`, or a test) only feeds
it the client's messages with :meth:`ViewerSession.receive`.

This module holds the session's lifecycle, stepping and frame loop. The handling of the client's
messages is :class:`~flocksim.viewer.session_controls.SessionControls` (the session's base class);
what a change of parameters keeps of the flock, :mod:`flocksim.viewer.carry`; the caps on what a
connection may ask for, :mod:`flocksim.viewer.limits`; the step rate and the engine locks,
:mod:`flocksim.viewer.pacing`. Their public names are importable from here too.

Threads: every operation on the simulation (step, control parsing and validation, copying a
frame's arrays out of it, neighbour count) runs on the session's one worker thread, in submission
order, so none ever sees a half-stepped state and no lock is needed; the event loop only
schedules. A frame is packed (unit headings, polarization, bounding box, quantization) from those
copies on a second thread, the packer, while the worker goes on with the next step. The
numba kernels release the GIL, so serving stays responsive while a flock steps. Under numba's
``workqueue`` threading layer, which must not be entered from two threads at once, all
sessions share one lock around simulation work.

Messages: the transport hands each client message to :meth:`ViewerSession.submit`, which never
waits: messages queue (at most :data:`MAX_QUEUED_MESSAGES`) and are handled one at a time in
arrival order; a message arriving while the queue is full is dropped, and one ``error`` then says
how many were. So the transport keeps reading the socket (and its keep-alive pongs) however slow
the messages are to handle.

Budgets: ``agents.n`` is capped by ``max_agents`` (brute-force search by
:data:`MAX_BRUTE_AGENTS`); a neighbour search may hold at most ``max_pairs`` pairs
(:mod:`flocksim.budgets`), checked when parameters change (the flock the change keeps included)
and at every step; ``navigation.image`` names an image of the server's
:class:`~flocksim.viewer.images.ImageLibrary`, never a path. Simulations are built one at a time
across all sessions, so the memory peak of a build is not multiplied by the connections.

Stepping: at most ``sps`` steps per second (0 = as fast as the engine goes), never bursting
to catch up after a slow step; the measured rate (steps over the last second) is status
value 4. Frames follow pull flow control: one frame per ``next``, of the newest state; while
running, a frame waits until the state has advanced past the last frame sent (never the same
step twice), while paused it is sent at once. Control replies and frames go out in the order
the state changed: a frame encoded after a refill is never sent before its ``params``, and a frame
captured before a change that a ``params`` message announces is not sent after it (it is
captured again). The send lock is held only while sending: a ``state`` reply to ``pause`` or
``resume`` goes out at once, not after the step a frame's capture waits for or the packing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from flocksim.budgets import BudgetError
from flocksim.config import AnyParams, to_dict
from flocksim.simulation import Simulation
from flocksim.viewer.carry import carry_components, carry_over, same_flock  # noqa: F401  (carry_components: re-exported)
from flocksim.viewer.controls import MAX_CONTROL_BYTES, ControlError, error_reply
from flocksim.viewer.game import GameFeed
from flocksim.viewer.images import ImageLibrary
from flocksim.viewer.limits import (
    DEFAULT_MAX_AGENTS,
    DEFAULT_MAX_PAIRS,
    MAX_BRUTE_AGENTS,  # noqa: F401  (re-exported)
    check_agent_cap,
    params_from_query,
)
from flocksim.viewer.modes import ParkedModes, is_modified
from flocksim.viewer.pacing import BUILD_LOCK, RATE_WINDOW, StepRate, engine_guard  # noqa: F401  (RATE_WINDOW: re-exported)
from flocksim.viewer.protocol import FrameParts, capture_frame, pack_frame, status_values
from flocksim.viewer.session_controls import (  # noqa: F401  (MAX_PENDING_NEXT: re-exported)
    MAX_PENDING_NEXT,
    MAX_QUEUED_MESSAGES,
    SELECTED_ID,
    SessionControls,
)

log = logging.getLogger("flocksim.viewer")
T = TypeVar("T")
Send = Callable[[str | bytes], Awaitable[None]]

_engine_guard = engine_guard  # its name before flocksim.viewer.pacing held it

DEFAULT_SPS = 60.0
"""Default step rate [steps/s]: one step per display frame."""
NEIGHBOR_COUNT_INTERVAL = 0.5
"""Shortest time between two neighbour searches for status value 1 (mean neighbours) [s]."""
NEIGHBOR_COUNT_SHARE = 0.1
"""Neighbour searches for the status take at most this share of the worker's time."""


@dataclass(frozen=True)
class Captured:
    """A frame's copies, taken on the worker thread, with what decides whether it is sent."""

    parts: FrameParts
    key: tuple[int, int]  # (generation, step) of the state shown
    version: int  # the session's change count when captured: a frame older than a params message is dropped
    messages: list[str | bytes]  # a game's rocks and score, sent before the frame
    chunks: frozenset[int]  # the rock chunks those messages send (sent again if the frame is dropped)


class ViewerSession(SessionControls):
    """One connection's simulation. ``send``: coroutine that sends a text (JSON) or binary
    (frame) message to the client. ``sps``: most steps per second (0 = unlimited);
    ``max_agents``: cap on ``agents.n``; ``threads``: numba threads per step (None: numba's
    default). Call :meth:`start`, feed messages to :meth:`receive`, and :meth:`close` at the end
    (it stops stepping and drops the simulation)."""

    def __init__(
        self,
        send: Send,
        sps: float = DEFAULT_SPS,
        max_agents: int = DEFAULT_MAX_AGENTS,
        threads: int | None = None,
        max_control_bytes: int = MAX_CONTROL_BYTES,
        engine: str = "cpu",
        max_pairs: int = DEFAULT_MAX_PAIRS,
        images: ImageLibrary | None = None,
    ):
        if not (sps >= 0 and math.isfinite(sps)):
            raise ValueError(f"sps: must be >= 0 and finite (0 = as fast as possible), got {sps!r}")
        self._send_raw = send
        self.sps = float(sps)
        self.max_agents = int(max_agents)
        self.threads = threads
        self.engine = engine  # "cuda": the flock lives on the GPU (docs/gpu.md)
        self.max_control_bytes = int(max_control_bytes)
        self.max_pairs = int(max_pairs)
        self.images = ImageLibrary() if images is None else images
        self.sim: Simulation | None = None
        self.params: AnyParams | None = None  # as the client sees them (image names, not paths)
        self.preset: str | None = None
        self.origin: str | None = None  # the preset the parameters started from (kept through set)
        self.modes = ParkedModes()  # the other 2D/3D mode's simulation, not stepping
        self.paused = False
        self.frame_index = 0
        self.generation = 0  # bumped at every refill
        self.closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flocksim-viewer")
        self._packer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flocksim-viewer-pack")
        self._io = asyncio.Lock()  # one sender at a time, in the order the state changed
        self._changed = asyncio.Event()  # replaced after every set(): wakes frame waiters
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._pending_next = 0
        self._want_frame = asyncio.Event()
        self._last_sent: tuple[int, int] | None = None  # (generation, step) of the last frame
        self._rate = StepRate()
        self._neighbors: tuple[int, float, float] | None = None  # (generation, time, mean)
        self._neighbor_cost = 0.0  # [s] of the last neighbour search
        self._tasks: list[asyncio.Task] = []
        self._jobs: set[asyncio.Future] = set()  # on the worker and the packer, until done
        self._inbox: asyncio.Queue[str | bytes | bytearray | memoryview] = asyncio.Queue(MAX_QUEUED_MESSAGES)
        self._dropped = 0  # messages dropped since the last notice
        self._game = GameFeed()  # Flappy Boids: rock meshes and status sent before each frame
        self._version = 0  # bumped on the worker by every change a params message announces

    # ------------------------------------------------------------------ lifecycle

    async def start(self, params: AnyParams, preset: str | None) -> None:
        """Build the simulation (on the worker thread), send the first ``params`` message and
        start stepping, answering ``next`` and handling submitted messages. Raises ControlError
        or :class:`~flocksim.budgets.BudgetError` (ValueErrors) for parameters over a limit."""
        check_agent_cap(params, self.max_agents)
        await self._work(self._build, self.images.resolve(params))
        self.params = params
        self.preset = self.origin = preset
        await self._send(self.params_message(reset=True))
        if self.closed:
            return
        self._tasks = [
            asyncio.create_task(self._step_loop(), name="flocksim-viewer-step"),
            asyncio.create_task(self._frame_loop(), name="flocksim-viewer-frames"),
            asyncio.create_task(self._inbox_loop(), name="flocksim-viewer-inbox"),
        ]

    def stop(self) -> None:
        """Stop at once, without waiting: no more steps, frames or replies; queued jobs are
        cancelled and the simulation is dropped (the job in flight, if any, holds it until it
        ends). Safe to call from a cancelled task. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self._notify()
        self._resumed.set()
        self._want_frame.set()
        for task in self._tasks:
            task.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._packer.shutdown(wait=False, cancel_futures=True)
        self.sim = None
        self.modes.clear()
        self._neighbors = None

    async def close(self) -> None:
        """:meth:`stop`, then wait until the stepping and frame tasks and the worker thread have
        ended (the job in flight, at most one step, finishes first). It waits on the jobs
        themselves, not in a thread of the event loop's pool: a thread parked there to wait for a
        step stayed in the pool after the client left (a server's threads grew with the number of
        clients that left at once; docs/reliability.md, "Soak: mixed use")."""
        self.stop()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        jobs = list(self._jobs)
        if jobs:  # the one in flight on each thread (stop() cancelled those queued behind it)
            await asyncio.wait(jobs)
        self._executor.shutdown(wait=True)  # their threads end as soon as that job is done
        self._packer.shutdown(wait=True)

    # ------------------------------------------------------------------ messages

    def params_message(self, reset: bool) -> str:
        """The ``params`` message: preset (None after a ``set``), the preset the parameters started
        from and whether they differ from it, model, dim, every parameter, whether the flock was
        refilled, whether stepping is paused, the other modes kept parked."""
        params = self._client_params
        return json.dumps(
            {
                "type": "params",
                "preset": self.preset,
                "origin": self.origin,
                "modified": is_modified(params, self.origin),
                "model": params.model,
                "dim": params.world.dim,
                "params": to_dict(params),
                "reset": bool(reset),
                "paused": self.paused,
                "parked": self.modes.dims,
                "engine": self.engine_info(),
            }
        )

    def engine_info(self) -> dict[str, Any]:
        """What steps the simulation: engine name, CPU threads per step and numba's threading layer
        ("none" before a parallel kernel ran), shown in the page's status bar."""
        if self.engine == "cuda":
            return {"name": "cuda", "threads": None, "layer": None}
        import numba

        from flocksim._threading import layer_in_use

        threads = self.threads if self.threads is not None else numba.config.NUMBA_NUM_THREADS
        return {"name": "cpu", "threads": threads, "layer": layer_in_use()}

    def simulations(self) -> list[Simulation]:
        """The connection's simulations: the one shown, then the parked ones."""
        return ([] if self.sim is None else [self.sim]) + self.modes.simulations()

    def state_message(self) -> str:
        return json.dumps({"type": "state", "paused": self.paused})

    async def send_error(self, message: str) -> None:
        await self._send(error_reply(message))

    # ------------------------------------------------------------------ worker-thread jobs

    @property
    def _sim(self) -> Simulation:
        if self.sim is None:
            raise ControlError("session: closed")
        return self.sim

    def _new_simulation(self, params: AnyParams) -> Simulation:
        """A simulation of ``params``, built while no other session builds one: building (a flow
        field's graph, a large flock) peaks above what the simulation then keeps, and that peak
        is not multiplied by the connections."""
        with BUILD_LOCK, engine_guard():
            return Simulation(params, engine=self.engine, threads=self.threads, max_pairs=self.max_pairs)

    def _build(self, params: AnyParams) -> None:
        sim = self._new_simulation(params)
        if not self.closed:  # stop() may have run meanwhile: then the simulation is not kept
            self.sim = sim
        self.generation += 1
        self._version += 1
        self._rate.clear()

    def _step(self) -> None:
        sim = self._sim
        if self.origin is not None:  # a compile in this step is for the scene (the page names it)
            sim.name_compiles(self.origin)
        with engine_guard():
            sim.step()
        self._rate.tick()
        state = sim.state
        on_gpu = getattr(sim.engine, "state_is_finite", None)  # checked on the GPU: no copy (docs/gpu.md)
        if on_gpu is not None:
            finite = on_gpu(state)
        else:
            finite = np.isfinite(state.position).all() and np.isfinite(state.velocity).all()
        if not finite:
            raise FloatingPointError(f"NaN or inf in the state after step {sim.steps}; reset or change parameters")

    def _mean_neighbors(self, sim: Simulation) -> float:
        """Status value 1. Topological: min(k, alive - 1), exactly what the search finds; metric:
        a neighbour search, redone at most every :data:`NEIGHBOR_COUNT_INTERVAL` seconds and
        at most :data:`NEIGHBOR_COUNT_SHARE` of the time (a search costs ~70 ms at 100 000);
        NaN when that search would hold more than ``max_pairs`` pairs."""
        alive = sim.state.n_alive
        if alive == 0:
            return math.nan
        query = sim.model.neighbor_query()
        if query.mode == "topological":
            return float(min(query.k, alive - 1))
        now = time.monotonic()
        cached = self._neighbors
        wait = max(NEIGHBOR_COUNT_INTERVAL, self._neighbor_cost / NEIGHBOR_COUNT_SHARE)
        if cached is not None and cached[0] == self.generation and now - cached[1] < wait:
            return cached[2]
        try:
            with engine_guard():
                counts = sim.neighbors().counts[sim.state.alive]
        except BudgetError:  # the flock tightened past max_pairs: the step says so; frames go on
            counts = np.zeros(0)
        mean = float(counts.mean()) if len(counts) else math.nan
        self._neighbor_cost = time.monotonic() - now
        self._neighbors = (self.generation, now, mean)
        return mean

    def _capture(self) -> Captured:
        """On the worker thread: copy what the next frame needs (packed on the packer thread, which
        also computes the polarization from the copied velocities)."""
        sim = self._sim
        rate = 0.0 if self.paused else self._rate.rate
        status = status_values(sim, rate, mean_neighbors=self._mean_neighbors(sim), polar=math.nan)
        with engine_guard():
            parts = capture_frame(sim, self.frame_index, selected=SELECTED_ID, status=status, polarize=True)
        messages = self._game.messages(sim, self.generation)
        return Captured(parts, (self.generation, sim.steps), self._version, messages, self._game.last_chunks)

    # ------------------------------------------------------------------ loops

    async def _step_loop(self) -> None:
        period = 1.0 / self.sps if self.sps > 0 else 0.0
        due = time.monotonic()
        while not self.closed:
            if self.paused:
                await self._resumed.wait()
                due = time.monotonic()
                continue
            try:
                await self._work(self._step)
            except Exception as exc:
                if self.closed:  # the executor was shut down under the job
                    return
                if isinstance(exc, BudgetError):  # the flock outgrew a budget: expected, no traceback
                    log.warning("viewer: step stopped: %s", exc)
                else:
                    log.exception("viewer: step failed")
                self.paused = True
                self._resumed.clear()
                self._rate.clear()
                await self.send_error(f"simulation: step failed ({type(exc).__name__}: {exc}); paused")
                await self._send(self.state_message())
            self._notify()
            if period:
                due += period
                now = time.monotonic()
                if due > now:
                    await asyncio.sleep(due - now)
                else:  # late: do not burst to catch up
                    due = now
                    await asyncio.sleep(0)
            else:
                await asyncio.sleep(0)  # let a frame request in between two steps

    async def _frame_loop(self) -> None:
        while not self.closed:
            await self._want_frame.wait()
            if self.closed:
                return
            changed = self._changed
            if not self.paused and self._last_sent == self._state_key():
                await changed.wait()  # running: wait until the state moves past the last frame
                continue
            # Captured and packed without the send lock: a control's reply (state, error) goes out
            # meanwhile instead of waiting for the step the capture waits behind and the packing.
            try:
                captured = await self._work(self._capture)
                # packed beside the next step (the worker steps on): it reads only the copies
                packing = asyncio.get_running_loop().run_in_executor(self._packer, pack_frame, captured.parts)
                frame = await self._tracked(packing)
            except Exception as exc:
                if self.closed:
                    return
                log.exception("viewer: frame encoding failed")
                await self._send(error_reply(f"frame: encoding failed ({type(exc).__name__}: {exc})"))
                self._pending_next = 0
                self._want_frame.clear()
                continue
            async with self._io:  # held only to send
                if self.closed:
                    return
                if captured.version != self._version:
                    # a set, preset, reset or mode change ran after the capture and its params went
                    # out first: this frame shows the state before it; capture again (same index)
                    self._game.forget(captured.key[0], captured.chunks)  # no capture runs now (only this loop asks)
                    continue
                self.frame_index += 1
                self._last_sent = captured.key
                self._pending_next = max(self._pending_next - 1, 0)
                if self._pending_next == 0:
                    self._want_frame.clear()
                for message in captured.messages:  # a game's rocks and score come before its frame
                    await self._send_now(message)
                await self._send_now(frame)

    def _state_key(self) -> tuple[int, int] | None:
        sim = self.sim
        return None if sim is None else (self.generation, sim.steps)

    def _notify(self) -> None:
        """Wake everything waiting for a state change (a step, a control, pause, close)."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    # ------------------------------------------------------------------ plumbing

    async def _work(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the session's worker thread, after the jobs already queued."""
        if self.closed:
            raise ControlError("session: closed")
        return await self._tracked(asyncio.get_running_loop().run_in_executor(self._executor, fn, *args))

    def _tracked(self, job: asyncio.Future[T]) -> asyncio.Future[T]:
        """``job`` (on the worker or the packer), kept in ``_jobs`` until it is done: :meth:`close` waits for it."""
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)
        return job

    async def _send(self, message: str | bytes) -> None:
        async with self._io:
            await self._send_now(message)

    async def _send_now(self, message: str | bytes) -> None:
        """Send while holding ``self._io``."""
        if not self.closed:
            await self._send_raw(message)


__all__ = [
    "DEFAULT_MAX_AGENTS",
    "DEFAULT_MAX_PAIRS",
    "DEFAULT_SPS",
    "MAX_QUEUED_MESSAGES",
    "SELECTED_ID",
    "StepRate",
    "ViewerSession",
    "carry_over",
    "check_agent_cap",
    "params_from_query",
    "same_flock",
]
