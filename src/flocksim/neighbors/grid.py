"""Uniform cell grid: agents binned by a counting sort, queries over
the 3x3 (2D) or 3x3x3 (3D) block of cells around an agent.

Cells are at least the query radius wide, so the block holds every neighbour.
Periodic space tiles the box exactly (cells of L/n); other spaces take the
grid's extent from the bounding box of the alive agents, with the cell count
capped near 2N so a few far-flung agents cannot blow up memory.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numba
import numpy as np

from flocksim.kernels.cells import axis_cell
from flocksim.kernels.compile import device
from flocksim.kernels.vector import load
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


@numba.njit(cache=True)
def alive_bounds(position, alive, lo, hi):
    """Per-axis minimum and maximum of the alive agents' coordinates into lo and hi (left at
    zero when none is alive; a NaN coordinate makes its axis NaN, as numpy's min/max would).
    Returns the number of alive agents. One serial pass: numpy's min(axis=0) on an (N, 2)
    array takes 20x longer."""
    n, dim = position.shape
    count = 0
    for i in range(n):
        if alive[i]:
            for a in range(dim):
                x = position[i, a]
                if count == 0:
                    lo[a] = x
                    hi[a] = x
                else:
                    if x < lo[a] or x != x:
                        lo[a] = x
                    if x > hi[a] or x != x:
                        hi[a] = x
            count += 1
    return count


def grid_geometry(
    position: np.ndarray, alive: np.ndarray, space: Space, min_cell: float, max_cells: int | None = None
) -> GridGeometry:
    """Geometry with cells at least ``min_cell`` wide (> 0) and at most ``max_cells`` cells."""
    _n, dim = position.shape
    lo = np.zeros(dim)
    hi = np.zeros(dim)
    n_alive = alive_bounds(position, alive, lo, hi)
    return geometry_from_bounds(lo, hi, n_alive, space, min_cell, max_cells)


def geometry_from_bounds(
    lo: np.ndarray, hi: np.ndarray, n_alive: int, space: Space, min_cell: float, max_cells: int | None = None
) -> GridGeometry:
    """:func:`grid_geometry` from the alive agents' per-axis bounds (lo, hi: (dim,) arrays) and count."""
    dim = len(lo)
    if max_cells is None:
        max_cells = max(64, 2 * n_alive)
    width = min_cell * CELL_SLACK
    if space.kind == PERIODIC:
        lengths = np.array([space.lx, space.ly, space.lz])[:dim]
        origin = np.zeros(dim)
    else:
        origin = lo
        lengths = np.maximum(hi - origin, 0.0)
    if not np.isfinite(lengths).all():
        raise ValueError(f"grid: the agents' extent must be finite, got {lengths.tolist()}")
    while True:  # counts are compared as floats: a tiny radius must not overflow the integer cast
        with np.errstate(over="ignore"):  # a tiny cell over a huge extent: inf cells, then wider ones
            wanted = np.floor(lengths / width)
        wanted = np.maximum(1.0, wanted) if space.kind == PERIODIC else wanted + 1.0
        if math.prod(float(c) for c in wanted) <= max_cells:
            counts = wanted.astype(np.int64)
            widths = lengths / counts if space.kind == PERIODIC else np.full(dim, width)
            break
        width *= 1.25
    o = list(origin) + [0.0] * (3 - dim)
    c = list(widths) + [1.0] * (3 - dim)
    k = [int(v) for v in counts] + [1] * (3 - dim)
    return GridGeometry(o[0], o[1], o[2], c[0], c[1], c[2], k[0], k[1], k[2], space.kind == PERIODIC)


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


_MOVED = ("metric_neighbors_grid", "metric_counts_grid", "metric_rows")
"""Searches that moved to :mod:`flocksim.neighbors.search` (the package's chain: this module is below
the scans they run); their old names here still work, with a DeprecationWarning."""


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib
        import warnings

        warnings.warn(
            f"{__name__}.{name} moved to flocksim.neighbors.search (or use flocksim.neighbors.{name})",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("flocksim.neighbors.search"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
