"""The coherent grid's build: agents binned by cell and copied into cell order, and a cell's block as runs.

A counting sort orders the alive agents by cell (by index inside a cell); their
coordinates are gathered into contiguous cell-ordered arrays, so a neighbour
loop reads memory in runs (the "coherent grid" of GPU flocking work). Kernels
then work per cell: the 3x3 (3x3x3) block of a cell is a few *runs* of
consecutive slots (cells adjacent in x are adjacent in memory), each with one
periodic image shift (:func:`block_runs`), and every agent of the cell scans those runs.

Bitwise parity with the brute-force reference: a periodic displacement is
computed as ``(x_j - x_i) - L*m`` with the image count m of the block cell,
which is what ``space.min_image`` computes for any pair within the query
radius (:func:`run_displacement`). Axes with fewer than 3 cells visit each cell once and use the full
minimum image per pair.

The scans over the grid are :mod:`flocksim.neighbors.coherent_knn` (k nearest) and
:mod:`flocksim.neighbors.coherent_metric` (within a radius); :mod:`flocksim.neighbors.coherent`
gives all three modules' names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from flocksim.kernels.compile import device
from flocksim.neighbors.grid import (
    GridGeometry,
    alive_bounds,
    cell_id,
    cell_of_agents,
    counting_sort,
    grid_geometry,
)
from flocksim.neighbors.knn import agents_per_cell
from flocksim.neighbors.knn_geometry import knn_axes, knn_geometry
from flocksim.space import Space, min_image


@dataclass
class CoherentGrid:
    """Cell-ordered copy of the alive agents' coordinates."""

    geometry: GridGeometry
    cell_start: np.ndarray  # (ncell + 1,) int64: agents of cell c are slots cell_start[c]:cell_start[c+1]
    order: np.ndarray  # (n_alive,) int64: agent index of each slot
    cell: np.ndarray  # (N,) int64: cell of each agent (-1 if dead)
    xs: np.ndarray  # (n_alive,) float64 coordinates in slot order (zs is zeros in 2D)
    ys: np.ndarray
    zs: np.ndarray


@numba.njit(parallel=True, cache=True)
def _gather(position, dim, order, xs, ys, zs):
    for s in numba.prange(order.shape[0]):
        i = order[s]
        xs[s] = position[i, 0]
        ys[s] = position[i, 1]
        zs[s] = position[i, 2] if dim == 3 else 0.0


@device
def block_axis(c, count, periodic, length, e):
    """Cell and image shift L*m of the e-th cell of the block around cell c on one axis.

    Periodic axes with >= 3 cells: cells c-1, c, c+1 wrapped; a cell reached by
    wrapping below 0 lies one box length *down*, so neighbours there have
    x_j - x_i near +L and shift +L (and -L above). Fewer than 3 cells: each cell
    once, shift 0 (the kernel then takes the full minimum image).
    """
    if periodic:
        if count < 3:
            return e, 0.0
        raw = c - 1 + e
        if raw < 0:
            return raw + count, length
        if raw >= count:
            return raw - count, -length
        return raw, 0.0
    lo = max(c - 1, 0)
    return lo + e, 0.0


@device
def block_width(c, count, periodic):
    if periodic:
        return count if count < 3 else 3
    return min(c + 1, count - 1) - max(c - 1, 0) + 1


@numba.njit(parallel=True, cache=True)
def gather_slots(values, order, out):
    """out[s] = values[order[s]]: a per-agent column in slot order."""
    for s in numba.prange(order.shape[0]):
        out[s] = values[order[s]]


def build_coherent_grid(position: np.ndarray, alive: np.ndarray, space: Space, min_cell: float) -> CoherentGrid:
    """Bin alive agents into cells at least ``min_cell`` wide and gather them in cell order."""
    return coherent_grid(position, alive, grid_geometry(position, alive, space, min_cell))


def coherent_grid(position: np.ndarray, alive: np.ndarray, g: GridGeometry) -> CoherentGrid:
    """Bin alive agents into the cells of ``g`` and gather them in cell order."""
    n, dim = position.shape
    ncell = g.nx * g.ny * g.nz
    cell = np.empty(n, dtype=np.int64)
    cell_of_agents(position, alive, dim, g, cell)
    cell_start = np.empty(ncell + 1, dtype=np.int64)
    n_alive = int(np.count_nonzero(cell >= 0))
    order = np.empty(n_alive, dtype=np.int64)
    counting_sort(cell, ncell, cell_start, order)
    xs = np.empty(n_alive)
    ys = np.empty(n_alive)
    zs = np.empty(n_alive)
    _gather(position, dim, order, xs, ys, zs)
    return CoherentGrid(g, cell_start, order, cell, xs, ys, zs)


CROWDING_LIMIT = 1.5
"""A k-nearest grid is rebuilt with narrower cells when its agent-weighted mean occupancy
exceeds this many times that of uniform density."""


