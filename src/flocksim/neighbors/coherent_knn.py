"""The k-nearest scans of the coherent grid: by rings of cells, and cell by cell over a gathered block.

:func:`knn_search` walks rings of cells around an agent's cell, skipping rows of cells that lie
beyond the k-th distance found so far; :func:`knn_rows_by_cell` (the CPU search) gathers each
cell's block of candidates once and proves the k nearest of the cell's agents from it, falling
back to the ring search when the block cannot. Squared distances are those of the brute-force
reference, bitwise; rows are sorted by (squared distance, index). The grid they scan is built by
:mod:`flocksim.neighbors.coherent_build`.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import block_device, device, serial_kernel
from flocksim.neighbors.coherent_build import (
    MAX_RUNS,
    block_runs_at,
)
from flocksim.neighbors.grid import (
    cell_id,
)
from flocksim.neighbors.knn import offset_range, wrap_offset
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import displacement


@device
def _scan_slots_knn(xs, ys, zs, order, lo, hi, si, dim, space, k, m, tid, rs, rk, rd):
    """Offer every agent in slots lo..hi but si to the k-nearest row. In 2D z is left
    out: its terms are exact zeros, so d^2 is bitwise the same."""
    xi = xs[si]
    yi = ys[si]
    zi = zs[si]
    worst = rd[tid, k - 1] if m == k else np.inf  # kept in a register: most candidates fail this test
    if dim == 2:
        for s in range(lo, hi):
            dx, dy, _ = displacement(xi, yi, 0.0, xs[s], ys[s], 0.0, space)
            d2 = dx * dx + dy * dy
            if (d2 <= worst) & (s != si):
                m = knn_insert_keyed(rs, rk, rd, tid, m, k, s, order[s], d2)
                if m == k:
                    worst = rd[tid, k - 1]
        return m
    for s in range(lo, hi):
        dx, dy, dz = displacement(xi, yi, zi, xs[s], ys[s], zs[s], space)
        d2 = dx * dx + dy * dy + dz * dz
        if (d2 <= worst) & (s != si):
            m = knn_insert_keyed(rs, rk, rd, tid, m, k, s, order[s], d2)
            if m == k:
                worst = rd[tid, k - 1]
    return m


BOUND_SAFETY = 1.0 - 1e-9
"""Cell-geometry distance bounds are shrunk by this factor: they are computed from cell walls,
the distances from coordinates, and the two may differ in the last bits."""


@device
def _offset_gap(o, lo, hi, width):
    """Lower bound on the distance along one axis from an agent to the cells o cells away from
    its own (o = 0: its own column); lo, hi: its distances to its own cell's lower and upper wall."""
    if o == 0:
        return 0.0
    if o > 0:
        return hi + (o - 1) * width
    return lo + (-o - 1) * width


@device
def _scan_row_knn(xs, ys, zs, order, cell_start, g, row, ix, xa, xb, si, dim, space, k, m, tid, rs, rk, rd):
    """Offer the agents of the cells ix+xa .. ix+xb (wrapped) of one row of cells (``row``: the
    id of the row's cell 0) to the k-nearest row: one or two runs of consecutive slots."""
    a = ix + xa
    b = ix + xb
    if b < 0 or a >= g.nx:  # periodic: the whole span wrapped
        shift = g.nx if b < 0 else -g.nx
        a += shift
        b += shift
    # the span as runs [a, b1] and [a2, b]: two when it wraps below 0 or above nx - 1
    b1 = b
    a2 = b + 1
    if a < 0:
        a, b1, a2 = a + g.nx, g.nx - 1, 0
    elif b >= g.nx:
        b1, a2, b = g.nx - 1, 0, b - g.nx
    for part in range(2):
        lo = a if part == 0 else a2
        hi = b1 if part == 0 else b
        if lo <= hi:  # one call site: the scan loop is inlined once
            m = _scan_slots_knn(xs, ys, zs, order, cell_start[row + lo], cell_start[row + hi + 1], si, dim, space,
                                k, m, tid, rs, rk, rd)  # fmt: skip
    return m


