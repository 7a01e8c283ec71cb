"""CPU drivers of the reynolds model: prange over agents around its per-agent kernels, and the stepper that
chooses between the neighbour-list path and the grid path (engines/cpu_reynolds_grid.py)."""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.engines.cpu_overlap import resolve_overlaps
from flocksim.engines.cpu_reynolds_grid import GridSteering
from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import serial_kernel
from flocksim.models.reynolds import ReynoldsModel, integrate_agent, reynolds_acceleration
from flocksim.neighbors import NeighborList, metric_search_on_grid
from flocksim.state import FlockState


@serial_kernel
def _accelerate_agents(i0, i1, position, velocity, alive, start, index, dim, space, c, inputs, out, aux):
    """:func:`reynolds_accelerations` for agents i0..i1."""
    for i in range(i0, i1):
        if alive[i]:
            ax, ay, az = reynolds_acceleration(i, position, velocity, start, index, dim, space, c, inputs, aux)
            out[i, 0] = ax
            out[i, 1] = ay
            out[i, 2] = az


@numba.njit(parallel=True, cache=True)
def reynolds_accelerations(position, velocity, alive, start, index, dim, space, c, inputs, out, aux):
    """Phase one: out[i] = steering acceleration of agent i, aux[i] = its J tau and speed limit (alive agents only)."""
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _accelerate_agents(i0, i1, position, velocity, alive, start, index, dim, space, c, inputs, out, aux)


@serial_kernel
def _integrate_agents(i0, i1, position, velocity, alive, acc, aux, spin, turn, dim, space, dt, c):
    """:func:`integrate_all` for agents i0..i1."""
    for i in range(i0, i1):
        if alive[i]:
            integrate_agent(i, position, velocity, acc[i, 0], acc[i, 1], acc[i, 2], aux, spin, turn, dim, space, dt, c)


@numba.njit(parallel=True, cache=True)
def integrate_all(position, velocity, alive, acc, aux, inputs, dim, space, dt, c):
    """Phase two: integrate every alive agent from its own slots of acc and aux (and its own spin)."""
    spin = inputs.spin  # a plain array in the loop: see the note above integrate_agent
    turn = inputs.turn
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _integrate_agents(i0, i1, position, velocity, alive, acc, aux, spin, turn, dim, space, dt, c)


def step_reynolds(model: ReynoldsModel, state: FlockState, nbrs: NeighborList, dt: float, buf: np.ndarray) -> None:
    """One step over the neighbour list ``nbrs`` (the reference path)."""
    inputs = model.inputs(state)
    aux = model.aux(state.n)
    reynolds_accelerations(state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, model.space,
                           model.coefficients, inputs, buf, aux)  # fmt: skip
    finish_step(model, state, inputs, aux, dt, buf)


def finish_step(model: ReynoldsModel, state: FlockState, inputs, aux: np.ndarray, dt: float, buf: np.ndarray) -> None:
    """Phase two from the accelerations in ``buf``, then overlap resolution (when enabled)."""
    c = model.coefficients
    integrate_all(state.position, state.velocity, state.alive, buf, aux, inputs, state.dim, model.space, dt, c)
    overlap = model.params.overlap
    if overlap.enabled:  # position constraints after integration; buf is free again
        s = state
        obstacles = model.obstacle_set(s)
        resolve_overlaps(s.position, s.alive, s.radius, s.mass, model.space, obstacles, overlap.iterations,
                         c.planar, out=buf)  # fmt: skip


class ReynoldsStepper:
    """A metric search on the grid: phase one sums the rules straight from the grid
    (:class:`flocksim.engines.cpu_reynolds_grid.GridSteering`, bitwise the list's result);
    otherwise (topological, brute force, a blind angle or centrality-weighted cohesion) the
    ``listed`` stepper builds the list and runs :func:`step_reynolds`."""

    def __init__(self, listed: Callable[[ReynoldsModel, FlockState, float, np.ndarray], None], budget: PairBudget):
        self.listed = listed
        self.grid = GridSteering(budget)

    def __call__(self, model: ReynoldsModel, state: FlockState, dt: float, buf: np.ndarray) -> None:
        q = model.neighbor_query()
        c = model.coefficients
        # the grid path's sums have no blind cone and no centrality: those take the list
        listed = q.mode != "metric" or c.blind or c.coh_centrality > 0.0
        if listed or not metric_search_on_grid(state.position, q.radius, q.method):
            self.listed(model, state, dt, buf)
            return
        inputs = model.inputs(state)
        aux = model.aux(state.n)
        self.grid(model, state, q.radius, inputs, buf, aux)
        finish_step(model, state, inputs, aux, dt, buf)
