"""The contract between a simulation and its components, below both: what a component sees of the
simulation it belongs to (:class:`Host`; :class:`flocksim.simulation.Simulation` is one) and what a
component provides (:class:`Component`). Components type their simulation as a ``Host`` and so never
import the simulation above them."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from flocksim.state import FlockState


class Host(Protocol):
    """What a component reads and changes of its simulation."""

    params: Any
    """The run's parameters (a :class:`flocksim.params.ReynoldsParams` for the components of this package)."""
    state: FlockState
    """The flock's arrays, in stable-id order."""
    model: Any
    """The model object the engine steps (its coefficients and per-agent inputs)."""
    rng: np.random.Generator
    """The run's generator: every random number of a run comes from it."""

    @property
    def dt(self) -> float:
        """Step length [s]."""
        ...

    @property
    def steps(self) -> int:
        """Steps taken so far."""
        ...

    @property
    def time(self) -> float:
        """Simulated time [s]: steps x dt."""
        ...


class Component(Protocol):
    """Something that lives beside the flock and acts between steps (a predator, a
    turning wave, a spawner, a recorder).

    ``before_step`` runs before the engine's step (it may set inputs the kernels
    read); ``after_step`` runs after it and applies what was queued during the
    step (removals, spawns), so the step in flight is never corrupted. Its whole
    mutable state round-trips through ``state_dict`` / ``load_state_dict`` (plain
    numbers, strings and numpy arrays), which is what checkpoints store.
    """

    name: str

    def before_step(self, sim: Host) -> None: ...

    def after_step(self, sim: Host) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, data: dict[str, Any]) -> None: ...
