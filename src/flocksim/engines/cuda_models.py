"""CUDA drivers of the reynolds, vicsek and couzin models: one thread per agent around the CPU
engine's own per-agent kernel functions, over neighbour lists built on the GPU.

Two phases as on the CPU: phase one reads the snapshot and writes each agent's acceleration (or
new heading) into its own row of a buffer; phase two integrates each agent from its own row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from flocksim.engines.cpu_overlap import _agent_correction, apply_correction
from flocksim.kernels.constant_speed import advance
from flocksim.kernels.couzin import couzin_heading
from flocksim.kernels.cuda_runtime import kernel
from flocksim.kernels.vicsek import vicsek_heading, vicsek_move
from flocksim.models.reynolds import ReynoldsInputs, integrate_agent, reynolds_acceleration
from flocksim.neighbors.coherent import MAX_RUNS, block_runs
from flocksim.neighbors.cuda_grid import device_bounds, device_grid
from flocksim.neighbors.grid import geometry_from_bounds
from flocksim.obstacles import max_body_radius
from flocksim.space import PERIODIC, Space


def _reynolds_accelerations(position, velocity, alive, start, index, dim, space, c, spin, predators, turn, targets,
                            wander, shapes, ogrid, ocells, out, aux):  # fmt: skip
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        inputs = ReynoldsInputs(spin, predators, turn, targets, wander, shapes, ogrid, ocells)
        ax, ay, az = reynolds_acceleration(i, position, velocity, start, index, dim, space, c, inputs, aux)
        out[i, 0] = ax
        out[i, 1] = ay
        out[i, 2] = az


def _integrate(position, velocity, alive, acc, aux, spin, turn, wander, dim, space, dt, c):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        integrate_agent(
            i, position, velocity, acc[i, 0], acc[i, 1], acc[i, 2], aux, spin, turn, wander, dim, space, dt, c
        )


def _vicsek_headings(velocity, alive, start, index, dim, eta, noise, out):
    i = cuda.grid(1)
    if i < velocity.shape[0] and alive[i]:
        hx, hy, hz = vicsek_heading(i, velocity, start, index, dim, eta, noise)
        out[i, 0] = hx
        out[i, 1] = hy
        out[i, 2] = hz


def _couzin_headings(position, velocity, alive, start, index, dim, space, c, noise, out):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        hx, hy, hz = couzin_heading(i, position, velocity, start, index, dim, space, c, noise)
        out[i, 0] = hx
        out[i, 1] = hy
        out[i, 2] = hz


def _constant_speed_moves(position, velocity, alive, heading, dim, space, speed, dt):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        advance(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


def _vicsek_moves(position, velocity, alive, heading, dim, space, speed, dt, paper):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        vicsek_move(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt, paper)


def _gather_column(values, order, out):
    s = cuda.grid(1)
    if s < order.shape[0]:
        out[s] = values[order[s]]


def _zero_dead_rows(alive, out):
    i = cuda.grid(1)
    if i < alive.shape[0] and not alive[i]:
        out[i, 0] = 0.0
        out[i, 1] = 0.0
        out[i, 2] = 0.0


def _overlap_corrections(xs, ys, zs, rs, ms, order, cell, cell_start, g, space, planar, shapes, ogrid, ocells, pairs,
                         out):  # fmt: skip
    si = cuda.grid(1)
    if si < order.shape[0]:
        runs = cuda.local.array((1, MAX_RUNS, 2), np.int64)
        shifts = cuda.local.array((1, MAX_RUNS, 3), np.float64)
        nruns = 0
        if pairs:
            nruns = block_runs(cell[order[si]], g, cell_start, space.lx, space.ly, space.lz, 0, runs, shifts)
        _agent_correction(si, nruns, 0, runs, xs, ys, zs, rs, ms, order, space, planar, shapes, ogrid, ocells, out)


def _apply_corrections(position, alive, dim, space, out):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        apply_correction(position, i, dim, space, out)


reynolds_accelerations = kernel(_reynolds_accelerations)
integrate = kernel(_integrate)
vicsek_headings = kernel(_vicsek_headings)
couzin_headings = kernel(_couzin_headings)
constant_speed_moves = kernel(_constant_speed_moves)
vicsek_moves = kernel(_vicsek_moves)
gather_column = kernel(_gather_column)
zero_dead_rows = kernel(_zero_dead_rows)
overlap_corrections = kernel(_overlap_corrections)
apply_corrections = kernel(_apply_corrections)


def resolve_overlaps_device(d: Any, host_radius: np.ndarray, host_alive: np.ndarray, space: Space, obstacles: Any,
                            iterations: int, planar: bool, out: Any) -> None:  # fmt: skip
    """:func:`flocksim.engines.cpu_overlap.resolve_overlaps` (grid method) on the GPU; ``d``: the step's
    device arrays, ``obstacles``: (shapes, grid, cells) on the device, ``out``: (N, 3) scratch."""
    r_max = max_body_radius(host_radius, host_alive)
    pairs = r_max > 0.0 and d.n_alive > 1
    for _ in range(iterations):
        lo, hi = device_bounds(d.position, d.alive, space, d.n, d.dim, d.n_alive)
        g = geometry_from_bounds(lo, hi, d.n_alive, space, 2.0 * r_max if pairs else 1.0)
        if planar:  # one cell along y
            g = g._replace(oy=0.0, cy=space.ly if space.kind == PERIODIC else 1.0, ny=1)
        grid = device_grid(d.position, d.alive, d.n, d.dim, g, d.n_alive)
        slots = grid.n_alive
        rs = cuda.device_array(max(slots, 1))
        ms = cuda.device_array(max(slots, 1))
        gather_column.launch(slots, d.radius, grid.order, rs)
        gather_column.launch(slots, d.mass, grid.order, ms)
        zero_dead_rows.launch(d.n, d.alive, out)
        overlap_corrections.launch(slots, grid.xs, grid.ys, grid.zs, rs, ms, grid.order, grid.cell, grid.cell_start, g,
                                   space, planar, *obstacles, pairs, out)  # fmt: skip
        apply_corrections.launch(d.n, d.position, d.alive, d.dim, space, out)
