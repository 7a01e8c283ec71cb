"""Parameters of the ``abm-flocking`` model (the cross-framework benchmark model)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from flocksim.params.common import InitialConditions, ModelBase, Neighbors
from flocksim.params.fields import Strict, quantity


class AbmAgents(Strict):
    """Agents of the abm-flocking model: a count and how they start."""

    n: int = quantity(400, "agents", "Number of birds", ge=0, le=50_000_000)
    init: InitialConditions = Field(default_factory=InitialConditions, description="Initial conditions.")


class AbmFlocking(Strict):
    """Coefficients of the cross-framework Flocking benchmark model."""

    vision: float = quantity(15.0, "units", "Visual distance: neighbours within it are seen", ge=1e-9, le=1e9)
    separation: float = quantity(1.0, "units", "Minimum separation: neighbours closer than this repel", ge=0.0, le=1e9)
    speed: float = quantity(1.0, "units/step", "Distance moved per step", gt=0.0, le=1e9)
    cohere_factor: float = quantity(0.03, "", "Cohesion factor", ge=0.0, le=1e3)
    separate_factor: float = quantity(0.015, "", "Separation factor", ge=0.0, le=1e3)
    match_factor: float = quantity(0.05, "", "Alignment (match) factor", ge=0.0, le=1e3)


class AbmFlockingParams(ModelBase):
    """The Flocking model of the Agents.jl / Mesa / NetLogo / MASON comparisons.

    Every bird, reading step t: cohere = sum(p_j - p_i), separate = -sum(p_j - p_i)
    over neighbours closer than ``separation``, match = sum(h_j) (unit headings);
    each divided by max(count, 1) and multiplied by its factor;
    h <- normalize(h + cohere + separate + match); p <- wrap(p + speed * h).
    Updates are synchronous (all birds read step t), unlike the original's random
    sequential activation. One step advances time by world.dt; velocity is
    reported as speed * h / dt.
    """

    model: Literal["abm-flocking"] = Field(
        "abm-flocking", description="Model: reynolds | abm-flocking | vicsek | couzin."
    )
    agents: AbmAgents = Field(default_factory=AbmAgents, description="Birds.")
    neighbors: Neighbors = Field(default_factory=Neighbors, description="Neighbourhood (metric radius = vision).")
    flocking: AbmFlocking = Field(default_factory=AbmFlocking, description="Model coefficients.")
