"""CPU drivers of the abm-flocking model.

``neighbors.method = "brute"`` runs the reference: a brute-force neighbour list,
then one pass over it. ``grid`` (and ``auto`` from 64 birds) runs fused kernels
on the coherent grid (neighbors/coherent.py): metric mode gathers each cell's block
(a few runs of consecutive slots) into one row per quantity, and every bird of the
cell sums the whole row in one vectorised loop, in fixed point (exact, so the
visiting order does not matter); topological mode searches rings of cells per bird and sums in
the reference's (distance, id) order. Every path gives bitwise the same step.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import device, serial_kernel
from flocksim.kernels.vector import normalize_or_zero
from flocksim.models.abm_flocking import (
    ABM_EMPTY,
    AbmFlockingModel,
    FixedPointScales,
    abm_accumulate,
    abm_finish,
    abm_finish_fixed,
    abm_heading,
    abm_move,
    fixed_point_scales,
    to_fixed,
)
from flocksim.neighbors import BRUTE_FORCE_BELOW, NeighborList, find_neighbors
from flocksim.neighbors.coherent import (
    MAX_RUNS,
    CoherentGrid,
    block_runs,
    build_coherent_grid,
    build_knn_grid,
    full_image_axes,
    knn_search,
)
from flocksim.neighbors.search import metric_rows
from flocksim.space import displacement
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def abm_headings(position, velocity, alive, start, index, dim, space, c, scales, out):
    """Phase one (reference path): out[i] = new unit heading of bird i from its neighbour row."""
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _headings_of(i0, i1, position, velocity, alive, start, index, dim, space, c, scales, out)


@serial_kernel
def _headings_of(i0, i1, position, velocity, alive, start, index, dim, space, c, scales, out):
    """:func:`abm_headings` for birds i0..i1."""
    for i in range(i0, i1):
        if alive[i]:
            hx, hy, hz = abm_heading(i, position, velocity, start, index, dim, space, c, scales)
            out[i, 0] = hx
            out[i, 1] = hy
            out[i, 2] = hz


@numba.njit(parallel=True, cache=True)
def abm_moves(position, velocity, alive, heading, dim, space, speed, dt):
    """Phase two: move every alive bird along its new heading."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            abm_move(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


@device
def gather_heading(s, velocity, dim, order, scale, hxs, hys, hzs, qxs, qys, qzs):
    """Unit heading of the bird in slot s, as floats and in fixed point, into slot s."""
    i = order[s]
    vz = velocity[i, 2] if dim == 3 else 0.0
    hx, hy, hz = normalize_or_zero(velocity[i, 0], velocity[i, 1], vz)
    hxs[s] = hx
    hys[s] = hy
    hzs[s] = hz
    qxs[s] = to_fixed(hx, scale)
    qys[s] = to_fixed(hy, scale)
    qzs[s] = to_fixed(hz, scale)


@numba.njit(parallel=True, cache=True)
def gather_headings(velocity, dim, order, scale, hxs, hys, hzs, qxs, qys, qzs):
    """Unit headings of the birds in slot (cell) order, as floats and in fixed point."""
    for s in numba.prange(order.shape[0]):
        gather_heading(s, velocity, dim, order, scale, hxs, hys, hzs, qxs, qys, qzs)


