"""CPU drivers of the abm-flocking model.

``neighbors.method = "brute"`` runs the reference: a brute-force neighbour list,
then one pass over it. ``grid`` (and ``auto`` from 64 birds) runs fused kernels
on the coherent grid (neighbors/coherent.py): metric mode scans per-cell tiles,
topological mode searches rings of cells per bird. Both visit neighbours in
the reference's order with the same arithmetic, so every path gives bitwise the
same step.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.compile import block_device
from flocksim.kernels.vector import normalize_or_zero
from flocksim.models.abm_flocking import ABM_EMPTY, AbmFlockingModel, abm_accumulate, abm_finish, abm_heading, abm_move
from flocksim.neighbors import BRUTE_FORCE_BELOW, find_neighbors
from flocksim.neighbors.coherent import (
    BLOCK,
    ColumnScratch,
    TileScratch,
    advance_row,
    block_of,
    build_coherent_grid,
    build_knn_grid,
    build_tile,
    full_image_axes,
    knn_search,
    start_row,
    tile_displacement,
)
from flocksim.neighbors.grid import cell_id
from flocksim.space import displacement
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def abm_headings(position, velocity, alive, start, index, dim, space, c, out):
    """Phase one (reference path): out[i] = new unit heading of bird i from its neighbour row."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            hx, hy, hz = abm_heading(i, position, velocity, start, index, dim, space, c)
            out[i, 0] = hx
            out[i, 1] = hy
            out[i, 2] = hz


@numba.njit(parallel=True, cache=True)
def abm_moves(position, velocity, alive, heading, dim, space, speed, dt):
    """Phase two: move every alive bird along its new heading."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            abm_move(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


@numba.njit(parallel=True, cache=True)
def gather_headings(velocity, dim, order, hxs, hys, hzs):
    """Unit headings of the birds in slot (cell) order."""
    for s in numba.prange(order.shape[0]):
        i = order[s]
        vz = velocity[i, 2] if dim == 3 else 0.0
        hxs[s], hys[s], hzs[s] = normalize_or_zero(velocity[i, 0], velocity[i, 1], vz)


@block_device
def scan_cell(lo, hi, t, tid, xs, ys, zs, hxs, hys, hzs, order, tile, full, space, c, out, counts):
    """Every bird of the cell (slots lo..hi) against the cell's tile of t entries, which
    is sorted by bird index.

    Per bird: squared distances to the whole tile (a branch-free loop), then the
    accepted entries compacted, then accumulated in tile order: the same sums, in
    the same order, as the reference's pass over a neighbour row. The 2D loops leave
    out z, whose terms are exact zeros there.
    """
    t_x, t_y, t_z, t_sx, t_sy, t_sz, t_d2, t_key, t_slot, t_pick = tile
    tx = t_x[tid]
    ty = t_y[tid]
    tz = t_z[tid]
    tsx = t_sx[tid]
    tsy = t_sy[tid]
    tsz = t_sz[tid]
    td2 = t_d2[tid]
    tkey = t_key[tid]
    tslot = t_slot[tid]
    pick = t_pick[tid]
    shifted = not (full[0] or full[1] or full[2])
    flat = shifted and c.dim == 2
    r2 = np.inf if c.topological else c.vision2
    for si in range(lo, hi):
        i = order[si]
        xi = xs[si]
        yi = ys[si]
        zi = zs[si]
        if flat:
            for u in range(t):
                dx = (tx[u] - xi) - tsx[u]
                dy = (ty[u] - yi) - tsy[u]
                td2[u] = dx * dx + dy * dy
        elif shifted:
            for u in range(t):
                dx = (tx[u] - xi) - tsx[u]
                dy = (ty[u] - yi) - tsy[u]
                dz = (tz[u] - zi) - tsz[u]
                td2[u] = dx * dx + dy * dy + dz * dz
        else:
            for u in range(t):
                dx, dy, dz = tile_displacement(
                    xi, yi, zi, tx[u], ty[u], tz[u], tsx[u], tsy[u], tsz[u], full[0], full[1], full[2], space
                )
                td2[u] = dx * dx + dy * dy + dz * dz
        m = 0
        for u in range(t):
            pick[m] = u
            m += np.int64((td2[u] <= r2) & (tkey[u] != i))  # & not `and`: no unpredictable branch
        acc = ABM_EMPTY
        if flat:
            for e in range(m):
                u = pick[e]
                s = tslot[u]
                dx = (tx[u] - xi) - tsx[u]
                dy = (ty[u] - yi) - tsy[u]
                acc = abm_accumulate(acc, dx, dy, 0.0, td2[u], hxs[s], hys[s], 0.0, c)
        else:
            for e in range(m):
                u = pick[e]
                s = tslot[u]
                dx, dy, dz = tile_displacement(
                    xi, yi, zi, tx[u], ty[u], tz[u], tsx[u], tsy[u], tsz[u], full[0], full[1], full[2], space
                )
                acc = abm_accumulate(acc, dx, dy, dz, td2[u], hxs[s], hys[s], hzs[s], c)
        hx, hy, hz = abm_finish(hxs[si], hys[si], hzs[si], acc, c)
        out[i, 0] = hx
        out[i, 1] = hy
        out[i, 2] = hz
        counts[i] = acc[0]


@block_device
def fill_tile(tile, tid, u, s, key, sx, sy, sz, xs, ys, zs):
    """Entry u of the tile: bird in slot s (index key) seen with image shift (sx, sy, sz)."""
    t_x, t_y, t_z, t_sx, t_sy, t_sz, _t_d2, t_key, t_slot, _t_pick = tile
    t_x[tid, u] = xs[s]
    t_y[tid, u] = ys[s]
    t_z[tid, u] = zs[s]
    t_sx[tid, u] = sx
    t_sy[tid, u] = sy
    t_sz[tid, u] = sz
    t_key[tid, u] = key
    t_slot[tid, u] = s


@numba.njit(parallel=True, cache=True)
def abm_headings_rows(xs, ys, zs, hxs, hys, hzs, order, cell_start, g, full, space, c, columns, tile, out, counts):
    """Phase one, metric mode: walk each row of cells keeping the three columns of the
    current block; every bird of a cell scans the cell's block, sorted by bird index."""
    ints, floats, sizes = columns
    lx, ly, lz = space.lx, space.ly, space.lz
    for row in numba.prange(g.ny * g.nz):
        iy = row % g.ny
        iz = row // g.ny
        tid = numba.get_thread_id()
        start_row(ints, floats, sizes, tid, iy, iz, g, cell_start, order, lx, ly, lz)
        for ix in range(g.nx):
            advance_row(ints, floats, sizes, tid, ix, iy, iz, g, cell_start, order, lx, ly, lz)
            cc = cell_id(ix, iy, iz, g)
            lo = cell_start[cc]
            hi = cell_start[cc + 1]
            if hi == lo:
                continue
            t = block_of(ints, floats, sizes, tid, ix)
            for u in range(t):
                fill_tile(tile, tid, u, ints[BLOCK, tid, u, 0], ints[BLOCK, tid, u, 1], floats[BLOCK, tid, u, 0],
                          floats[BLOCK, tid, u, 1], floats[BLOCK, tid, u, 2], xs, ys, zs)  # fmt: skip
            scan_cell(lo, hi, t, tid, xs, ys, zs, hxs, hys, hzs, order, tile, full, space, c, out, counts)


