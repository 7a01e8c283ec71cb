"""Targets, attack slots and flow-field waypoints (docs/design.md §3.6, §3.7): a Simulation component.

Before every step it works out each agent's seek point and hands it to the kernels
(``model.targets``, (N, 3)):

1. the group's target: agents of kind k seek ``group_targets[k]`` (or ``rules.seek.target``),
   moved by game code with :meth:`Targets.set_target` (``Simulation.set_target``); a per-agent
   target set with :meth:`Targets.set_agent_targets` replaces it (and the slot) for that agent;
2. plus the agent's slot offset (``rules.seek.slots``): ring slots are assigned per group by
   :func:`flocksim.scenarios.slots.assign_slots` whenever the group's living agents change (added,
   removed, caught) and every ``reassign_interval``; random offsets are drawn once per agent id
   from the run's generator;
3. with ``navigation`` on, an agent farther than ``direct_radius`` (path distance) from its
   group's target seeks the point ahead of it along the group's flow field, at its remaining
   path distance (so arrival slows it by path length, not straight-line distance); an agent
   inside a wall cell seeks out of it. Fields are recomputed only when a target changes cell.

Offsets and fields lie in the ground plane: x-y in 2D, x-z in 3D. When every agent seeks one
shared point (no slots, groups, per-agent targets or navigation) nothing per agent is built:
the shared point goes into the kernel coefficients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from flocksim.budgets import check_flow_fields
from flocksim.navigation.flowfield import FlowField, grid_graph, move_allowed
from flocksim.navigation.occupancy import OccupancyGrid, walls_from_image, walls_from_map, walls_from_obstacles
from flocksim.navigation.waypoints import field_waypoints
from flocksim.scenarios.slots import assign_slots, random_offsets, ring_offsets

if TYPE_CHECKING:
    from flocksim.params import ReynoldsParams
    from flocksim.simulation import Simulation


def _point3(point: Any, dim: int, name: str) -> np.ndarray:
    p = np.asarray(point, dtype=np.float64).reshape(-1)
    if len(p) not in (2, 3) or len(p) < dim or not np.isfinite(p).all():
        raise ValueError(f"{name}: needs {dim} finite numbers (world.dim = {dim}), got {point!r}")
    out = np.zeros(3)
    out[: min(len(p), 3)] = p[:3]
    if dim == 2:
        out[2] = 0.0
    return out


def point_on_route(route: np.ndarray, travelled: float) -> np.ndarray:
    """The point ``travelled`` units along the closed polyline ``route`` (R, 3) from its first point."""
    legs = np.linalg.norm(np.roll(route, -1, axis=0) - route, axis=1)
    total = float(legs.sum())
    if total == 0.0:
        return route[0].copy()
    s = travelled % total
    k = int(np.searchsorted(np.cumsum(legs), s, side="right"))
    k = min(k, len(route) - 1)
    start = float(np.sum(legs[:k]))
    f = (s - start) / legs[k] if legs[k] > 0 else 0.0
    return route[k] + f * (route[(k + 1) % len(route)] - route[k])


def occupancy_of(params: ReynoldsParams) -> OccupancyGrid:
    """The occupancy grid ``params.navigation`` describes."""
    nav = params.navigation
    origin = (float(nav.origin[0]), float(nav.origin[1]))
    if nav.source == "map":
        walls = walls_from_map(nav.map)
    elif nav.source == "image":
        walls = walls_from_image(nav.image)
    else:
        plane = (0, 1) if params.world.dim == 2 else (0, 2)
        size = params.world.bounds.size
        extent = (float(size[plane[0]]), float(size[plane[1]]))
        walls = walls_from_obstacles(params.obstacles, extent, nav.cell_size, origin, nav.clearance, plane)
    return OccupancyGrid(walls, nav.cell_size, origin)


class Navigator:
    """One flow field per group over a shared occupancy grid (graph built once)."""

    def __init__(self, grid: OccupancyGrid, direct_radius: float, bilinear: bool, lead: float):
        self.grid = grid
        self.graph = grid_graph(grid.walls)
        self.allowed = move_allowed(grid.walls)
        self.direct_radius = direct_radius
        self.bilinear = bilinear
        self.lead = lead
        self.fields: dict[int, FlowField] = {}

    def field(self, group: int, target: np.ndarray) -> FlowField:
        """The group's field, pointed at ``target`` (2,) (recomputed only on a cell change)."""
        if group not in self.fields:
            check_flow_fields(len(self.fields) + 1, self.grid.walls.size)
            self.fields[group] = FlowField(self.grid, self.graph, self.allowed)
        f = self.fields[group]
        f.update(target)
        return f

    def waypoints(self, field: FlowField, plane: np.ndarray, goal: np.ndarray) -> np.ndarray:
        """Plane points (n, 2) to seek: along the field at the remaining path distance, out of a
        wall cell, or ``goal`` (n, 2) itself (near the target, outside the grid, unreachable)."""
        direction, cost = field.sample(plane, self.bilinear)
        moving = np.linalg.norm(direction, axis=1) > 0.0
        along = moving & np.isfinite(cost) & (cost > self.direct_radius)
        escape = moving & ~np.isfinite(cost)
        out = goal.copy()
        out[along] = plane[along] + direction[along] * cost[along, None]
        out[escape] = plane[escape] + direction[escape] * self.lead
        return out


