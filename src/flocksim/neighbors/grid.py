"""Uniform cell grid (SPEC 2.4): agents binned by a counting sort, queries over
the 3x3 (2D) or 3x3x3 (3D) block of cells around an agent.

Cells are at least the query radius wide, so the block holds every neighbour.
Periodic space tiles the box exactly (cells of L/n); other spaces take the
grid's extent from the bounding box of the alive agents, with the cell count
capped near 2N so a few far-flung agents cannot blow up memory.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from flocksim.kernels.compile import device
from flocksim.kernels.vector import load
from flocksim.neighbors.csr import NeighborList, starts_from_counts
from flocksim.neighbors.pairs import pair_distance2, sort_row
from flocksim.space import PERIODIC, Space, wrap_coordinate

CELL_SLACK = 1.0 + 1e-7
"""Cells are made this much wider than asked, so rounding at a cell border never hides a neighbour."""


class GridGeometry(NamedTuple):
    """Origin, cell widths and cell counts per axis (z: 1 cell in 2D)."""

    ox: float
    oy: float
    oz: float
    cx: float
    cy: float
    cz: float
    nx: int
    ny: int
    nz: int
    periodic: bool


def grid_geometry(
    position: np.ndarray, alive: np.ndarray, space: Space, min_cell: float, max_cells: int | None = None
) -> GridGeometry:
    """Geometry with cells at least ``min_cell`` wide (> 0) and at most ``max_cells`` cells."""
    _n, dim = position.shape
    n_alive = int(alive.sum())
    if max_cells is None:
        max_cells = max(64, 2 * n_alive)
    width = min_cell * CELL_SLACK
    if space.kind == PERIODIC:
        lengths = np.array([space.lx, space.ly, space.lz])[:dim]
        origin = np.zeros(dim)
    else:
        pts = position[alive] if n_alive else np.zeros((1, dim))
        origin = pts.min(axis=0)
        lengths = np.maximum(pts.max(axis=0) - origin, 0.0)
    while True:
        if space.kind == PERIODIC:
            counts = np.maximum(1, np.floor(lengths / width)).astype(np.int64)
            widths = lengths / counts
        else:
            counts = (np.floor(lengths / width) + 1).astype(np.int64)
            widths = np.full(dim, width)
        if math.prod(int(c) for c in counts) <= max_cells:
            break
        width *= 1.25
    o = list(origin) + [0.0] * (3 - dim)
    c = list(widths) + [1.0] * (3 - dim)
    k = [int(v) for v in counts] + [1] * (3 - dim)
    return GridGeometry(o[0], o[1], o[2], c[0], c[1], c[2], k[0], k[1], k[2], space.kind == PERIODIC)


@device
def axis_cell(x, origin, width, count):
    c = math.floor((x - origin) / width)
    if c < 0:
        return 0
    if c >= count:
        return count - 1
    return c


@device
def cell_coords(position, i, dim, g):
    x, y, z = load(position, i, dim)
    if g.periodic:  # bin a not-yet-wrapped position by its image in the box, as minimum-image distances see it
        x = wrap_coordinate(x, g.cx * g.nx)
        y = wrap_coordinate(y, g.cy * g.ny)
        z = wrap_coordinate(z, g.cz * g.nz)
    return axis_cell(x, g.ox, g.cx, g.nx), axis_cell(y, g.oy, g.cy, g.ny), axis_cell(z, g.oz, g.cz, g.nz)


@device
def cell_id(ix, iy, iz, g):
    return (iz * g.ny + iy) * g.nx + ix


@device
def block_range(c, count, periodic):
    """First cell and number of cells of the 3-wide block around cell c on one axis.

    Periodic axes wrap (take the first modulo count) and, with fewer than 3
    cells, visit each cell once.
    """
    if periodic:
        if count < 3:
            return 0, count
        return c - 1, 3
    lo = max(c - 1, 0)
    hi = min(c + 1, count - 1)
    return lo, hi - lo + 1


@device
def wrap_cell(c, count):
    if c < 0:
        return c + count
    if c >= count:
        return c - count
    return c


@numba.njit(parallel=True, cache=True)
def cell_of_agents(position, alive, dim, g, cell):
    """cell[i] = cell of alive agent i, -1 for a dead one."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            ix, iy, iz = cell_coords(position, i, dim, g)
            cell[i] = cell_id(ix, iy, iz, g)
        else:
            cell[i] = -1


