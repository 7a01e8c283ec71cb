"""Parameters of the research models ``vicsek`` (Vicsek et al. 1995) and ``couzin`` (Couzin et al.
2002)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from flocksim.params.common import Bounds, InitialConditions, ModelBase, World
from flocksim.params.fields import MIN_DT, Strict, Vector, choice, quantity


class SearchMethod(Strict):
    """Neighbour search of the research models: the algorithm only, never the result."""

    method: Literal["auto", "grid", "brute"] = choice(
        "auto", "Search algorithm: auto | grid | brute (brute force is the O(N^2) reference)."
    )


class ResearchAgents(Strict):
    """Agents of a research model: a count and how they start (speeds come from the model)."""

    n: int = quantity(400, "agents", "Number of agents", ge=0, le=50_000_000)
    init: InitialConditions = Field(default_factory=InitialConditions, description="Initial conditions.")


TWO_PI = 2.0 * math.pi
SIZE_DOC = (
    "Box/periodic side lengths, or the extent of the start in open space, one per axis [units]; "
    "allowed: each > 0 and <= 1e12, as many as world.dim."
)


class VicsekBounds(Bounds):
    """Region of the vicsek model: periodic (the paper's box) or open; it has no walls."""

    kind: Literal["periodic", "open"] = choice("periodic", "Region shape: periodic | open (no walls in this model).")
    size: Vector = Field([10.0, 10.0], description=SIZE_DOC, json_schema_extra={"unit": "units"})


class VicsekWorld(World):
    """World of the vicsek model: one step is one time unit in the paper."""

    bounds: VicsekBounds = Field(default_factory=VicsekBounds, description="Region agents live in.")
    dt: float = quantity(1.0, "s", "Time step (Vicsek: 1)", ge=MIN_DT, le=10.0)


class CouzinBounds(Bounds):
    """Region of the couzin model: open (the paper) or periodic; it has no walls."""

    kind: Literal["open", "periodic"] = choice("open", "Region shape: open | periodic (no walls in this model).")
    size: Vector = Field([10.0, 10.0, 10.0], description=SIZE_DOC, json_schema_extra={"unit": "units"})


class CouzinWorld(World):
    """World of the couzin model: 3D, one step is tau."""

    dim: Literal[2, 3] = choice(3, "Spatial dimension: 2 | 3 (the paper: 3).")
    bounds: CouzinBounds = Field(default_factory=CouzinBounds, description="Region agents live in.")
    dt: float = quantity(0.1, "s", "Time step tau (Couzin: 0.1 s)", ge=MIN_DT, le=10.0)


class CouzinAgents(ResearchAgents):
    """Individuals of the couzin model."""

    n: int = quantity(100, "agents", "Number of individuals", ge=0, le=50_000_000)


class Vicsek(Strict):
    """Coefficients of the Vicsek model (Vicsek et al. 1995)."""

    speed: float = quantity(0.03, "units/s", "Constant speed v0 (Vicsek: 0.03 per step with dt = 1)", gt=0.0, le=1e9)
    radius: float = quantity(1.0, "units", "Interaction radius r (the particle itself included)", gt=0.0, le=1e9)
    eta: float = quantity(
        2.0,
        "rad",
        "Noise width eta: 2D angle uniform within +-eta/2, 3D uniform on the cap of half-angle eta/2 "
        "(radians, as in the paper)",
        ge=0.0,
        le=TWO_PI,
    )
    update: Literal["paper", "forward"] = choice(
        "paper",
        "Position update: paper | forward. paper: x(t+1) = x(t) + v0 dt h(t), the heading at t (Vicsek et al. "
        "1995); forward: x(t+1) = x(t) + v0 dt h(t+1), the new heading (Gregoire and Chate 2004)",
    )


class VicsekParams(ModelBase):
    """Vicsek et al. (1995), Phys. Rev. Lett. 75:1226: constant speed, align with everyone
    within r (the particle itself included), plus uniform angular noise of width eta.

    Per step, reading step t: h_i(t+1) = noise(eta) applied to the direction of
    sum_{|p_j - p_i| <= r} h_j(t); p_i(t+1) = wrap(p_i(t) + v0 dt h_i(t)) with
    ``vicsek.update = "paper"`` (the paper's x(t+1) = x(t) + v(t) dt), or
    wrap(p_i(t) + v0 dt h_i(t+1)) with ``"forward"`` (the new heading moves the particle).
    2D or 3D; periodic (the paper) or open space.
    """

    model: Literal["vicsek"] = Field("vicsek", description="Model: reynolds | abm-flocking | vicsek | couzin.")
    world: VicsekWorld = Field(
        default_factory=VicsekWorld, description="World: dimension, region (periodic or open), time step."
    )
    agents: ResearchAgents = Field(default_factory=ResearchAgents, description="Particles.")
    neighbors: SearchMethod = Field(default_factory=SearchMethod, description="Neighbour search.")
    vicsek: Vicsek = Field(default_factory=Vicsek, description="Model coefficients.")


class Couzin(Strict):
    """Coefficients of the Couzin model (Couzin et al. 2002); the paper's defaults."""

    r_r: float = quantity(1.0, "units", "Radius of the zone of repulsion", gt=0.0, le=1e9)
    delta_r_o: float = quantity(2.0, "units", "Width of the zone of orientation (beyond r_r)", ge=0.0, le=1e9)
    delta_r_a: float = quantity(
        14.0, "units", "Width of the zone of attraction (beyond r_r + delta_r_o)", ge=0.0, le=1e9
    )
    field_of_perception_deg: float = quantity(
        270.0,
        "deg",
        "Field of perception alpha; neighbours in the rear cone of 360 - alpha are unseen",
        gt=0.0,
        le=360.0,
    )
    max_turn_deg: float = quantity(40.0, "deg/s", "Maximum turning rate theta", gt=0.0, le=1e6)
    speed: float = quantity(3.0, "units/s", "Constant speed s", gt=0.0, le=1e9)
    noise_sd: float = quantity(0.05, "rad", "Standard deviation sigma of the Gaussian angular noise", ge=0.0, le=10.0)


class CouzinParams(ModelBase):
    """Couzin et al. (2002), J. theor. Biol. 218:1: zones of repulsion, orientation and attraction.

    Per step of tau = world.dt, reading step t: neighbours within r_r repel and, if
    there are any, decide alone; otherwise the summed headings of the zone of
    orientation and the summed unit offsets of the zone of attraction (each
    normalised, averaged when both are present) give the desired direction.
    Neighbours in the blind rear cone are ignored. Gaussian angular noise sigma,
    then a turn of at most theta tau toward the desired direction, then
    p += s tau h. Open (the paper) or periodic space.
    """

    model: Literal["couzin"] = Field("couzin", description="Model: reynolds | abm-flocking | vicsek | couzin.")
    world: CouzinWorld = Field(
        default_factory=CouzinWorld, description="World: dimension, region (open or periodic), time step tau."
    )
    agents: CouzinAgents = Field(default_factory=CouzinAgents, description="Individuals.")
    neighbors: SearchMethod = Field(default_factory=SearchMethod, description="Neighbour search.")
    couzin: Couzin = Field(default_factory=Couzin, description="Model coefficients.")
