"""Simulation components: things that live beside the flock and act between steps
(see :class:`flocksim.simulation.Component`).

:func:`default_components` builds the ones a parameter set switches on:
``predator`` (:class:`Predators`), ``turning``
(:class:`SpontaneousTurning`), ``game`` (:class:`flocksim.game.FlappyGame`) and, when agents seek,
``targets`` (:class:`flocksim.scenarios.targets.Targets`) and ``detail`` (:class:`LevelOfDetail`, last:
it chooses the agents that refresh from the state the others leave), in that order.
``pointer`` (:class:`PointerSteering`) is added by ``Simulation.set_pointer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flocksim.components.detail import LevelOfDetail
from flocksim.components.noise import PreDrawnNoise
from flocksim.components.pointer import PointerSteering, pointer_turn
from flocksim.components.predator import Predators
from flocksim.components.turning import SpontaneousTurning, lateral_direction

if TYPE_CHECKING:
    from flocksim.simulation import Simulation


def default_components(sim: Simulation) -> list[Any]:
    """The components ``sim.params`` switches on: vicsek and couzin get ``noise`` (:class:`PreDrawnNoise`),
    reynolds the ones above."""
    params = sim.params
    if params.model in ("vicsek", "couzin"):
        return [PreDrawnNoise(sim)]  # the step's random numbers, drawn from the run's Generator
    if params.model != "reynolds":
        return []
    components: list[Any] = []
    if params.predator.enabled:
        components.append(Predators(sim))
    if params.turning.enabled:
        components.append(SpontaneousTurning(sim))
    if params.game.enabled:  # before the targets: it moves the shared target
        from flocksim.game.flappy import FlappyGame

        components.append(FlappyGame(sim))
    if params.rules.seek.weight > 0.0:
        from flocksim.scenarios.targets import Targets

        components.append(Targets(sim))
    if params.detail.enabled:
        components.append(LevelOfDetail(sim))
    return components


__all__ = [
    "LevelOfDetail",
    "PointerSteering",
    "PreDrawnNoise",
    "Predators",
    "SpontaneousTurning",
    "default_components",
    "lateral_direction",
    "pointer_turn",
]
