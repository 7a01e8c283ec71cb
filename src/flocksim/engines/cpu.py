"""CPU engine: numba kernels, parallel over agents with prange.

Every step is two-phase (SPEC 1.2): phase one reads one snapshot of
positions and velocities and writes each agent's acceleration (or new heading)
into its own slot of a separate buffer; phase two integrates each agent from
its own slot. No loop carries a value from one agent to another, so results
are bitwise independent of the thread count.
"""

from __future__ import annotations

import numba
import numpy as np

from flocksim.models.abm_flocking import AbmFlockingModel, abm_heading, abm_move
from flocksim.models.base import Model
from flocksim.models.reynolds import ReynoldsModel, integrate_agent, reynolds_acceleration
from flocksim.neighbors import NeighborList, find_neighbors
from flocksim.state import FlockState


@numba.njit(parallel=True, cache=True)
def reynolds_accelerations(position, velocity, alive, start, index, dim, space, c, out):
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            ax, ay, az = reynolds_acceleration(i, position, velocity, start, index, dim, space, c)
            out[i, 0] = ax
            out[i, 1] = ay
            out[i, 2] = az


@numba.njit(parallel=True, cache=True)
def integrate_all(position, velocity, alive, acc, dim, space, dt, min_speed, max_speed):
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            integrate_agent(
                i, position, velocity, acc[i, 0], acc[i, 1], acc[i, 2], dim, space, dt, min_speed, max_speed
            )


@numba.njit(parallel=True, cache=True)
def abm_headings(position, velocity, alive, start, index, dim, space, c, out):
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            hx, hy, hz = abm_heading(i, position, velocity, start, index, dim, space, c)
            out[i, 0] = hx
            out[i, 1] = hy
            out[i, 2] = hz


@numba.njit(parallel=True, cache=True)
def abm_moves(position, velocity, alive, heading, dim, space, speed, dt):
    for i in numba.prange(position.shape[0]):
        if alive[i]:
            abm_move(i, position, velocity, heading[i, 0], heading[i, 1], heading[i, 2], dim, space, speed, dt)


class CpuEngine:
    """Runs a model's kernels on the CPU. ``threads`` None keeps numba's default
    (NUMBA_NUM_THREADS or the core count)."""

    name = "cpu"

    def __init__(self, model: Model, threads: int | None = None):
        if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads: must be between 1 and {numba.config.NUMBA_NUM_THREADS}, got {threads}")
        self.model = model
        self.threads = threads
        self._buffer = np.zeros((0, 3))

    def _set_threads(self) -> None:
        if self.threads is not None:
            numba.set_num_threads(self.threads)

    def neighbors(self, state: FlockState) -> NeighborList:
        q = self.model.neighbor_query()
        self._set_threads()
        return find_neighbors(state.position, state.alive, self.model.space, q.mode, q.radius, q.k, q.method)

    def step(self, state: FlockState, dt: float) -> NeighborList:
        """Advance ``state`` in place by one step; returns the neighbour list it used."""
        nbrs = self.neighbors(state)
        if self._buffer.shape[0] != state.n:
            self._buffer = np.zeros((state.n, 3))
        buf = self._buffer
        m = self.model
        if isinstance(m, ReynoldsModel):
            c = m.coefficients
            reynolds_accelerations(
                state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, m.space, c, buf
            )
            integrate_all(
                state.position, state.velocity, state.alive, buf, state.dim, m.space, dt, c.min_speed, c.max_speed
            )
        elif isinstance(m, AbmFlockingModel):
            c = m.coefficients
            abm_headings(
                state.position, state.velocity, state.alive, nbrs.start, nbrs.index, state.dim, m.space, c, buf
            )
            abm_moves(state.position, state.velocity, state.alive, buf, state.dim, m.space, c.speed, dt)
        else:  # pragma: no cover - the registry only holds the models above
            raise TypeError(f"the cpu engine cannot run model {m.name!r}")
        return nbrs