@device
def knn_search(si, c, xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd):
    """k nearest agents of the agent in slot si, by rings of cells (see knn.py); fills row
    ``tid`` of (rs: slots, rk: agent indices, rd: squared distances), sorted by (distance,
    index); c is the slot's cell. Returns how many were found (< k if fewer exist).

    Ring r is walked as rows of cells along x (consecutive slots). Once k candidates are held, a
    row, or the cells at the ends of a row, lying farther than the k-th distance is skipped:
    a lower bound on its distance follows from the agent's distances to its cell's walls. The
    agent's own row of cells x-1 .. x+1 comes first ("ring 0" below), so the k-th distance is
    small early."""
    ix = c % g.nx
    iy = (c // g.nx) % g.ny
    iz = c // (g.nx * g.ny)
    # distances to the own cell's walls; in periodic space a cell may be reached from either
    # side (its nearest image), so both sides get the smaller of the two
    lox, hix = _wall_gaps(xs[si], g.ox, g.cx, ix, g.periodic)
    loy, hiy = _wall_gaps(ys[si], g.oy, g.cy, iy, g.periodic)
    loz, hiz = _wall_gaps(zs[si], g.oz, g.cz, iz, g.periodic) if dim == 3 else (np.inf, np.inf)
    xlo, xhi = offset_range(ix, g.nx, g.periodic)
    ylo, yhi = offset_range(iy, g.ny, g.periodic)
    zlo, zhi = offset_range(iz, g.nz, g.periodic)
    rmax = max(max(-xlo, xhi), max(max(-ylo, yhi), max(-zlo, zhi)))
    m = 0
    for r in range(0, rmax + 1):
        ring = max(r, 1)  # ring 0 is the own row's part of ring 1
        for oz in range(max(zlo, -r), min(zhi, r) + 1):
            gz = _offset_gap(oz, loz, hiz, g.cz)
            cz = wrap_offset(iz, oz, g.nz)
            for oy in range(max(ylo, -r), min(yhi, r) + 1):
                if r == 1 and oy == 0 and oz == 0:
                    continue  # the own row: ring 0
                gy = _offset_gap(oy, loy, hiy, g.cy)
                g2 = (gy * gy + gz * gz) * BOUND_SAFETY
                worst = rd[tid, k - 1] if m == k else np.inf
                if g2 > worst:
                    continue
                row = cell_id(0, wrap_offset(iy, oy, g.ny), cz, g)
                xa = max(xlo, -ring)
                xb = min(xhi, ring)
                # cells at the row's ends beyond the k-th distance are left out
                while xa < 0 and g2 + _sq(_offset_gap(xa, lox, hix, g.cx)) * BOUND_SAFETY > worst:
                    xa += 1
                while xb > 0 and g2 + _sq(_offset_gap(xb, lox, hix, g.cx)) * BOUND_SAFETY > worst:
                    xb -= 1
                # rows with |oy| or |oz| = r (and ring 0) lie wholly in the ring, the others
                # only with their two end cells
                whole = r <= 1 or abs(oy) == r or abs(oz) == r
                for part in range(1 if whole else 2):
                    lo = xa
                    hi = xb
                    if not whole:
                        lo = -r if part == 0 else r
                        hi = lo
                        if (part == 0 and xa != -r) or (part == 1 and xb != r):
                            continue
                    if lo <= hi:
                        m = _scan_row_knn(xs, ys, zs, order, cell_start, g, row, ix, lo, hi, si, dim, space, k, m,
                                          tid, rs, rk, rd)  # fmt: skip
        if m == k and r >= 1:
            bound = min(r * g.cx + min(lox, hix), r * g.cy + min(loy, hiy))
            if dim == 3:
                bound = min(bound, r * g.cz + min(loz, hiz))
            bound *= BOUND_SAFETY
            if rd[tid, k - 1] < bound * bound:
                break
    return m


@device
def _sq(x):
    return x * x


@device
def _wall_gaps(x, origin, width, c, periodic):
    """Distances from coordinate x to the lower and upper wall of its cell c on one axis (>= 0);
    in periodic space both are the smaller one."""
    lo = max(x - (origin + c * width), 0.0)
    hi = max((origin + (c + 1) * width) - x, 0.0)
    if periodic:
        lo = min(lo, hi)
        hi = lo
    return lo, hi


BLOCK_CANDIDATES = 2048
"""Most candidates (agents of a cell's block) :func:`knn_rows_by_cell` gathers for one cell; the agents of
a cell whose block holds more are searched by the ring search alone."""

RANK_MAX = 24
"""Up to this many shortlisted candidates, the k nearest are placed by rank (branch-free); above, by insertion."""

THRESHOLD_STEPS = (0.8, 1.0, 1.25, 1.6, 2.2)
"""Squared-distance thresholds tried at once, as multiples of the previous agent's k-th squared distance."""

VECTOR_PAD = 4
"""The gathered block and the shortlist are padded to a multiple of this many entries with candidates
at infinity (never counted, shortlisted or ranked before a real one), so that the loops over them
(vectorized four doubles at a time) leave no scalar remainder. Measured on starlings-3d-large (one
thread, docs/benchmarks.md): 4 made the search kernel about 5 % faster than no padding; 8 less, 16 slower."""


def knn_cell_scratch(threads: int, k: int, capacity: int) -> tuple[np.ndarray, ...]:
    """Per-thread scratch of :func:`knn_rows_by_cell`: the k-nearest rows (slots, indices, squared
    distances; k + 1 entries padded to whole cache lines), the block runs and shifts, the gathered
    candidates (floats: x, y, z, squared distance, shortlisted squared distance; integers: slot,
    index, shortlisted index, shortlisted position then slot; ``capacity`` each, and room for the
    padding)."""
    width = (k // 8 + 1) * 8 + 8
    cap = (max(capacity, RANK_MAX) // VECTOR_PAD + 2) * VECTOR_PAD  # room for the padding (see VECTOR_PAD)
    return (np.empty((threads, width), dtype=np.int64), np.empty((threads, width), dtype=np.int64),
            np.empty((threads, width)), np.empty((threads, MAX_RUNS, 2), dtype=np.int64),
            np.empty((threads, MAX_RUNS, 3)), np.empty((threads, 5, cap)),
            np.empty((threads, 4, cap), dtype=np.int64))  # fmt: skip


@device
def _padded(n):
    """n rounded up to a multiple of :data:`VECTOR_PAD`."""
    return (n + VECTOR_PAD - 1) // VECTOR_PAD * VECTOR_PAD


@device
def _block_gap(x, origin, width, c, count, periodic):
    """Lower bound on the distance along one axis from coordinate x (in cell c) to any agent outside
    the block of cells c-1 .. c+1: inf where the block holds every cell of that side (the grid's
    edge, or a periodic axis of at most 3 cells)."""
    if periodic:
        if count <= 3:
            return np.inf
        lo, _ = _wall_gaps(x, origin, width, c, periodic)
        return lo + width
    lo, hi = _wall_gaps(x, origin, width, c, periodic)
    gap = np.inf
    if c > 1:
        gap = lo + width
    if c < count - 2:
        gap = min(gap, hi + width)
    return gap


@serial_kernel
def _knn_cells(c0, c1, tid, xs, ys, zs, order, cell_start, g, dim, space, k, query, scratch, row_index, fill):
    """:func:`knn_rows_by_cell` for cells c0..c1."""
    rs, rk, rd, runs, shifts, cand, ints = scratch
    capacity = ints.shape[2]
    prev = 0.0  # k-th squared distance of the agent before: where the next one's is likely to be
    own = 0
    for c in range(c0, c1):
        lo = cell_start[c]
        hi = cell_start[c + 1]
        if lo == hi:
            continue
        ix = c % g.nx
        iy = (c // g.nx) % g.ny
        iz = c // (g.nx * g.ny)
        nruns = block_runs_at(ix, iy, iz, g, cell_start, space.lx, space.ly, space.lz, tid, runs, shifts)
        total = 0
        for q in range(nruns):
            total += runs[tid, q, 1] - runs[tid, q, 0]
        if total > capacity:
            total = -1  # too many to gather: every agent of the cell takes the ring search
        else:
            total = 0
            for q in range(nruns):
                if runs[tid, q, 0] <= lo < runs[tid, q, 1]:
                    own = total + (lo - runs[tid, q, 0]) - lo  # block position of slot si: own + si
                for s in range(runs[tid, q, 0], runs[tid, q, 1]):
                    cand[tid, 0, total] = xs[s]
                    cand[tid, 1, total] = ys[s]
                    cand[tid, 2, total] = zs[s]
                    ints[tid, 0, total] = s
                    ints[tid, 1, total] = order[s]
                    total += 1
            for q in range(total, _padded(total)):
                cand[tid, 0, q] = np.inf
                cand[tid, 1, q] = np.inf
                cand[tid, 2, q] = np.inf
        for si in range(lo, hi):
            if not query[order[si]]:
                fill[order[si]] = 0
                continue
            m = _knn_in_block(si, own + si, total, prev, xs, ys, zs, order, g, ix, iy, iz, dim, space, k, tid, rs, rk,
                              rd, cand, ints)  # fmt: skip
            if m < k:  # the block did not prove the k nearest: the ring search, called (one call site)
                m = _ring_search(si, c, xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd)
            if m == k:
                prev = rd[tid, k - 1]
            i = order[si]
            for u in range(m):
                row_index[i, u] = rk[tid, u]
            fill[i] = m


@block_device
def _ring_search(si, c, xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd):
    """:func:`knn_search` compiled once as a function of its own: the rare fallback of
    :func:`_knn_cells` (inlined there, it made that kernel's compile several times longer)."""
    return knn_search(si, c, xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd)


@device
def _knn_in_block(si, qi, total, prev, xs, ys, zs, order, g, ix, iy, iz, dim, space, k, tid, rs, rk, rd, cand, ints):
    """The k nearest of the agent in slot si (gathered at block position qi) among its cell's ``total``
    gathered block candidates, into row ``tid`` of (rs, rk, rd) sorted by (squared distance, index);
    returns k, or fewer (0 when total < 0) when the block cannot prove them: only candidates nearer
    than every agent outside the block count. Squared distances are computed as the ring search's
    (bitwise those of the brute-force reference) in one branch-free loop that also counts how many
    fall within each of a few thresholds around ``prev`` (the k-th squared distance of the agent
    before); the smallest threshold holding k candidates is taken, the candidates within it are
    shortlisted (branch-free) and the shortlist placed by rank."""
    if total < 0:
        return 0
    xi = xs[si]
    yi = ys[si]
    zi = zs[si]
    gap = min(_block_gap(xi, g.ox, g.cx, ix, g.nx, g.periodic), _block_gap(yi, g.oy, g.cy, iy, g.ny, g.periodic))
    if dim == 3:
        gap = min(gap, _block_gap(zi, g.oz, g.cz, iz, g.nz, g.periodic))
    gap *= BOUND_SAFETY
    bound = gap * gap  # every agent outside the block is farther than this
    base = prev if prev > 0.0 else bound * 0.125
    t0 = min(base * THRESHOLD_STEPS[0], bound)
    t1 = min(base * THRESHOLD_STEPS[1], bound)
    t2 = min(base * THRESHOLD_STEPS[2], bound)
    t3 = min(base * THRESHOLD_STEPS[3], bound)
    t4 = min(base * THRESHOLD_STEPS[4], bound)
    n0 = 0
    n1 = 0
    n2 = 0
    n3 = 0
    n4 = 0
    # the agent itself is counted (distance 0): k others need k + 1
    padded = _padded(total)  # the padding's squared distances are inf (or NaN in periodic space): never counted
    if dim == 2:
        for q in range(padded):
            dx, dy, _ = displacement(xi, yi, 0.0, cand[tid, 0, q], cand[tid, 1, q], 0.0, space)
            d2 = dx * dx + dy * dy
            cand[tid, 3, q] = d2
            n0 += d2 <= t0
            n1 += d2 <= t1
            n2 += d2 <= t2
            n3 += d2 <= t3
            n4 += d2 <= t4
    else:
        for q in range(padded):
            dx, dy, dz = displacement(xi, yi, zi, cand[tid, 0, q], cand[tid, 1, q], cand[tid, 2, q], space)
            d2 = dx * dx + dy * dy + dz * dz
            cand[tid, 3, q] = d2
            n0 += d2 <= t0
            n1 += d2 <= t1
            n2 += d2 <= t2
            n3 += d2 <= t3
            n4 += d2 <= t4
    t = bound
    if n0 > k:
        t = t0
    elif n1 > k:
        t = t1
    elif n2 > k:
        t = t2
    elif n3 > k:
        t = t3
    elif n4 > k:
        t = t4
    short = 0  # branch-free shortlist of the block positions of the candidates within t, the agent itself left out
    for q in range(total):
        ints[tid, 3, short] = q
        short += (cand[tid, 3, q] <= t) & (q != qi)
    if short < k:
        return 0
    for u in range(short):  # their squared distances, indices and slots
        q = ints[tid, 3, u]
        cand[tid, 4, u] = cand[tid, 3, q]
        ints[tid, 2, u] = ints[tid, 1, q]
        ints[tid, 3, u] = ints[tid, 0, q]
    if short > RANK_MAX:
        m = 0
        for u in range(short):
            m = knn_insert_keyed(rs, rk, rd, tid, m, k, ints[tid, 3, u], ints[tid, 2, u], cand[tid, 4, u])
        return m
    for u in range(short, _padded(short)):  # at infinity: never before a real candidate
        cand[tid, 4, u] = np.inf
        ints[tid, 2, u] = 0
    for u in range(short):  # rank by (squared distance, index): indices differ, so ranks do; k and above go to k
        du = cand[tid, 4, u]
        ku = ints[tid, 2, u]
        r = 0
        for v in range(_padded(short)):
            dv = cand[tid, 4, v]
            r += (dv < du) | ((dv == du) & (ints[tid, 2, v] < ku))
        r = min(r, k)
        rd[tid, r] = du
        rk[tid, r] = ku
        rs[tid, r] = ints[tid, 3, u]
    return k


@numba.njit(parallel=True, cache=True)
def knn_rows_by_cell(xs, ys, zs, order, cell, cell_start, g, dim, space, k, query, scratch, row_index, fill):
    """k-nearest rows in agent order, row_index[i, :fill[i]] sorted by (distance, index), cell by
    cell: the agents of a cell's 3x3(x3) block are gathered once, every agent of the cell computes
    its distances to all of them in one loop and keeps the k nearest of those nearer than anything
    outside the block (:func:`_knn_in_block`); an agent with fewer than k such candidates takes the
    ring search (:func:`knn_search`). Only the agents i with query[i] are searched; the others get
    fill[i] = 0 (every agent's row is its own, so the rows searched do not depend on the others)."""
    ncell = cell_start.shape[0] - 1
    blocks = block_count(ncell)
    for b in numba.prange(blocks):
        c0, c1 = block_bounds(b, blocks, ncell)
        _knn_cells(c0, c1, numba.get_thread_id(), xs, ys, zs, order, cell_start, g, dim, space, k, query, scratch,
                   row_index, fill)  # fmt: skip
