"""Which components a parameter set switches on: a registry filled by whoever defines a component.

A package that defines a component registers it with :func:`register_component`: a name, a place
in the order (components act in increasing ``order`` before and after every step), a test of the
parameters (``wanted``) and a builder (called with the new simulation; it may import the
component's module only then). This package registers its own (predators, spontaneous turns, the
level of detail); the game registers Flappy Boids (:mod:`flocksim.game`) and the scenarios the seek
targets (:mod:`flocksim.scenarios`), when ``flocksim`` is imported. The registry names none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flocksim.components.noise import PreDrawnNoise
from flocksim.host import Component, Host


@dataclass(frozen=True)
class Registration:
    """A component the reynolds model's parameters can switch on."""

    name: str
    order: int
    """Components act in increasing order (ties: by name)."""
    wanted: Callable[[Any], bool]
    """Whether a parameter set switches it on."""
    build: Callable[[Host], Component]
    """The component for a new simulation."""


_REGISTERED: dict[str, Registration] = {}


def register_component(
    name: str, *, order: int, wanted: Callable[[Any], bool], build: Callable[[Host], Component]
) -> None:
    """Register a component of the reynolds model (module docstring); registering a name again
    replaces its registration (a module imported twice, a test's stand-in)."""
    _REGISTERED[name] = Registration(name, order, wanted, build)


def registered() -> list[Registration]:
    """The registrations, in the order their components act."""
    return sorted(_REGISTERED.values(), key=lambda r: (r.order, r.name))


def unregister_component(name: str) -> None:
    """Remove a registration (KeyError naming the registered ones when there is none)."""
    if name not in _REGISTERED:
        raise KeyError(f"component {name!r} is not registered; registered: {', '.join(_REGISTERED) or 'none'}")
    del _REGISTERED[name]


def default_components(sim: Host) -> list[Component]:
    """The components ``sim.params`` switches on: vicsek and couzin get ``noise`` (the step's random
    numbers, drawn from the run's generator), reynolds the registered ones it wants, in order."""
    params = sim.params
    if params.model in ("vicsek", "couzin"):
        return [PreDrawnNoise(sim)]
    if params.model != "reynolds":
        return []
    return [r.build(sim) for r in registered() if r.wanted(params)]
