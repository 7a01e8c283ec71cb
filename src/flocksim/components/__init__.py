"""Simulation components: things that live beside the flock and act between steps
(see :class:`flocksim.simulation.Component`).

:func:`default_components` builds the ones a parameter set switches on:
``predator`` (:class:`Predators`, SPEC 5.2) and ``turning``
(:class:`SpontaneousTurning`, SPEC 5.3), in that order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flocksim.components.predator import Predators, turn_toward
from flocksim.components.turning import SpontaneousTurning, lateral_direction

if TYPE_CHECKING:
    from flocksim.simulation import Simulation


def default_components(sim: Simulation) -> list[Any]:
    """The components ``sim.params`` switches on (reynolds model only)."""
    params = sim.params
    if params.model != "reynolds":
        return []
    components: list[Any] = []
    if params.predator.enabled:
        components.append(Predators(sim))
    if params.turning.enabled:
        components.append(SpontaneousTurning(sim))
    return components


__all__ = ["Predators", "SpontaneousTurning", "default_components", "lateral_direction", "turn_toward"]
