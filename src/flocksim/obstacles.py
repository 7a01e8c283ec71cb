"""The obstacle set the kernels read (SPEC 3.9, 2.4): flat arrays plus a uniform grid.

Built once from ``params.obstacles`` (obstacles are static). Each obstacle is listed in every
cell that its core's bounding box, grown by its reach, touches; reach = max(influence radius,
body radius + the largest agent body radius), so the cell of an agent lists every obstacle
that can steer it or overlap it. The cell width follows the largest reach of a circle (seed
004: the obstacle grid's cell size follows the largest influence radius); with no circles,
the largest reach of any obstacle. The cell count is capped near 8 per obstacle and the cell
lists at :func:`flocksim.budgets.max_obstacle_entries` entries (cells grow by 1.25x until both
fit). Planar agents ignore y: the grid then has one cell along y.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from flocksim.budgets import max_obstacle_entries
from flocksim.kernels.obstacles import BOX, CIRCLE, SEGMENT
from flocksim.neighbors.grid import CELL_SLACK
from flocksim.params import Obstacles


class ObstacleSet(NamedTuple):
    """Three flat arrays (numba's parallel loops take no tuple nested in a tuple).

    shapes (M, 9) float64: one row per obstacle, columns kind (CIRCLE, SEGMENT, BOX), a (3),
    b (3), body radius, influence radius; a, b: centre twice / segment ends / box corners,
    z = 0 in 2D. grid (9,) float64: origin (3), cell widths (3), cell counts (3) per axis.
    cells int64: cell_start (cells + 1) followed by the obstacle rows of each cell: those of
    cell c are cells[cells[c] + cells_offset : cells[c + 1] + cells_offset], offset = cells + 1.
    """

    shapes: np.ndarray
    grid: np.ndarray
    cells: np.ndarray


def _pad3(v: list[float]) -> list[float]:
    return [float(x) for x in v] + [0.0] * (3 - len(v))


def obstacle_arrays(obstacles: Obstacles) -> tuple[np.ndarray, ...]:
    """(kind, a, b, body, influence) of every circle, then segment, then box."""
    rows = [(CIRCLE, o.center, o.center, o.body_radius, o.influence_radius) for o in obstacles.circles]
    rows += [(SEGMENT, o.a, o.b, o.body_radius, o.influence_radius) for o in obstacles.segments]
    rows += [(BOX, o.min_corner, o.max_corner, o.body_radius, o.influence_radius) for o in obstacles.boxes]
    kind = np.array([r[0] for r in rows], dtype=np.int64)
    a = np.array([_pad3(r[1]) for r in rows], dtype=np.float64).reshape(len(rows), 3)
    b = np.array([_pad3(r[2]) for r in rows], dtype=np.float64).reshape(len(rows), 3)
    body = np.array([r[3] for r in rows], dtype=np.float64)
    influence = np.array([r[4] for r in rows], dtype=np.float64)
    return kind, a, b, body, influence


def build_obstacle_set(
    obstacles: Obstacles, dim: int, planar: bool = False, max_agent_radius: float = 0.0
) -> ObstacleSet:
    """Arrays and grid of ``obstacles`` for agents whose body radius is at most ``max_agent_radius``."""
    kind, a, b, body, influence = obstacle_arrays(obstacles)
    m = len(kind)
    shapes = np.column_stack([kind.astype(np.float64), a, b, body, influence]).reshape(m, 9)
    reach = np.maximum(influence, body + max_agent_radius)
    lo = np.minimum(a, b) - reach[:, None]
    hi = np.maximum(a, b) + reach[:, None]
    flat = [1] if planar else ([2] if dim == 2 else [])  # axes the agents do not move along
    lo[:, flat] = 0.0
    hi[:, flat] = 0.0
    if m == 0:
        grid = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
        return ObstacleSet(shapes, grid, np.zeros(2, dtype=np.int64))
    circles = kind == CIRCLE
    width = float(reach[circles].max() if circles.any() else reach.max())
    width = max(width, 1e-9) * CELL_SLACK
    origin = lo.min(axis=0)
    extent = hi.max(axis=0) - origin
    max_cells = max(4096, 8 * m)
    max_entries = max_obstacle_entries(m)
    while True:  # widen until the cells and the obstacles' cell lists fit their budgets
        sides = np.floor(extent / width) + 1.0
        if math.prod(float(c) for c in sides) <= max_cells:
            counts = sides.astype(np.int64)
            first = np.clip(np.floor((lo - origin) / width).astype(np.int64), 0, counts - 1)
            last = np.clip(np.floor((hi - origin) / width).astype(np.int64), 0, counts - 1)
            if int(np.prod(last - first + 1, axis=1).sum()) <= max_entries:
                break
        width *= 1.25
    cells: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    for k in range(m):
        ix, iy, iz = (np.arange(first[k, d], last[k, d] + 1) for d in range(3))
        ids = ((iz[:, None, None] * counts[1] + iy[None, :, None]) * counts[0] + ix[None, None, :]).ravel()
        cells.append(ids)
        owners.append(np.full(len(ids), k, dtype=np.int64))
    cell = np.concatenate(cells)
    owner = np.concatenate(owners)
    order = np.lexsort((owner, cell))
    ncell = int(np.prod(counts))
    cell_start = np.zeros(ncell + 1, dtype=np.int64)
    np.cumsum(np.bincount(cell, minlength=ncell), out=cell_start[1:])
    grid = np.concatenate([origin, np.full(3, width), counts.astype(np.float64)])
    return ObstacleSet(shapes, grid, np.concatenate([cell_start, owner[order]]))


def max_body_radius(radius: np.ndarray, alive: np.ndarray) -> float:
    """Largest body radius of the alive agents (0 for none)."""
    r = radius[alive]
    return float(r.max()) if len(r) else 0.0
