"""Static obstacles: distance to an obstacle, steering push, overlap push-out (docs/design.md §3.9, §4.4).

An obstacle is a core (a point, a segment or a solid axis-aligned box) with a body radius
around it and an influence radius measured from it. For an agent at p, :func:`core_offset`
gives the unit direction u from the core's closest point toward p and the signed distance d
from the core (negative inside a box: the depth below its nearest face, u along that face's
normal). Planar agents ignore the y axis: circles become vertical cylinders.

- steering: inside the influence radius, push u (1 - max(d, 0)/influence);
  pushes are summed over obstacles, never averaged; the receiver caps the sum;
- overlap: closer than r_agent + body, push out by u (r_agent + body - d) (the obstacle has
  infinite mass); corrections from several obstacles are averaged.

A point within 1e-4 of a point or segment core (d^2 < 1e-8) has no direction and is skipped.
The obstacle set (:class:`flocksim.obstacles.ObstacleSet`) carries its own uniform grid: an
obstacle is listed in every cell its core box, grown by its reach, touches, so the agent's own
cell lists every obstacle that can act on it.
"""

from __future__ import annotations

import math

from flocksim.kernels.cells import axis_cell
from flocksim.kernels.compile import block_device, device
from flocksim.kernels.vector import limit

CIRCLE = 0
SEGMENT = 1
BOX = 2

COINCIDENT2 = 1e-8
"""Squared distances below this have no defined direction."""


@device
def _unit(ox, oy, oz):
    d2 = ox * ox + oy * oy + oz * oz
    if d2 < COINCIDENT2:
        return 0.0, 0.0, 0.0, math.sqrt(d2), False
    d = math.sqrt(d2)
    return ox / d, oy / d, oz / d, d, True


@device
def core_offset(px, py, pz, kind, ax, ay, az, bx, by, bz, planar):
    """(ux, uy, uz, d, defined): unit direction from the core toward p and signed distance to the core.

    ``kind``: CIRCLE (core point a), SEGMENT (a to b), BOX (a = lowest, b = highest corner).
    ``defined`` is False when p sits on a point or segment core (no direction).
    """
    if planar:
        py = 0.0
        ay = 0.0
        by = 0.0
    if kind == CIRCLE:
        return _unit(px - ax, py - ay, pz - az)
    if kind == SEGMENT:
        ex = bx - ax
        ey = by - ay
        ez = bz - az
        e2 = ex * ex + ey * ey + ez * ez
        t = 0.0
        if e2 > 0.0:
            t = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / e2
            t = min(max(t, 0.0), 1.0)
        return _unit(px - (ax + t * ex), py - (ay + t * ey), pz - (az + t * ez))
    qx = min(max(px, ax), bx)
    qy = min(max(py, ay), by)
    qz = min(max(pz, az), bz)
    ox = px - qx
    oy = py - qy
    oz = pz - qz
    if ox != 0.0 or oy != 0.0 or oz != 0.0:
        d = math.sqrt(ox * ox + oy * oy + oz * oz)
        return ox / d, oy / d, oz / d, d, True
    # inside: leave through the nearest face (x, then y, then z on a tie); a flat axis has no face
    best = math.inf
    ux = uy = uz = 0.0
    for axis in range(3):
        if axis == 0:
            lo, hi, x = ax, bx, px
        elif axis == 1:
            lo, hi, x = ay, by, py
        else:
            lo, hi, x = az, bz, pz
        if hi <= lo:
            continue
        down = x - lo
        up = hi - x
        depth = min(down, up)
        if depth < best:
            best = depth
            sign = -1.0 if down < up else 1.0
            ux = sign if axis == 0 else 0.0
            uy = sign if axis == 1 else 0.0
            uz = sign if axis == 2 else 0.0
    if best == math.inf:
        return 0.0, 0.0, 0.0, 0.0, False
    return ux, uy, uz, -best, True


