"""CPU engine: numba kernels, parallel over agents with prange.

Every step is two-phase (SPEC 1.2): phase one reads one snapshot of
positions and velocities and writes each agent's acceleration (or new heading)
into its own slot of a separate buffer; phase two integrates each agent from
its own slot. No loop carries a value from one agent to another, so results
are bitwise independent of the thread count.

Each model's drivers live in ``cpu_<model>.py``; :data:`CPU_STEPPERS` is the
explicit registry that maps a model name to its step function
``step(model, state, neighbors, dt, buffer)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from flocksim.engines.cpu_abm import step_abm
from flocksim.engines.cpu_reynolds import integrate_all, reynolds_accelerations, step_reynolds
from flocksim.models.base import Model
from flocksim.neighbors import NeighborList, find_neighbors
from flocksim.state import FlockState

CpuStepper = Callable[[Model, FlockState, NeighborList, float, np.ndarray], None]
CPU_STEPPERS: dict[str, CpuStepper] = {
    "reynolds": step_reynolds,
    "abm-flocking": step_abm,
}


class CpuEngine:
    """Runs a model's kernels on the CPU. ``threads`` None keeps numba's default
    (NUMBA_NUM_THREADS or the core count)."""

    name = "cpu"

    def __init__(self, model: Model, threads: int | None = None):
        if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads: must be between 1 and {numba.config.NUMBA_NUM_THREADS}, got {threads}")
        if model.name not in CPU_STEPPERS:
            raise ValueError(f"engine cpu: cannot run model {model.name!r}; allowed: {', '.join(CPU_STEPPERS)}")
        self.model = model
        self.threads = threads
        self._stepper = CPU_STEPPERS[model.name]
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
        self._stepper(self.model, state, nbrs, dt, self._buffer)
        return nbrs


__all__ = ["CPU_STEPPERS", "CpuEngine", "integrate_all", "reynolds_accelerations"]