@numba.njit(parallel=True, cache=True)
def abm_headings_tiled(xs, ys, zs, hxs, hys, hzs, order, cell_start, g, full, space, c, scratch, tile, out, counts):
    """Phase one, metric mode on grids too small to walk by columns (periodic x with
    fewer than 3 cells): per cell, gather its block into a tile sorted by bird index."""
    src, key, perm, perm2, shx, shy, shz, runs = scratch
    space_l = (space.lx, space.ly, space.lz)
    ncell = cell_start.shape[0] - 1
    for cc in numba.prange(ncell):
        lo = cell_start[cc]
        hi = cell_start[cc + 1]
        if hi == lo:
            continue
        tid = numba.get_thread_id()
        t = build_tile(cc, g, cell_start, order, space_l, tid, src, key, perm, perm2, shx, shy, shz, runs)
        for u in range(t):
            e = perm[tid, u]
            fill_tile(tile, tid, u, src[tid, e], key[tid, e], shx[tid, e], shy[tid, e], shz[tid, e], xs, ys, zs)
        scan_cell(lo, hi, t, tid, xs, ys, zs, hxs, hys, hzs, order, tile, full, space, c, out, counts)


@numba.njit(parallel=True, cache=True)
def abm_headings_knn(xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, rows, out, counts):
    """Phase one, topological mode: ring search for the k nearest of each bird, then
    accumulate them in (distance, index) order."""
    rs, rk, rd = rows
    for si in numba.prange(order.shape[0]):
        tid = numba.get_thread_id()
        i = order[si]
        m = knn_search(si, cell[i], xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd)
        acc = ABM_EMPTY
        for u in range(m):
            s = rs[tid, u]
            dx, dy, dz = displacement(xs[si], ys[si], zs[si], xs[s], ys[s], zs[s], space)
            acc = abm_accumulate(acc, dx, dy, dz, dx * dx + dy * dy + dz * dz, hxs[s], hys[s], hzs[s], c)
        hx, hy, hz = abm_finish(hxs[si], hys[si], hzs[si], acc, c)
        out[i, 0] = hx
        out[i, 1] = hy
        out[i, 2] = hz
        counts[i] = acc[0]


