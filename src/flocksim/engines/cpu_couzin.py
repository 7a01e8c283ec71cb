"""CPU drivers of the couzin model: a metric neighbour list out to the zone of attraction
(brute force or grid, same rows), new headings in phase one, constant-speed moves in phase two."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.engines.cpu_vicsek import constant_speed_moves
from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import serial_kernel
from flocksim.kernels.couzin import couzin_heading
from flocksim.models.couzin import CouzinModel
from flocksim.neighbors import NeighborList
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def couzin_headings(position, velocity, alive, start, index, dim, space, c, noise, out):
    """Phase one: out[i] = new unit heading of every alive individual i."""
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _headings_of(i0, i1, position, velocity, alive, start, index, dim, space, c, noise, out)


@serial_kernel
def _headings_of(i0, i1, position, velocity, alive, start, index, dim, space, c, noise, out):
    """:func:`couzin_headings` for individuals i0..i1."""
    for i in range(i0, i1):
        if alive[i]:
            hx, hy, hz = couzin_heading(i, position, velocity, start, index, dim, space, c, noise)
            out[i, 0] = hx
            out[i, 1] = hy
            out[i, 2] = hz


def step_couzin(model: CouzinModel, state: FlockState, nbrs: NeighborList, dt: float, buf: np.ndarray) -> None:
    noise = model.noise.for_agents(state.n)
    couzin_headings(
        state.position,
        state.velocity,
        state.alive,
        nbrs.start,
        nbrs.index,
        state.dim,
        model.space,
        model.coefficients,
        noise,
        buf,
    )
    constant_speed_moves(state.position, state.velocity, state.alive, buf, state.dim, model.space, model.speed, dt)
