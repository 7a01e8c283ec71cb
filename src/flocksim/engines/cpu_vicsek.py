"""CPU drivers of the vicsek model: a metric neighbour list (brute force or grid, same rows),
new headings in phase one, constant-speed moves in phase two (along the heading at step t
for ``vicsek.update = "paper"``, along the new heading for ``"forward"``)."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.kernels.constant_speed import advance
from flocksim.kernels.vicsek import vicsek_heading, vicsek_move
from flocksim.models.vicsek import VicsekModel
from flocksim.neighbors import NeighborList
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def vicsek_headings(velocity, alive, start, index, dim, eta, noise, out):
    """Phase one: out[i] = new unit heading of every alive particle i."""
    for i in numba.prange(velocity.shape[0]):
        if alive[i]:
            hx, hy, hz = vicsek_heading(i, velocity, start, index, dim, eta, noise)
            out[i, 0] = hx
            out[i, 1] = hy
            out[i, 2] = hz


@numba.njit(parallel=True, cache=True)
def constant_speed_moves(position, velocity, alive, heading, dim, space, speed, dt):
    """Phase two: every alive agent moves speed * dt along its new heading (read from its own row)."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            advance(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


@numba.njit(parallel=True, cache=True)
def vicsek_moves(position, velocity, alive, heading, dim, space, speed, dt, paper):
    """Phase two: every alive particle moves speed * dt along its old (``paper``) or new heading
    and takes the new heading from its own row of ``heading``."""
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            hx, hy, hz = heading[i, 0], heading[i, 1], heading[i, 2]
            vicsek_move(i, position, velocity, hx, hy, hz, dim, space, speed, dt, paper)


def step_vicsek(model: VicsekModel, state: FlockState, nbrs: NeighborList, dt: float, buf: np.ndarray) -> None:
    noise = model.noise.for_agents(state.n)
    vicsek_headings(state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, model.eta, noise, buf)
    vicsek_moves(state.position, state.velocity, state.alive, buf, state.dim, model.space, model.speed, dt, model.paper)
