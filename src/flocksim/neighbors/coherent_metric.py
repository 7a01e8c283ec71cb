"""The metric scans of the coherent grid: neighbours within a radius, counted and listed in increasing index.

Pass one (:func:`metric_count`) counts each agent's row, cell row by cell row; pass two
(:func:`metric_fill_ascending`) fills the rows without sorting, stripe by stripe of cell layers
(:func:`fill_stripes`), so that rows come out in increasing neighbour index and no two threads
write one row. Distances are computed from the row owner's side, bitwise those of the
brute-force reference (:func:`_pair_d2`). Kernels whose sums must not depend on the visiting
order accumulate in fixed point (see models/abm_flocking.py). The grid they scan is built by
:mod:`flocksim.neighbors.coherent_build`.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.compile import device, serial_kernel
from flocksim.neighbors.coherent_build import (
    CoherentGrid,
    block_runs_at,
)
from flocksim.space import displacement


@device
def _pair_d2(xi, yi, zi, s, xs, ys, zs, dim, space):
    """Squared distance to the agent in slot s as the brute-force reference computes it, bitwise:
    full displacement (minimum image), the z terms left out in 2D (exact zeros)."""
    if dim == 2:
        dx, dy, _ = displacement(xi, yi, 0.0, xs[s], ys[s], 0.0, space)
        return dx * dx + dy * dy
    dx, dy, dz = displacement(xi, yi, zi, xs[s], ys[s], zs[s], space)
    return dx * dx + dy * dy + dz * dz


@device
def _scan_metric(si, nruns, tid, runs, xs, ys, zs, order, dim, space, radius2, out, base):
    """Indices of the agents within the radius of the agent in slot si, in the block's runs
    (block order), into out[base:]; returns how many. The CUDA grid's metric rows
    (neighbors/cuda_grid.py), which sort each row after."""
    xi = xs[si]
    yi = ys[si]
    zi = zs[si]
    m = 0
    for q in range(nruns):
        for s in range(runs[tid, q, 0], runs[tid, q, 1]):
            if s != si and _pair_d2(xi, yi, zi, s, xs, ys, zs, dim, space) <= radius2:
                out[base + m] = order[s]
                m += 1
    return m


@device
def _count_metric(si, nruns, tid, runs, xs, ys, zs, dim, space, radius2):
    """How many agents lie within the radius of the agent in slot si (branch-free)."""
    xi = xs[si]
    yi = ys[si]
    zi = zs[si]
    m = 0
    for q in range(nruns):
        for s in range(runs[tid, q, 0], runs[tid, q, 1]):
            m += (_pair_d2(xi, yi, zi, s, xs, ys, zs, dim, space) <= radius2) & (s != si)
    return m


@serial_kernel
def _count_row(row, tid, xs, ys, zs, order, cell_start, g, dim, space, radius2, runs, shifts, counts):
    """:func:`metric_count` for the cells of one row (y, z) of the grid."""
    iy = row % g.ny
    iz = row // g.ny
    for ix in range(g.nx):
        c = row * g.nx + ix
        lo = cell_start[c]
        hi = cell_start[c + 1]
        if lo == hi:
            continue
        nruns = block_runs_at(ix, iy, iz, g, cell_start, space.lx, space.ly, space.lz, tid, runs, shifts)
        for si in range(lo, hi):
            counts[order[si]] = _count_metric(si, nruns, tid, runs, xs, ys, zs, dim, space, radius2)


@numba.njit(parallel=True, cache=True)
def metric_count(xs, ys, zs, order, cell_start, g, dim, space, radius2, runs, shifts, counts):
    """Metric rows, pass one, cell row by cell row: every agent of an occupied cell
    scans the cell's block as runs of slots (``runs``, ``shifts``: :func:`block_runs`'s per-thread
    scratch); counts[i] = agent i's row length (dead agents' entries are left alone)."""
    for row in numba.prange(g.ny * g.nz):
        row64 = np.int64(row)  # the loop index is unsigned where numba lowers the loop: one signature for both
        _count_row(row64, numba.get_thread_id(), xs, ys, zs, order, cell_start, g, dim, space, radius2, runs, shifts,
                   counts)  # fmt: skip


@serial_kernel
def _fill_stripe(t, tid, xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, runs, shifts, hits, stripes, fill,
                 index):  # fmt: skip
    """:func:`metric_fill_ascending` for stripe t."""
    width = hits.shape[1] - 1
    s0 = stripes[t]
    s1 = stripes[t + 1]
    if s0 == s1:
        return
    l0, l1 = stripe_layers(s0, s1, order, cell, g)
    for j in range(cell.shape[0]):
        nruns, sj = stripe_block(j, s0, s1, l0, l1, order, cell, cell_start, g, space, tid, runs, shifts)
        if nruns < 0:
            continue
        m = block_hits(sj, nruns, s0, s1, tid, runs, xs, ys, zs, dim, space, radius2, hits)
        if m <= width:
            for u in range(m):
                i = order[hits[tid, u]]
                index[fill[i]] = j
                fill[i] += 1
            continue
        for q in range(nruns):
            for s in range(max(runs[tid, q, 0], s0), min(runs[tid, q, 1], s1)):
                if s != sj and _pair_d2(xs[s], ys[s], zs[s], sj, xs, ys, zs, dim, space) <= radius2:
                    i = order[s]
                    index[fill[i]] = j
                    fill[i] += 1


@numba.njit(parallel=True, cache=True)
def metric_fill_ascending(xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, runs, shifts, hits, stripes,
                          fill, index):  # fmt: skip
    """Metric rows, pass two, without sorting: every alive agent j, in increasing index, scans its
    block and appends j to the row of each agent i within the radius of it, so rows fill in
    increasing neighbour index. The distance is computed from i's side, as a scan of i's own block
    would (and blocks are symmetric: i lies in j's block exactly when j lies in i's), so the rows
    are bitwise those of the brute-force reference. ``fill``: start[:-1] on entry (row i is written
    at index[fill[i]:], fill[i] advances). ``stripes`` (S + 1,): slot bounds of S stripes of whole
    layers of cells (see :func:`fill_stripes`); stripe t appends only to the rows of the agents in
    its slots, so no two threads write the same row and the result is that of one thread.
    ``hits``: per-thread scratch (threads, w + 1) int64 (:data:`FILL_HITS`)."""
    for t in numba.prange(stripes.shape[0] - 1):
        t64 = np.int64(t)  # the loop index is unsigned where numba lowers the loop: one signature for both
        _fill_stripe(t64, numba.get_thread_id(), xs, ys, zs, order, cell, cell_start, g, dim, space, radius2, runs,
                     shifts, hits, stripes, fill, index)  # fmt: skip


@device
def stripe_layers(s0, s1, order, cell, g):
    """First and last layer of cells (z layers in 3D, y rows in 2D) of the stripe of slots s0..s1
    (s1 > s0): see :func:`fill_stripes`."""
    layer_cells = g.nx * g.ny if g.nz > 1 else g.nx
    return cell[order[s0]] // layer_cells, cell[order[s1 - 1]] // layer_cells


@device
def stripe_block(j, s0, s1, l0, l1, order, cell, cell_start, g, space, tid, runs, shifts):
    """Agent j's block as runs (into row ``tid`` of ``runs`` and ``shifts``, see :func:`block_runs`)
    and j's slot, for a scan of the stripe of slots s0..s1 whose layers are l0..l1 (see
    :func:`stripe_layers`): (number of runs, slot), or (-1, -1) when j is dead or its block cannot
    reach the stripe (a block reaches one layer either side, wrapped in periodic space)."""
    c = cell[j]
    if c < 0:
        return -1, -1
    if s0 > 0 or s1 < order.shape[0]:
        layer_cells = g.nx * g.ny if g.nz > 1 else g.nx
        layers = g.nz if g.nz > 1 else g.ny
        lj = c // layer_cells
        near = l0 - 1 <= lj <= l1 + 1
        if g.periodic:
            near = near or layers < 3 or (lj == layers - 1 and l0 == 0) or (lj == 0 and l1 == layers - 1)
        if not near:
            return -1, -1
    ix = c % g.nx
    iy = (c // g.nx) % g.ny
    iz = c // (g.nx * g.ny)
    nruns = block_runs_at(ix, iy, iz, g, cell_start, space.lx, space.ly, space.lz, tid, runs, shifts)
    return nruns, _slot_of(j, c, cell_start, order)


@device
def block_hits(sj, nruns, s0, s1, tid, runs, xs, ys, zs, dim, space, radius2, hits):
    """Slots in s0..s1 of the agents i (not sj) that have the agent in slot sj within the radius,
    distances from i's side (bitwise those of the brute-force reference, see :func:`_pair_d2`), in
    run order, into row ``tid`` of ``hits`` (w + 1 columns); returns how many. Branch-free: every
    candidate's slot is written at the hit count, which advances on a hit (a scan-and-branch
    mispredicts on most misses); only the first w hits are kept when there are more (a crowd
    packed far beyond the radius), and the caller then scans again with a branch."""
    width = hits.shape[1] - 1
    row = hits[tid]
    xj = xs[sj]  # in registers: the stores into row could alias the coordinates
    yj = ys[sj]
    zj = zs[sj]
    m = 0
    for q in range(nruns):
        lo = max(runs[tid, q, 0], s0)
        hi = min(runs[tid, q, 1], s1)
        if dim == 2:
            for s in range(lo, hi):
                dx, dy, _ = displacement(xs[s], ys[s], 0.0, xj, yj, 0.0, space)
                row[min(m, width)] = s
                m += (dx * dx + dy * dy <= radius2) & (s != sj)
        else:
            for s in range(lo, hi):
                dx, dy, dz = displacement(xs[s], ys[s], zs[s], xj, yj, zj, space)
                row[min(m, width)] = s
                m += (dx * dx + dy * dy + dz * dz <= radius2) & (s != sj)
    return m


FILL_HITS = 256
"""Hits of one agent that :func:`metric_fill_ascending` collects in its scratch before it falls back
to a second, branching scan."""


@device
def _slot_of(j, c, cell_start, order):
    """Slot of agent j in its cell c (agents of a cell are in increasing index: a binary search)."""
    lo = cell_start[c]
    hi = cell_start[c + 1]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if order[mid] <= j:
            lo = mid
        else:
            hi = mid
    return lo


def fill_stripes(grid: CoherentGrid, parts: int) -> np.ndarray:
    """Slot bounds (parts + 1,) of at most ``parts`` stripes of :func:`metric_fill_ascending`: runs of
    whole layers of cells (z layers in 3D, y rows in 2D) holding about equal numbers of agents."""
    g = grid.geometry
    n_alive = len(grid.order)
    if parts <= 1 or n_alive == 0:
        return np.array([0, n_alive], dtype=np.int64)
    layer_cells = g.nx * g.ny if g.nz > 1 else g.nx
    layer_start = grid.cell_start[::layer_cells]  # slot where each layer starts, and the end
    wanted = np.arange(1, parts) * (n_alive / parts)
    cuts = layer_start[np.searchsorted(layer_start, wanted)]
    return np.unique(np.concatenate([[0], cuts, [n_alive]]).astype(np.int64))
