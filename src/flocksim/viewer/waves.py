"""Spontaneous turns driven from the viewer: a wave scheduled by the client (docs/protocol.md,
``wave``), and the schedule of turning switched on while a flock flies.

Both act on the ``turning`` component (:class:`flocksim.components.turning.SpontaneousTurning`),
whose next wave starts at the first step at or after ``next_event`` [s of simulated time] once
the previous wave has ended; starting it calls the component's ``start_wave``.
"""

from __future__ import annotations

from typing import Any

from flocksim.simulation import Simulation
from flocksim.viewer.controls import ControlError


def _turning(sim: Simulation) -> Any:
    return next((c for c in sim.components if getattr(c, "name", None) == "turning"), None)


def schedule_wave(sim: Simulation, delay: float) -> None:
    """Start a spontaneous turn ``delay`` seconds of simulated time from now (0: at the next step);
    no other wave starts before it. ControlError when the simulation has no spontaneous turns."""
    turning = _turning(sim)
    if turning is None:
        if not hasattr(sim.params, "turning"):
            raise ControlError(f"wave: the {sim.params.model} model has no spontaneous turns (reynolds only)")
        raise ControlError("wave: spontaneous turning is off; allowed once turning.enabled = true")
    turning.next_event = sim.time + float(delay)


def schedule_from_now(old: Simulation, new: Simulation) -> None:
    """A turning component that ``new`` has and ``old`` had not (turning switched on mid-flight)
    draws its first waiting time from now, not from time 0 (else its first wave would be overdue
    and start at once)."""
    turning = _turning(new)
    if turning is not None and _turning(old) is None:
        turning.next_event += new.time


__all__ = ["schedule_from_now", "schedule_wave"]
