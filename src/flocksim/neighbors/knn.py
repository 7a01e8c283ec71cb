"""Topological neighbours (SPEC 2.2): the k nearest, found on the cell grid.

For each agent, cells are searched in rings of growing Chebyshev distance r
from its own cell; after ring r every unvisited agent is at least r cell
widths away, so the search stops once the k-th distance is below that bound.
The result is exact and equals the brute-force reference: rows sorted by
(distance, id), ties to the lower id. Neighbourhoods are asymmetric (j may be
among i's k nearest without i being among j's).
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.compile import device
from flocksim.neighbors.brute import compact_rows, knn_buffers
from flocksim.neighbors.csr import NeighborList
from flocksim.neighbors.grid import build_cells, cell_coords, cell_id, grid_geometry
from flocksim.neighbors.pairs import knn_insert, pair_distance2
from flocksim.space import PERIODIC, Space

AGENTS_PER_CELL = 2.0
"""Target mean occupancy of the k-nearest grid."""
BOUND_SAFETY = 1.0 - 1e-9
"""The ring bound is shrunk by this factor so that rounding never stops a search early."""


@device
def offset_range(c, count, periodic):
    """Smallest and largest cell offset from cell c that reach distinct cells on one axis."""
    if periodic:
        return -((count - 1) // 2), count // 2
    return -c, count - 1 - c


@device
def wrap_offset(c, o, count):
    v = c + o
    if v < 0:
        v += count
    elif v >= count:
        v -= count
    return v


@device
def scan_cell(position, dim, space, cell_start, order, c, i, k, m, row_index, row_d2):
    for t in range(cell_start[c], cell_start[c + 1]):
        j = order[t]
        if j != i:
            m = knn_insert(row_index, row_d2, i, m, k, j, pair_distance2(position, i, j, dim, space))
    return m


@numba.njit(parallel=True, cache=True)
def _knn_grid(position, alive, dim, space, g, cell_start, order, k, row_index, row_d2, fill):
    n = position.shape[0]
    width = min(g.cx, g.cy)
    if dim == 3:
        width = min(width, g.cz)
    for i in numba.prange(n):
        m = 0
        if alive[i]:
            ix, iy, iz = cell_coords(position, i, dim, g)
            xlo, xhi = offset_range(ix, g.nx, g.periodic)
            ylo, yhi = offset_range(iy, g.ny, g.periodic)
            zlo, zhi = offset_range(iz, g.nz, g.periodic)
            rmax = max(max(-xlo, xhi), max(max(-ylo, yhi), max(-zlo, zhi)))
            for r in range(rmax + 1):
                for ox in range(max(xlo, -r), min(xhi, r) + 1):
                    cx = wrap_offset(ix, ox, g.nx)
                    for oy in range(max(ylo, -r), min(yhi, r) + 1):
                        cy = wrap_offset(iy, oy, g.ny)
                        if abs(ox) == r or abs(oy) == r:
                            for oz in range(max(zlo, -r), min(zhi, r) + 1):
                                c = cell_id(cx, cy, wrap_offset(iz, oz, g.nz), g)
                                m = scan_cell(position, dim, space, cell_start, order, c, i, k, m, row_index, row_d2)
                        else:  # only the two z faces of the ring
                            if -r >= zlo:
                                c = cell_id(cx, cy, wrap_offset(iz, -r, g.nz), g)
                                m = scan_cell(position, dim, space, cell_start, order, c, i, k, m, row_index, row_d2)
                            if r <= zhi and r != 0:
                                c = cell_id(cx, cy, wrap_offset(iz, r, g.nz), g)
                                m = scan_cell(position, dim, space, cell_start, order, c, i, k, m, row_index, row_d2)
                if m == k:
                    bound = r * width * BOUND_SAFETY
                    if row_d2[i, k - 1] < bound * bound:
                        break
        fill[i] = m


def knn_cell_width(position: np.ndarray, alive: np.ndarray, space: Space) -> float:
    """Cell width giving about AGENTS_PER_CELL agents per cell at uniform density."""
    n_alive = max(int(alive.sum()), 1)
    dim = position.shape[1]
    if space.kind == PERIODIC:
        extent = np.array([space.lx, space.ly, space.lz])[:dim]
    else:
        pts = position[alive] if alive.any() else np.zeros((1, dim))
        extent = pts.max(axis=0) - pts.min(axis=0)
    extent = np.maximum(extent, 1e-12 + 1e-9 * float(extent.max(initial=0.0)))
    return float((np.prod(extent) * AGENTS_PER_CELL / n_alive) ** (1.0 / dim))


def knn_neighbors_grid(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> NeighborList:
    """Same result as :func:`flocksim.neighbors.brute.knn_neighbors_brute`."""
    n, dim = position.shape
    row_index, row_d2, fill = knn_buffers(n, k)
    if n == 0:
        return compact_rows(row_index, fill)
    g = grid_geometry(position, alive, space, knn_cell_width(position, alive, space))
    cell_start, order = build_cells(position, alive, g)
    _knn_grid(position, alive, dim, space, g, cell_start, order, k, row_index, row_d2, fill)
    return compact_rows(row_index, fill)
