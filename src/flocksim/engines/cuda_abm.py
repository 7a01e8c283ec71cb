"""CUDA drivers of the abm-flocking model, from the CPU engine's scalar functions.

As on the CPU (:mod:`flocksim.engines.cpu_abm`): brute force (and small flocks under ``auto``)
runs the reference, a neighbour list then :func:`abm_heading` per bird; metric mode on the grid
is fused, one thread per slot scanning its cell's block runs with fixed-point sums
(:func:`sum_run_2d` in 2D, :func:`abm_accumulate_fixed` per candidate in 3D: exact integer sums,
so bitwise the CPU's result in any order); topological mode runs the CPU's ring search
:func:`knn_search` per bird and sums in (distance, index) order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from flocksim.budgets import PairBudget
from flocksim.engines.cpu_abm import gather_heading, knn_heading, sum_run_2d
from flocksim.kernels.cuda_runtime import kernel
from flocksim.models.abm_flocking import (
    ABM_EMPTY_FIXED,
    AbmFlockingModel,
    abm_accumulate_fixed,
    abm_finish_fixed,
    abm_heading,
    abm_move,
    fixed_point_scales,
    to_fixed,
)
from flocksim.neighbors.coherent import MAX_RUNS, block_runs, full_image_axes
from flocksim.neighbors.cuda_grid import DeviceGrid, build_device_grid, build_device_knn_grid, grid_metric_lists
from flocksim.neighbors.cuda_search import device_neighbor_lists, metric_check, uses_brute


def _headings(position, velocity, alive, start, index, dim, space, c, scales, out, counts):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        hx, hy, hz = abm_heading(i, position, velocity, start, index, dim, space, c, scales)
        out[i, 0] = hx
        out[i, 1] = hy
        out[i, 2] = hz
        counts[i] = start[i + 1] - start[i]


def _moves(position, velocity, alive, heading, dim, space, speed, dt):
    i = cuda.grid(1)
    if i < position.shape[0] and alive[i]:
        abm_move(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


def _slot_moves(position, velocity, order, heading, dim, space, speed, dt):
    s = cuda.grid(1)
    if s < order.shape[0]:
        abm_move(order[s], position, velocity, heading[s, 0], heading[s, 1], heading[s, 2], dim, space, speed, dt)


def _gather_headings(velocity, dim, order, scale, hxs, hys, hzs, qxs, qys, qzs):
    s = cuda.grid(1)
    if s < order.shape[0]:
        gather_heading(s, velocity, dim, order, scale, hxs, hys, hzs, qxs, qys, qzs)


def _metric_cells(xs, ys, zs, hxs, hys, hzs, qxs, qys, qzs, order, cell, cell_start, g, space, c, scales, heading,
                  counts):  # fmt: skip
    """Phase one, metric mode: new heading of the bird in slot si (into heading[si]) from fixed-point
    sums over its cell's block runs."""
    si = cuda.grid(1)
    if si < order.shape[0]:
        runs = cuda.local.array((1, MAX_RUNS, 2), np.int64)
        shifts = cuda.local.array((1, MAX_RUNS, 3), np.float64)
        nruns = block_runs(cell[order[si]], g, cell_start, space.lx, space.ly, space.lz, 0, runs, shifts)
        xi = xs[si]
        yi = ys[si]
        zi = zs[si]
        acc = ABM_EMPTY_FIXED
        if c.dim == 2:
            for r in range(nruns):
                acc = sum_run_2d(acc, runs[0, r, 0], runs[0, r, 1], si, xi, yi, shifts[0, r, 0], shifts[0, r, 1],
                                 xs, ys, qxs, qys, c, scales)  # fmt: skip
        else:
            d = scales.displacement
            for r in range(nruns):
                for s in range(runs[0, r, 0], runs[0, r, 1]):
                    dx = (xs[s] - xi) - shifts[0, r, 0]
                    dy = (ys[s] - yi) - shifts[0, r, 1]
                    dz = (zs[s] - zi) - shifts[0, r, 2]
                    d2 = dx * dx + dy * dy + dz * dz
                    acc = abm_accumulate_fixed(acc, to_fixed(dx, d), to_fixed(dy, d), to_fixed(dz, d), d2, qxs[s],
                                               qys[s], qzs[s], s != si, c)  # fmt: skip
        hx, hy, hz = abm_finish_fixed(hxs[si], hys[si], hzs[si], acc, c, scales)
        heading[si, 0] = hx
        heading[si, 1] = hy
        heading[si, 2] = hz
        counts[order[si]] = acc[0]


