"""CPU drivers of the reynolds model: prange over agents around its per-agent kernels."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.models.reynolds import ReynoldsModel, integrate_agent, reynolds_acceleration
from flocksim.neighbors import NeighborList
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def reynolds_accelerations(position, velocity, alive, start, index, dim, space, c, out):
    """Phase one: out[i] = steering acceleration of agent i (alive agents only)."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            ax, ay, az = reynolds_acceleration(i, position, velocity, start, index, dim, space, c)
            out[i, 0] = ax
            out[i, 1] = ay
            out[i, 2] = az


@numba.njit(parallel=True, cache=True)
def integrate_all(position, velocity, alive, acc, dim, space, dt, min_speed, max_speed):
    """Phase two: integrate every alive agent from its own acceleration slot."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            ax, ay, az = acc[i, 0], acc[i, 1], acc[i, 2]
            integrate_agent(i, position, velocity, ax, ay, az, dim, space, dt, min_speed, max_speed)


def step_reynolds(model: ReynoldsModel, state: FlockState, nbrs: NeighborList, dt: float, buf: np.ndarray) -> None:
    c = model.coefficients
    reynolds_accelerations(
        state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, model.space, c, buf
    )
    integrate_all(
        state.position, state.velocity, state.alive, buf, state.dim, model.space, dt, c.min_speed, c.max_speed
    )