@device
def sum_run_2d(acc, lo, hi, si, xi, yi, sx, sy, xs, ys, qxs, qys, c, scales):
    """Fixed-point sums over the candidates in slots lo..hi of one 2D run with image
    shift (sx, sy); z terms are exact zeros in 2D and left out.

    The rule of :func:`abm_accumulate_fixed`, written out on scalar locals: calling it
    per candidate (a tuple carried through the loop) made this loop 20 % slower. The
    parity tests hold the two bitwise equal.
    """
    count, cx, cy, cz, px, py, pz, mx, my, mz = acc
    r2 = c.vision2
    close2 = c.separation2
    scale = scales.displacement
    for s in range(lo, hi):
        dx = (xs[s] - xi) - sx
        dy = (ys[s] - yi) - sy
        d2 = dx * dx + dy * dy
        inside = (d2 <= r2) & (s != si)
        near = -np.int64(inside)  # all ones or zero: masks, not branches
        close = -np.int64(inside & (d2 < close2))
        ix = to_fixed(dx, scale)
        iy = to_fixed(dy, scale)
        count += np.int64(inside)
        cx += ix & near
        cy += iy & near
        px -= ix & close
        py -= iy & close
        mx += qxs[s] & near
        my += qys[s] & near
    return count, cx, cy, cz, px, py, pz, mx, my, mz


@device
def gather_block(lo, nruns, tid, runs, shifts, xs, ys, zs, qs, dim, f, q):
    """Copy the candidates of a cell's block runs (cell-order slots, see
    :func:`flocksim.neighbors.coherent.block_runs`) into this thread's block rows: ``f`` rows
    x, y, z and the run's image shift x, y, z (float64), ``q`` rows the unit heading in fixed
    point x, y, z (int64); 2D leaves the z rows alone. Returns the number of candidates, the
    row of slot ``lo`` (the cell's first bird: the cell's birds follow it in order) and whether
    any run has a non-zero image shift."""
    qxs, qys, qzs = qs
    m = 0
    own = 0
    shifted = False
    for r in range(nruns):
        s0 = runs[tid, r, 0]
        s1 = runs[tid, r, 1]
        if s0 <= lo < s1:
            own = m + (lo - s0)
        sx = shifts[tid, r, 0]
        sy = shifts[tid, r, 1]
        sz = shifts[tid, r, 2]
        shifted = shifted or sx != 0.0 or sy != 0.0 or sz != 0.0
        for s in range(s0, s1):
            f[0, m] = xs[s]
            f[1, m] = ys[s]
            f[3, m] = sx
            f[4, m] = sy
            q[0, m] = qxs[s]
            q[1, m] = qys[s]
            if dim == 3:
                f[2, m] = zs[s]
                f[5, m] = sz
                q[2, m] = qzs[s]
            m += 1
    return m, own, shifted


@device
def sum_gathered(m, me, xi, yi, zi, f, q, shifted, c, scales):
    """Fixed-point sums of the bird in block row ``me`` at (xi, yi, zi) over the m gathered
    candidates (:func:`gather_block`): the rule of :func:`abm_accumulate_fixed` on scalar locals,
    branch-free under masks, the displacement (x_j - x_i) - shift as the reference takes it.

    One loop over the whole block, not one per run: LLVM vectorises it, and a vectorised loop's
    entry and exit (ten lane sums) cost about as much as a dozen candidates, which runs of four to
    twelve slots paid several times per bird. Blocks without an image shift (all but the cells at
    the box's faces) take a copy of the loop that reads no shift rows. In 2D the z terms are exact
    zeros and left out."""
    if c.dim == 2:
        if shifted:
            return _sum_gathered_2d(m, me, xi, yi, f, q, True, c, scales)
        return _sum_gathered_2d(m, me, xi, yi, f, q, False, c, scales)
    if shifted:
        return _sum_gathered_3d(m, me, xi, yi, zi, f, q, True, c, scales)
    return _sum_gathered_3d(m, me, xi, yi, zi, f, q, False, c, scales)


