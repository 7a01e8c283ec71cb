"""The one parameter schema (pydantic v2) for every flocksim model.

Units: lengths in world units (metres for crowds, pixels for the 2D starling
screen; any consistent unit works), time in seconds, speeds in units/s,
steering forces as accelerations in units/s^2 (rules return accelerations;
mass only matters for position constraints). Angles in degrees in files,
radians inside kernels.

A parameter set is one of the models below, selected by its ``model`` field
(a discriminated union): each model validates only its own parameters and
rejects unknown keys. TOML files and dotted ``--set`` overrides go through
:mod:`flocksim.config`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from flocksim.budgets import (
    MAX_NAVIGATION_CELLS,
    check_flow_fields,
    check_navigation_cells,
    grid_side,
    smallest_cell_size,
)


def _number(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def quantity(
    default: Any,
    unit: str,
    doc: str,
    ge: float | None = None,
    le: float | None = None,
    gt: float | None = None,
    **extra: Any,
) -> Any:
    """A numeric field whose description states its unit and allowed range."""
    low = f">= {_number(ge)}" if ge is not None else (f"> {_number(gt)}" if gt is not None else "")
    high = f"<= {_number(le)}" if le is not None else ""
    allowed = " and ".join(p for p in (low, high) if p) or "any finite value"
    unit = unit or "dimensionless"
    return Field(
        default,
        ge=ge,
        le=le,
        gt=gt,
        description=f"{doc} [{unit}]; allowed: {allowed}.",
        json_schema_extra={"unit": unit, **extra},
    )


def choice(default: Any, doc: str) -> Any:
    """A field with a fixed set of allowed values (the type lists them)."""
    return Field(default, description=doc)


class Strict(BaseModel):
    """Base for every parameter block: unknown keys, NaN/inf and values of the wrong type are
    rejected (strict mode: "300" is not a number, 1 is not true; an integer is a valid float)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True, strict=True)


MIN_DT = 1e-6
"""Shortest time step [s]: velocities are distances per step / dt (abm-flocking), so a shorter
one overflows them to infinity."""

Vector = list[float]
BoundsKind = Literal["box", "ellipsoid", "periodic", "open"]


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
        "allowed: each > 0, as many as world.dim.",
        json_schema_extra={"unit": "units"},
    )
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


