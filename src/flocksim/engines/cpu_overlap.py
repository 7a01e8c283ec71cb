"""Overlap resolution on the CPU (docs/design.md §4): the grid pass, its brute-force reference, the driver.

Each relaxation pass is two-phase like a step: every agent's correction is computed from one
snapshot of the positions into its own row of a buffer, then all are applied. Agent pairs
come from a coherent grid (:mod:`flocksim.neighbors.coherent`: agents and their radii and
masses copied into cell order) whose cells are at least twice the largest body radius,
so the 3x3 (3x3x3) block around an agent holds every agent it can overlap; it is scanned
as runs of slots in cell order (z, y, x; by index inside a cell). The brute-force pass visits
every pair and is the reference the grid pass is tested against (equal up to the order of
summation). Planar agents ignore y: their grid has one cell along y.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.compile import device, serial_kernel
from flocksim.kernels.obstacles import obstacle_correction
from flocksim.kernels.overlap import pair_correction
from flocksim.kernels.vector import load, store
from flocksim.neighbors.coherent import block_runs_at, block_runs_scratch, coherent_grid, gather_slots
from flocksim.neighbors.grid import grid_geometry
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
def _finish(i, px, py, pz, ri, planar, shapes, grid, cells, cx, cy, cz, hits, out):
    """out[i] = the mean of agent i's ``hits`` pair corrections (summed in c) plus its obstacles' push-out."""
    if hits > 0:
        cx /= hits
        cy /= hits
        cz /= hits
    ox, oy, oz = obstacle_correction(px, py, pz, ri, shapes, grid, cells, planar)
    out[i, 0] = cx + ox
    out[i, 1] = cy + oy
    out[i, 2] = cz + oz


@numba.njit(parallel=True, cache=True)
def corrections_grid(xs, ys, zs, rs, ms, order, cell_start, g, space, planar, shapes, grid, cells, pairs, runs, shifts,
                     out):  # fmt: skip
    """out[i] = alive agent i's correction from the coherent grid's candidates (``pairs`` False:
    obstacles only); xs, ys, zs, rs, ms: coordinates, radii and masses in slot order; ``runs`` and
    ``shifts``: :func:`block_runs`'s per-thread scratch. Dead agents' rows are left alone."""
    for row in numba.prange(g.ny * g.nz):  # cell rows: no integer divisions per cell
        row64 = np.int64(row)  # the loop index is unsigned where numba lowers the loop: one signature for both
        _row_corrections(row64, numba.get_thread_id(), xs, ys, zs, rs, ms, order, cell_start, g, space, planar, shapes,
                         grid, cells, pairs, runs, shifts, out)  # fmt: skip


@serial_kernel
def _row_corrections(row, tid, xs, ys, zs, rs, ms, order, cell_start, g, space, planar, shapes, grid, cells, pairs,
                     runs, shifts, out):  # fmt: skip
    """:func:`corrections_grid` for the cells of one row (y, z) of the grid."""
    iy = row % g.ny
    iz = row // g.ny
    for ix in range(g.nx):
        c = row * g.nx + ix
        lo = cell_start[c]
        hi = cell_start[c + 1]
        if lo == hi:
            continue
        nruns = 0
        if pairs:
            nruns = block_runs_at(ix, iy, iz, g, cell_start, space.lx, space.ly, space.lz, tid, runs, shifts)
        for si in range(lo, hi):
            _agent_correction(si, nruns, tid, runs, xs, ys, zs, rs, ms, order, space, planar, shapes, grid, cells,
                              out)  # fmt: skip


@device
def _agent_correction(si, nruns, tid, runs, xs, ys, zs, rs, ms, order, space, planar, shapes, grid, cells, out):
    """out[order[si]] = the correction of the agent in slot si from the block's runs and the obstacles."""
    px = xs[si]
    py = ys[si]
    pz = zs[si]
    ri = rs[si]
    mi = ms[si]
    cx = cy = cz = 0.0
    hits = 0
    for q in range(nruns):
        for s in range(runs[tid, q, 0], runs[tid, q, 1]):
            if s != si:
                awx, awy, awz = displacement(xs[s], ys[s], zs[s], px, py, pz, space)  # p_i - p_j
                if planar:
                    awy = 0.0
                fx, fy, fz, hit = pair_correction(awx, awy, awz, ri, rs[s], mi, ms[s])
                if hit:
                    cx += fx
                    cy += fy
                    cz += fz
                    hits += 1
    _finish(order[si], px, py, pz, ri, planar, shapes, grid, cells, cx, cy, cz, hits, out)


@numba.njit(parallel=True, cache=True)
def zero_dead_rows(alive, out):
    for i in numba.prange(alive.shape[0]):
        if not alive[i]:
            out[i, 0] = 0.0
            out[i, 1] = 0.0
            out[i, 2] = 0.0


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
        _finish(i, px, py, pz, radius[i], planar, shapes, grid, cells, cx, cy, cz, hits, out)


@device
def apply_correction(position, i, dim, space, out):
    """p_i += out[i] (wrapped in periodic space)."""
    px, py, pz = load(position, i, dim)
    px, py, pz = wrap(px + out[i, 0], py + out[i, 1], pz + out[i, 2], space)
    store(position, i, dim, px, py, pz)


@numba.njit(parallel=True, cache=True)
def apply_corrections(position, alive, dim, space, out):
    """p += correction for every alive agent (wrapped in periodic space)."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            apply_correction(position, i, dim, space, out)


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
    cg = coherent_grid(position, alive, g)
    rs = np.empty(len(cg.order))
    ms = np.empty(len(cg.order))
    gather_slots(radius, cg.order, rs)
    gather_slots(mass, cg.order, ms)
    runs, shifts = block_runs_scratch(numba.get_num_threads())
    zero_dead_rows(alive, out)
    corrections_grid(cg.xs, cg.ys, cg.zs, rs, ms, cg.order, cg.cell_start, g, space, planar, *obstacles, pairs, runs,
                     shifts, out)  # fmt: skip
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
