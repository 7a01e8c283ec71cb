"""CPU drivers of the reynolds model: prange over agents around its per-agent kernels, and the stepper that
chooses between the neighbour-list path and the grid path (engines/cpu_reynolds_grid.py)."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.engines.cpu_overlap import resolve_overlaps
from flocksim.engines.cpu_reynolds_grid import GridSteering
from flocksim.engines.cpu_reynolds_rules import RulesOf, accelerations_kernel, integration_kernel
from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import serial_kernel
from flocksim.kernels.detail import keep_or_restore
from flocksim.models.base import NeighborQuery
from flocksim.models.reynolds import ReynoldsModel, integrate_agent, reynolds_acceleration
from flocksim.neighbors import find_neighbors, metric_search_on_grid
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
def _integrate_agents(i0, i1, position, velocity, alive, acc, aux, spin, turn, wander, dim, space, dt, c):
    """:func:`integrate_all` for agents i0..i1."""
    for i in range(i0, i1):
        if alive[i]:
            integrate_agent(
                i, position, velocity, acc[i, 0], acc[i, 1], acc[i, 2], aux, spin, turn, wander, dim, space, dt, c
            )


@numba.njit(parallel=True, cache=True)
def integrate_all(position, velocity, alive, acc, aux, inputs, dim, space, dt, c):
    """Phase two: integrate every alive agent from its own slots of acc and aux (and its own spin)."""
    spin = inputs.spin  # a plain array in the loop: see the note above integrate_agent
    turn = inputs.turn
    wander = inputs.wander
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _integrate_agents(i0, i1, position, velocity, alive, acc, aux, spin, turn, wander, dim, space, dt, c)


def finish_step(model: ReynoldsModel, state: FlockState, inputs, aux: np.ndarray, dt: float, buf: np.ndarray,
                rules=None) -> None:  # fmt: skip
    """Phase two from the accelerations in ``buf``, then overlap resolution (when enabled); ``rules``:
    the :class:`~flocksim.models.reynolds_coefficients.PhaseTwoRules` whose kernel runs it (None:
    :func:`integrate_all`, every part)."""
    c = model.coefficients
    integrate = integrate_all if rules is None else integration_kernel(rules)
    integrate(state.position, state.velocity, state.alive, buf, aux, inputs, state.dim, model.space, dt, c)
    overlap = model.params.overlap
    if overlap.enabled:  # position constraints after integration; buf is free again
        s = state
        obstacles = model.obstacle_set(s)
        resolve_overlaps(s.position, s.alive, s.radius, s.mass, model.space, obstacles, overlap.iterations,
                         c.planar, out=buf)  # fmt: skip


class ReynoldsStepper:
    """Phase one, then phase two (:func:`finish_step`). A metric search on the grid: phase one sums the
    rules straight from the grid (:class:`flocksim.engines.cpu_reynolds_grid.GridSteering`, bitwise the
    list's result); otherwise (topological, brute force, a blind angle or centrality-weighted cohesion)
    the neighbour list is built and :func:`reynolds_accelerations` sums over it.

    With a level of detail (``model.detail``, :mod:`flocksim.components.detail`), only the refreshing
    agents' rows are searched (``find_neighbors``'s query mask) and steered over the list (never the
    grid sums: a metric run with a level of detail compiles one phase one, not two);
    :func:`flocksim.kernels.detail.keep_or_restore` then keeps their accelerations and gives the
    others theirs back. The list's sums are bitwise the grid's, so when every alive agent refreshes
    the step is the full step, bitwise."""

    def __init__(self, budget: PairBudget):
        self.budget = budget
        self.grid = GridSteering(budget)
        self.rules = RulesOf()

    def __call__(self, model: ReynoldsModel, state: FlockState, dt: float, buf: np.ndarray) -> None:
        plan, model.detail = model.detail, None  # consumed: a step without one (a warm-up) keeps nothing
        inputs = model.inputs(state)
        aux = model.aux(state.n)
        one, two = self.rules(model, inputs)
        if plan is not None:  # always the list: a run with a level of detail never compiles the grid sums
            self.listed_phase_one(model, state, inputs, buf, aux, plan.active, one)
            keep_or_restore(state.alive, plan.active, buf, aux, plan.acc, plan.aux, plan.kept)
        else:
            q = model.neighbor_query()
            if self.on_grid(model, state, q):
                self.grid(model, state, q.radius, inputs, buf, aux, one)
            else:
                self.listed_phase_one(model, state, inputs, buf, aux, rules=one)
        finish_step(model, state, inputs, aux, dt, buf, two)

    @staticmethod
    def on_grid(model: ReynoldsModel, state: FlockState, q: NeighborQuery) -> bool:
        """Whether phase one sums the rules straight from the grid: a metric search (``q``) on the grid,
        without a blind cone or centrality-weighted cohesion (the grid path's sums have neither)."""
        c = model.coefficients
        if q.mode != "metric" or c.blind or c.coh_centrality > 0.0:
            return False
        return metric_search_on_grid(state.position, q.radius, q.method)

    def listed_phase_one(self, model: ReynoldsModel, state: FlockState, inputs, buf: np.ndarray, aux: np.ndarray,
                         rows: np.ndarray | None = None, rules=None) -> None:  # fmt: skip
        """buf[i] and aux[i] from the neighbour list, for the agents marked in ``rows`` (N,) bool (None:
        every alive agent); only those rows are searched. ``rules``: the
        :class:`~flocksim.models.reynolds_coefficients.PhaseOneRules` whose kernel sums them (None:
        :func:`reynolds_accelerations`, every rule)."""
        q = model.neighbor_query()
        nbrs = find_neighbors(state.position, state.alive, model.space, q.mode, q.radius, q.k, q.method,
                              self.budget, query=rows)  # fmt: skip
        steered = state.alive if rows is None else rows
        accelerate = reynolds_accelerations if rules is None else accelerations_kernel(rules)
        accelerate(state.position, state.velocity, steered, nbrs.start, nbrs.index, state.dim,
                               model.space, model.coefficients, inputs, buf, aux)  # fmt: skip
