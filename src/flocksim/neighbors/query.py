"""Spatial queries for game code (docs/design.md §2.6): agents near a point.

:class:`SpatialIndex` bins the alive agents on the engine's uniform grid (the counting sort of
:mod:`flocksim.neighbors.grid`) once, then answers any number of queries without allocating
when given an output buffer:

- :meth:`SpatialIndex.radius`: ids of the alive agents within distance r of a point (inclusive),
  ascending;
- :meth:`SpatialIndex.nearest`: ids of the k alive agents nearest a point, nearest first, ties to
  the lower id (fewer when fewer are alive).

Distances are minimum-image in periodic space. Cells are about 3 agents wide at uniform density
(whatever r or k): a radius query visits the cells that overlap the query's box; a nearest
query visits rings of cells of growing Chebyshev distance R from the point's cell and stops once
the k-th distance is at most R cell widths (every unvisited agent is at least that far).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from flocksim.kernels.compile import device
from flocksim.neighbors.grid import GridGeometry, build_cells, grid_geometry
from flocksim.neighbors.knn import knn_cell_width
from flocksim.neighbors.pairs import knn_insert_keyed
from flocksim.space import PERIODIC, Space, displacement, wrap_coordinate


@device
def _distance2(position, j, dim, x, y, z, space):
    qx = position[j, 0]
    qy = position[j, 1]
    qz = position[j, 2] if dim == 3 else 0.0
    dx, dy, dz = displacement(x, y, z, qx, qy, qz, space)
    return dx * dx + dy * dy + dz * dz


@device
def _axis_range(lo_x, hi_x, origin, width, count, periodic):
    """First cell and number of cells (each visited once) covering [lo_x, hi_x] on one axis."""
    a = math.floor((lo_x - origin) / width)
    b = math.floor((hi_x - origin) / width)
    if periodic:
        if b - a + 1 >= count:
            return 0, count
        return a, b - a + 1
    a = max(a, 0)
    b = min(b, count - 1)
    return a, max(b - a + 1, 0)


@device
def _cell(c, count):
    c = c % count
    return c + count if c < 0 else c


@numba.njit(cache=True)
def radius_query(position, ids, dim, space, g, cell_start, order, x, y, z, r, out):
    """Write the ids within r of (x, y, z) into out (as many as fit); return how many there are."""
    if g.periodic:
        x = wrap_coordinate(x, g.cx * g.nx)
        y = wrap_coordinate(y, g.cy * g.ny)
        z = wrap_coordinate(z, g.cz * g.nz)
    r2 = r * r
    x0, xn = _axis_range(x - r, x + r, g.ox, g.cx, g.nx, g.periodic)
    y0, yn = _axis_range(y - r, y + r, g.oy, g.cy, g.ny, g.periodic)
    z0, zn = _axis_range(z - r, z + r, g.oz, g.cz, g.nz, g.periodic) if dim == 3 else (0, 1)
    count = 0
    for a in range(zn):
        cz = _cell(z0 + a, g.nz)
        for b in range(yn):
            cy = _cell(y0 + b, g.ny)
            for e in range(xn):
                c = (cz * g.ny + cy) * g.nx + _cell(x0 + e, g.nx)
                for t in range(cell_start[c], cell_start[c + 1]):
                    j = order[t]
                    if _distance2(position, j, dim, x, y, z, space) <= r2:
                        if count < out.shape[0]:
                            out[count] = ids[j]
                        count += 1
    return count


@numba.njit(cache=True)
def nearest_query(position, ids, dim, space, g, cell_start, order, x, y, z, k, best_id, best_d2):
    """Fill best_id[0, :m] with the m = min(k, alive) nearest ids, nearest first; return m."""
    if g.periodic:
        x = wrap_coordinate(x, g.cx * g.nx)
        y = wrap_coordinate(y, g.cy * g.ny)
        z = wrap_coordinate(z, g.cz * g.nz)
    # the point's cell, unclamped: outside the grid it lies beyond the edge cells
    ix = math.floor((x - g.ox) / g.cx)
    iy = math.floor((y - g.oy) / g.cy)
    iz = math.floor((z - g.oz) / g.cz) if dim == 3 else 0
    if g.periodic:
        ix = min(max(ix, 0), g.nx - 1)
        iy = min(max(iy, 0), g.ny - 1)
        iz = min(max(iz, 0), g.nz - 1)
    width = min(g.cx, g.cy) if dim == 2 else min(g.cx, g.cy, g.cz)
    m = 0
    ring = 0
    while True:
        for a in range(-ring, ring + 1):
            for b in range(-ring, ring + 1):
                for e in range(-ring, ring + 1):
                    if max(abs(a), abs(b), abs(e)) != ring or (dim == 2 and a != 0):
                        continue
                    cx = ix + e
                    cy = iy + b
                    cz = iz + a
                    if g.periodic:
                        if (
                            2 * abs(e) > g.nx
                            or 2 * abs(b) > g.ny
                            or 2 * abs(a) > g.nz
                            or (g.nx % 2 == 0 and 2 * e == -g.nx)
                            or (g.ny % 2 == 0 and 2 * b == -g.ny)
                            or (g.nz % 2 == 0 and 2 * a == -g.nz)
                        ):
                            continue  # each cell once: offsets in [-(n-1)//2, n//2]
                        cx = _cell(cx, g.nx)
                        cy = _cell(cy, g.ny)
                        cz = _cell(cz, g.nz)
                    elif cx < 0 or cx >= g.nx or cy < 0 or cy >= g.ny or cz < 0 or cz >= g.nz:
                        continue
                    c = (cz * g.ny + cy) * g.nx + cx
                    for t in range(cell_start[c], cell_start[c + 1]):
                        j = order[t]
                        d2 = _distance2(position, j, dim, x, y, z, space)
                        m = knn_insert_keyed(best_id, best_id, best_d2, 0, m, k, ids[j], ids[j], d2)
        bound = ring * width
        if m == k and best_d2[0, k - 1] <= bound * bound:
            return m
        if _all_rings_done(ix, iy, iz, ring, g, dim):
            return m
        ring += 1


@device
def _all_rings_done(ix, iy, iz, ring, g, dim):
    """True once rings 0..``ring`` have covered every cell of the grid."""
    if g.periodic:
        return ring >= max(g.nx // 2, g.ny // 2, g.nz // 2 if dim == 3 else 0)
    reach_x = max(abs(ix), abs(g.nx - 1 - ix))
    reach_y = max(abs(iy), abs(g.ny - 1 - iy))
    reach_z = max(abs(iz), abs(g.nz - 1 - iz)) if dim == 3 else 0
    return ring >= max(reach_x, reach_y, reach_z)


class SpatialIndex:
    """The alive agents of one state binned on a grid, for :meth:`radius` and :meth:`nearest`.

    Build it after the state changes (:class:`flocksim.Simulation` does so lazily, once per
    step); it keeps references to the state's arrays, not copies.
    """

    def __init__(self, position: np.ndarray, alive: np.ndarray, ids: np.ndarray, space: Space):
        self.position = position
        self.ids = ids
        self.space = space
        self.dim = position.shape[1]
        if alive.any():
            width = knn_cell_width(position, alive, space, 7)
            self.geometry: GridGeometry = grid_geometry(position, alive, space, max(width, 1e-9))
        else:
            self.geometry = GridGeometry(0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1, 1, 1, space.kind == PERIODIC)
        self.cell_start, self.order = build_cells(position, alive, self.geometry)
        self._best_d2 = np.zeros((1, 0))
        self._best_id = np.zeros((1, 0), dtype=np.int64)

    def _point(self, point) -> tuple[float, float, float]:
        p = np.asarray(point, dtype=np.float64).ravel()
        if p.shape != (self.dim,) or not np.isfinite(p).all():
            raise ValueError(f"point: must be {self.dim} finite numbers, got {np.asarray(point).tolist()!r}")
        return float(p[0]), float(p[1]), float(p[2]) if self.dim == 3 else 0.0

    def radius(self, point, r: float, out: np.ndarray | None = None) -> np.ndarray:
        """Ids within ``r`` of ``point`` (inclusive), ascending. ``out`` (int64, 1D) is filled and a
        view of it returned when large enough; otherwise a new array is returned."""
        if not (math.isfinite(r) and r >= 0):
            raise ValueError(f"r: must be >= 0 and finite, got {r!r}")
        x, y, z = self._point(point)
        if out is None:
            out = np.empty(16, dtype=np.int64)
        elif out.dtype != np.int64 or out.ndim != 1:
            raise ValueError(f"out: must be a 1D int64 array, got {out.dtype} with shape {out.shape}")
        g = self.geometry
        args = (self.position, self.ids, self.dim, self.space, g, self.cell_start, self.order, x, y, z, float(r))
        count = radius_query(*args, out)
        if count > out.shape[0]:
            out = np.empty(count, dtype=np.int64)
            radius_query(*args, out)
        found = out[:count]
        found.sort()
        return found

    def nearest(self, point, k: int, out: np.ndarray | None = None) -> np.ndarray:
        """Ids of the ``k`` nearest alive agents to ``point``, nearest first (ties: lower id).
        ``out`` (int64, 1D, length >= k) is filled and a view of it returned."""
        if int(k) != k or k < 1:
            raise ValueError(f"k: must be an integer >= 1, got {k!r}")
        k = int(k)
        x, y, z = self._point(point)
        if out is not None and (out.dtype != np.int64 or out.ndim != 1 or out.shape[0] < k):
            raise ValueError(f"out: must be a 1D int64 array of length >= {k}")
        if self._best_id.shape[1] < k:
            self._best_id = np.zeros((1, k), dtype=np.int64)
            self._best_d2 = np.zeros((1, k))
        best_id = self._best_id[:, :k]
        best_d2 = self._best_d2[:, :k]
        g = self.geometry
        m = nearest_query(self.position, self.ids, self.dim, self.space, g, self.cell_start, self.order, x, y, z, k,
                          best_id, best_d2)  # fmt: skip
        if out is None:
            return best_id[0, :m].copy()
        out[:m] = best_id[0, :m]
        return out[:m]
