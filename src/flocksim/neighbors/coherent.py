"""The coherent grid: agents binned by cell and copied into cell order each step.

A counting sort orders the alive agents by cell (by index inside a cell); their
coordinates are gathered into contiguous cell-ordered arrays, so a neighbour
loop reads memory in runs (the "coherent grid" of GPU flocking work). Kernels
then work per cell: the cells of its 3x3 (3x3x3) block are gathered once into a
per-thread *tile* (the CPU analogue of shared-memory tiles), merged into
increasing agent index, and every agent of the cell scans that tile.

Bitwise parity with the brute-force reference: a tile is scanned in increasing
agent index, exactly the order of a brute-force neighbour row, and a periodic
displacement is computed as ``(x_j - x_i) - L*m`` with the image count m of the
block cell, which is what ``space.min_image`` computes for any pair within the
query radius. Axes with fewer than 3 cells visit each cell once and use the full
minimum image per pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from flocksim.kernels.compile import device
from flocksim.neighbors.grid import GridGeometry, cell_id, cell_of_agents, counting_sort, grid_geometry
from flocksim.neighbors.knn import knn_cell_width, offset_range, wrap_offset
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
    max_block: int  # most agents in any cell's 3x3(x3) block: the tile capacity


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
def _max_block(g, cell_start, lx, ly, lz):
    ncell = g.nx * g.ny * g.nz
    best = np.zeros(ncell, dtype=np.int64)
    for c in numba.prange(ncell):
        ix = c % g.nx
        iy = (c // g.nx) % g.ny
        iz = c // (g.nx * g.ny)
        total = 0
        for a in range(block_width(iz, g.nz, g.periodic)):
            cz, _ = block_axis(iz, g.nz, g.periodic, lz, a)
            for b in range(block_width(iy, g.ny, g.periodic)):
                cy, _ = block_axis(iy, g.ny, g.periodic, ly, b)
                for e in range(block_width(ix, g.nx, g.periodic)):
                    cx, _ = block_axis(ix, g.nx, g.periodic, lx, e)
                    cb = cell_id(cx, cy, cz, g)
                    total += cell_start[cb + 1] - cell_start[cb]
        best[c] = total
    return best.max() if ncell > 0 else 0


def build_coherent_grid(position: np.ndarray, alive: np.ndarray, space: Space, min_cell: float) -> CoherentGrid:
    """Bin alive agents into cells at least ``min_cell`` wide and gather them in cell order."""
    n, dim = position.shape
    g = grid_geometry(position, alive, space, min_cell)
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
    largest = int(_max_block(g, cell_start, g.cx * g.nx, g.cy * g.ny, g.cz * g.nz)) if n_alive else 0
    return CoherentGrid(g, cell_start, order, cell, xs, ys, zs, largest)


def build_knn_grid(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> CoherentGrid:
    """Coherent grid sized for k-nearest searches."""
    return build_coherent_grid(position, alive, space, knn_cell_width(position, alive, space, k))


class TileScratch:
    """Per-thread tile buffers of a given capacity (allocated once, grown on demand)."""

    def __init__(self) -> None:
        self.arrays: tuple[np.ndarray, ...] = ()
        self.shape = (0, 0)

    def get(self, threads: int, capacity: int) -> tuple[np.ndarray, ...]:
        capacity = max(capacity, 1)
        if self.shape[0] < threads or self.shape[1] < capacity:
            shape = (max(threads, self.shape[0]), max(capacity, self.shape[1]))
            ints = [np.empty(shape, dtype=np.int64) for _ in range(4)]  # src, key, perm, perm2
            floats = [np.empty(shape) for _ in range(3)]  # shift x, y, z
            self.arrays = (*ints, *floats)
            self.shape = shape
        return self.arrays


@device
def build_tile(c, g, cell_start, order, space_l, tid, src, key, perm, perm2, shx, shy, shz, runs):
    """Gather the block of cell c into row ``tid`` of the tile buffers, sorted by agent index.

    After the call, for u < returned size, ``perm[tid, u]`` is the tile entry of
    the u-th smallest agent index; ``src`` holds its slot, ``key`` its agent
    index and ``sh*`` its image shift L*m per axis. ``runs`` is an int64 scratch
    row of at least 28 entries per thread.
    """
    lx, ly, lz = space_l
    ix = c % g.nx
    iy = (c // g.nx) % g.ny
    iz = c // (g.nx * g.ny)
    t = 0
    nruns = 0
    for a in range(block_width(iz, g.nz, g.periodic)):
        cz, sz = block_axis(iz, g.nz, g.periodic, lz, a)
        for b in range(block_width(iy, g.ny, g.periodic)):
            cy, sy = block_axis(iy, g.ny, g.periodic, ly, b)
            for e in range(block_width(ix, g.nx, g.periodic)):
                cx, sx = block_axis(ix, g.nx, g.periodic, lx, e)
                cb = cell_id(cx, cy, cz, g)
                lo = cell_start[cb]
                hi = cell_start[cb + 1]
                if hi > lo:
                    runs[tid, nruns] = t
                    nruns += 1
                    for s in range(lo, hi):
                        src[tid, t] = s
                        key[tid, t] = order[s]
                        perm[tid, t] = t
                        shx[tid, t] = sx
                        shy[tid, t] = sy
                        shz[tid, t] = sz
                        t += 1
    runs[tid, nruns] = t
    # bottom-up merge of the sorted runs (each cell is already in increasing index)
    a_is_perm = True
    while nruns > 1:
        out_runs = 0
        r = 0
        while r < nruns:
            lo = runs[tid, r]
            mid = runs[tid, r + 1]
            hi = runs[tid, r + 2] if r + 1 < nruns else mid
            p = lo
            q = mid
            o = lo
            while p < mid or q < hi:
                if a_is_perm:
                    take_left = q >= hi or (p < mid and key[tid, perm[tid, p]] < key[tid, perm[tid, q]])
                    if take_left:
                        perm2[tid, o] = perm[tid, p]
                        p += 1
                    else:
                        perm2[tid, o] = perm[tid, q]
                        q += 1
                else:
                    take_left = q >= hi or (p < mid and key[tid, perm2[tid, p]] < key[tid, perm2[tid, q]])
                    if take_left:
                        perm[tid, o] = perm2[tid, p]
                        p += 1
                    else:
                        perm[tid, o] = perm2[tid, q]
                        q += 1
                o += 1
            runs[tid, out_runs] = lo
            out_runs += 1
            r += 2
        runs[tid, out_runs] = t
        nruns = out_runs
        a_is_perm = not a_is_perm
    if not a_is_perm:
        for u in range(t):
            perm[tid, u] = perm2[tid, u]
    return t


@device
def tile_displacement(xi, yi, zi, xj, yj, zj, sx, sy, sz, full_x, full_y, full_z, space):
    """Displacement i -> j inside a tile: (x_j - x_i) - L*m per axis, or the full
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
    """Axes on which tile displacements need the full minimum image."""
    return (g.periodic and g.nx < 3, g.periodic and g.ny < 3, g.periodic and g.nz < 3)