@numba.njit(cache=True)
def counting_sort(cell, ncell, cell_start, order):
    """Stable counting sort of agents by cell (dead agents have cell -1)."""
    for c in range(ncell + 1):
        cell_start[c] = 0
    for i in range(cell.shape[0]):
        if cell[i] >= 0:
            cell_start[cell[i] + 1] += 1
    for c in range(ncell):
        cell_start[c + 1] += cell_start[c]
    fill = cell_start[:ncell].copy()
    for i in range(cell.shape[0]):
        c = cell[i]
        if c >= 0:
            order[fill[c]] = i
            fill[c] += 1


@numba.njit(parallel=True, cache=True)
def _metric_pass(position, alive, dim, space, g, cell_start, order, radius2, start, index, write):
    n = position.shape[0]
    for i in numba.prange(n):
        if not alive[i]:
            if not write:
                start[i] = 0
            continue
        ix, iy, iz = cell_coords(position, i, dim, g)
        x0, xn = block_range(ix, g.nx, g.periodic)
        y0, yn = block_range(iy, g.ny, g.periodic)
        z0, zn = block_range(iz, g.nz, g.periodic)
        count = 0
        out = start[i] if write else 0
        for a in range(zn):
            cz = wrap_cell(z0 + a, g.nz)
            for b in range(yn):
                cy = wrap_cell(y0 + b, g.ny)
                for e in range(xn):
                    cx = wrap_cell(x0 + e, g.nx)
                    c = cell_id(cx, cy, cz, g)
                    for t in range(cell_start[c], cell_start[c + 1]):
                        j = order[t]
                        if j != i and pair_distance2(position, i, j, dim, space) <= radius2:
                            if write:
                                index[out + count] = j
                            count += 1
        if write:
            sort_row(index, out, out + count)
        else:
            start[i] = count


def build_cells(position: np.ndarray, alive: np.ndarray, g: GridGeometry) -> tuple[np.ndarray, np.ndarray]:
    """Counting sort of the alive agents by cell: the agents of cell c are
    order[cell_start[c]:cell_start[c+1]], in increasing index."""
    ncell = g.nx * g.ny * g.nz
    cell = np.empty(position.shape[0], dtype=np.int64)
    cell_of_agents(position, alive, position.shape[1], g, cell)
    cell_start = np.empty(ncell + 1, dtype=np.int64)
    order = np.empty(int(np.count_nonzero(cell >= 0)), dtype=np.int64)
    counting_sort(cell, ncell, cell_start, order)
    return cell_start, order


def metric_neighbors_grid(position: np.ndarray, alive: np.ndarray, space: Space, radius: float) -> NeighborList:
    """Same result as :func:`flocksim.neighbors.brute.metric_neighbors_brute`, in O(N) per step."""
    n, dim = position.shape
    if n == 0 or radius <= 0.0:
        from flocksim.neighbors.brute import metric_neighbors_brute

        return metric_neighbors_brute(position, alive, space, radius)
    g = grid_geometry(position, alive, space, radius)
    cell_start, order = build_cells(position, alive, g)
    counts = np.zeros(n, dtype=np.int64)
    dummy = np.zeros(0, dtype=np.int64)
    r2 = radius * radius
    _metric_pass(position, alive, dim, space, g, cell_start, order, r2, counts, dummy, False)
    start = starts_from_counts(counts)
    index = np.empty(start[-1], dtype=np.int64)
    _metric_pass(position, alive, dim, space, g, cell_start, order, r2, start, index, True)
    return NeighborList(start, index)