def _knn_headings(xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, rs, rk, rd, out, counts):
    """Phase one, topological mode: the k nearest of the bird in slot si by the ring search, then
    its new heading from them in (distance, index) order, into out[agent]."""
    si = cuda.grid(1)
    if si < order.shape[0]:
        knn_heading(si, xs, ys, zs, hxs, hys, hzs, order, cell, cell_start, g, dim, space, c, k, si, rs, rk, rd, out,
                    counts)  # fmt: skip


headings = kernel(_headings)
moves = kernel(_moves)
slot_moves = kernel(_slot_moves)
gather_headings = kernel(_gather_headings)
metric_cells = kernel(_metric_cells)
knn_headings = kernel(_knn_headings)


class CudaAbmStepper:
    """Chooses the reference or a fused grid path, as :class:`flocksim.engines.cpu_abm.AbmStepper` does.
    ``budget``: the neighbour pairs a list may hold (the fused paths keep no list)."""

    def __init__(self, budget: PairBudget | None = None):
        self.budget = budget

    def __call__(self, model: AbmFlockingModel, d: Any, dt: float, buf: Any, counts: Any) -> None:
        c = model.coefficients
        q = model.neighbor_query()
        space = model.space
        scales = fixed_point_scales(q.radius, d.n)
        brute = uses_brute(q.method, d.n)
        if not brute and d.n_alive > 0 and q.mode == "metric":
            grid = build_device_grid(d.position, d.alive, space, d.n, d.dim, d.n_alive, q.radius)
            if any(full_image_axes(grid.geometry)[: d.dim]):
                # periodic worlds under 3 vision radii wide: the reference over the grid's rows
                start, index = grid_metric_lists(grid, d.n, d.dim, space, q.radius,
                                                 metric_check(self.budget, d.n_alive, q.radius))  # fmt: skip
                self._reference(model, d, start, index, scales, dt, buf, counts)
                return
            hxs, hys, hzs, qs = self._slot_headings(d, grid, scales.heading)
            metric_cells.launch(grid.n_alive, grid.xs, grid.ys, grid.zs, hxs, hys, hzs, *qs, grid.order, grid.cell,
                                grid.cell_start, grid.geometry, space, c, scales, buf, counts)  # fmt: skip
            slot_moves.launch(grid.n_alive, d.position, d.velocity, grid.order, buf, d.dim, space, c.speed, dt)
            return
        if brute or d.n_alive == 0:
            start, index = device_neighbor_lists(d.position, d.alive, d.n, d.dim, d.n_alive, space, q.mode, q.radius,
                                                 q.k, "brute", self.budget)  # fmt: skip
            self._reference(model, d, start, index, scales, dt, buf, counts)
            return
        grid = build_device_knn_grid(d.position, d.alive, space, d.n, d.dim, d.n_alive, q.k)
        hxs, hys, hzs, _ = self._slot_headings(d, grid, scales.heading)
        slots = max(grid.n_alive, 1)
        rs = cuda.device_array((slots, q.k), dtype=np.int64)
        rk = cuda.device_array((slots, q.k), dtype=np.int64)
        rd = cuda.device_array((slots, q.k))
        knn_headings.launch(grid.n_alive, grid.xs, grid.ys, grid.zs, hxs, hys, hzs, grid.order, grid.cell,
                            grid.cell_start, grid.geometry, d.dim, space, c, q.k, rs, rk, rd, buf, counts)  # fmt: skip
        moves.launch(d.n, d.position, d.velocity, d.alive, buf, d.dim, space, c.speed, dt)

    @staticmethod
    def _reference(model: AbmFlockingModel, d: Any, start: Any, index: Any, scales: Any, dt: float, buf: Any,
                   counts: Any) -> None:  # fmt: skip
        c = model.coefficients
        headings.launch(d.n, d.position, d.velocity, d.alive, start, index, d.dim, model.space, c, scales, buf, counts)
        moves.launch(d.n, d.position, d.velocity, d.alive, buf, d.dim, model.space, c.speed, dt)

    @staticmethod
    def _slot_headings(d: Any, grid: DeviceGrid, scale: float) -> tuple[Any, ...]:
        slots = max(grid.n_alive, 1)
        hxs, hys, hzs = (cuda.device_array(slots) for _ in range(3))
        qs = tuple(cuda.device_array(slots, dtype=np.int64) for _ in range(3))
        gather_headings.launch(grid.n_alive, d.velocity, d.dim, grid.order, scale, hxs, hys, hzs, *qs)
        return hxs, hys, hzs, qs