class AbmStepper:
    """Chooses the reference or the fused coherent-grid path and keeps the scratch buffers."""

    def __init__(self) -> None:
        self.scratch = TileScratch()
        self.columns = ColumnScratch()
        self.tile_floats: np.ndarray = np.empty((7, 0, 0))
        self.tile_keys: np.ndarray = np.empty((3, 0, 0), dtype=np.int64)
        self.rows: tuple[np.ndarray, ...] = ()
        self.counts: np.ndarray = np.zeros(0, dtype=np.int64)

    def __call__(self, model: AbmFlockingModel, state: FlockState, dt: float, buf: np.ndarray) -> None:
        c = model.coefficients
        q = model.neighbor_query()
        brute = q.method == "brute" or (q.method == "auto" and state.n < BRUTE_FORCE_BELOW)
        if self.counts.shape[0] != state.n:
            self.counts = np.zeros(state.n, dtype=np.int64)
        self.counts[:] = 0
        if brute or state.n_alive == 0:
            nbrs = find_neighbors(state.position, state.alive, model.space, q.mode, q.radius, q.k, "brute")
            abm_headings(state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim,
                model.space, c, buf)  # fmt: skip
            self.counts[:] = nbrs.counts
        else:
            metric = q.mode == "metric"
            if metric:
                grid = build_coherent_grid(state.position, state.alive, model.space, q.radius)
            else:
                grid = build_knn_grid(state.position, state.alive, model.space, q.k)
            g = grid.geometry
            hxs, hys, hzs = (np.empty(grid.order.shape[0]) for _ in range(3))
            gather_headings(state.velocity, state.dim, grid.order, hxs, hys, hzs)
            threads = numba.get_num_threads()
            full = full_image_axes(g)
            if not metric:
                rows = self._rows(threads, q.k)
                abm_headings_knn(grid.xs, grid.ys, grid.zs, hxs, hys, hzs, grid.order, grid.cell,
                    grid.cell_start, g, state.dim, model.space, c, q.k, rows, buf, self.counts)  # fmt: skip
            elif not g.periodic or g.nx >= 3:
                tile = self._tile(threads, grid.max_block)
                columns = self.columns.get(threads, grid.max_block)
                abm_headings_rows(grid.xs, grid.ys, grid.zs, hxs, hys, hzs, grid.order, grid.cell_start, g,
                    full, model.space, c, columns, tile, buf, self.counts)  # fmt: skip
            else:
                tile = self._tile(threads, grid.max_block)
                scratch = self.scratch.get(threads, grid.max_block)
                runs = np.empty((threads, 28), dtype=np.int64)
                abm_headings_tiled(grid.xs, grid.ys, grid.zs, hxs, hys, hzs, grid.order, grid.cell_start, g,
                    full, model.space, c, (*scratch, runs), tile, buf, self.counts)  # fmt: skip
        abm_moves(state.position, state.velocity, state.alive, buf, state.dim, model.space, c.speed, dt)

    def _tile(self, threads: int, capacity: int) -> tuple[np.ndarray, ...]:
        """Per-thread tile: x, y, z, shift x, y, z, squared distance (floats); key, slot, pick (ints)."""
        capacity = max(capacity, 1)
        if self.tile_floats.shape[1] < threads or self.tile_floats.shape[2] < capacity:
            self.tile_floats = np.empty((7, threads, capacity))
            self.tile_keys = np.empty((3, threads, capacity), dtype=np.int64)
        return (*self.tile_floats, *self.tile_keys)

    def _rows(self, threads: int, k: int) -> tuple[np.ndarray, ...]:
        """Per-thread k-nearest rows, each padded to whole cache lines: rows of two threads
        sharing a line (k = 7 is 56 bytes) made two threads slower than one."""
        width = (k // 8 + 1) * 8 + 8
        if not self.rows or self.rows[0].shape[0] < threads or self.rows[0].shape[1] != width:
            self.rows = (np.empty((threads, width), dtype=np.int64), np.empty((threads, width), dtype=np.int64),
                         np.empty((threads, width)))  # fmt: skip
        return self.rows
