"""Overlap resolution on the CPU (SPEC 4): the grid pass, its brute-force reference, the driver.

Each relaxation pass is two-phase like a step: every agent's correction is computed from one
snapshot of the positions into its own row of a buffer, then all are applied. Agent pairs
come from a uniform grid whose cells are at least twice the largest body radius (seed 004),
so the 3x3 (3x3x3) block around an agent holds every agent it can overlap; the brute-force
pass visits every pair and is the reference the grid pass is tested against (equal up to the
order of summation). Planar agents (SPEC 3.11) ignore y: their grid has one cell along y.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.compile import device
from flocksim.kernels.obstacles import obstacle_correction
from flocksim.kernels.overlap import pair_correction
from flocksim.kernels.vector import load, store
from flocksim.neighbors.grid import block_range, build_cells, cell_coords, cell_id, grid_geometry, wrap_cell
from flocksim.obstacles import ObstacleSet
from flocksim.space import PERIODIC, Space, displacement, wrap


@device
def _pair(position, radius, mass, i, j, px, py, pz, dim, space, planar):
    qx, qy, qz = load(position, j, dim)
    awx, awy, awz = displacement(qx, qy, qz, px, py, pz, space)  # p_i - p_j
    if planar:
        awy = 0.0
    return pair_correction(awx, awy, awz, radius[i], radius[j], mass[i], mass[j])


@device
def _finish(i, position, radius, dim, planar, shapes, grid, cells, cx, cy, cz, hits, out):
    if hits > 0:
        cx /= hits
        cy /= hits
        cz /= hits
    px, py, pz = load(position, i, dim)
    ox, oy, oz = obstacle_correction(px, py, pz, radius[i], shapes, grid, cells, planar)
    out[i, 0] = cx + ox
    out[i, 1] = cy + oy
    out[i, 2] = cz + oz


@numba.njit(parallel=True, cache=True)
def corrections_grid(position, alive, radius, mass, dim, space, planar, g, cell_start, order, shapes, grid, cells,
                     pairs, out):  # fmt: skip
    """out[i] = agent i's correction from the grid's candidates (``pairs`` False: obstacles only)."""
    for i in numba.prange(position.shape[0]):
        out[i, 0] = 0.0
        out[i, 1] = 0.0
        out[i, 2] = 0.0
        if not alive[i]:
            continue
        px, py, pz = load(position, i, dim)
        cx = cy = cz = 0.0
        hits = 0
        if pairs:
            ix, iy, iz = cell_coords(position, i, dim, g)
            x0, xn = block_range(ix, g.nx, g.periodic)
            y0, yn = block_range(iy, g.ny, g.periodic)
            z0, zn = block_range(iz, g.nz, g.periodic)
            for a in range(zn):
                for b in range(yn):
                    for e in range(xn):
                        c = cell_id(wrap_cell(x0 + e, g.nx), wrap_cell(y0 + b, g.ny), wrap_cell(z0 + a, g.nz), g)
                        for t in range(cell_start[c], cell_start[c + 1]):
                            j = order[t]
                            if j != i:
                                fx, fy, fz, hit = _pair(position, radius, mass, i, j, px, py, pz, dim, space, planar)
                                if hit:
                                    cx += fx
                                    cy += fy
                                    cz += fz
                                    hits += 1
        _finish(i, position, radius, dim, planar, shapes, grid, cells, cx, cy, cz, hits, out)


@numba.njit(parallel=True, cache=True)
def corrections_brute(position, alive, radius, mass, dim, space, planar, shapes, grid, cells, out):
    """The O(N^2) reference of :func:`corrections_grid`: every alive pair, in index order."""
    for i in numba.prange(position.shape[0]):
        out[i, 0] = 0.0
        out[i, 1] = 0.0
        out[i, 2] = 0.0
        if not alive[i]:
            continue
        px, py, pz = load(position, i, dim)
        cx = cy = cz = 0.0
        hits = 0
        for j in range(position.shape[0]):
            if j != i and alive[j]:
                fx, fy, fz, hit = _pair(position, radius, mass, i, j, px, py, pz, dim, space, planar)
                if hit:
                    cx += fx
                    cy += fy
                    cz += fz
                    hits += 1
        _finish(i, position, radius, dim, planar, shapes, grid, cells, cx, cy, cz, hits, out)


@numba.njit(parallel=True, cache=True)
def apply_corrections(position, alive, dim, space, out):
    """p += correction for every alive agent (wrapped in periodic space)."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            px, py, pz = load(position, i, dim)
            px, py, pz = wrap(px + out[i, 0], py + out[i, 1], pz + out[i, 2], space)
            store(position, i, dim, px, py, pz)


def overlap_corrections(
    position: np.ndarray,
    alive: np.ndarray,
    radius: np.ndarray,
    mass: np.ndarray,
    space: Space,
    obstacles: ObstacleSet,
    planar: bool = False,
    method: str = "grid",
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(N, 3) corrections of one relaxation pass (z = 0 in 2D) from the current positions."""
    n, dim = position.shape
    if out is None or out.shape != (n, 3):
        out = np.zeros((n, 3))
    if method == "brute":
        corrections_brute(position, alive, radius, mass, dim, space, planar, *obstacles, out)
        return out
    r = radius[alive]
    r_max = float(r.max()) if len(r) else 0.0
    pairs = r_max > 0.0 and len(r) > 1
    g = grid_geometry(position, alive, space, 2.0 * r_max if pairs else 1.0)
    if planar:  # one cell along y
        g = g._replace(oy=0.0, cy=space.ly if space.kind == PERIODIC else 1.0, ny=1)
    cell_start, order = build_cells(position, alive, g)
    corrections_grid(position, alive, radius, mass, dim, space, planar, g, cell_start, order, *obstacles, pairs, out)
    return out


def resolve_overlaps(
    position: np.ndarray,
    alive: np.ndarray,
    radius: np.ndarray,
    mass: np.ndarray,
    space: Space,
    obstacles: ObstacleSet,
    iterations: int = 1,
    planar: bool = False,
    method: str = "grid",
    out: np.ndarray | None = None,
) -> None:
    """Move overlapping agents apart in place: ``iterations`` passes of compute-then-apply."""
    dim = position.shape[1]
    for _ in range(iterations):
        out = overlap_corrections(position, alive, radius, mass, space, obstacles, planar, method, out)
        apply_corrections(position, alive, dim, space, out)


__all__ = ["apply_corrections", "overlap_corrections", "resolve_overlaps"]