class InitialConditions(Strict):
    """How agents start.

    Positions are uniform in the region (``fill`` of it, centred). Velocities:
    ``random`` draws uniform headings; ``aligned`` draws headings around
    ``direction`` with a Gaussian angular spread. Speeds are uniform in
    [speed_min, speed_max] x agents.max_speed, so identical starts never look
    mechanical.
    """

    kind: Literal["random", "aligned"] = choice("random", "Heading distribution: random | aligned.")
    direction: Vector = Field(
        [1.0, 0.0, 0.0],
        description="Mean heading for 'aligned' (normalised; extra components ignored in 2D) [dimensionless]; "
        "allowed: any non-zero vector of 2 or 3 components.",
        min_length=2,
        max_length=3,
        json_schema_extra={"unit": "dimensionless"},
    )
    spread_deg: float = quantity(
        20.0, "deg", "Angular spread (standard deviation) around direction for 'aligned'", ge=0.0, le=180.0
    )
    speed_min: float = quantity(0.5, "fraction of max_speed", "Smallest initial speed", ge=0.0, le=1.0)
    speed_max: float = quantity(1.0, "fraction of max_speed", "Largest initial speed", ge=0.0, le=1.0)
    fill: float = quantity(
        1.0, "fraction", "Fraction of each axis of the region that the start occupies (centred)", gt=0.0, le=1.0
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


class Separation(Strict):
    """Move away from close neighbours, harder when closer.

    ``raw``: d = sum (p_i - p_j) / max(|p_i - p_j|^2, eps).
    ``minion``: d = sum over 0 < min_distance < |p_i - p_j| of
    (p_i - p_j)/|p_i - p_j| / |p_i - p_j|. Both only over neighbours
    closer than ``radius``.
    """

    weight: float = quantity(1.5, "", "Weight w_sep", ge=0.0, le=1e6)
    radius: float = quantity(1.0, "units", "Separation radius", ge=0.0, le=1e9)
    form: Literal["raw", "minion"] = choice("raw", "Formula: raw | minion.")
    eps: float = quantity(1e-4, "units^2", "Softening of the squared distance in the raw form", gt=0.0, le=1e6)
    min_distance: float = quantity(
        1e-3, "units", "Neighbours closer than this are skipped in the minion form", ge=0.0, le=1e6
    )


FRAME = 1.0 / 60.0
"""The reference starling simulator's frame [s]: its inertial-spin numbers (J, chi, eta, the 0.35 rad
turn limit) are per frame of a 60 Hz display; flocksim converts them with frames per step = world.dt / FRAME."""


class Alignment(Strict):
    """Align with the neighbours.

    ``basic``: steer toward the neighbours' mean velocity. ``inertial-spin``
    (Cavagna et al.'s inertial spin model, as simplified by the reference
    starling simulator, docs/starlings.md): a spin s per agent; torque tau =
    mean over neighbours of h_i x h_j (unit headings; 2D: its z component is
    the mean of sin(theta_j - theta_i)); per frame
    s <- s + J tau - (eta/chi) s with J = coupling x weight; the velocity turns
    at omega = s/chi (rad per frame, |omega| <= max_turn); no alignment force
    keeps the speed up, which ``rules.cruise`` does. Per step of world.dt the frame update
    is scaled by f = world.dt / (1/60 s): s <- s + f (J tau - (eta/chi) s), turn
    angle f omega. Coefficients chi, eta, coupling and max_turn are in
    that simulator's frame units (1 frame = 1/60 s).
    """

    weight: float = quantity(1.0, "", "Weight w_ali", ge=0.0, le=1e6)
    radius: float = quantity(3.0, "units", "Alignment radius (metric mode)", ge=0.0, le=1e9)
    mode: Literal["basic", "inertial-spin"] = choice(
        "basic", "Alignment model: basic (mean neighbour velocity) | inertial-spin (spin, torque, damping)."
    )
    chi: float = quantity(
        1.0, "frame units", "Inertia chi of inertial-spin: larger turns more slowly (omega = s/chi)", gt=0.0, le=1e6
    )
    eta: float = quantity(
        0.2, "frame units", "Damping eta of inertial-spin: the spin decays by eta/chi per frame", ge=0.0, le=1e6
    )
    coupling: float = quantity(
        0.06, "frame units", "Torque coupling per unit weight: J = coupling x weight", ge=0.0, le=1e6
    )
    max_turn: float = quantity(
        0.35, "rad/frame", "Largest angular velocity |omega| of inertial-spin", gt=0.0, le=3.14159
    )


class Cruise(Strict):
    """Speed control: a speed below the cruise speed relaxes toward it.

    Per step of world.dt: speed += (cruise - speed) x min(restore x dt, 1) when speed < cruise =
    ``speed`` x agents.max_speed; the direction is kept. Reynolds' steering forces slow a bird
    down whenever a rule's desired direction differs from its heading (the force toward
    max_speed x d has a component against v), and inertial-spin alignment has no force that
    speeds it up again: without this control such flocks sink to min_speed. Birds hold a cruise
    speed by a force along their heading (Hildenbrandt et al. 2010).
    """

    speed: float = quantity(1.0, "x agents.max_speed", "Cruise speed", gt=0.0, le=1.0)
    restore: float = quantity(
        0.0, "1/s", "Rate at which a speed below the cruise speed relaxes to it (0 = off)", ge=0.0, le=1e6
    )


class Cohesion(Strict):
    """Steer toward the neighbours' mean position."""

    weight: float = quantity(1.0, "", "Weight w_coh", ge=0.0, le=1e6)
    radius: float = quantity(3.0, "units", "Cohesion radius (metric mode)", ge=0.0, le=1e9)


class Slots(Strict):
    """Per-agent seek points around a group's target so agents do not pile on one point.

    ``ring``: attack slots evenly spaced on rings around the target (first ring at ``radius``, next
    rings ``spacing`` further out, neighbouring slots ``spacing`` apart along a ring; 3D: rings in
    the x-z ground plane), each assigned to one agent of the group so that the summed distance
    from agents to their slots is smallest (reassigned when the group's membership changes and
    every ``reassign_interval``). ``random``: a fixed random offset per agent, uniform in a disc of
    ``radius``. ``none``: every agent seeks the target itself. Offsets move with the target.
    """

    mode: Literal["none", "ring", "random"] = choice("none", "Seek points: none | ring | random.")
    radius: float = quantity(
        1.5, "units", "Radius of the first slot ring, or of the random-offset disc", ge=0.0, le=1e9
    )
    spacing: float = quantity(1.2, "units", "Distance between neighbouring slots and between rings", gt=0.0, le=1e9)
    reassign_interval: float = quantity(
        1.0, "s", "Reassign ring slots this often (0 = only when the group's agents change)", ge=0.0, le=1e9
    )


class Seek(Strict):
    """Desired velocity toward a target point, with arrival.

    Desired speed is max_speed outside ``arrival_radius``, falls linearly to
    zero at ``stop_radius`` inside it, and is zero (brake) inside
    ``stop_radius``. Weight 0 switches seeking off. Agents of kind (group) k
    seek ``group_targets[k]`` when given, else ``target``; game code moves a
    group's target with ``Simulation.set_target``. With ``slots`` each agent
    seeks its own point around its group's target. Closer than
    ``attack_range`` to its own seek point an agent's seek weight is
    multiplied by ``attack_weight`` and its alignment and cohesion are off
    (in combat range an agent holds its slot instead of flocking; separation
    still keeps agents apart).
    """

    weight: float = quantity(0.0, "", "Weight w_target (0 = off)", ge=0.0, le=1e6)
    target: Vector = Field(
        [0.0, 0.0, 0.0],
        description="Target point (extra components ignored in 2D) [units]; allowed: 2 or 3 finite numbers.",
        min_length=2,
        max_length=3,
        json_schema_extra={"unit": "units"},
    )
    arrival_radius: float = quantity(0.0, "units", "Slow down inside this distance (0 = no arrival)", ge=0.0, le=1e9)
    stop_radius: float = quantity(0.0, "units", "Stop inside this distance", ge=0.0, le=1e9)
    group_targets: list[Vector] = Field(
        [],
        description="Target of each group (agents of kind k seek entry k; groups beyond the list seek target) "
        "[units]; allowed: a list of points of 2 or 3 finite numbers.",
        json_schema_extra={"unit": "units"},
    )
    attack_range: float = quantity(
        0.0,
        "units",
        "Closer than this to its seek point an agent seeks with weight x attack_weight, without alignment and "
        "cohesion (0 = off)",
        ge=0.0,
        le=1e9,
    )
    attack_weight: float = quantity(1.0, "", "Multiplier of w_target inside attack_range", ge=0.0, le=1e6)
    route: list[Vector] = Field(
        [],
        description="Closed route the shared target walks (from the first point; empty = it stays at target; "
        "Simulation.set_target(None, ...) stops it) [units]; allowed: points of 2 or 3 finite numbers.",
        json_schema_extra={"unit": "units"},
    )
    route_speed: float = quantity(0.0, "units/s", "Speed of the shared target along route", ge=0.0, le=1e9)
    slots: Slots = Field(default_factory=Slots, description="Attack slots or random offsets around the target.")

    @model_validator(mode="after")
    def _order(self) -> Seek:
        if self.stop_radius > self.arrival_radius and self.arrival_radius > 0:
            raise ValueError(f"stop_radius ({self.stop_radius:g}) must be <= arrival_radius ({self.arrival_radius:g})")
        for name in ("group_targets", "route"):
            for k, point in enumerate(getattr(self, name)):
                if len(point) not in (2, 3):
                    raise ValueError(f"{name}[{k}] needs 2 or 3 numbers, got {len(point)}")
        return self


class BoundsRule(Strict):
    """Soft walls turning agents inward; see world.bounds."""

    weight: float = quantity(1.0, "", "Weight of the wall push", ge=0.0, le=1e6)


class Avoid(Strict):
    """Obstacle avoidance steering (obstacles in the ``obstacles`` block).

    Each obstacle closer than its influence radius (distance d from its core: centre, segment
    or box) pushes with (away/d) (1 - d/influence); the pushes are summed (not averaged), the
    sum is capped at length ``cap`` and the agent accelerates by weight x strength x that
    (added like the wall push, after the steering sum, in both steering conventions). With
    ``look_ahead`` > 0 the push at the agent's predicted position p + v look_ahead is added
    before the cap, so agents turn before they reach an obstacle's influence.
    """

    weight: float = quantity(1.0, "", "Weight w_avoid (0 = off)", ge=0.0, le=1e6)
    strength: float = quantity(20.0, "units/s^2", "Acceleration of a push of length 1", ge=0.0, le=1e12)
    cap: float = quantity(1.0, "", "Largest length of the summed push", gt=0.0, le=1e6)
    look_ahead: float = quantity(0.0, "s", "Also push at p + v x look_ahead (0 = off)", ge=0.0, le=1e6)


class Rules(Strict):
    """Steering rules and how their forces combine.

    ``reynolds``: every rule's desired direction d becomes
    limit((max_speed * d/|d| - v) / response_time, max_force) (zero when
    d = 0); weighted forces are summed and the sum is not clamped again.
    ``clamped-sum``: raw forces (separation vector, (mean(v_j) - v) /
    response_time, mean(p_j) - p, (desired velocity - v) / response_time) are
    weighted, summed and the sum is clamped to max_force. The wall push is an
    acceleration added as is in both.
    """

    steering: Literal["reynolds", "clamped-sum"] = choice("reynolds", "Steering convention: reynolds | clamped-sum.")
    response_time: float = quantity(
        1.0,
        "s",
        "Time over which a rule asks for its velocity change: every velocity difference (desired - v, "
        "mean(v_j) - v) is divided by it to give an acceleration; 1 s for rules written per second, one "
        "frame (1/60 s) for rules written per displayed frame",
        ge=1e-6,
        le=1e6,
    )
    separation: Separation = Field(default_factory=Separation, description="Separation rule.")
    alignment: Alignment = Field(default_factory=Alignment, description="Alignment rule.")
    cohesion: Cohesion = Field(default_factory=Cohesion, description="Cohesion rule.")
    cruise: Cruise = Field(default_factory=Cruise, description="Speed control toward a cruise speed.")
    seek: Seek = Field(default_factory=Seek, description="Target seek rule.")
    bounds: BoundsRule = Field(default_factory=BoundsRule, description="Soft-wall rule.")
    avoid: Avoid = Field(default_factory=Avoid, description="Obstacle avoidance rule.")


class PanicMultipliers(Strict):
    """Rule-weight multipliers of birds inside a predator's detection distance.

    The default (separation 1.5, alignment 1.5, cohesion 0.5) spreads a chased
    flock; separation 0.6, alignment 1.5, cohesion 2.0 makes it cluster.
    """

    separation: float = quantity(1.5, "", "Multiplier of w_sep near a predator", ge=0.0, le=1e6)
    alignment: float = quantity(1.5, "", "Multiplier of w_ali (and so of J) near a predator", ge=0.0, le=1e6)
    cohesion: float = quantity(0.5, "", "Multiplier of w_coh near a predator", ge=0.0, le=1e6)


class Predator(Strict):
    """Predators that chase the flock (docs/starlings.md).

    Each predator pursues its target's predicted position p + v * lead
    (lead = min(distance / predator speed, lead_max)) at a constant speed,
    turning at most ``max_turn_deg`` per second. A target within
    ``catch_radius`` after a step is caught: removed (alive = False) after the
    step, and the predator then targets the nearest bird. After
    ``retarget_after`` seconds without a catch it switches to the nearest bird.
    Nothing is caught while ``min_remaining`` birds or fewer remain. Birds
    closer than ``detection`` to a predator flee (harder when closer) and have
    their rule weights multiplied by ``panic``.
    """

    enabled: bool = Field(False, description="Put predators in the world; allowed: true | false.")
    count: int = quantity(1, "predators", "Number of predators", ge=1, le=1000)
    speed: float = quantity(1.3, "x agents.max_speed", "Predator speed", gt=0.0, le=100.0)
    max_turn_deg: float = quantity(60.0, "deg/s", "Largest turn rate of a predator", gt=0.0, le=1e6)
    lead_max: float = quantity(1.0, "s", "Longest look-ahead when predicting the target's position", ge=0.0, le=1e6)
    catch_radius: float = quantity(10.0, "units", "A target this close (or closer) is caught", ge=0.0, le=1e9)
    retarget_after: float = quantity(
        30.0, "s", "Switch to the nearest bird after this long without a catch", gt=0.0, le=1e9
    )
    min_remaining: int = quantity(20, "agents", "No catch while this many birds or fewer remain", ge=0, le=50_000_000)
    detection: float = quantity(100.0, "units", "Birds closer than this react to the predator", ge=0.0, le=1e9)
    flee_weight: float = quantity(
        1.0,
        "",
        "Weight of fleeing, a steering rule like the others; the force also scales with 1 - distance/detection",
        ge=0.0,
        le=1e6,
    )
    flee_speed: float = quantity(
        1.3,
        "x agents.max_speed",
        "Speed limit of a fleeing bird at the predator; it falls linearly to 1 at the detection distance",
        ge=1.0,
        le=100.0,
    )
    panic: PanicMultipliers = Field(
        default_factory=PanicMultipliers, description="Rule-weight multipliers inside the detection distance."
    )


class SpontaneousTurning(Strict):
    """Spontaneous collective turns (after Attanasi et al. 2014, 2015; docs/starlings.md).

    At random times (exponential intervals with mean ``mean_interval``; a turn
    due while the previous wave still runs waits for its end) the bird farthest
    out on a random lateral side of the flock (relative to its mean heading;
    3D: a horizontal side, up = +y) and its nearest ``initiators - 1`` birds
    start turning inward. With ``propagation = "imposed"`` every other bird
    starts the same turn after a delay = its distance from that edge bird /
    (signal_speed x max_speed); every turning bird turns about the same axis at
    ``turn_rate_deg`` until it has turned ``angle_deg``; the steering rules keep
    acting. Those start times are imposed, not emergent. With ``propagation =
    "emergent"`` only the initiators are turned: the others turn if and when
    their rules make them (with underdamped inertial-spin alignment the turn
    crosses the flock as a wave, as Attanasi et al. 2014 observed).
    """

    enabled: bool = Field(False, description="Start spontaneous turns; allowed: true | false.")
    mean_interval: float = quantity(6.0, "s", "Mean time between the starts of two turns", gt=0.0, le=1e9)
    angle_deg: float = quantity(90.0, "deg", "Total angle every bird turns", gt=0.0, le=360.0)
    turn_rate_deg: float = quantity(90.0, "deg/s", "Turn rate of a turning bird", gt=0.0, le=1e6)
    initiators: int = quantity(10, "agents", "Birds on the lateral edge that start a turn", ge=1, le=1_000_000)
    signal_speed: float = quantity(
        2.5, "x agents.max_speed", "Speed at which the start of the turn spreads from the edge", gt=0.0, le=1e6
    )
    propagation: Literal["imposed", "emergent"] = choice(
        "imposed",
        "How the turn reaches the other birds: imposed (start delayed by distance / signal speed) | emergent "
        "(only the initiators are turned; the rest follow through their rules).",
    )


class Navigation(Strict):
    """Path-finding by flow field: agents seek along a field, flocking corrects locally.

    A 2D occupancy grid of ``cell_size`` cells whose lower-left corner is at ``origin`` (2D: x, y;
    3D: the x-z ground plane) comes from ``map`` (text rows, the first row on top = highest
    coordinate, ``#`` a wall, anything else free), ``image`` (a PNG file, top row on top, pixels
    darker than 50 % grey are walls) or ``obstacles`` (the ``obstacles`` block over world.bounds.size:
    a cell is a wall when its centre is closer than cell_size/2 + body radius + ``clearance`` to an
    obstacle's core). Per group target a cost-distance map over free cells
    (8-connected, no cutting across wall corners; scipy's Dijkstra) gives every cell the direction
    of its next cell on a shortest path; it is recomputed only when the target moves to another
    cell. An agent seeks the point ahead of it along the field at its remaining path distance;
    within ``direct_radius`` of its group's target (path distance) it seeks its own seek point
    straight. Agents outside the grid, or in cells from which the target cannot be reached, seek
    straight too.
    """

    enabled: bool = Field(False, description="Seek along a flow field; allowed: true | false.")
    source: Literal["map", "image", "obstacles"] = choice("map", "Occupancy source: map | image | obstacles.")
    map: list[str] = Field([], description="Occupancy rows, top row first, '#' = wall; allowed: equal-length rows.")
    image: str = Field(
        "",
        description="PNG occupancy image (dark = wall), top row on top, one cell per pixel; allowed: a file path "
        "(in the viewer: the name of an image the server offers).",
    )
    cell_size: float = quantity(
        1.0, "units", "Side of one grid cell (a grid holds at most 1 048 576 cells: docs/parameters.md)", gt=0.0, le=1e9
    )
    origin: Vector = Field(
        [0.0, 0.0],
        description="World position of the grid's lower-left corner (x, y; 3D: x, z) [units]; allowed: 2 numbers.",
        min_length=2,
        max_length=2,
        json_schema_extra={"unit": "units"},
    )
    interpolation: Literal["bilinear", "nearest"] = choice(
        "bilinear", "Field direction at an agent: bilinear (of the 4 nearest free cells) | nearest (its cell)."
    )
    direct_radius: float = quantity(
        2.0, "units", "Within this path distance of the target an agent seeks its seek point straight", ge=0.0, le=1e9
    )
    clearance: float = quantity(
        0.0,
        "units",
        "Obstacles grow by this when rasterised (source = obstacles; e.g. the agents' radius)",
        ge=0.0,
        le=1e9,
    )

    @model_validator(mode="after")
    def _source(self) -> Navigation:
        if not self.enabled:
            return self
        if self.source == "map":
            if not self.map or not self.map[0]:
                raise ValueError("map: needs at least one non-empty row when source = 'map'")
            if len({len(row) for row in self.map}) != 1:
                raise ValueError("map: every row must have the same length")
        if self.source == "image" and not self.image:
            raise ValueError("image: needs a PNG path when source = 'image'")
        return self


def _point(doc: str) -> Any:
    return Field(
        description=f"{doc} [units]; allowed: as many finite numbers as world.dim.",
        min_length=2,
        max_length=3,
        json_schema_extra={"unit": "units"},
    )


class Circle(Strict):
    """A round obstacle: circle (2D), sphere (3D), vertical cylinder (planar 3D)."""

    center: Vector = _point("Centre")
    body_radius: float = quantity(0.5, "units", "Solid radius (agents are kept out of it)", ge=0.0, le=1e9)
    influence_radius: float = quantity(2.0, "units", "Steering range, from the centre", ge=0.0, le=1e9)


class Segment(Strict):
    """A wall: the segment from ``a`` to ``b`` thickened by ``body_radius`` (a capsule)."""

    a: Vector = _point("First end")
    b: Vector = _point("Second end")
    body_radius: float = quantity(0.25, "units", "Half thickness of the wall", ge=0.0, le=1e9)
    influence_radius: float = quantity(2.0, "units", "Steering range, from the segment", ge=0.0, le=1e9)


class Box(Strict):
    """A solid axis-aligned box from ``min_corner`` to ``max_corner`` (level geometry)."""

    min_corner: Vector = _point("Lowest corner")
    max_corner: Vector = _point("Highest corner")
    body_radius: float = quantity(0.0, "units", "Rounding added around the box (solid)", ge=0.0, le=1e9)
    influence_radius: float = quantity(2.0, "units", "Steering range, from the box's surface", ge=0.0, le=1e9)


class Obstacles(Strict):
    """Static obstacles: circles/spheres, wall segments and boxes.

    Each has a core (a point, a segment, a solid box), a body radius around the core (the
    solid part: overlap resolution keeps agents' bodies out of it, as an infinite mass) and an
    influence radius around the core (steering, rules.avoid). Kept in their own grid whose
    cell size follows the largest influence radius. Not available in periodic space.
    """

    circles: list[Circle] = Field(
        [],
        description="Circles/spheres; allowed: a list of tables {center = [x, y(, z)], body_radius >= 0, "
        "influence_radius >= 0} [units].",
    )
    segments: list[Segment] = Field(
        [],
        description="Wall segments; allowed: a list of tables {a = [x, y(, z)], b = [x, y(, z)], body_radius >= 0, "
        "influence_radius >= 0} [units].",
    )
    boxes: list[Box] = Field(
        [],
        description="Boxes; allowed: a list of tables {min_corner = [x, y(, z)], max_corner = [x, y(, z)], "
        "body_radius >= 0, influence_radius >= 0} [units].",
    )

    def count(self) -> int:
        return len(self.circles) + len(self.segments) + len(self.boxes)


class Overlap(Strict):
    """Overlap resolution: position corrections after integration.

    Agents i, j overlapping (d < r_i + r_j) share the penetration by mass: i moves
    m_j/(m_i + m_j) of it away from j (a displacement, no dt). Corrections from agents are
    averaged, corrections from obstacles (infinite mass: the agent takes all) averaged
    separately, and the two added. Coincident centres (d^2 < 1e-8) are skipped. Each of
    ``iterations`` relaxation passes reads one snapshot of the positions.
    """

    enabled: bool = Field(False, description="Resolve overlaps after every step; allowed: true | false.")
    iterations: int = quantity(1, "passes", "Relaxation passes per step", ge=1, le=100)


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


class Game(Strict):
    """Flappy Boids (docs/viewer.md, "Flappy Boids"): the flock follows a target flying along +x
    through walls of rock with gaps (src/flocksim/game/).

    Wall k stands at x = first_wall + k wall_spacing across the whole box (y, z); its gap is a
    round hole of radius gap_radius - gap_shrink x (x / 1000), at least gap_min_radius. The rock
    is a 3D field (slab minus hole plus smooth noise of noise_amplitude) that is meshed by
    marching cubes for the viewer and sampled for obstacle avoidance and collisions. The target
    moves at speed + speed_gain x (x / 1000), at most speed_max; a bird is lost when it touches
    rock or falls more than max_lag behind the target; the game is over when none is left.
    """

    enabled: bool = Field(False, description="Play Flappy Boids; allowed: true | false (needs world.dim = 3).")
    pilot: Literal["gaps", "straight", "player"] = choice(
        "gaps", "Who moves the target: gaps (scripted, through each gap) | straight (never turns) | player."
    )
    speed: float = quantity(10.0, "units/s", "Target speed along +x at the start", gt=0.0, le=1e4)
    speed_gain: float = quantity(2.0, "units/s", "Target speed added per 1000 units flown", ge=0.0, le=1e4)
    speed_max: float = quantity(20.0, "units/s", "Largest target speed", gt=0.0, le=1e4)
    lateral_speed: float = quantity(24.0, "units/s", "Target speed across the course (y, z)", gt=0.0, le=1e4)
    lead: float = quantity(8.0, "units", "Start distance of the target ahead of the flock's centre", ge=0.0, le=1e4)
    max_lag: float = quantity(60.0, "units", "A bird farther than this behind the target is lost", gt=0.0, le=1e6)
    first_wall: float = quantity(80.0, "units", "x of the first wall", ge=0.0, le=1e6)
    wall_spacing: float = quantity(60.0, "units", "Distance between walls (= chunk length)", gt=0.0, le=1e4)
    wall_thickness: float = quantity(6.0, "units", "Thickness of a wall before noise", gt=0.0, le=1e4)
    gap_radius: float = quantity(15.0, "units", "Gap radius at x = 0", gt=0.0, le=1e4)
    gap_min_radius: float = quantity(9.0, "units", "Smallest gap radius", gt=0.0, le=1e4)
    gap_shrink: float = quantity(1.0, "units", "Gap radius lost per 1000 units flown", ge=0.0, le=1e4)
    noise_amplitude: float = quantity(2.0, "units", "Amplitude of the rock's smooth noise", ge=0.0, le=1e4)
    noise_scale: float = quantity(8.0, "units", "Feature size of the rock's noise", gt=0.0, le=1e4)
    cell_size: float = quantity(1.5, "units", "Voxel size of the marching-cubes grid", gt=0.0, le=1e4)
    avoid_cell: float = quantity(3.0, "units", "Spacing of the rock's avoidance spheres", gt=0.0, le=1e4)
    avoid_range: float = quantity(6.0, "units", "Steering range of the rock (rules.avoid)", gt=0.0, le=1e4)
    chunks_ahead: int = quantity(3, "chunks", "Chunks kept ahead of the flock", ge=1, le=16)
    chunks_behind: int = quantity(1, "chunks", "Chunks kept behind the flock", ge=0, le=16)
    max_triangles: int = quantity(
        60_000, "triangles", "Most triangles of one chunk's mesh (coarser steps above)", ge=12, le=1_000_000
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
        if any(s <= 0 for s in self.world.bounds.size):
            raise ValueError("world.bounds.size: every value must be > 0")
        return self


class ReynoldsParams(ModelBase):
    """Reynolds boids and its descendants: separation, alignment, cohesion,
    seek and soft walls, summed per agent (Reynolds 1987)."""

    model: Literal["reynolds"] = Field("reynolds", description="Model: reynolds | abm-flocking | vicsek | couzin.")
    agents: Agents = Field(default_factory=Agents, description="Agents.")
    neighbors: Neighbors = Field(default_factory=Neighbors, description="Neighbourhood.")
    rules: Rules = Field(default_factory=Rules, description="Steering rules.")
    predator: Predator = Field(default_factory=Predator, description="Predators (off by default).")
    turning: SpontaneousTurning = Field(
        default_factory=SpontaneousTurning, description="Spontaneous turns (off by default)."
    )
    navigation: Navigation = Field(default_factory=Navigation, description="Flow-field path-finding (off by default).")
    obstacles: Obstacles = Field(default_factory=Obstacles, description="Static obstacles (none by default).")
    overlap: Overlap = Field(default_factory=Overlap, description="Overlap resolution (off by default).")
    game: Game = Field(default_factory=Game, description="Flappy Boids game (off by default).")

    @model_validator(mode="after")
    def _crowds(self) -> ReynoldsParams:
        dim = self.world.dim
        if self.agents.planar and dim != 3:
            raise ValueError("agents.planar: needs world.dim = 3 (2D agents already move in a plane)")
        obs = self.obstacles
        if obs.count() and self.world.bounds.kind == "periodic":
            raise ValueError("obstacles: not supported with world.bounds.kind = 'periodic'")
        points = [(f"circles[{k}].center", o.center) for k, o in enumerate(obs.circles)]
        points += [(f"segments[{k}].{e}", getattr(o, e)) for k, o in enumerate(obs.segments) for e in ("a", "b")]
        corners = ("min_corner", "max_corner")
        points += [(f"boxes[{k}].{e}", getattr(o, e)) for k, o in enumerate(obs.boxes) for e in corners]
        for name, point in points:
            if len(point) != dim:
                raise ValueError(f"obstacles.{name}: needs {dim} numbers (world.dim = {dim}), got {len(point)}")
        for k, o in enumerate(obs.boxes):
            if any(lo > hi for lo, hi in zip(o.min_corner, o.max_corner, strict=True)):
                raise ValueError(f"obstacles.boxes[{k}]: min_corner must be <= max_corner on every axis")
        return self

    @model_validator(mode="after")
    def _game(self) -> ReynoldsParams:
        if self.game.enabled:
            from flocksim.game.course import check_game

            check_game(self)
        return self

    @model_validator(mode="after")
    def _navigation(self) -> ReynoldsParams:
        if self.navigation.enabled:
            if self.world.bounds.kind == "periodic":
                raise ValueError("navigation: periodic bounds are not supported (flow fields do not wrap)")
            if self.rules.seek.weight == 0.0:
                raise ValueError("navigation: needs rules.seek.weight > 0 (agents follow the field by seeking)")
            self._navigation_budget()
        return self

    def _navigation_budget(self) -> None:
        """The grid's size against the budgets of :mod:`flocksim.budgets`, before anything is
        allocated (``image`` grids are checked when the image is opened)."""
        nav = self.navigation
        if nav.source == "obstacles":
            plane = (0, 1) if self.world.dim == 2 else (0, 2)
            extent = [self.world.bounds.size[axis] for axis in plane]
            columns, rows = (grid_side(length, nav.cell_size) for length in extent)
            if rows * columns > MAX_NAVIGATION_CELLS:
                smallest = smallest_cell_size(extent[0], extent[1])
                world = f"{extent[0]:g} x {extent[1]:g}"
                hint = f"allowed: navigation.cell_size >= {smallest:g} on a world.bounds.size of {world}"
                check_navigation_cells(rows, columns, "navigation.cell_size", hint)
        elif nav.source == "map":
            rows, columns = len(nav.map), len(nav.map[0])
            check_navigation_cells(rows, columns, "navigation.map", "allowed: a smaller map")
        else:
            return
        check_flow_fields(max(1, len(self.agents.kinds)), rows * columns)

    @model_validator(mode="after")
    def _spin_damping(self) -> ReynoldsParams:
        a = self.rules.alignment
        if a.mode == "inertial-spin":
            per_step = self.world.dt / FRAME * a.eta / a.chi
            if per_step > 1.0:
                raise ValueError(
                    f"inertial-spin damping per step (world.dt / (1/60 s)) x eta / chi = {per_step:g} must be <= 1; "
                    "lower eta or world.dt, or raise chi"
                )
        return self


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
    "allowed: each > 0, as many as world.dim."
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


Params = Annotated[ReynoldsParams | AbmFlockingParams | VicsekParams | CouzinParams, Field(discriminator="model")]
"""Any model's parameters; validate a mapping with :func:`parse_params`."""

MODEL_NAMES = ("reynolds", "abm-flocking", "vicsek", "couzin")
_ADAPTER: TypeAdapter[Params] = TypeAdapter(Params)


def parse_params(data: dict[str, Any]) -> ReynoldsParams | AbmFlockingParams | VicsekParams | CouzinParams:
    """Validate a mapping (from TOML, JSON or a dict) into a model's parameters.

    A missing ``model`` key means ``reynolds``. Raises ``pydantic.ValidationError``.
    """
    data = dict(data)
    data.setdefault("model", "reynolds")
    return _ADAPTER.validate_python(data)


def params_json_schema() -> dict[str, Any]:
    """JSON Schema of every model's parameters (the viewer builds its controls from it)."""
    schema = _ADAPTER.json_schema()
    schema["title"] = "flocksim parameters"
    schema["$comment"] = "Each field's description gives its unit and allowed range; 'unit' repeats the unit."
    return schema
