"""CPU drivers of the reynolds model: prange over agents around its per-agent kernels."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.engines.cpu_overlap import resolve_overlaps
from flocksim.models.reynolds import ReynoldsModel, integrate_agent, reynolds_acceleration
from flocksim.neighbors import NeighborList
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def reynolds_accelerations(position, velocity, alive, start, index, dim, space, c, inputs, out, aux):
    """Phase one: out[i] = steering acceleration of agent i, aux[i] = its J tau and speed limit (alive agents only)."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            ax, ay, az = reynolds_acceleration(i, position, velocity, start, index, dim, space, c, inputs, aux)
            out[i, 0] = ax
            out[i, 1] = ay
            out[i, 2] = az


@numba.njit(parallel=True, cache=True)
def integrate_all(position, velocity, alive, acc, aux, inputs, dim, space, dt, c):
    """Phase two: integrate every alive agent from its own slots of acc and aux (and its own spin)."""
    spin = inputs.spin  # a plain array in the loop: see the note above integrate_agent
    turn = inputs.turn
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            integrate_agent(i, position, velocity, acc[i, 0], acc[i, 1], acc[i, 2], aux, spin, turn, dim, space, dt, c)


def step_reynolds(model: ReynoldsModel, state: FlockState, nbrs: NeighborList, dt: float, buf: np.ndarray) -> None:
    c = model.coefficients
    inputs = model.inputs(state)
    aux = model.aux(state.n)
    reynolds_accelerations(
        state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, model.space, c, inputs, buf, aux
    )
    integrate_all(state.position, state.velocity, state.alive, buf, aux, inputs, state.dim, model.space, dt, c)
    overlap = model.params.overlap
    if overlap.enabled:  # position constraints after integration; buf is free again
        s = state
        obstacles = model.obstacle_set(s)
        resolve_overlaps(s.position, s.alive, s.radius, s.mass, model.space, obstacles, overlap.iterations,
                         c.planar, out=buf)  # fmt: skip
