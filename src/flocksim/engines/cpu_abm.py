"""CPU drivers of the abm-flocking model."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.models.abm_flocking import AbmFlockingModel, abm_heading, abm_move
from flocksim.neighbors import NeighborList
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def abm_headings(position, velocity, alive, start, index, dim, space, c, out):
    """Phase one: out[i] = new unit heading of bird i."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            hx, hy, hz = abm_heading(i, position, velocity, start, index, dim, space, c)
            out[i, 0] = hx
            out[i, 1] = hy
            out[i, 2] = hz


@numba.njit(parallel=True, cache=True)
def abm_moves(position, velocity, alive, heading, dim, space, speed, dt):
    """Phase two: move every alive bird along its new heading."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            abm_move(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


def step_abm(model: AbmFlockingModel, state: FlockState, nbrs: NeighborList, dt: float, buf: np.ndarray) -> None:
    c = model.coefficients
    abm_headings(state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, model.space, c, buf)
    abm_moves(state.position, state.velocity, state.alive, buf, state.dim, model.space, c.speed, dt)
