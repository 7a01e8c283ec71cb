"""Flow-field waypoints of many agents in one compiled loop.

:meth:`flocksim.scenarios.targets.Navigator.waypoints` over :meth:`FlowField.sample` builds a dozen
temporary (n, 2) arrays per step; :func:`field_waypoints` does the same arithmetic agent by agent, in
the same order, so its results are bitwise those of the numpy code (the reference it is tested
against): the same cell lookup, the four bilinear weights summed in the same order (x offset 0 then
1, y offset 0 then 1 inside), the blend's length as sqrt(x^2 + y^2) as ``numpy.linalg.norm`` takes it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from flocksim.navigation.flowfield import FlowField

BLEND_MIN_LENGTH = 1e-6
"""A bilinear blend shorter than this cancels out: the agent's own cell decides (as in FlowField.sample)."""


@numba.njit(cache=True)
def _waypoints(position, axis0, axis1, rows, goal, cost, direction, ox, oy, cell_size, bilinear, direct_radius, lead):
    """goal[rows[k]] <- the waypoint of the agent in position row rows[k] (see :func:`field_waypoints`)."""
    ny, nx = cost.shape
    for k in range(rows.shape[0]):
        i = rows[k]
        px = position[i, axis0]
        py = position[i, axis1]
        ux = (px - ox) / cell_size - 0.5  # OccupancyGrid.cell_coordinates
        uy = (py - oy) / cell_size - 0.5
        col = math.floor(ux + 0.5)  # OccupancyGrid.cell_of (an integer in numba)
        row = math.floor(uy + 0.5)
        inside = 0 <= col < nx and 0 <= row < ny
        dx = 0.0
        dy = 0.0
        c = math.inf
        if inside:
            dx = direction[row, col, 0]
            dy = direction[row, col, 1]
            c = cost[row, col]
        if bilinear:
            bx = math.floor(ux)  # integers, as numpy's floor(u).astype(int64)
            by = math.floor(uy)
            fx = ux - bx
            fy = uy - by
            blend_x = 0.0
            blend_y = 0.0
            blend_cost = 0.0
            total = 0.0
            for ex in range(2):
                for ey in range(2):
                    cc = bx + ex
                    rr = by + ey
                    if 0 <= cc < nx and 0 <= rr < ny and math.isfinite(cost[rr, cc]):
                        wx = fx if ex else 1.0 - fx
                        wy = fy if ey else 1.0 - fy
                        w = wx * wy
                        blend_x += w * direction[rr, cc, 0]
                        blend_y += w * direction[rr, cc, 1]
                        blend_cost += w * cost[rr, cc]
                        total += w
                    else:  # the numpy code adds weight 0 times 0 here
                        blend_x += 0.0
                        blend_y += 0.0
                        blend_cost += 0.0
                        total += 0.0
            length = math.sqrt(blend_x * blend_x + blend_y * blend_y)
            if inside and total > 0.0 and length > BLEND_MIN_LENGTH and math.isfinite(c):
                dx = blend_x / length
                dy = blend_y / length
                c = blend_cost / total
        if math.sqrt(dx * dx + dy * dy) > 0.0:  # Navigator.waypoints
            if math.isfinite(c):
                if c > direct_radius:
                    goal[i, 0] = px + dx * c
                    goal[i, 1] = py + dy * c
            else:
                goal[i, 0] = px + dx * lead
                goal[i, 1] = py + dy * lead


def field_waypoints(
    field: FlowField,
    position: np.ndarray,
    plane: tuple[int, int],
    rows: np.ndarray,
    goal: np.ndarray,
    bilinear: bool,
    direct_radius: float,
    lead: float,
) -> None:
    """In place, for the agents in ``rows`` (int64) of ``position`` (N, dim): goal[i] (plane point,
    (N, 2)) becomes the point along ``field`` at the agent's remaining path distance when that is
    above ``direct_radius``, the point ``lead`` [units] out of a wall or unreachable cell, and is
    left alone otherwise (near the target, outside the grid, no direction). ``plane``: the position
    axes of the grid's (x, y). Bitwise what ``Navigator.waypoints`` returns for those rows."""
    grid = field.grid
    _waypoints(position, plane[0], plane[1], np.ascontiguousarray(rows, dtype=np.int64), goal, field.cost,
               field.direction, float(grid.origin[0]), float(grid.origin[1]), float(grid.cell_size), bool(bilinear),
               float(direct_radius), float(lead))  # fmt: skip