def build_knn_grid(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> CoherentGrid:
    """Coherent grid sized for k-nearest searches: cells for ``agents_per_cell(k)`` agents at
    the bounding box's mean density, one cell on an open-space axis the agents span thinly (see
    knn_geometry.py), narrowed once when the agents are clustered (a flock in an open world fills
    a fraction of its box; crowded cells mean many candidates per agent).

    Crowding is the occupancy an agent sees, sum(n_c^2) / sum(n_c) over cells c; uniform
    (Poisson) agents give the mean occupancy plus one. Any width gives the same neighbours.
    """
    dim = position.shape[1]
    lo = np.zeros(dim)
    hi = np.zeros(dim)
    n_alive = alive_bounds(position, alive, lo, hi)
    width, thin = knn_axes(lo, hi, n_alive, space, k)
    grid = coherent_grid(position, alive, knn_geometry(lo, hi, n_alive, space, width, thin))
    occupancy = np.diff(grid.cell_start)
    divided = dim - int(np.count_nonzero(thin))
    narrower = narrowed_knn_width(width, int(np.dot(occupancy, occupancy)), int(occupancy.sum()), k, divided)
    if narrower is not None:
        grid = coherent_grid(position, alive, knn_geometry(lo, hi, n_alive, space, narrower, thin))
    return grid


def narrowed_knn_width(width: float, sum_squares: int, placed: int, k: int, dim: int) -> float | None:
    """The narrower cell width :func:`build_knn_grid` switches to when a grid of ``width`` is
    crowded (``sum_squares``: sum of squared cell occupancies, ``placed``: agents binned, ``dim``: axes
    divided into cells, thin axes left out), else None."""
    if placed == 0:
        return None
    uniform = agents_per_cell(k) + 1.0
    crowding = float(sum_squares) / placed
    if crowding > CROWDING_LIMIT * uniform:
        return width * (uniform / crowding) ** (1.0 / dim)
    return None


MAX_RUNS = 18
"""Most runs of a block: 9 (y, z) rows of cells (3D), each split in two where x wraps."""


def block_runs_scratch(threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-thread scratch of :func:`block_runs`: (first, past-last) slots and image shifts,
    each thread's rows a whole number of cache lines."""
    return np.empty((threads, MAX_RUNS, 2), dtype=np.int64), np.empty((threads, MAX_RUNS, 3))


@device
def block_runs(c, g, cell_start, lx, ly, lz, tid, runs, shifts):
    """The block of cell c as runs of consecutive slots, into row ``tid`` of
    ``runs`` (int64, (threads, MAX_RUNS, 2): first and past-last slot) and
    ``shifts`` (float64, (threads, MAX_RUNS, 3): image shift L*m per axis, see
    :func:`block_axis`). Empty runs are left out. Runs come in the order a cell-by-cell
    visit takes (z, then y, then x from c-1 to c+1, wrapped), so summing over them adds in
    the same order as over the block's cells. Returns the number of runs."""
    ix = c % g.nx
    iy = (c // g.nx) % g.ny
    iz = c // (g.nx * g.ny)
    return block_runs_at(ix, iy, iz, g, cell_start, lx, ly, lz, tid, runs, shifts)


@device
def block_runs_at(ix, iy, iz, g, cell_start, lx, ly, lz, tid, runs, shifts):
    """:func:`block_runs` of the cell at (ix, iy, iz): for loops that walk cells row by row and
    so skip block_runs's three integer divisions per cell."""
    nruns = 0
    for a in range(block_width(iz, g.nz, g.periodic)):
        cz, sz = block_axis(iz, g.nz, g.periodic, lz, a)
        for b in range(block_width(iy, g.ny, g.periodic)):
            cy, sy = block_axis(iy, g.ny, g.periodic, ly, b)
            row = cell_id(0, cy, cz, g)
            # up to two x segments: [x0, x1] with shift s0 and [x2, x3] with shift s2
            x0, x1, s0, x2, x3, s2 = ix - 1, ix + 1, 0.0, 0, -1, 0.0
            if not g.periodic:
                x0 = max(x0, 0)
                x1 = min(x1, g.nx - 1)
            elif g.nx < 3:
                x0, x1 = 0, g.nx - 1
            elif ix == 0:  # cell nx-1 (wrapped, below 0) first: runs follow the cell order c-1, c, c+1
                x0, x1, s0, x2, x3, s2 = g.nx - 1, g.nx - 1, lx, 0, 1, 0.0
            elif ix == g.nx - 1:
                x0, x1, x2, x3, s2 = g.nx - 2, g.nx - 1, 0, 0, -lx
            for lo_cell, hi_cell, sx in ((x0, x1, s0), (x2, x3, s2)):
                if hi_cell < lo_cell:
                    continue
                lo = cell_start[row + lo_cell]
                hi = cell_start[row + hi_cell + 1]
                if hi > lo:
                    runs[tid, nruns, 0] = lo
                    runs[tid, nruns, 1] = hi
                    shifts[tid, nruns, 0] = sx
                    shifts[tid, nruns, 1] = sy
                    shifts[tid, nruns, 2] = sz
                    nruns += 1
    return nruns


@device
def run_displacement(xi, yi, zi, xj, yj, zj, sx, sy, sz, full_x, full_y, full_z, space):
    """Displacement i -> j seen through a block run: (x_j - x_i) - L*m per axis, or the full
    minimum image on axes with fewer than 3 cells; bitwise what ``displacement`` gives
    for pairs within the query radius."""
    dx = xj - xi
    dy = yj - yi
    dz = zj - zi
    dx = min_image(dx, space.lx) if full_x else dx - sx
    dy = min_image(dy, space.ly) if full_y else dy - sy
    dz = min_image(dz, space.lz) if full_z else dz - sz
    return dx, dy, dz


def full_image_axes(g: GridGeometry) -> tuple[bool, bool, bool]:
    """Axes on which run displacements need the full minimum image."""
    return (g.periodic and g.nx < 3, g.periodic and g.ny < 3, g.periodic and g.nz < 3)