@device
def _sum_gathered_2d(m, me, xi, yi, f, q, shifted, c, scales):
    """:func:`sum_gathered` in 2D; ``shifted`` is a constant at each call (x - 0.0 is x, so both
    copies give the same bits)."""
    r2 = c.vision2
    close2 = c.separation2
    scale = scales.displacement
    count = cx = cy = px = py = mx = my = np.int64(0)
    for e in range(m):
        dx = f[0, e] - xi
        dy = f[1, e] - yi
        if shifted:
            dx -= f[3, e]
            dy -= f[4, e]
        d2 = dx * dx + dy * dy
        inside = (d2 <= r2) & (e != me)
        near = -np.int64(inside)  # all ones or zero: masks, not branches
        close = -np.int64(inside & (d2 < close2))
        ix = to_fixed(dx, scale)
        iy = to_fixed(dy, scale)
        count += np.int64(inside)
        cx += ix & near
        cy += iy & near
        px -= ix & close
        py -= iy & close
        mx += q[0, e] & near
        my += q[1, e] & near
    zero = np.int64(0)
    return count, cx, cy, zero, px, py, zero, mx, my, zero


@device
def _sum_gathered_3d(m, me, xi, yi, zi, f, q, shifted, c, scales):
    """:func:`sum_gathered` in 3D."""
    r2 = c.vision2
    close2 = c.separation2
    scale = scales.displacement
    count = cx = cy = cz = px = py = pz = mx = my = mz = np.int64(0)
    for e in range(m):
        dx = f[0, e] - xi
        dy = f[1, e] - yi
        dz = f[2, e] - zi
        if shifted:
            dx -= f[3, e]
            dy -= f[4, e]
            dz -= f[5, e]
        d2 = dx * dx + dy * dy + dz * dz
        inside = (d2 <= r2) & (e != me)
        near = -np.int64(inside)
        close = -np.int64(inside & (d2 < close2))
        ix = to_fixed(dx, scale)
        iy = to_fixed(dy, scale)
        iz = to_fixed(dz, scale)
        count += np.int64(inside)
        cx += ix & near
        cy += iy & near
        cz += iz & near
        px -= ix & close
        py -= iy & close
        pz -= iz & close
        mx += q[0, e] & near
        my += q[1, e] & near
        mz += q[2, e] & near
    return count, cx, cy, cz, px, py, pz, mx, my, mz


BLOCK_CELLS = (9, 27)
"""Cells of a block in 2D and 3D: at most this many times the fullest cell's birds are gathered."""


@serial_kernel
def _headings_of_cells(c0, c1, tid, xs, ys, zs, hxs, hys, hzs, qs, order, cell_start, g, space, c, scales, runs, shifts,
                       block_f, block_q, heading, counts):  # fmt: skip
    """Phase one of :func:`abm_step_cells` for cells c0..c1."""
    f = block_f[tid]
    q = block_q[tid]
    for cc in range(c0, c1):
        lo = cell_start[cc]
        hi = cell_start[cc + 1]
        if hi == lo:
            continue
        nruns = block_runs(cc, g, cell_start, space.lx, space.ly, space.lz, tid, runs, shifts)
        m, own, shifted = gather_block(lo, nruns, tid, runs, shifts, xs, ys, zs, qs, c.dim, f, q)
        for si in range(lo, hi):
            acc = sum_gathered(m, own + (si - lo), xs[si], ys[si], zs[si], f, q, shifted, c, scales)
            hx, hy, hz = abm_finish_fixed(hxs[si], hys[si], hzs[si], acc, c, scales)
            heading[si, 0] = hx
            heading[si, 1] = hy
            heading[si, 2] = hz
            counts[order[si]] = acc[0]


@numba.njit(parallel=True, cache=True)
def abm_step_cells(position, velocity, xs, ys, zs, hxs, hys, hzs, qs, order, cell_start, g, space, c, scales, runs,
                   shifts, block_f, block_q, heading, counts, dt):  # fmt: skip
    """Metric mode on grids with >= 3 cells per periodic axis. Phase one, per cell: the
    block's runs of slots gathered into one row per quantity (``block_f``, ``block_q``: per
    thread, see :func:`gather_block`); every bird of the cell sums every candidate there in
    fixed point (exact, so in any order) and its new heading goes to ``heading`` (slot
    order). Phase two: every bird moves."""
    ncell = cell_start.shape[0] - 1
    blocks = block_count(ncell)
    for b in numba.prange(blocks):
        c0, c1 = block_bounds(b, blocks, ncell)
        _headings_of_cells(c0, c1, numba.get_thread_id(), xs, ys, zs, hxs, hys, hzs, qs, order, cell_start, g, space,
                           c, scales, runs, shifts, block_f, block_q, heading, counts)  # fmt: skip
    for si in numba.prange(order.shape[0]):
        abm_move(order[si], position, velocity, heading[si, 0], heading[si, 1], heading[si, 2], c.dim, space,
                 c.speed, dt)  # fmt: skip


