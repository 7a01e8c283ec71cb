"""The coherent grid: agents binned by cell and copied into cell order each step.

A counting sort orders the alive agents by cell (by index inside a cell); their
coordinates are gathered into contiguous cell-ordered arrays, so a neighbour
loop reads memory in runs (the "coherent grid" of GPU flocking work). Kernels
then work per cell: the 3x3 (3x3x3) block of a cell is a few *runs* of
consecutive slots (cells adjacent in x are adjacent in memory), each with one
periodic image shift, and every agent of the cell scans those runs.

Bitwise parity with the brute-force reference: a periodic displacement is
computed as ``(x_j - x_i) - L*m`` with the image count m of the block cell,
which is what ``space.min_image`` computes for any pair within the query
radius. Axes with fewer than 3 cells visit each cell once and use the full
minimum image per pair. Kernels whose sums must not depend on the visiting
order accumulate in fixed point (see models/abm_flocking.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import block_device, device, serial_kernel
from flocksim.neighbors.grid import (
    GridGeometry,
    alive_bounds,
    cell_id,
    cell_of_agents,
    counting_sort,
    grid_geometry,
)
from flocksim.neighbors.knn import agents_per_cell, offset_range, wrap_offset
from flocksim.neighbors.knn_geometry import knn_axes, knn_geometry
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import Space, displacement, min_image


@dataclass
class CoherentGrid:
    """Cell-ordered copy of the alive agents' coordinates."""

    geometry: GridGeometry
    cell_start: np.ndarray  # (ncell + 1,) int64: agents of cell c are slots cell_start[c]:cell_start[c+1]
    order: np.ndarray  # (n_alive,) int64: agent index of each slot
    cell: np.ndarray  # (N,) int64: cell of each agent (-1 if dead)
    xs: np.ndarray  # (n_alive,) float64 coordinates in slot order (zs is zeros in 2D)
    ys: np.ndarray
    zs: np.ndarray


@numba.njit(parallel=True, cache=True)
def _gather(position, dim, order, xs, ys, zs):
    for s in numba.prange(order.shape[0]):
        i = order[s]
        xs[s] = position[i, 0]
        ys[s] = position[i, 1]
        zs[s] = position[i, 2] if dim == 3 else 0.0


@device
def block_axis(c, count, periodic, length, e):
    """Cell and image shift L*m of the e-th cell of the block around cell c on one axis.

    Periodic axes with >= 3 cells: cells c-1, c, c+1 wrapped; a cell reached by
    wrapping below 0 lies one box length *down*, so neighbours there have
    x_j - x_i near +L and shift +L (and -L above). Fewer than 3 cells: each cell
    once, shift 0 (the kernel then takes the full minimum image).
    """
    if periodic:
        if count < 3:
            return e, 0.0
        raw = c - 1 + e
        if raw < 0:
            return raw + count, length
        if raw >= count:
            return raw - count, -length
        return raw, 0.0
    lo = max(c - 1, 0)
    return lo + e, 0.0


@device
def block_width(c, count, periodic):
    if periodic:
        return count if count < 3 else 3
    return min(c + 1, count - 1) - max(c - 1, 0) + 1


@numba.njit(parallel=True, cache=True)
def gather_slots(values, order, out):
    """out[s] = values[order[s]]: a per-agent column in slot order."""
    for s in numba.prange(order.shape[0]):
        out[s] = values[order[s]]


def build_coherent_grid(position: np.ndarray, alive: np.ndarray, space: Space, min_cell: float) -> CoherentGrid:
    """Bin alive agents into cells at least ``min_cell`` wide and gather them in cell order."""
    return coherent_grid(position, alive, grid_geometry(position, alive, space, min_cell))


def coherent_grid(position: np.ndarray, alive: np.ndarray, g: GridGeometry) -> CoherentGrid:
    """Bin alive agents into the cells of ``g`` and gather them in cell order."""
    n, dim = position.shape
    ncell = g.nx * g.ny * g.nz
    cell = np.empty(n, dtype=np.int64)
    cell_of_agents(position, alive, dim, g, cell)
    cell_start = np.empty(ncell + 1, dtype=np.int64)
    n_alive = int(np.count_nonzero(cell >= 0))
    order = np.empty(n_alive, dtype=np.int64)
    counting_sort(cell, ncell, cell_start, order)
    xs = np.empty(n_alive)
    ys = np.empty(n_alive)
    zs = np.empty(n_alive)
    _gather(position, dim, order, xs, ys, zs)
    return CoherentGrid(g, cell_start, order, cell, xs, ys, zs)


CROWDING_LIMIT = 1.5
"""A k-nearest grid is rebuilt with narrower cells when its agent-weighted mean occupancy
exceeds this many times that of uniform density."""


