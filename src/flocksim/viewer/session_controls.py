"""How a client's messages change a viewer session: the inbox, parsing, and one handler per control.

:class:`SessionControls` is the part of :class:`~flocksim.viewer.session.ViewerSession` that
handles the client's messages (docs/protocol.md): :meth:`~SessionControls.submit` queues them
without waiting, the inbox loop hands them one at a time to :meth:`~SessionControls.receive`,
which parses and validates each (on the worker thread when it builds parameters) and applies it:
``next`` asks for a frame, ``pause``/``resume`` hold stepping, ``set``/``preset``/``reset``
rebuild the simulation (keeping the flock where :func:`~flocksim.viewer.carry.same_flock`
allows), ``mode`` switches between the parked 2D and 3D simulations, and ``turn``, ``wave``,
``pointer``, ``view`` and ``steer`` act on the simulation. The frame loop, stepping and the
lifecycle stay in :mod:`flocksim.viewer.session`, whose state (the worker, the send lock, the
change count) these handlers read and change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from flocksim.config import AnyParams
from flocksim.simulation import Simulation
from flocksim.viewer.carry import carry_over, carry_pointer, same_flock
from flocksim.viewer.controls import (
    ControlError,
    ModeControl,
    NextControl,
    PauseControl,
    PointerControl,
    PresetControl,
    ResetControl,
    ResumeControl,
    SetControl,
    SteerControl,
    TurnControl,
    ViewControl,
    WaveControl,
    builds_parameters,
    parse_control,
)
from flocksim.viewer.game import steer_game
from flocksim.viewer.limits import check_agent_cap
from flocksim.viewer.modes import Parked, mode_params
from flocksim.viewer.pacing import engine_guard
from flocksim.viewer.scenes import check_mode
from flocksim.viewer.waves import schedule_wave

if TYPE_CHECKING:
    from flocksim.viewer.images import ImageLibrary
    from flocksim.viewer.modes import ParkedModes
    from flocksim.viewer.pacing import StepRate

log = logging.getLogger("flocksim.viewer")
T = TypeVar("T")

SELECTED_ID = 0
"""Stable id of the highlighted agent (flag bit 0) and of the bird ``turn`` turns around."""
MAX_PENDING_NEXT = 8
"""``next`` requests beyond this many unanswered ones are dropped (one frame answers each)."""
MAX_QUEUED_MESSAGES = 32
"""Client messages waiting to be handled; more arriving meanwhile are dropped (and counted)."""


class SessionControls:
    """The message handling of a :class:`~flocksim.viewer.session.ViewerSession` (its base class):
    every method here runs with the session's state, set up by the session's constructor."""

    if TYPE_CHECKING:  # the session's state and plumbing these handlers use (flocksim.viewer.session)
        sim: Simulation | None
        params: AnyParams | None
        preset: str | None
        origin: str | None
        modes: ParkedModes
        images: ImageLibrary
        paused: bool
        closed: bool
        generation: int
        max_agents: int
        max_control_bytes: int
        _version: int
        _pending_next: int
        _dropped: int
        _neighbors: tuple[int, float, float] | None
        _inbox: asyncio.Queue[str | bytes | bytearray | memoryview]
        _io: asyncio.Lock
        _want_frame: asyncio.Event
        _resumed: asyncio.Event
        _rate: StepRate

        @property
        def _sim(self) -> Simulation: ...
        def _new_simulation(self, params: AnyParams) -> Simulation: ...
        def _notify(self) -> None: ...
        def params_message(self, reset: bool) -> str: ...
        def state_message(self) -> str: ...
        async def send_error(self, message: str) -> None: ...
        async def _work(self, fn: Callable[..., T], *args: Any) -> T: ...
        async def _send(self, message: str | bytes) -> None: ...
        async def _send_now(self, message: str | bytes) -> None: ...

    def submit(self, data: str | bytes | bytearray | memoryview) -> None:
        """Queue one client message for :meth:`receive`, without waiting: when
        :data:`MAX_QUEUED_MESSAGES` already wait, it is dropped and counted (one ``error`` tells
        the client how many were, before the next message is handled)."""
        if self.closed:
            return
        try:
            self._inbox.put_nowait(data)
        except asyncio.QueueFull:
            self._dropped += 1

    async def _inbox_loop(self) -> None:
        """Handle the submitted messages one at a time, in arrival order."""
        while not self.closed:
            data = await self._inbox.get()
            dropped, self._dropped = self._dropped, 0
            try:
                if dropped:
                    await self.send_error(
                        f"server: busy; {dropped} message(s) arriving while {MAX_QUEUED_MESSAGES} others waited "
                        "were dropped; send the next one after the replies to the last ones"
                    )
                await self.receive(data)
            except ConnectionError:  # the client is gone: the transport ends the session
                return

    async def receive(self, data: str | bytes | bytearray | memoryview) -> None:
        """Handle one client message now (JSON text; UTF-8 bytes are read as text): parsed and
        validated on the worker thread, then applied. Anything invalid gets an ``error`` reply;
        the simulation goes on and the session stays usable."""
        if self.closed:
            return
        try:
            if builds_parameters(data, self.max_control_bytes):
                control, params = await self._work(self._parse, data)
            else:  # cheap: parsed now, not behind the next step on the worker (one frame per step)
                control, params = self._parse(data)
            await self._apply(control, params)
        except ControlError as exc:
            await self.send_error(str(exc))
        except (ValueError, TypeError) as exc:  # a value the simulation rejects (e.g. turn: bird 0 caught)
            await self.send_error(self.images.scrub(" ".join(str(exc).split())) or type(exc).__name__)
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:  # a bug must not end the connection; say so and log it
            log.exception("viewer: control message failed")
            await self.send_error(f"internal error: {type(exc).__name__}: {exc}")

    def _parse(self, data: str | bytes | bytearray | memoryview) -> tuple[Any, AnyParams | None]:
        """(control, the parameters to build for a ``set`` or ``preset``: image names resolved),
        on the worker thread; ControlError for anything the server does not accept."""
        control = parse_control(data, self._client_params, self.max_control_bytes)
        if not isinstance(control, SetControl | PresetControl):
            return control, None
        check_agent_cap(control.params, self.max_agents)
        return control, self.images.resolve(control.params)

    @property
    def _client_params(self) -> AnyParams:
        return self.params if self.params is not None else self._sim.params

    async def _apply(self, control: Any, params: AnyParams | None = None) -> None:
        if isinstance(control, NextControl):
            self._pending_next = min(self._pending_next + 1, MAX_PENDING_NEXT)
            self._want_frame.set()
        elif isinstance(control, PauseControl | ResumeControl):
            self.paused = isinstance(control, PauseControl)
            self._rate.clear()
            if self.paused:
                self._resumed.clear()
            else:
                self._resumed.set()
            self._notify()
            await self._send(self.state_message())
        elif isinstance(control, SetControl | PresetControl):
            keep = isinstance(control, SetControl)
            if keep:  # the parked mode stays unless both would exceed the agent cap
                self.modes.fit_cap(int(control.params.agents.n), self.max_agents)
            else:  # another scene: its own modes
                self.modes.clear()
            async with self._io:
                reset = await self._work(self._change, params, keep)
                self.params = control.params
                self.modes.drop(control.params.world.dim)  # a set of world.dim: one simulation per mode
                self.preset = control.name if isinstance(control, PresetControl) else None
                if not keep:
                    self.origin = self.preset
                await self._send_now(self.params_message(reset))
            self._notify()
        elif isinstance(control, ModeControl):
            async with self._io:
                reset = await self._work(self._switch_mode, control.dim)
                await self._send_now(self.params_message(reset))
            self._notify()
        elif isinstance(control, WaveControl):
            await self._work(self._sim_call_with, schedule_wave, control.delay)
        elif isinstance(control, ResetControl):
            async with self._io:
                await self._work(self._change, self._sim.params, False)
                await self._send_now(self.params_message(True))
            self._notify()
        elif isinstance(control, TurnControl):
            await self._work(self._turn, control.angle_deg)
            self._notify()
        elif isinstance(control, PointerControl):
            await self._work(self._sim_call, "set_pointer", control.point, control.mode)
        elif isinstance(control, ViewControl):
            await self._work(self._set_view, control)
        elif isinstance(control, SteerControl):
            await self._work(self._sim_call_with, steer_game, control.y, control.z)
        else:  # parse_control returns only the types above
            raise ControlError(f"type: {getattr(control, 'type', '?')} is not handled")

    # ------------------------------------------------------------------ worker-thread jobs

    def _change(self, params: AnyParams, keep: bool) -> bool:
        """Switch to ``params``; keep the flock if ``keep`` and :func:`same_flock` allows, else
        refill. Returns True when the flock was refilled. Nothing changes when the new simulation
        is over a budget (a BudgetError): the kept flock's neighbour pairs are counted first."""
        old = self._sim
        new = self._new_simulation(params)
        refill = not (keep and same_flock(old.params, params) and old.state.n == new.state.n)
        if refill:
            carry_pointer(old, new)
        else:
            carry_over(old, new)
            with engine_guard():
                new.check_neighbor_budget()
        if refill:
            self.generation += 1
        if not self.closed:
            self.sim = new
        self._version += 1
        self._neighbors = None
        self._rate.clear()
        return refill

    def _set_view(self, control: ViewControl) -> None:
        """The camera moved: the level of detail's focus follows it (``params.detail``). Without a
        level of detail there is nothing to move: a ``set`` or a ``preset`` may have just turned
        it off, or switched to a model without one."""
        sim = self._sim
        detail = getattr(sim.params, "detail", None)  # a parameter of the reynolds model only
        if detail is not None and detail.enabled:
            sim.set_view(control.position, control.direction, control.fov_deg)

    def _turn(self, angle_deg: float) -> None:
        sim = self._sim
        rows = np.flatnonzero(sim.state.ids == SELECTED_ID)
        if len(rows) == 0 or not sim.state.alive[rows[0]]:
            raise ControlError(f"turn: the selected bird (id {SELECTED_ID}) is not alive; reset brings it back")
        sim.perturb_turn(center_id=SELECTED_ID, angle_deg=angle_deg)

    def _sim_call(self, name: str, *args: Any) -> Any:
        return getattr(self._sim, name)(*args)

    def _sim_call_with(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(self._sim, *args)

    def _switch_mode(self, dim: int) -> bool:
        """Show the ``dim`` mode: park the current simulation and resume that mode's parked one, or
        build it (flocksim.viewer.modes). Returns True when the flock shown is new."""
        sim = self._sim
        here = int(sim.params.world.dim)
        if dim == here:
            return False
        check_mode(self.origin, dim)
        target = self.modes.take(dim)
        fresh = target is None
        if target is None:
            params, preset = mode_params(self._client_params, self.origin, dim)
            check_agent_cap(params, self.max_agents)
            built = self._new_simulation(self.images.resolve(params))
            target = Parked(built, preset, preset or self.origin, params)
        with contextlib.suppress(ValueError):
            sim.set_pointer(None, "off")  # a parked flock is not steered by a released pointer
        self.modes.park(here, Parked(sim, self.preset, self.origin, self._client_params))
        self.modes.fit_cap(target.sim.state.n, self.max_agents)
        if not self.closed:
            self.sim = target.sim
        self.preset, self.origin, self.params = target.preset, target.origin, target.params
        self.generation += 1
        self._version += 1
        self._neighbors = None
        self._rate.clear()
        return fresh


__all__ = ["MAX_PENDING_NEXT", "MAX_QUEUED_MESSAGES", "SELECTED_ID", "SessionControls"]