@numba.njit(parallel=True, cache=True)
def abm_headings_knn(xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, rows, out, counts):
    """Phase one, topological mode: ring search for the k nearest of each bird, then
    accumulate them in (distance, index) order."""
    n = order.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        s0, s1 = block_bounds(b, blocks, n)
        _knn_headings_of(s0, s1, numba.get_thread_id(), xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim,
                         space, c, k, rows, out, counts)  # fmt: skip


@serial_kernel
def _knn_headings_of(s0, s1, tid, xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, rows, out,
                     counts):  # fmt: skip
    """:func:`abm_headings_knn` for the birds in slots s0..s1."""
    rs, rk, rd = rows
    for si in range(s0, s1):
        knn_heading(si, xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, tid, rs, rk, rd, out,
                    counts)  # fmt: skip


@device
def knn_heading(si, xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, tid, rs, rk, rd, out,
                counts):  # fmt: skip
    """The bird in slot si (agent i = order[si]): its k nearest by the ring search (row ``tid`` of
    rs, rk, rd), accumulated in (distance, index) order; new heading into out[i], count into counts[i]."""
    i = order[si]
    m = knn_search(si, cell[i], xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd)
    acc = ABM_EMPTY
    for u in range(m):
        s = rs[tid, u]
        dx, dy, dz = displacement(xs[si], ys[si], zs[si], xs[s], ys[s], zs[s], space)
        acc = abm_accumulate(acc, dx, dy, dz, rd[tid, u], hxs[s], hys[s], hzs[s], c)
    hx, hy, hz = abm_finish(hxs[si], hys[si], hzs[si], acc, c)
    out[i, 0] = hx
    out[i, 1] = hy
    out[i, 2] = hz
    counts[i] = acc[0]


