"""CPU engine: numba kernels, parallel over agents with prange.

Every step is two-phase (docs/design.md §1.2): phase one reads one snapshot of
positions and velocities and writes each agent's acceleration (or new heading)
into its own slot of a separate buffer; phase two integrates each agent from
its own slot. No loop carries a value from one agent to another, so results
are bitwise independent of the thread count.

Each model's drivers live in ``cpu_<model>.py``; :data:`CPU_STEPPERS` is the
explicit registry that maps a model name to its step function
``stepper(model, state, dt, buffer)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numba
import numpy as np

from flocksim import budgets
from flocksim.budgets import PairBudget
from flocksim.engines.cpu_abm import AbmStepper
from flocksim.engines.cpu_couzin import step_couzin
from flocksim.engines.cpu_reynolds import ReynoldsStepper, integrate_all, reynolds_accelerations
from flocksim.engines.cpu_vicsek import step_vicsek
from flocksim.models.base import Model
from flocksim.neighbors import NeighborList, count_metric_pairs, find_neighbors, metric_pairs_lower_bound
from flocksim.state import FlockState


class CpuStepper(Protocol):
    """Advances a model's state by one step in place; may keep scratch buffers."""

    def __call__(self, model: Model, state: FlockState, dt: float, buffer: np.ndarray) -> None: ...


class NeighborListStepper:
    """A stepper that builds the model's neighbour list (within ``budget``), then runs
    ``step(model, state, nbrs, dt, buffer)``."""

    def __init__(self, step: Callable[[Model, FlockState, NeighborList, float, np.ndarray], None], budget: PairBudget):
        self.step = step
        self.budget = budget

    def __call__(self, model: Model, state: FlockState, dt: float, buffer: np.ndarray) -> None:
        q = model.neighbor_query()
        nbrs = find_neighbors(state.position, state.alive, model.space, q.mode, q.radius, q.k, q.method, self.budget)
        self.step(model, state, nbrs, dt, buffer)


CPU_STEPPERS: dict[str, Callable[[PairBudget], CpuStepper]] = {
    "reynolds": ReynoldsStepper,
    "abm-flocking": AbmStepper,
    "vicsek": lambda budget: NeighborListStepper(step_vicsek, budget),
    "couzin": lambda budget: NeighborListStepper(step_couzin, budget),
}
"""Model name -> factory of its CPU stepper, given the neighbour-pair budget of a search."""


class CpuEngine:
    """Runs a model's kernels on the CPU. ``threads`` None keeps numba's default
    (NUMBA_NUM_THREADS or the core count); ``max_pairs``: most neighbour pairs one search may hold
    (:class:`flocksim.budgets.BudgetError` beyond; None: :data:`flocksim.budgets.DEFAULT_MAX_PAIRS`)."""

    name = "cpu"

    def __init__(self, model: Model, threads: int | None = None, max_pairs: int | None = None):
        if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads: must be between 1 and {numba.config.NUMBA_NUM_THREADS}, got {threads}")
        if model.name not in CPU_STEPPERS:
            raise ValueError(f"engine cpu: cannot run model {model.name!r}; allowed: {', '.join(CPU_STEPPERS)}")
        self.model = model
        self.threads = threads
        max_pairs = budgets.DEFAULT_MAX_PAIRS if max_pairs is None else max_pairs
        self.budget = PairBudget(max_pairs, model.neighbor_query().radius_key)
        self._stepper = CPU_STEPPERS[model.name](self.budget)
        self._buffer = np.zeros((0, 3))

    def _set_threads(self) -> None:
        if self.threads is not None:
            numba.set_num_threads(self.threads)

    def neighbors(self, state: FlockState) -> NeighborList:
        q = self.model.neighbor_query()
        self._set_threads()
        return find_neighbors(
            state.position, state.alive, self.model.space, q.mode, q.radius, q.k, q.method, self.budget
        )

    def check_budget(self, state: FlockState) -> None:
        """BudgetError when the neighbour list of ``state`` would hold more pairs than ``max_pairs``
        (metric pairs are counted, not stored; a lower bound over the budget refuses at once)."""
        q = self.model.neighbor_query()
        if q.mode == "topological":
            self.budget.check_topological(state.n, q.k)
            return
        at_least = metric_pairs_lower_bound(state.position, state.alive, q.radius)
        if at_least > self.budget.max_pairs:  # hopeless: refused without the O(pairs) count
            self.budget.check_metric(at_least, state.n_alive, q.radius, exact=False)
        self._set_threads()
        pairs = count_metric_pairs(state.position, state.alive, self.model.space, q.radius, q.method)
        self.budget.check_metric(pairs, state.n_alive, q.radius)

    def step(self, state: FlockState, dt: float) -> None:
        """Advance ``state`` in place by one step."""
        self._set_threads()
        if self._buffer.shape[0] != state.n:
            self._buffer = np.zeros((state.n, 3))
        self._stepper(self.model, state, dt, self._buffer)


__all__ = ["CPU_STEPPERS", "CpuEngine", "integrate_all", "reynolds_accelerations"]
