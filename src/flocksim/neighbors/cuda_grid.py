"""The coherent grid on the GPU, and neighbour lists from it (metric and k-nearest).

The same grid as :mod:`flocksim.neighbors.coherent`, built with device kernels: each alive
agent's cell (``cell_coords``), a count per cell (integer atomics), an exclusive scan to cell
starts, a scatter into slots (atomics: the order inside a cell is then arbitrary), and a sort of
each cell's slots by agent index, which restores the CPU grid's order exactly; then coordinates
gathered in slot order. The geometry (origin, cell widths and counts) comes from
:func:`flocksim.neighbors.grid.geometry_from_bounds` on a device-computed bounding box (open and
box worlds), so cells, slots and rows equal the CPU grid's bit for bit.

Neighbour lists are CSR (:class:`flocksim.neighbors.NeighborList`) with the CPU's conventions:
metric rows sorted by index (a count pass, a scan, a fill pass that sorts each row), k-nearest
rows by (distance, index) from the CPU's own ring search :func:`knn_search`, one thread per agent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import cuda

from flocksim.kernels.cuda_runtime import kernel
from flocksim.neighbors.coherent_build import MAX_RUNS, block_runs, narrowed_knn_width
from flocksim.neighbors.coherent_knn import knn_search
from flocksim.neighbors.coherent_metric import _pair_d2, _scan_metric
from flocksim.neighbors.cuda_scan import alive_bounds, exclusive_scan, total
from flocksim.neighbors.grid import GridGeometry, cell_coords, cell_id, geometry_from_bounds
from flocksim.neighbors.knn import knn_width_from_bounds
from flocksim.neighbors.pairs import sort_row
from flocksim.space import PERIODIC, Space


@dataclass
class DeviceGrid:
    """Cell-ordered copy of the alive agents on the GPU (see :class:`flocksim.neighbors.coherent.CoherentGrid`)."""

    geometry: GridGeometry
    cell_start: Any  # (ncell + 1,) int64
    order: Any  # (n_alive,) int64: agent index of each slot
    cell: Any  # (N,) int64: cell of each agent, -1 if dead
    xs: Any  # (n_alive,) float64, zs zeros in 2D
    ys: Any
    zs: Any
    n_alive: int


def _cells(position, alive, dim, g, cell, counts):
    i = cuda.grid(1)
    if i < position.shape[0]:
        if alive[i]:
            ix, iy, iz = cell_coords(position, i, dim, g)
            c = cell_id(ix, iy, iz, g)
            cell[i] = c
            cuda.atomic.add(counts, c, 1)
        else:
            cell[i] = -1


def _scatter(cell, cell_start, fill, order):
    i = cuda.grid(1)
    if i < cell.shape[0]:
        c = cell[i]
        if c >= 0:
            order[cell_start[c] + cuda.atomic.add(fill, c, 1)] = i


def _sort_cells(cell_start, order):
    c = cuda.grid(1)
    if c < cell_start.shape[0] - 1:
        sort_row(order, cell_start[c], cell_start[c + 1])


def _gather(position, dim, order, xs, ys, zs):
    s = cuda.grid(1)
    if s < order.shape[0]:
        i = order[s]
        xs[s] = position[i, 0]
        ys[s] = position[i, 1]
        zs[s] = position[i, 2] if dim == 3 else 0.0


def _sum_squares(cell_start, out):
    """out[0] += sum over cells of occupancy^2, one thread per cell (integer atomics: exact)."""
    c = cuda.grid(1)
    if c < cell_start.shape[0] - 1:
        m = cell_start[c + 1] - cell_start[c]
        if m > 0:
            cuda.atomic.add(out, 0, m * m)


cells_kernel = kernel(_cells)
scatter_kernel = kernel(_scatter)
sort_cells_kernel = kernel(_sort_cells)
gather_kernel = kernel(_gather)
sum_squares_kernel = kernel(_sum_squares)


def device_bounds(position, alive, space: Space, n: int, dim: int, n_alive: int) -> tuple[np.ndarray, np.ndarray]:
    """The alive agents' bounding box (only open and box worlds need one: a sync point)."""
    if space.kind == PERIODIC:
        return np.zeros(dim), np.zeros(dim)
    lo, hi, _ = alive_bounds(position, alive, n, dim)
    return lo, hi


def device_grid(position, alive, n: int, dim: int, g: GridGeometry, n_alive: int) -> DeviceGrid:
    """Bin the alive agents into the cells of ``g`` and gather them in cell order."""
    ncell = g.nx * g.ny * g.nz
    cell = cuda.device_array(n, dtype=np.int64)
    counts = cuda.to_device(np.zeros(ncell, dtype=np.int64))
    cells_kernel.launch(n, position, alive, dim, g, cell, counts)
    cell_start = exclusive_scan(counts, ncell)
    order = cuda.device_array(max(n_alive, 1), dtype=np.int64)[:n_alive]
    fill = cuda.to_device(np.zeros(ncell, dtype=np.int64))
    scatter_kernel.launch(n, cell, cell_start, fill, order)
    sort_cells_kernel.launch(ncell, cell_start, order)
    xs, ys, zs = (cuda.device_array(max(n_alive, 1))[:n_alive] for _ in range(3))
    gather_kernel.launch(n_alive, position, dim, order, xs, ys, zs)
    return DeviceGrid(g, cell_start, order, cell, xs, ys, zs, n_alive)