class Targets:
    """Seek points of every agent: group targets, slots, per-agent targets, flow-field waypoints."""

    name = "targets"

    def __init__(self, sim: Simulation):
        p: ReynoldsParams = sim.params
        seek = p.rules.seek
        self.dim = p.world.dim
        self.plane = (0, 1) if self.dim == 2 else (0, 2)
        self.slots = seek.slots
        self.default = _point3(seek.target, self.dim, "rules.seek.target")
        self.groups: dict[int, np.ndarray] = {
            k: _point3(t, self.dim, f"rules.seek.group_targets[{k}]") for k, t in enumerate(seek.group_targets)
        }
        self.route = np.array([_point3(q, self.dim, f"rules.seek.route[{k}]") for k, q in enumerate(seek.route)])
        self.route_speed = seek.route_speed
        self.route_travelled = 0.0  # [units] along the closed route
        if len(self.route):
            self.default = self.route[0].copy()
        interval = self.slots.reassign_interval
        self.reassign_steps = max(1, round(interval / sim.dt)) if interval > 0 else 0
        self.steps_since_assign = 0
        self.offset_ids = np.zeros(0, dtype=np.int64)  # sorted agent ids holding an offset
        self.offsets = np.zeros((0, 2))  # their offsets in the plane [units]
        self.agent_ids = np.zeros(0, dtype=np.int64)  # sorted ids with a per-agent target
        self.agent_points = np.zeros((0, 3))
        self.navigator: Navigator | None = None
        nav = p.navigation
        if nav.enabled:
            lead = max(2.0 * nav.cell_size, seek.arrival_radius + nav.cell_size)
            grid = occupancy_of(p)
            check_flow_fields(max(1, len(p.agents.kinds)), grid.walls.size)  # image grids: known only now
            self.navigator = Navigator(grid, nav.direct_radius, nav.interpolation == "bilinear", lead)

    # --------------------------------------------------------------- game API

    def set_target(self, group: int | None, point: Any) -> None:
        """Move the target of group ``group`` (agents of that kind), or with None the shared target
        of every group without its own, to ``point`` [units]."""
        p = _point3(point, self.dim, "set_target: point")
        if group is None:
            self.default = p
            self.route = np.zeros((0, 3))
            return
        if int(group) < 0:
            raise ValueError(f"set_target: group must be >= 0 or None, got {group}")
        self.groups[int(group)] = p

    def set_agent_targets(self, ids: Any, points: Any) -> None:
        """Give the agents with stable ids ``ids`` their own targets (k, dim) [units], replacing their
        group target and slot; ``points`` None clears them."""
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        if points is None:
            keep = ~np.isin(self.agent_ids, ids)
            self.agent_ids, self.agent_points = self.agent_ids[keep], self.agent_points[keep]
            return
        pts = np.asarray(points, dtype=np.float64).reshape(len(ids), -1)
        new = np.stack([_point3(q, self.dim, "set_agent_targets: points") for q in pts]) if len(ids) else pts
        keep = ~np.isin(self.agent_ids, ids)
        all_ids = np.concatenate([self.agent_ids[keep], ids])
        all_points = np.concatenate([self.agent_points[keep], new.reshape(-1, 3)])
        order = np.argsort(all_ids, kind="stable")
        self.agent_ids, self.agent_points = all_ids[order], all_points[order]

    def target_of(self, group: int) -> np.ndarray:
        """The current target (3,) of a group [units] (z = 0 in 2D)."""
        return self.groups.get(int(group), self.default).copy()

    # --------------------------------------------------------------- protocol

    def before_step(self, sim: Simulation) -> None:
        state = sim.state
        if len(self.route) > 1 and self.route_speed > 0.0 and sim.steps > 0:
            self.route_travelled += self.route_speed * sim.dt
            self.default = point_on_route(self.route, self.route_travelled)
        shared = all(np.array_equal(t, self.default) for t in self.groups.values())
        if shared and self.slots.mode == "none" and self.navigator is None and len(self.agent_ids) == 0:
            sim.model.targets = np.zeros((0, 3))
            sim.model.coefficients = sim.model.coefficients._replace(
                target_x=self.default[0], target_y=self.default[1], target_z=self.default[2]
            )
            return
        kind = state.kind.astype(np.int64)
        if kind.min(initial=0) < 0:
            raise ValueError("targets: agent kinds (groups) must be >= 0")
        if len(kind) and kind[0] == kind.min() == kind.max():  # one kind (most scenes): no sorting
            groups = kind[:1] if state.alive.any() else kind[:0]
            points = np.empty((len(kind), 3))
            points[:] = self.target_of(int(kind[0]))
        else:
            groups = np.unique(kind[state.alive])
            labels, inverse = np.unique(kind, return_inverse=True)  # one row per kind present, not per kind value
            points = np.array([self.target_of(int(k)) for k in labels]).reshape(-1, 3)[inverse.reshape(-1)]
        goal_plane = points[:, self.plane].copy()
        if self.slots.mode != "none":
            self._update_offsets(sim, groups)
            if np.array_equal(self.offset_ids, state.ids):  # every agent holds an offset, in row order
                goal_plane += self.offsets
            elif len(self.offset_ids):
                k = np.minimum(np.searchsorted(self.offset_ids, state.ids), len(self.offset_ids) - 1)
                has = self.offset_ids[k] == state.ids
                goal_plane[has] += self.offsets[k[has]]
        own_rows, own_k = self._own_target_rows(state)
        if self.navigator is not None:
            nav = self.navigator
            follows = state.alive.copy()
            follows[own_rows] = False
            for g in groups:
                rows = np.flatnonzero((kind == g) & follows) if len(groups) > 1 else np.flatnonzero(follows)
                field = nav.field(int(g), self.target_of(int(g))[list(self.plane)])
                # compiled Navigator.waypoints (bitwise the same), in place
                field_waypoints(field, state.position, self.plane, rows, goal_plane, nav.bilinear, nav.direct_radius,
                                nav.lead)  # fmt: skip
        points[:, self.plane[0]] = goal_plane[:, 0]
        points[:, self.plane[1]] = goal_plane[:, 1]
        points[own_rows] = self.agent_points[own_k]
        sim.model.targets = np.ascontiguousarray(points)

    def after_step(self, sim: Simulation) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        groups = sorted(self.groups)
        return {
            "default": self.default.copy(),
            "group_ids": np.array(groups, dtype=np.int64),
            "group_points": np.array([self.groups[k] for k in groups]).reshape(-1, 3),
            "offset_ids": self.offset_ids.copy(),
            "offsets": self.offsets.copy(),
            "agent_ids": self.agent_ids.copy(),
            "agent_points": self.agent_points.copy(),
            "steps_since_assign": int(self.steps_since_assign),
            "route": self.route.copy(),
            "route_travelled": float(self.route_travelled),
        }

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self.default = np.array(data["default"], dtype=np.float64).reshape(3)
        ids = np.array(data["group_ids"], dtype=np.int64).reshape(-1)
        points = np.array(data["group_points"], dtype=np.float64).reshape(-1, 3)
        self.groups = {int(k): points[i].copy() for i, k in enumerate(ids)}
        self.offset_ids = np.array(data["offset_ids"], dtype=np.int64).reshape(-1)
        self.offsets = np.array(data["offsets"], dtype=np.float64).reshape(-1, 2)
        self.agent_ids = np.array(data["agent_ids"], dtype=np.int64).reshape(-1)
        self.agent_points = np.array(data["agent_points"], dtype=np.float64).reshape(-1, 3)
        self.steps_since_assign = int(data["steps_since_assign"])
        self.route = np.array(data["route"], dtype=np.float64).reshape(-1, 3)
        self.route_travelled = float(data["route_travelled"])

    # --------------------------------------------------------------- helpers

    def _own_target_rows(self, state) -> tuple[np.ndarray, np.ndarray]:
        """(state rows, agent_points rows) of agents with a per-agent target."""
        if len(self.agent_ids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        k = np.minimum(np.searchsorted(self.agent_ids, state.ids), len(self.agent_ids) - 1)
        rows = np.flatnonzero(self.agent_ids[k] == state.ids)
        return rows, k[rows]

    def _update_offsets(self, sim: Simulation, groups: np.ndarray) -> None:
        """Keep one offset per living agent: draw random ones for new ids, (re)assign ring slots."""
        state = sim.state
        alive_ids = state.ids[state.alive]
        if self.slots.mode == "random":
            if np.array_equal(self.offset_ids, alive_ids):  # nobody joined or left: nothing to draw or drop
                return
            keep = np.isin(self.offset_ids, alive_ids)
            new_ids = np.setdiff1d(alive_ids, self.offset_ids[keep])
            ids = np.concatenate([self.offset_ids[keep], new_ids])
            offsets = np.concatenate([self.offsets[keep], random_offsets(len(new_ids), self.slots.radius, sim.rng)])
            order = np.argsort(ids, kind="stable")
            self.offset_ids, self.offsets = ids[order], offsets[order]
            return
        self.steps_since_assign += 1
        due = self.reassign_steps > 0 and self.steps_since_assign >= self.reassign_steps
        if not due and np.array_equal(self.offset_ids, np.sort(alive_ids)):
            return
        self.steps_since_assign = 0
        ids_out, offsets_out = [], []
        for g in groups:
            rows = np.flatnonzero(state.alive & (state.kind == g))
            slots = ring_offsets(len(rows), self.slots.radius, self.slots.spacing)
            centre = self.target_of(int(g))[list(self.plane)]
            chosen = assign_slots(state.position[rows][:, self.plane], centre + slots)
            ids_out.append(state.ids[rows])
            offsets_out.append(slots[chosen])
        ids = np.concatenate(ids_out) if ids_out else np.zeros(0, dtype=np.int64)
        offsets = np.concatenate(offsets_out) if offsets_out else np.zeros((0, 2))
        order = np.argsort(ids, kind="stable")
        self.offset_ids, self.offsets = ids[order], offsets[order]