@device
def _scan_cell_knn(xs, ys, zs, order, cell_start, cb, si, space, k, m, tid, rs, rk, rd):
    xi = xs[si]
    yi = ys[si]
    zi = zs[si]
    for s in range(cell_start[cb], cell_start[cb + 1]):
        if s != si:
            dx, dy, dz = displacement(xi, yi, zi, xs[s], ys[s], zs[s], space)
            m = knn_insert_keyed(rs, rk, rd, tid, m, k, s, order[s], dx * dx + dy * dy + dz * dz)
    return m


BOUND_SAFETY = 1.0 - 1e-9


@device
def knn_search(si, c, xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd):
    """k nearest agents of the agent in slot si, by rings of cells (see knn.py);
    fills row ``tid`` of (rs: slots, rk: agent indices, rd: squared distances),
    sorted by (distance, index); c is the slot's cell. Returns how many were found
    (< k if fewer exist)."""
    ix = c % g.nx
    iy = (c // g.nx) % g.ny
    iz = c // (g.nx * g.ny)
    # after ring r every unvisited agent lies beyond the (2r+1)-cell block on some axis:
    # at least r cell widths plus the distance from this agent to its own cell's wall
    wx = _wall_gap(xs[si], g.ox, g.cx, ix)
    wy = _wall_gap(ys[si], g.oy, g.cy, iy)
    wz = _wall_gap(zs[si], g.oz, g.cz, iz) if dim == 3 else np.inf
    xlo, xhi = offset_range(ix, g.nx, g.periodic)
    ylo, yhi = offset_range(iy, g.ny, g.periodic)
    zlo, zhi = offset_range(iz, g.nz, g.periodic)
    rmax = max(max(-xlo, xhi), max(max(-ylo, yhi), max(-zlo, zhi)))
    m = 0
    for r in range(rmax + 1):
        for ox in range(max(xlo, -r), min(xhi, r) + 1):
            cx = wrap_offset(ix, ox, g.nx)
            for oy in range(max(ylo, -r), min(yhi, r) + 1):
                cy = wrap_offset(iy, oy, g.ny)
                if abs(ox) == r or abs(oy) == r:
                    for oz in range(max(zlo, -r), min(zhi, r) + 1):
                        cb = cell_id(cx, cy, wrap_offset(iz, oz, g.nz), g)
                        m = _scan_cell_knn(xs, ys, zs, order, cell_start, cb, si, space, k, m, tid, rs, rk, rd)
                else:
                    if -r >= zlo:
                        cb = cell_id(cx, cy, wrap_offset(iz, -r, g.nz), g)
                        m = _scan_cell_knn(xs, ys, zs, order, cell_start, cb, si, space, k, m, tid, rs, rk, rd)
                    if r <= zhi and r != 0:
                        cb = cell_id(cx, cy, wrap_offset(iz, r, g.nz), g)
                        m = _scan_cell_knn(xs, ys, zs, order, cell_start, cb, si, space, k, m, tid, rs, rk, rd)
        if m == k:
            bound = min(r * g.cx + wx, r * g.cy + wy)
            if dim == 3:
                bound = min(bound, r * g.cz + wz)
            bound *= BOUND_SAFETY
            if rd[tid, k - 1] < bound * bound:
                break
    return m


@device
def _wall_gap(x, origin, width, c):
    """Distance from coordinate x to the nearer wall of its cell c on one axis (>= 0)."""
    lo = x - (origin + c * width)
    hi = (origin + (c + 1) * width) - x
    return max(min(lo, hi), 0.0)


@numba.njit(parallel=True, cache=True)
def knn_rows(xs, ys, zs, order, cell, cell_start, g, dim, space, k, scratch, row_index, fill):
    """k-nearest rows in agent order: row_index[i, :fill[i]] sorted by (distance, index)."""
    rs, rk, rd = scratch
    for si in numba.prange(order.shape[0]):
        tid = numba.get_thread_id()
        i = order[si]
        m = knn_search(si, cell[i], xs, ys, zs, order, cell_start, g, dim, space, k, tid, rs, rk, rd)
        for u in range(m):
            row_index[i, u] = rk[tid, u]
        fill[i] = m


# ---------------------------------------------------------------- row walks with columns
#
# Metric kernels walk the grid row by row (fixed y, z cell). The block of cell
# (ix, iy, iz) is the union of three *columns* (ix-1, ix, ix+1), a column being the
# 3 (2D) or 9 (3D) cells stacked in y and z around the row. Each column is built
# once per row (its cells' runs merged by agent index) and kept in a ring of three;
# a cell's block is the 3-way merge of its columns, so it comes out sorted by agent
# index with linear work instead of a sort.


class ColumnScratch:
    """Per-thread buffers: a ring of 3 columns, a merge scratch, and the merged block.

    ``ints[b, tid, e]`` holds (slot, key) of entry e of buffer b, ``floats`` its image
    shift per axis; buffers 0-2 are the column ring, 3 a merge scratch, 4 the block.
    """

    def __init__(self) -> None:
        self.ints = np.empty((5, 0, 0, 2), dtype=np.int64)
        self.floats = np.empty((5, 0, 0, 3))
        self.sizes = np.empty((0, 3), dtype=np.int64)

    def get(self, threads: int, capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        capacity = max(capacity, 1)
        if self.ints.shape[1] < threads or self.ints.shape[2] < capacity:
            self.ints = np.empty((5, threads, capacity, 2), dtype=np.int64)
            self.floats = np.empty((5, threads, capacity, 3))
            self.sizes = np.empty((threads, 16), dtype=np.int64)  # a cache line or more per thread
        return self.ints, self.floats, self.sizes


BLOCK = 4
"""Index of the merged-block buffer in ColumnScratch."""


@device
def row_walk_supported(g):
    """Rows can be walked with columns when the x axis has >= 3 cells or is not periodic."""
    return not g.periodic or g.nx >= 3


@device
def _copy_entry(ints, floats, tid, src, s, dst, o):
    ints[dst, tid, o, 0] = ints[src, tid, s, 0]
    ints[dst, tid, o, 1] = ints[src, tid, s, 1]
    floats[dst, tid, o, 0] = floats[src, tid, s, 0]
    floats[dst, tid, o, 1] = floats[src, tid, s, 1]
    floats[dst, tid, o, 2] = floats[src, tid, s, 2]


@device
def build_column(ints, floats, tid, u, iy, iz, g, cell_start, order, lx, ly, lz, dst):
    """Entries of column u (unwrapped x cell index) around row (iy, iz) into buffer dst,
    sorted by agent index (buffer 3 is scratch). Returns the size."""
    if (u < 0 or u >= g.nx) and not g.periodic:
        return 0
    cx = u
    shx = 0.0
    if u < 0:
        cx = u + g.nx
        shx = lx
    elif u >= g.nx:
        cx = u - g.nx
        shx = -lx
    n = 0
    for a in range(block_width(iz, g.nz, g.periodic)):
        cz, shz = block_axis(iz, g.nz, g.periodic, lz, a)
        for b in range(block_width(iy, g.ny, g.periodic)):
            cy, shy = block_axis(iy, g.ny, g.periodic, ly, b)
            cb = cell_id(cx, cy, cz, g)
            lo = cell_start[cb]
            hi = cell_start[cb + 1]
            if hi == lo:
                continue
            # merge the cell's run (sorted) into the column from the back, in place
            m = hi - lo
            p = n - 1
            q = m - 1
            o = n + m - 1
            while q >= 0:
                if p >= 0 and ints[dst, tid, p, 1] > order[lo + q]:
                    _copy_entry(ints, floats, tid, dst, p, dst, o)
                    p -= 1
                else:
                    ints[dst, tid, o, 0] = lo + q
                    ints[dst, tid, o, 1] = order[lo + q]
                    floats[dst, tid, o, 0] = shx
                    floats[dst, tid, o, 1] = shy
                    floats[dst, tid, o, 2] = shz
                    q -= 1
                o -= 1
            n += m
    return n


@device
def merge_columns(ints, floats, sizes, tid, a, b, c):
    """3-way merge of column buffers a, b, c (sorted by agent index) into the block buffer.
    Returns the block size."""
    na = sizes[tid, a]
    nb = sizes[tid, b]
    nc = sizes[tid, c]
    big = np.int64(1) << 62
    p = 0
    q = 0
    r = 0
    o = 0
    while p < na or q < nb or r < nc:
        ka = ints[a, tid, p, 1] if p < na else big
        kb = ints[b, tid, q, 1] if q < nb else big
        kc = ints[c, tid, r, 1] if r < nc else big
        if ka <= kb and ka <= kc:
            _copy_entry(ints, floats, tid, a, p, BLOCK, o)
            p += 1
        elif kb <= kc:
            _copy_entry(ints, floats, tid, b, q, BLOCK, o)
            q += 1
        else:
            _copy_entry(ints, floats, tid, c, r, BLOCK, o)
            r += 1
        o += 1
    return o


@device
def start_row(ints, floats, sizes, tid, iy, iz, g, cell_start, order, lx, ly, lz):
    """Columns -1 and 0 of a row into ring slots 2 and 0 (column u lives in slot u mod 3)."""
    sizes[tid, 2] = build_column(ints, floats, tid, -1, iy, iz, g, cell_start, order, lx, ly, lz, 2)
    sizes[tid, 0] = build_column(ints, floats, tid, 0, iy, iz, g, cell_start, order, lx, ly, lz, 0)


@device
def advance_row(ints, floats, sizes, tid, ix, iy, iz, g, cell_start, order, lx, ly, lz):
    """Build column ix+1 (replacing column ix-2 in the ring)."""
    slot = (ix + 1) % 3
    sizes[tid, slot] = build_column(ints, floats, tid, ix + 1, iy, iz, g, cell_start, order, lx, ly, lz, slot)


@device
def block_of(ints, floats, sizes, tid, ix):
    """Merged block of cell ix of the current row, in buffer BLOCK. Returns its size."""
    return merge_columns(ints, floats, sizes, tid, (ix + 2) % 3, ix % 3, (ix + 1) % 3)
