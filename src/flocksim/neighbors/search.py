"""The public grid searches: metric and k-nearest neighbour rows of a flock, from the cell build
(:mod:`.grid`, :mod:`.knn`, :mod:`.knn_geometry`) and the scans over it (:mod:`.coherent`,
:mod:`.masked`). The neighbour package is a chain: geometry and cells, then the scans, then these
searches, then :mod:`.query` and the package's names."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.neighbors.brute import compact_rows, knn_buffers, metric_neighbors_brute
from flocksim.neighbors.coherent_build import CoherentGrid, block_runs_scratch, build_coherent_grid, build_knn_grid
from flocksim.neighbors.coherent_knn import BLOCK_CANDIDATES, knn_cell_scratch, knn_rows_by_cell
from flocksim.neighbors.coherent_metric import FILL_HITS, fill_stripes, metric_count, metric_fill_ascending
from flocksim.neighbors.csr import UNLIMITED, NeighborList, starts_from_counts
from flocksim.neighbors.masked import metric_rows_masked
from flocksim.space import Space


def metric_neighbors_grid(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    radius: float,
    budget: PairBudget = UNLIMITED,
    query: np.ndarray | None = None,
) -> NeighborList:
    """Same result as :func:`flocksim.neighbors.brute.metric_neighbors_brute` (and the same budget
    check), in O(N) per step: on the coherent grid (cells at least ``radius`` wide), counted, then written.
    ``query`` (N,) bool: only the rows of the alive agents it marks are searched
    (:func:`flocksim.neighbors.masked.metric_rows_masked`); None: all."""
    n, dim = position.shape
    if n == 0 or radius <= 0.0:
        return metric_neighbors_brute(position, alive, space, radius, budget, query)
    grid = build_coherent_grid(position, alive, space, radius)
    if query is not None:
        return metric_rows_masked(grid, n, dim, space, radius, query, budget)
    return metric_rows(grid, n, dim, space, radius, budget)


def metric_counts_grid(grid: CoherentGrid, n: int, dim: int, space: Space, radius: float) -> tuple[np.ndarray, ...]:
    """Pass one of :func:`metric_rows`: (row lengths (N,), runs, shifts) (see ``metric_count``)."""
    runs, shifts = block_runs_scratch(numba.get_num_threads())
    counts = np.zeros(n, dtype=np.int64)
    metric_count(grid.xs, grid.ys, grid.zs, grid.order, grid.cell_start, grid.geometry, dim, space, radius * radius,
                 runs, shifts, counts)  # fmt: skip
    return counts, runs, shifts


def metric_rows(
    grid: CoherentGrid, n: int, dim: int, space: Space, radius: float, budget: PairBudget = UNLIMITED
) -> NeighborList:
    """Metric neighbour rows of n agents from a coherent grid built for ``radius`` (> 0); BudgetError
    after counting, before the list is allocated, when it would hold more pairs than ``budget``."""
    counts, runs, shifts = metric_counts_grid(grid, n, dim, space, radius)
    r2 = radius * radius
    g = grid.geometry
    start = starts_from_counts(counts)
    budget.check_metric(int(start[-1]), len(grid.order), radius)
    index = np.empty(start[-1], dtype=np.int64)
    fill = start[:-1].copy()
    threads = numba.get_num_threads()
    stripes = fill_stripes(grid, threads)
    hits = np.empty((threads, FILL_HITS + 1), dtype=np.int64)
    metric_fill_ascending(grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, g, dim, space, r2, runs,
                          shifts, hits, stripes, fill, index)  # fmt: skip
    return NeighborList(start, index)


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
