"""Parameter blocks every model shares: the world, agents, neighbour search, the pointer, the model
base."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from flocksim.params.fields import MIN_DT, BoundsKind, Strict, Vector, choice, mark_keys, quantity

MAX_SIZE = 1e12
"""Largest side of the region [units], as for obstacle coordinates: a 1e300 box was accepted
(its squared distances overflow to inf)."""


class Bounds(Strict):
    """The region agents live in.

    ``box`` and ``periodic`` span [0, size_k) on each axis; ``ellipsoid`` is
    centred on the origin with semi-axes ``size``; ``open`` has no walls.
    Soft walls (box, ellipsoid) start turning agents inward ``margin`` units
    before the wall; the push grows linearly with depth into the margin.
    """

    kind: BoundsKind = choice("box", "Region shape: box | ellipsoid | periodic | open.")
    size: Vector = Field(
        [100.0, 100.0],
        description="Box/periodic side lengths, or ellipsoid semi-axes, one per axis [units]; "
        "allowed: each > 0 and <= 1e12, as many as world.dim.",
        json_schema_extra={"unit": "units"},
    )

    @field_validator("size")
    @classmethod
    def _size_range(cls, size: list[float]) -> list[float]:
        if any(not 0 < s <= MAX_SIZE for s in size):
            raise ValueError("every value must be > 0 and <= 1e12")
        return size

    margin: float = quantity(
        10.0, "units", "Wall margin: distance from a soft wall at which the inward push starts", ge=0.0, le=1e9
    )
    turn_strength: float = quantity(
        20.0, "units/s^2", "Inward acceleration at the wall itself (scaled by rules.bounds.weight)", ge=0.0, le=1e9
    )


class World(Strict):
    """Dimension, region and time step."""

    dim: Literal[2, 3] = choice(2, "Spatial dimension: 2 | 3.")
    bounds: Bounds = Field(default_factory=Bounds, description="Region agents live in.")
    dt: float = quantity(1.0 / 60.0, "s", "Time step", ge=MIN_DT, le=10.0)


FLOCK_PROPORTIONS = (1.0, 2.8, 5.6)
"""A starling flock's thickness : width : length (Ballerini et al. 2008b, PNAS 105:1232), as
flocksim.metrics.hallmarks.flock_proportions measures them (the equivalent uniform ellipsoid's axes)."""

FLOCK_BEND = 0.5
"""How far the sheet's mid-surface rises at its two ends above its middle (the sagitta of the bend
along the length), in the flock's thicknesses: enough that the sheet is not a flat layer, gentle
enough that its thickness is still the smallest axis."""

FLOCK_CORE = 0.877
"""The unbent sheet's thickness as a fraction of the flock's: bending adds to the thickness the
principal axes see, sqrt(1 - 20 * 0.0457 * FLOCK_BEND**2) with 0.0457 the variance of x**2 over a
uniform ellipsoid's axis (x in units of the semi-axis), so the bent sheet measures 1 : 2.8 : 5.6."""

NEAREST_PER_LATTICE = {2: 0.794, 3: 0.774}
"""Median nearest-neighbour distance of the jittered square (2D) or cubic (3D) lattice, in lattice
constants (measured in the bulk of 90 000 and 64 000 sites): the lattice constant that gives a median
nearest neighbour of ``spacing`` is spacing / this."""


def flock_scale(n: int, dim: int, lattice: float) -> float:
    """The length of one unit of FLOCK_PROPORTIONS in the ``flock`` start of ``n`` lattice cells of side
    ``lattice``: its unbent sheet (3D: thickness FLOCK_CORE units) holds n x lattice**dim of volume
    (2D: area, an ellipse of width : length 2.8 : 5.6)."""
    thickness, width, length = FLOCK_PROPORTIONS
    if dim == 2:  # pi/4 * width * length * scale^2 = n lattice^2
        return math.sqrt(4.0 * n / (math.pi * width * length)) * lattice
    return (6.0 * n / (math.pi * FLOCK_CORE * thickness * width * length)) ** (1.0 / 3.0) * lattice


def flock_length(n: int, dim: int, spacing: float) -> float:
    """Length [units] of the ``flock`` start of ``n`` birds whose median nearest-neighbour distance is
    ``spacing`` (flocksim.initial.flock_positions): 5.6 scale with scale from :func:`flock_scale`, e.g.
    191 m for 100 000 birds 1.1 m apart, 88 m for 10 000, 33 m for 500 (the bend keeps it)."""
    return FLOCK_PROPORTIONS[2] * flock_scale(n, dim, spacing / NEAREST_PER_LATTICE[dim])


class InitialConditions(Strict):
    """How agents start.

    ``random`` and ``aligned``: positions uniform in the region (``fill`` of it,
    centred); ``random`` draws uniform headings, ``aligned`` draws headings
    around ``direction`` with a Gaussian angular spread. ``flock``: a flock
    already formed (flocksim.initial.flock_positions): birds ``spacing`` apart
    in a thin, gently bent ellipsoidal sheet with the starlings' proportions
    thickness : width : length = 1 : 2.8 : 5.6 (Ballerini et al. 2008b), its
    length along ``direction``, its thickness vertical (3D; an ellipse of width
    : length 1 : 2 in 2D), its size set by agents.n and ``spacing`` (``fill``
    unused), centred on the region's centre, headings as for ``aligned``.
    Speeds are uniform in [speed_min, speed_max] x agents.max_speed, so
    identical starts never look mechanical.
    """

    kind: Literal["random", "aligned", "flock"] = choice(
        "random", "Start: random | aligned (positions uniform in the region) | flock (a formed flock's sheet)."
    )
    direction: Vector = Field(
        [1.0, 0.0, 0.0],
        description="Mean heading for 'aligned' and 'flock' (normalised; extra components ignored in 2D) "
        "[dimensionless]; allowed: any non-zero vector of 2 or 3 components.",
        min_length=2,
        max_length=3,
        json_schema_extra={"unit": "dimensionless"},
    )
    spread_deg: float = quantity(
        20.0, "deg", "Angular spread (standard deviation) around direction for 'aligned' and 'flock'", ge=0.0, le=180.0
    )
    speed_min: float = quantity(0.5, "fraction of max_speed", "Smallest initial speed", ge=0.0, le=1.0)
    speed_max: float = quantity(1.0, "fraction of max_speed", "Largest initial speed", ge=0.0, le=1.0)
    fill: float = quantity(
        1.0, "fraction", "Fraction of each axis of the region that the start occupies (centred)", gt=0.0, le=1.0
    )
    spacing: float = quantity(
        1.0,
        "units",
        "For 'flock': median nearest-neighbour distance of the start (no two birds closer than about half of it); "
        "the flock's size follows from it and agents.n",
        ge=1e-6,
        le=1e6,
    )

    @model_validator(mode="after")
    def _speed_order(self) -> InitialConditions:
        if self.speed_min > self.speed_max:
            raise ValueError(f"speed_min ({self.speed_min:g}) must be <= speed_max ({self.speed_max:g})")
        if not any(abs(c) > 0 for c in self.direction):
            raise ValueError("direction must be a non-zero vector")
        return self


PerAgent = float | list[float]


class AgentKind(Strict):
    """One kind of agent in a mixed population (e.g. light and heavy enemies)."""

    fraction: float = quantity(1.0, "fraction", "Share of the agents of this kind", gt=0.0, le=1.0)
    mass: float = quantity(1.0, "mass units", "Mass of this kind", gt=0.0, le=1e12)
    radius: float = quantity(0.5, "units", "Body radius of this kind", ge=0.0, le=1e9)


class Agents(Strict):
    """Agent count, speed and force limits, bodies."""

    n: int = quantity(300, "agents", "Number of agents at the start", ge=0, le=50_000_000)
    max_speed: float = quantity(5.0, "units/s", "Speed limit", gt=0.0, le=1e9)
    min_speed: float = quantity(
        0.0, "units/s", "Minimum speed (0 = none); a moving agent slower than this is sped up", ge=0.0, le=1e9
    )
    max_force: float = quantity(
        8.0,
        "units/s^2",
        "Steering limit s_max (per rule for 'reynolds', on the sum for 'clamped-sum')",
        ge=0.0,
        le=1e12,
    )
    mass: PerAgent = Field(
        1.0,
        description="Mass, one value or one per agent [mass units]; allowed: > 0 and finite.",
        json_schema_extra={"unit": "mass units"},
    )
    radius: PerAgent = Field(
        0.5,
        description="Body radius, one value or one per agent [units]; allowed: >= 0 and finite.",
        json_schema_extra={"unit": "units"},
    )
    kinds: list[AgentKind] = Field(
        [],
        description="Mixed population: a list of {fraction, mass, radius}; agent counts per kind are the "
        "fractions of n rounded by largest remainder, kinds shuffled over the agents (state.kind = list index); "
        "overrides mass and radius; allowed: fractions > 0 summing to 1, mass > 0, radius >= 0.",
    )
    planar: bool = Field(
        False,
        description="Ground agents: in 3D they move in the x-z plane (velocity y removed; overlaps and "
        "obstacles ignore y); allowed: true | false (true needs world.dim = 3).",
    )
    init: InitialConditions = Field(default_factory=InitialConditions, description="Initial conditions.")

    @model_validator(mode="after")
    def _check(self) -> Agents:
        if self.min_speed > self.max_speed:
            raise ValueError(f"min_speed ({self.min_speed:g}) must be <= max_speed ({self.max_speed:g})")
        for name, lowest_ok, strict in (("mass", 0.0, True), ("radius", 0.0, False)):
            value = getattr(self, name)
            values = value if isinstance(value, list) else [value]
            if isinstance(value, list) and len(value) != self.n:
                raise ValueError(f"{name}: a per-agent list needs n = {self.n} values, got {len(value)}")
            for v in values:
                bad = v <= lowest_ok if strict else v < lowest_ok
                if bad or not math.isfinite(v):
                    raise ValueError(f"{name}: values must be {'>' if strict else '>='} 0 and finite, got {v!r}")
        if self.kinds:
            total = sum(k.fraction for k in self.kinds)
            if abs(total - 1.0) > 1e-6:
                raise ValueError(f"kinds: fractions must sum to 1, got {total:g}")
            if isinstance(self.mass, list) or isinstance(self.radius, list):
                raise ValueError("kinds: cannot be combined with per-agent mass or radius lists")
        return self


class Neighbors(Strict):
    """Which agents an agent reacts to.

    ``metric``: everyone within each rule's radius. ``topological``: the k
    nearest (ties broken by id), whatever their distance; separation still
    only acts on those of them inside its radius, alignment and cohesion use
    all k. Topological neighbourhoods are asymmetric. ``method`` chooses the
    search algorithm only, never the result.
    """

    mode: Literal["metric", "topological"] = choice("metric", "Neighbourhood: metric | topological.")
    k: int = quantity(7, "agents", "Number of nearest neighbours in topological mode", ge=1, le=1024)
    method: Literal["auto", "grid", "brute"] = choice(
        "auto", "Search algorithm: auto | grid | brute (brute force is the O(N^2) reference)."
    )


class Pointer(Strict):
    """Pointer attract / repel: the viewer's mouse, or
    ``Simulation.set_pointer(point, mode)``.

    While a pointer is active, after every step each alive agent within ``radius`` of
    the point turns its velocity toward the point (attract) or away from it (repel) by
    at most ``turn_rate_deg`` x dt, keeping its speed; the steering rules keep acting.
    Works for every model. Agents at rest or exactly at the point are left as they
    are; planar agents turn within their plane.
    """

    turn_rate_deg: float = quantity(
        90.0, "deg/s", "Largest turn rate of an agent toward (attract) or away from (repel) the pointer", gt=0.0, le=1e6
    )
    radius: float = quantity(
        0.0, "units", "Agents within this distance of the pointer react; 0 = every agent", ge=0.0, le=1e9
    )


class ModelBase(Strict):
    """Fields every model shares."""

    seed: int = quantity(0, "", "Random seed of the run", ge=0, le=2**63 - 1)
    description: str = Field("", description="One line saying what this parameter set is for; allowed: any text.")
    world: World = Field(default_factory=World, description="World: dimension, region, time step.")
    pointer: Pointer = Field(default_factory=Pointer, description="Pointer attract / repel (the viewer's mouse).")

    @model_validator(mode="after")
    def _vector_lengths(self) -> ModelBase:
        dim = self.world.dim
        if len(self.world.bounds.size) != dim:
            raise ValueError(
                f"world.bounds.size needs {dim} values (world.dim = {dim}), got {len(self.world.bounds.size)}"
            )
        mark_keys(self)  # for the one-line messages of assignments to its blocks
        return self