def build_device_grid(position, alive, space: Space, n: int, dim: int, n_alive: int, min_cell: float) -> DeviceGrid:
    """:func:`flocksim.neighbors.coherent.build_coherent_grid` on the GPU."""
    lo, hi = device_bounds(position, alive, space, n, dim, n_alive)
    return device_grid(position, alive, n, dim, geometry_from_bounds(lo, hi, n_alive, space, min_cell), n_alive)


def build_device_knn_grid(position, alive, space: Space, n: int, dim: int, n_alive: int, k: int) -> DeviceGrid:
    """:func:`flocksim.neighbors.coherent.build_knn_grid` on the GPU (narrowed once when crowded)."""
    lo, hi = device_bounds(position, alive, space, n, dim, n_alive)
    width = knn_width_from_bounds(lo, hi, n_alive, space, k)
    grid = device_grid(position, alive, n, dim, geometry_from_bounds(lo, hi, n_alive, space, width), n_alive)
    sums = cuda.to_device(np.zeros(1, dtype=np.int64))
    ncell = grid.cell_start.shape[0] - 1
    sum_squares_kernel.launch(ncell, grid.cell_start, sums)
    narrower = narrowed_knn_width(width, int(sums.copy_to_host()[0]), n_alive, k, dim)
    if narrower is not None:
        grid = device_grid(position, alive, n, dim, geometry_from_bounds(lo, hi, n_alive, space, narrower), n_alive)
    return grid


def _metric_count(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, counts):
    si = cuda.grid(1)
    if si < order.shape[0]:
        runs = cuda.local.array((1, MAX_RUNS, 2), numba.int64)
        shifts = cuda.local.array((1, MAX_RUNS, 3), numba.float64)
        i = order[si]
        nruns = block_runs(cell[i], g, cell_start, space.lx, space.ly, space.lz, 0, runs, shifts)
        xi = xs[si]
        yi = ys[si]
        zi = zs[si]
        m = 0
        for q in range(nruns):
            for s in range(runs[0, q, 0], runs[0, q, 1]):
                if s != si and _pair_d2(xi, yi, zi, s, xs, ys, zs, dim, space) <= radius2:
                    m += 1
        counts[i] = m


def _metric_fill(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, start, index):
    si = cuda.grid(1)
    if si < order.shape[0]:
        runs = cuda.local.array((1, MAX_RUNS, 2), numba.int64)
        shifts = cuda.local.array((1, MAX_RUNS, 3), numba.float64)
        i = order[si]
        nruns = block_runs(cell[i], g, cell_start, space.lx, space.ly, space.lz, 0, runs, shifts)
        lo = start[i]
        m = _scan_metric(si, nruns, 0, runs, xs, ys, zs, order, dim, space, radius2, index, lo)
        sort_row(index, lo, lo + m)


def _knn_rows(xs, ys, zs, order, cell, cell_start, g, dim, space, k, rs, rk, rd, fill):
    """Row si of (rs, rk, rd): the k nearest of the agent in slot si; fill[agent] = how many."""
    si = cuda.grid(1)
    if si < order.shape[0]:
        fill[order[si]] = knn_search(si, cell[order[si]], xs, ys, zs, order, cell_start, g, dim, space, k, si, rs, rk,
                                     rd)  # fmt: skip


def _knn_compact(order, rk, start, index):
    si = cuda.grid(1)
    if si < order.shape[0]:
        i = order[si]
        lo = start[i]
        for u in range(start[i + 1] - lo):
            index[lo + u] = rk[si, u]


metric_count_kernel = kernel(_metric_count)
metric_fill_kernel = kernel(_metric_fill)
knn_rows_kernel = kernel(_knn_rows)
knn_compact_kernel = kernel(_knn_compact)


def grid_metric_lists(
    grid: DeviceGrid, n: int, dim: int, space: Space, radius: float, check: Callable[[int], None] | None = None
) -> tuple[Any, Any]:
    """(start, index) device arrays of the metric rows (radius > 0) from a grid with cells >= radius.
    ``check(pairs)`` runs once the pairs are counted, before the list is allocated (a budget)."""
    r2 = radius * radius
    g = grid.geometry
    counts = cuda.to_device(np.zeros(n, dtype=np.int64))
    metric_count_kernel.launch(grid.n_alive, grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, g,
                               dim, space, r2, counts)  # fmt: skip
    start = exclusive_scan(counts, n)
    pairs = total(start, n)
    if check is not None:
        check(pairs)
    index = cuda.device_array(max(pairs, 1), dtype=np.int64)
    metric_fill_kernel.launch(grid.n_alive, grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, g,
                              dim, space, r2, start, index)  # fmt: skip
    return start, index


def grid_knn_lists(grid: DeviceGrid, n: int, dim: int, space: Space, k: int) -> tuple[Any, Any]:
    """(start, index) device arrays of the k-nearest rows from a k-nearest grid."""
    slots = max(grid.n_alive, 1)
    rs = cuda.device_array((slots, k), dtype=np.int64)
    rk = cuda.device_array((slots, k), dtype=np.int64)
    rd = cuda.device_array((slots, k))
    fill = cuda.to_device(np.zeros(n, dtype=np.int64))
    knn_rows_kernel.launch(grid.n_alive, grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start,
                           grid.geometry, dim, space, k, rs, rk, rd, fill)  # fmt: skip
    start = exclusive_scan(fill, n)
    index = cuda.device_array(max(total(start, n), 1), dtype=np.int64)
    knn_compact_kernel.launch(grid.n_alive, grid.order, rk, start, index)
    return start, index