@device
def steering_push(ux, uy, uz, d, influence):
    """The steering push u (1 - d/influence) inside the influence radius (d <= 0: full push u), else 0."""
    if d >= influence:
        return 0.0, 0.0, 0.0
    f = 1.0 - max(d, 0.0) / influence
    return ux * f, uy * f, uz * f


@device
def penetration_push(ux, uy, uz, d, reach):
    """(x, y, z, hit): u (reach - d) when d < reach = r_agent + body, the obstacle taking none of it."""
    if d >= reach:
        return 0.0, 0.0, 0.0, False
    s = reach - d
    return ux * s, uy * s, uz * s, True


@device
def obstacle_cell(px, py, pz, grid, planar):
    """Cell of the obstacle grid holding point p (points outside the grid go to its edge cells)."""
    if planar:
        py = 0.0
    nx = int(grid[6])
    ny = int(grid[7])
    ix = axis_cell(px, grid[0], grid[3], nx)
    iy = axis_cell(py, grid[1], grid[4], ny)
    iz = axis_cell(pz, grid[2], grid[5], int(grid[8]))
    return (iz * ny + iy) * nx + ix


@device
def obstacle_offset(px, py, pz, shapes, k, planar):
    """:func:`core_offset` of obstacle row k of ``shapes``."""
    kind = int(shapes[k, 0])
    return core_offset(px, py, pz, kind, shapes[k, 1], shapes[k, 2], shapes[k, 3], shapes[k, 4], shapes[k, 5],
                       shapes[k, 6], planar)  # fmt: skip


@block_device
def obstacle_push_sum(px, py, pz, shapes, grid, cells, planar):
    """Sum of the steering pushes of every obstacle on a point (uncapped, dimensionless)."""
    sx = sy = sz = 0.0
    if shapes.shape[0] == 0:
        return sx, sy, sz
    c = obstacle_cell(px, py, pz, grid, planar)
    offset = int(grid[6] * grid[7] * grid[8]) + 1
    for t in range(cells[c] + offset, cells[c + 1] + offset):
        k = cells[t]
        ux, uy, uz, d, ok = obstacle_offset(px, py, pz, shapes, k, planar)
        if ok:
            fx, fy, fz = steering_push(ux, uy, uz, d, shapes[k, 8])
            sx += fx
            sy += fy
            sz += fz
    return sx, sy, sz


@block_device
def avoid_push(px, py, pz, vx, vy, vz, shapes, grid, cells, look_ahead, cap, planar):
    """Summed push at p, plus at the predicted point p + v look_ahead when look_ahead > 0, capped at ``cap``."""
    sx, sy, sz = obstacle_push_sum(px, py, pz, shapes, grid, cells, planar)
    if look_ahead > 0.0:
        qx = px + vx * look_ahead
        qy = py + vy * look_ahead
        qz = pz + vz * look_ahead
        tx, ty, tz = obstacle_push_sum(qx, qy, qz, shapes, grid, cells, planar)
        sx += tx
        sy += ty
        sz += tz
    if planar:
        sy = 0.0
    return limit(sx, sy, sz, cap)


@device
def obstacle_correction(px, py, pz, radius, shapes, grid, cells, planar):
    """Average of the push-outs from every obstacle whose body the agent (body ``radius``) overlaps."""
    cx = cy = cz = 0.0
    if shapes.shape[0] == 0:
        return cx, cy, cz
    hits = 0
    c = obstacle_cell(px, py, pz, grid, planar)
    offset = int(grid[6] * grid[7] * grid[8]) + 1
    for t in range(cells[c] + offset, cells[c + 1] + offset):
        k = cells[t]
        ux, uy, uz, d, ok = obstacle_offset(px, py, pz, shapes, k, planar)
        if ok:
            fx, fy, fz, hit = penetration_push(ux, uy, uz, d, radius + shapes[k, 7])
            if hit:
                cx += fx
                cy += fy
                cz += fz
                hits += 1
    if hits > 0:
        return cx / hits, cy / hits, cz / hits
    return cx, cy, cz
