"""Metric rows of some agents only (a query mask), on the coherent grid.

:func:`flocksim.neighbors.search.metric_rows` fills every row from the neighbour's side (each agent j
appends itself to the rows near it), which needs every row. When only the agents marked by a query
mask need rows (the level of detail, :mod:`flocksim.components.detail`), each marked agent scans its
own block instead (:func:`flocksim.neighbors.coherent._scan_metric`, distances as the brute-force
reference computes them), and its row is sorted by index, so every row searched is bitwise the row
the full search gives; the rows of unmarked agents are empty and cost nothing.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.kernels.compile import serial_kernel
from flocksim.neighbors.coherent_build import CoherentGrid, block_runs_at, block_runs_scratch
from flocksim.neighbors.coherent_metric import _count_metric, _scan_metric
from flocksim.neighbors.csr import UNLIMITED, NeighborList, starts_from_counts
from flocksim.space import Space


@serial_kernel
def _masked_row(row, tid, xs, ys, zs, order, cell_start, g, dim, space, radius2, runs, shifts, query, start, index,
                write):  # fmt: skip
    """The marked agents of the cells of one row (y, z) of the grid: ``write`` False: start[i] =
    agent i's row length; True: its row into index[start[i]:], sorted by index (insertion sort:
    rows are short, and come nearly sorted, cell by cell)."""
    iy = row % g.ny
    iz = row // g.ny
    for ix in range(g.nx):
        c = row * g.nx + ix
        lo = cell_start[c]
        hi = cell_start[c + 1]
        nruns = -1
        for si in range(lo, hi):
            i = order[si]
            if not query[i]:
                continue
            if nruns < 0:  # the block of a cell without marked agents is never walked
                nruns = block_runs_at(ix, iy, iz, g, cell_start, space.lx, space.ly, space.lz, tid, runs, shifts)
            if not write:
                start[i] = _count_metric(si, nruns, tid, runs, xs, ys, zs, dim, space, radius2)
                continue
            base = start[i]
            m = _scan_metric(si, nruns, tid, runs, xs, ys, zs, order, dim, space, radius2, index, base)
            for u in range(base + 1, base + m):
                v = index[u]
                w = u - 1
                while w >= base and index[w] > v:
                    index[w + 1] = index[w]
                    w -= 1
                index[w + 1] = v


@numba.njit(parallel=True, cache=True)
def masked_metric_pass(xs, ys, zs, order, cell_start, g, dim, space, radius2, runs, shifts, query, start, index,
                       write):  # fmt: skip
    """One pass of :func:`metric_rows_masked`, cell row by cell row (a row's agents write only their own rows)."""
    for row in numba.prange(g.ny * g.nz):
        row64 = np.int64(row)  # the loop index is unsigned where numba lowers the loop: one signature for both
        _masked_row(row64, numba.get_thread_id(), xs, ys, zs, order, cell_start, g, dim, space, radius2, runs, shifts,
                    query, start, index, write)  # fmt: skip


def metric_rows_masked(
    grid: CoherentGrid,
    n: int,
    dim: int,
    space: Space,
    radius: float,
    query: np.ndarray,
    budget: PairBudget = UNLIMITED,
) -> NeighborList:
    """Metric rows (radius > 0, ``grid`` built for it) of the alive agents i with query[i]; the other rows are
    empty. BudgetError after counting, before the list is allocated, when it would hold more pairs than ``budget``."""
    runs, shifts = block_runs_scratch(numba.get_num_threads())
    r2 = radius * radius
    g = grid.geometry
    counts = np.zeros(n, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    masked_metric_pass(grid.xs, grid.ys, grid.zs, grid.order, grid.cell_start, g, dim, space, r2, runs, shifts, query,
                       counts, empty, False)  # fmt: skip
    start = starts_from_counts(counts)
    budget.check_metric(int(start[-1]), len(grid.order), radius)
    index = np.empty(start[-1], dtype=np.int64)
    masked_metric_pass(grid.xs, grid.ys, grid.zs, grid.order, grid.cell_start, g, dim, space, r2, runs, shifts, query,
                       start[:-1], index, True)  # fmt: skip
    return NeighborList(start, index)
