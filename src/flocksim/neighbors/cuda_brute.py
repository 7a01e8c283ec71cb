"""Brute-force neighbour search on the GPU: every pair, in tiles of :data:`TILE` agents in shared memory.

One thread per agent i, blocks of TILE threads. The agents are visited tile by tile: the block
copies the coordinates and alive flags of agents [base, base + TILE) into shared memory, waits,
and every thread tests them all against its own agent, in index order. N need not be a multiple
of TILE: the last tile is partial (its missing entries are marked dead), and threads past N help
load tiles but have no agent. Distances are computed exactly as the CPU reference computes them
(:func:`flocksim.neighbors.pairs.pair_distance2`), so the rows equal its rows: metric rows sorted
by index, k-nearest rows by (distance, index) through the same insertion
(:func:`flocksim.neighbors.pairs.knn_insert_keyed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import cuda

from flocksim.kernels.compile import device
from flocksim.kernels.cuda_runtime import kernel
from flocksim.kernels.vector import load
from flocksim.neighbors.cuda_scan import exclusive_scan, total
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import Space, displacement

TILE = 256
"""Agents per shared-memory tile, and threads per block."""


@device
def own_agent(position, alive, i, dim):
    """(alive, x, y, z) of thread i's agent; (False, 0, 0, 0) past the last agent."""
    if i < position.shape[0]:
        px, py, pz = load(position, i, dim)
        return alive[i], px, py, pz
    return False, 0.0, 0.0, 0.0


@device
def load_tile(position, alive, dim, j, t, tx, ty, tz, ta):
    """Entry t of the shared tile: agent j's coordinates and alive flag (dead past the last agent)."""
    if j < position.shape[0]:
        tx[t], ty[t], tz[t] = load(position, j, dim)
        ta[t] = alive[j]
    else:
        ta[t] = 0


def _metric_tiles(position, alive, dim, space, radius2, start, index, write):
    """write False: start[i] = the number of neighbours of agent i; True: row i into index[start[i]:]."""
    n = position.shape[0]
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tx = cuda.shared.array(TILE, numba.float64)
    ty = cuda.shared.array(TILE, numba.float64)
    tz = cuda.shared.array(TILE, numba.float64)
    ta = cuda.shared.array(TILE, numba.uint8)
    mine, px, py, pz = own_agent(position, alive, i, dim)
    m = 0
    out = 0
    if write and mine:
        out = start[i]
    for base in range(0, n, TILE):
        load_tile(position, alive, dim, base + t, t, tx, ty, tz, ta)
        cuda.syncthreads()
        if mine:
            for u in range(min(TILE, n - base)):
                if ta[u] and base + u != i:
                    dx, dy, dz = displacement(px, py, pz, tx[u], ty[u], tz[u], space)
                    if dx * dx + dy * dy + dz * dz <= radius2:
                        if write:
                            index[out + m] = base + u
                        m += 1
        cuda.syncthreads()
    if not write and i < n:
        start[i] = m


def _knn_tiles(position, alive, dim, space, k, rows, d2s, fill):
    """Row i of (rows, d2s): the k nearest alive agents of alive agent i; fill[i] = how many."""
    n = position.shape[0]
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tx = cuda.shared.array(TILE, numba.float64)
    ty = cuda.shared.array(TILE, numba.float64)
    tz = cuda.shared.array(TILE, numba.float64)
    ta = cuda.shared.array(TILE, numba.uint8)
    mine, px, py, pz = own_agent(position, alive, i, dim)
    m = 0
    for base in range(0, n, TILE):
        load_tile(position, alive, dim, base + t, t, tx, ty, tz, ta)
        cuda.syncthreads()
        if mine:
            for u in range(min(TILE, n - base)):
                if ta[u] and base + u != i:
                    dx, dy, dz = displacement(px, py, pz, tx[u], ty[u], tz[u], space)
                    m = knn_insert_keyed(rows, rows, d2s, i, m, k, base + u, base + u, dx * dx + dy * dy + dz * dz)
        cuda.syncthreads()
    if i < n:
        fill[i] = m


def _compact(rows, start, index):
    i = cuda.grid(1)
    if i < rows.shape[0]:
        lo = start[i]
        for u in range(start[i + 1] - lo):
            index[lo + u] = rows[i, u]


metric_tiles = kernel(_metric_tiles)
knn_tiles = kernel(_knn_tiles)
compact_kernel = kernel(_compact)


def _tiled(fn: Any, n: int, *args: Any) -> None:
    if n > 0:
        fn[(n + TILE - 1) // TILE, TILE](*args)


def brute_metric_lists(
    position, alive, n: int, dim: int, space: Space, radius: float, check: Callable[[int], None] | None = None
) -> tuple[Any, Any]:
    """(start, index) device arrays: every alive agent within ``radius`` (inclusive) of each alive agent.
    ``check(pairs)`` runs once the pairs are counted, before the list is allocated (a budget)."""
    r2 = radius * radius
    counts = cuda.to_device(np.zeros(n, dtype=np.int64))
    dummy = cuda.device_array(1, dtype=np.int64)
    _tiled(metric_tiles, n, position, alive, dim, space, r2, counts, dummy, False)
    start = exclusive_scan(counts, n)
    pairs = total(start, n)
    if check is not None:
        check(pairs)
    index = cuda.device_array(max(pairs, 1), dtype=np.int64)
    _tiled(metric_tiles, n, position, alive, dim, space, r2, start, index, True)
    return start, index


def brute_knn_lists(position, alive, n: int, dim: int, space: Space, k: int) -> tuple[Any, Any]:
    """(start, index) device arrays: the k nearest alive agents of each alive agent, nearest first."""
    rows = cuda.device_array((max(n, 1), k), dtype=np.int64)
    d2s = cuda.device_array((max(n, 1), k))
    fill = cuda.to_device(np.zeros(n, dtype=np.int64))
    _tiled(knn_tiles, n, position, alive, dim, space, k, rows, d2s, fill)
    start = exclusive_scan(fill, n)
    index = cuda.device_array(max(total(start, n), 1), dtype=np.int64)
    compact_kernel.launch(n, rows[:n], start, index)
    return start, index
