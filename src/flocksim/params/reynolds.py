"""Parameters of the ``reynolds`` model (Reynolds 1987 and its descendants): rules, predators,
spontaneous turns, navigation, obstacles, overlap, the Flappy Boids game."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from flocksim.budgets import (
    MAX_NAVIGATION_CELLS,
    check_flow_fields,
    check_navigation_cells,
    grid_side,
    smallest_cell_size,
)
from flocksim.params.common import Agents, ModelBase, Neighbors, flock_length
from flocksim.params.detail import Detail, check_detail
from flocksim.params.escape import Escape
from flocksim.params.fields import Strict, Vector, choice, quantity
from flocksim.params.flight import MAX_ROOST_RADIUS, Cruise, Flight, Roost
from flocksim.params.game import Game, check_game
from flocksim.params.obstacles import Obstacles
from flocksim.params.predator import Predator, SpontaneousTurning


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


class Cohesion(Strict):
    """Steer toward the neighbours' mean position.

    With ``centrality`` p > 0 the cohesion force is multiplied by C^p, where the centrality
    C = |mean over the cohesion neighbours of the unit vectors toward them| is 0 for a bird
    surrounded on all sides and 1 for one with every neighbour on one side: birds at the border
    of a flock are drawn in, those inside hardly (StarDisplay: p = 2; Hildenbrandt et al. 2010).
    """

    weight: float = quantity(1.0, "", "Weight w_coh", ge=0.0, le=1e6)
    radius: float = quantity(3.0, "units", "Cohesion radius (metric mode)", ge=0.0, le=1e9)
    centrality: float = quantity(
        0.0, "", "Power p of the centrality C that multiplies the cohesion force (0 = off)", ge=0.0, le=8.0
    )


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
    blind_angle: float = quantity(
        0.0,
        "deg",
        "Full angle of the cone behind a bird, centred on its tail, whose neighbours alignment and "
        "cohesion ignore (separation sees them; 0 = none)",
        ge=0.0,
        le=359.0,
    )
    flight: Flight = Field(default_factory=Flight, description="Point-mass or banked flight.")
    roost: Roost = Field(default_factory=Roost, description="Attraction to a roosting area (off by default).")


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
    escape: Escape = Field(
        default_factory=Escape, description="Escape manoeuvres copied between neighbours (off by default)."
    )
    navigation: Navigation = Field(default_factory=Navigation, description="Flow-field path-finding (off by default).")
    obstacles: Obstacles = Field(default_factory=Obstacles, description="Static obstacles (none by default).")
    overlap: Overlap = Field(default_factory=Overlap, description="Overlap resolution (off by default).")
    game: Game = Field(default_factory=Game, description="Flappy Boids game (off by default).")
    detail: Detail = Field(
        default_factory=Detail, description="Level of detail: far agents update less often (off by default)."
    )

    @model_validator(mode="after")
    def _detail(self) -> ReynoldsParams:
        check_detail(self.detail, self.world.dim)
        return self

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
    def _roost(self) -> ReynoldsParams:
        roost = self.rules.roost
        if roost.weight > 0.0 and len(roost.center) < self.world.dim:
            raise ValueError(
                f"rules.roost.center: needs {self.world.dim} numbers (world.dim = {self.world.dim}), "
                f"got {len(roost.center)}"
            )
        if roost.flock_lengths > 0.0 and self.agents.n > 0:
            radius = roost.flock_lengths * flock_length(self.agents.n, self.world.dim, self.agents.init.spacing)
            if not 0.0 < radius <= MAX_ROOST_RADIUS:
                raise ValueError(
                    f"rules.roost.flock_lengths: {roost.flock_lengths:g} flock lengths of {self.agents.n} birds at "
                    f"agents.init.spacing {self.agents.init.spacing:g} make a radius of {radius:g}; allowed: a radius "
                    f"> 0 and <= {MAX_ROOST_RADIUS:g} (fewer flock lengths, or 0 to give rules.roost.radius)"
                )
            roost.radius = radius
        return self

    @model_validator(mode="after")
    def _banked_flight(self) -> ReynoldsParams:
        r = self.rules
        if r.flight.mode != "banked":
            return self
        if r.alignment.mode != "basic":
            raise ValueError(
                "rules.flight.mode = 'banked' needs rules.alignment.mode = 'basic' (a banked bird turns by its "
                "bank, kept where inertial spin keeps its spin); allowed: flight 'point' with 'inertial-spin'"
            )
        if r.cruise.restore > 0.0:
            raise ValueError(
                "rules.cruise.restore: must be 0 with rules.flight.mode = 'banked' (its speed control is "
                "rules.flight.speed_time)"
            )
        if self.agents.planar:
            raise ValueError("rules.flight.mode = 'banked': not for agents.planar (ground agents)")
        return self

    @model_validator(mode="after")
    def _escape(self) -> ReynoldsParams:
        if self.escape.enabled and self.rules.flight.mode != "banked":
            raise ValueError(
                "escape.enabled: needs rules.flight.mode = 'banked' (the manoeuvre banks the bird); "
                f"got rules.flight.mode = {self.rules.flight.mode!r}"
            )
        return self

    @model_validator(mode="after")
    def _turn_by_bank(self) -> ReynoldsParams:
        if self.turning.enabled and self.turning.turn_by == "bank" and self.rules.flight.mode != "banked":
            raise ValueError(
                "turning.turn_by = 'bank': needs rules.flight.mode = 'banked' (the turn banks the bird); "
                f"got rules.flight.mode = {self.rules.flight.mode!r}"
            )
        return self

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