def build_knn_grid(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> CoherentGrid:
    """Coherent grid sized for k-nearest searches: cells for ``agents_per_cell(k)`` agents at
    the bounding box's mean density, one cell on an open-space axis the agents span thinly (see
    knn_geometry.py), narrowed once when the agents are clustered (a flock in an open world fills
    a fraction of its box; crowded cells mean many candidates per agent).

    Crowding is the occupancy an agent sees, sum(n_c^2) / sum(n_c) over cells c; uniform
    (Poisson) agents give the mean occupancy plus one. Any width gives the same neighbours.
    """
    dim = position.shape[1]
    lo = np.zeros(dim)
    hi = np.zeros(dim)
    n_alive = alive_bounds(position, alive, lo, hi)
    width, thin = knn_axes(lo, hi, n_alive, space, k)
    grid = coherent_grid(position, alive, knn_geometry(lo, hi, n_alive, space, width, thin))
    occupancy = np.diff(grid.cell_start)
    divided = dim - int(np.count_nonzero(thin))
    narrower = narrowed_knn_width(width, int(np.dot(occupancy, occupancy)), int(occupancy.sum()), k, divided)
    if narrower is not None:
        grid = coherent_grid(position, alive, knn_geometry(lo, hi, n_alive, space, narrower, thin))
    return grid


def narrowed_knn_width(width: float, sum_squares: int, placed: int, k: int, dim: int) -> float | None:
    """The narrower cell width :func:`build_knn_grid` switches to when a grid of ``width`` is
    crowded (``sum_squares``: sum of squared cell occupancies, ``placed``: agents binned, ``dim``: axes
    divided into cells, thin axes left out), else None."""
    if placed == 0:
        return None
    uniform = agents_per_cell(k) + 1.0
    crowding = float(sum_squares) / placed
    if crowding > CROWDING_LIMIT * uniform:
        return width * (uniform / crowding) ** (1.0 / dim)
    return None


MAX_RUNS = 18
"""Most runs of a block: 9 (y, z) rows of cells (3D), each split in two where x wraps."""


def block_runs_scratch(threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-thread scratch of :func:`block_runs`: (first, past-last) slots and image shifts,
    each thread's rows a whole number of cache lines."""
    return np.empty((threads, MAX_RUNS, 2), dtype=np.int64), np.empty((threads, MAX_RUNS, 3))


@device
def block_runs(c, g, cell_start, lx, ly, lz, tid, runs, shifts):
    """The block of cell c as runs of consecutive slots, into row ``tid`` of
    ``runs`` (int64, (threads, MAX_RUNS, 2): first and past-last slot) and
    ``shifts`` (float64, (threads, MAX_RUNS, 3): image shift L*m per axis, see
    :func:`block_axis`). Empty runs are left out. Runs come in the order a cell-by-cell
    visit takes (z, then y, then x from c-1 to c+1, wrapped), so summing over them adds in
    the same order as over the block's cells. Returns the number of runs."""
    ix = c % g.nx
    iy = (c // g.nx) % g.ny
    iz = c // (g.nx * g.ny)
    return block_runs_at(ix, iy, iz, g, cell_start, lx, ly, lz, tid, runs, shifts)


@device
def block_runs_at(ix, iy, iz, g, cell_start, lx, ly, lz, tid, runs, shifts):
    """:func:`block_runs` of the cell at (ix, iy, iz): for loops that walk cells row by row and
    so skip block_runs's three integer divisions per cell."""
    nruns = 0
    for a in range(block_width(iz, g.nz, g.periodic)):
        cz, sz = block_axis(iz, g.nz, g.periodic, lz, a)
        for b in range(block_width(iy, g.ny, g.periodic)):
            cy, sy = block_axis(iy, g.ny, g.periodic, ly, b)
            row = cell_id(0, cy, cz, g)
            # up to two x segments: [x0, x1] with shift s0 and [x2, x3] with shift s2
            x0, x1, s0, x2, x3, s2 = ix - 1, ix + 1, 0.0, 0, -1, 0.0
            if not g.periodic:
                x0 = max(x0, 0)
                x1 = min(x1, g.nx - 1)
            elif g.nx < 3:
                x0, x1 = 0, g.nx - 1
            elif ix == 0:  # cell nx-1 (wrapped, below 0) first: runs follow the cell order c-1, c, c+1
                x0, x1, s0, x2, x3, s2 = g.nx - 1, g.nx - 1, lx, 0, 1, 0.0
            elif ix == g.nx - 1:
                x0, x1, x2, x3, s2 = g.nx - 2, g.nx - 1, 0, 0, -lx
            for lo_cell, hi_cell, sx in ((x0, x1, s0), (x2, x3, s2)):
                if hi_cell < lo_cell:
                    continue
                lo = cell_start[row + lo_cell]
                hi = cell_start[row + hi_cell + 1]
                if hi > lo:
                    runs[tid, nruns, 0] = lo
                    runs[tid, nruns, 1] = hi
                    shifts[tid, nruns, 0] = sx
                    shifts[tid, nruns, 1] = sy
                    shifts[tid, nruns, 2] = sz
                    nruns += 1
    return nruns


@device
def run_displacement(xi, yi, zi, xj, yj, zj, sx, sy, sz, full_x, full_y, full_z, space):
    """Displacement i -> j seen through a block run: (x_j - x_i) - L*m per axis, or the full
    minimum image on axes with fewer than 3 cells; bitwise what ``displacement`` gives
    for pairs within the query radius."""
    dx = xj - xi
    dy = yj - yi
    dz = zj - zi
    dx = min_image(dx, space.lx) if full_x else dx - sx
    dy = min_image(dy, space.ly) if full_y else dy - sy
    dz = min_image(dz, space.lz) if full_z else dz - sz
    return dx, dy, dz


def full_image_axes(g: GridGeometry) -> tuple[bool, bool, bool]:
    """Axes on which run displacements need the full minimum image."""
    return (g.periodic and g.nx < 3, g.periodic and g.ny < 3, g.periodic and g.nz < 3)


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
