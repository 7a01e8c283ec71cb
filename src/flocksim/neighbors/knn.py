"""Topological neighbours: the k nearest, found on the cell grid.

The agents of a cell are searched together first (``knn_rows_by_cell`` in coherent.py): the cell's
3x3(x3) block is gathered once and each agent keeps the k nearest of the candidates nearer than
anything outside the block. An agent whose block cannot prove its k nearest takes the ring search:
cells are searched in rings of growing Chebyshev distance r
from its own cell; after ring r every unvisited agent is at least r cell
widths away, so the search stops once the k-th distance is below that bound.
The result is exact and equals the brute-force reference: rows sorted by
(distance, id), ties to the lower id. Neighbourhoods are asymmetric (j may be
among i's k nearest without i being among j's).
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.kernels.compile import device
from flocksim.neighbors.brute import compact_rows, knn_buffers
from flocksim.neighbors.csr import UNLIMITED, NeighborList
from flocksim.space import PERIODIC, Space


def agents_per_cell(k: int) -> float:
    """Target mean occupancy of the k-nearest grid: about k/2.2, so that at uniform
    density the k-th neighbour usually lies within the first ring of cells (27 or so
    candidates for k = 7) without making the rings needlessly crowded."""
    return max(2.0, k / 2.2)


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


def knn_cell_width(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> float:
    """Cell width giving about ``agents_per_cell(k)`` agents per cell at uniform density."""
    from flocksim.neighbors.grid import alive_bounds

    dim = position.shape[1]
    lo = np.zeros(dim)
    hi = np.zeros(dim)
    n_alive = alive_bounds(position, alive, lo, hi)
    return knn_width_from_bounds(lo, hi, n_alive, space, k)


def knn_width_from_bounds(lo: np.ndarray, hi: np.ndarray, n_alive: int, space: Space, k: int) -> float:
    """:func:`knn_cell_width` from the alive agents' per-axis bounds and count."""
    dim = len(lo)
    n_alive = max(n_alive, 1)
    extent = np.array([space.lx, space.ly, space.lz])[:dim] if space.kind == PERIODIC else hi - lo
    extent = np.maximum(extent, 1e-12 + 1e-9 * float(extent.max(initial=0.0)))
    return float((np.prod(extent) * agents_per_cell(k) / n_alive) ** (1.0 / dim))


def knn_neighbors_grid(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    k: int,
    budget: PairBudget = UNLIMITED,
    query: np.ndarray | None = None,
) -> NeighborList:
    """Same result as :func:`flocksim.neighbors.brute.knn_neighbors_brute` (and the same budget check);
    ``query`` (N,) bool: only the rows of the alive agents it marks are searched (None: all)."""
    from flocksim.neighbors.coherent import BLOCK_CANDIDATES, build_knn_grid, knn_cell_scratch, knn_rows_by_cell

    n, dim = position.shape
    budget.check_topological(n, k)
    if n == 0 or not alive.any():
        row_index, _, fill = knn_buffers(n, k)
        return compact_rows(row_index, fill)
    grid = build_knn_grid(position, alive, space, k)
    row_index = np.empty((n, k), dtype=np.int64)
    fill = np.zeros(n, dtype=np.int64)
    block_cells = 27 if dim == 3 else 9
    capacity = min(BLOCK_CANDIDATES, block_cells * int(np.diff(grid.cell_start).max()))
    scratch = knn_cell_scratch(numba.get_num_threads(), k, capacity)
    query = alive if query is None else query
    knn_rows_by_cell(grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, grid.geometry, dim, space, k,
                     query, scratch, row_index, fill)  # fmt: skip
    return compact_rows(row_index, fill)
