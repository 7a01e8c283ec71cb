"""Simulation components: things that live beside the flock and act between steps
(see :class:`flocksim.host.Component`).

:func:`default_components` builds the ones a parameter set switches on, from the registry of
:mod:`flocksim.components.registry`: ``wander`` (:class:`FlightWander`, first: the flight urges'
numbers come before any other component's draws), ``predator`` (:class:`Predators`), ``escape``
(:class:`EscapeWaves`, after the predators have moved), ``turning``
(:class:`SpontaneousTurning`), ``game`` (registered by :mod:`flocksim.game`) and, when agents seek,
``targets`` (registered by :mod:`flocksim.scenarios`) and ``detail`` (:class:`LevelOfDetail`, last:
it chooses the agents that refresh from the state the others leave), in that order; vicsek and
couzin get ``noise`` (:class:`PreDrawnNoise`). ``pointer`` (:class:`PointerSteering`) is added by
``Simulation.set_pointer``.
"""

from __future__ import annotations

from flocksim.components.detail import LevelOfDetail
from flocksim.components.escape import EscapeWaves
from flocksim.components.noise import PreDrawnNoise
from flocksim.components.pointer import PointerSteering, pointer_turn
from flocksim.components.predator import Predators
from flocksim.components.registry import default_components, register_component
from flocksim.components.turning import SpontaneousTurning, lateral_direction
from flocksim.components.wander import FlightWander, wants_wander

register_component("wander", order=5, wanted=wants_wander, build=FlightWander)
register_component("predator", order=10, wanted=lambda p: p.predator.enabled, build=Predators)
register_component("escape", order=15, wanted=lambda p: p.escape.enabled, build=EscapeWaves)
register_component("turning", order=20, wanted=lambda p: p.turning.enabled, build=SpontaneousTurning)
register_component("detail", order=90, wanted=lambda p: p.detail.enabled, build=LevelOfDetail)

__all__ = [
    "EscapeWaves",
    "FlightWander",
    "LevelOfDetail",
    "PointerSteering",
    "PreDrawnNoise",
    "Predators",
    "SpontaneousTurning",
    "default_components",
    "lateral_direction",
    "pointer_turn",
    "register_component",
]