class AbmStepper:
    """Chooses the reference or the fused coherent-grid path and keeps the scratch buffers. The fused
    paths hold no neighbour list; the reference path's list is checked against ``budget``."""

    def __init__(self, budget: PairBudget | None = None) -> None:
        self.budget = PairBudget() if budget is None else budget
        self.scratch: tuple[np.ndarray, ...] = ()
        self.rows: tuple[np.ndarray, ...] = ()
        self.counts: np.ndarray = np.zeros(0, dtype=np.int64)

    def __call__(self, model: AbmFlockingModel, state: FlockState, dt: float, buf: np.ndarray) -> None:
        c = model.coefficients
        q = model.neighbor_query()
        scales = fixed_point_scales(q.radius, state.n)
        brute = q.method == "brute" or (q.method == "auto" and state.n < BRUTE_FORCE_BELOW)
        if self.counts.shape[0] != state.n:
            self.counts = np.zeros(state.n, dtype=np.int64)
        self.counts[:] = 0
        if not brute and state.n_alive > 0 and q.mode == "metric":
            grid = build_coherent_grid(state.position, state.alive, model.space, q.radius)
            if any(full_image_axes(grid.geometry)[: state.dim]):
                # periodic worlds under 3 vision radii wide: the reference pass over the grid's rows
                nbrs = metric_rows(grid, state.n, state.dim, model.space, q.radius, self.budget)
                self._reference(model, state, nbrs, scales, dt, buf)
                return
            hxs, hys, hzs, qs = self._headings(state, grid, scales)
            fullest = int(np.diff(grid.cell_start).max())
            capacity = min(BLOCK_CELLS[state.dim - 2] * fullest, grid.order.shape[0])
            runs, shifts, block_f, block_q = self._scratch(numba.get_num_threads(), capacity)
            heading = buf[: grid.order.shape[0]]
            abm_step_cells(state.position, state.velocity, grid.xs, grid.ys, grid.zs, hxs, hys, hzs, qs,
                grid.order, grid.cell_start, grid.geometry, model.space, c, scales, runs, shifts, block_f, block_q,
                heading, self.counts, dt)  # fmt: skip
            return
        if brute or state.n_alive == 0:
            nbrs = find_neighbors(state.position, state.alive, model.space, q.mode, q.radius, q.k, "brute", self.budget)
            self._reference(model, state, nbrs, scales, dt, buf)
            return
        grid = build_knn_grid(state.position, state.alive, model.space, q.k)
        hxs, hys, hzs, qs = self._headings(state, grid, scales)
        threads = numba.get_num_threads()
        rows = self._rows(threads, q.k)
        abm_headings_knn(grid.xs, grid.ys, grid.zs, hxs, hys, hzs, grid.order, grid.cell, grid.cell_start,
            grid.geometry, state.dim, model.space, c, q.k, rows, buf, self.counts)  # fmt: skip
        abm_moves(state.position, state.velocity, state.alive, buf, state.dim, model.space, c.speed, dt)

    def _reference(self, model: AbmFlockingModel, state: FlockState, nbrs: NeighborList, scales: FixedPointScales,
                   dt: float, buf: np.ndarray) -> None:  # fmt: skip
        """The reference step: one pass over a neighbour list, then the moves."""
        abm_headings(state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, model.space,
                     model.coefficients, scales, buf)  # fmt: skip
        self.counts[:] = nbrs.counts
        abm_moves(state.position, state.velocity, state.alive, buf, state.dim, model.space, model.coefficients.speed,
                  dt)  # fmt: skip

    @staticmethod
    def _headings(state: FlockState, grid: CoherentGrid, scales: FixedPointScales) -> tuple:
        """Unit headings in slot order: float x, y, z and the fixed-point (x, y, z) tuple."""
        slots = grid.order.shape[0]
        hxs, hys, hzs = (np.empty(slots) for _ in range(3))
        qs = tuple(np.empty(slots, dtype=np.int64) for _ in range(3))
        gather_headings(state.velocity, state.dim, grid.order, scales.heading, hxs, hys, hzs, *qs)
        return hxs, hys, hzs, qs

    def _scratch(self, threads: int, capacity: int) -> tuple[np.ndarray, ...]:
        """Per-thread block runs (first/past-last slot, image shifts) and gathered-block rows
        (:func:`gather_block`), each row padded to whole cache lines."""
        width = (capacity // 8 + 1) * 8
        if not self.scratch or self.scratch[0].shape[0] < threads or self.scratch[2].shape[2] < capacity:
            self.scratch = (np.empty((threads, MAX_RUNS, 2), dtype=np.int64), np.empty((threads, MAX_RUNS, 3)),
                            np.empty((threads, 6, width)), np.empty((threads, 3, width), dtype=np.int64))  # fmt: skip
        return self.scratch

    def _rows(self, threads: int, k: int) -> tuple[np.ndarray, ...]:
        """Per-thread k-nearest rows, each padded to whole cache lines: rows of two threads
        sharing a line (k = 7 is 56 bytes) made two threads slower than one."""
        width = (k // 8 + 1) * 8 + 8
        if not self.rows or self.rows[0].shape[0] < threads or self.rows[0].shape[1] != width:
            self.rows = (np.empty((threads, width), dtype=np.int64), np.empty((threads, width), dtype=np.int64),
                         np.empty((threads, width)))  # fmt: skip
        return self.rows
