"""Neighbour lists on the GPU: the tiled brute force or the grid, chosen by ``neighbors.method``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flocksim.budgets import PairBudget
from flocksim.neighbors.csr import NeighborList
from flocksim.neighbors.cuda_brute import brute_knn_lists, brute_metric_lists
from flocksim.neighbors.cuda_grid import build_device_grid, build_device_knn_grid, grid_knn_lists, grid_metric_lists
from flocksim.space import Space

CUDA_BRUTE_BELOW = 4096
"""``method = "auto"`` on the GPU uses the tiled brute force below this many agents (rows of agents):
a grid costs about ten kernel launches and two small copies to the host per step, a fixed cost
that brute force does not have. A design choice, not a measured crossover."""


def uses_brute(method: str, n: int) -> bool:
    return method == "brute" or (method == "auto" and n < CUDA_BRUTE_BELOW)


def metric_check(budget: PairBudget | None, n_alive: int, radius: float) -> Callable[[int], None] | None:
    """The ``check(pairs)`` that the metric list builders call before allocating, or None without a budget."""
    if budget is None:
        return None
    return lambda pairs: budget.check_metric(pairs, n_alive, radius)


def device_neighbor_lists(
    position: Any, alive: Any, n: int, dim: int, n_alive: int, space: Space, mode: str, radius: float, k: int,
    method: str, budget: PairBudget | None = None,
) -> tuple[Any, Any]:  # fmt: skip
    """(start, index) device arrays of every agent's neighbour row, as :func:`flocksim.neighbors.find_neighbors`
    returns them (index may hold one spare entry when no agent has a neighbour). ``budget``: a
    :class:`flocksim.budgets.PairBudget` checked before the list is allocated (BudgetError)."""
    if mode == "topological" and k < 1:
        raise ValueError(f"k: must be >= 1 for topological neighbours, got {k}")
    if mode == "metric":
        check = metric_check(budget, n_alive, radius)
        if uses_brute(method, n) or n_alive == 0 or radius <= 0.0:
            return brute_metric_lists(position, alive, n, dim, space, radius, check)
        grid = build_device_grid(position, alive, space, n, dim, n_alive, radius)
        return grid_metric_lists(grid, n, dim, space, radius, check)
    if budget is not None:
        budget.check_topological(n, k)
    if uses_brute(method, n) or n_alive == 0:
        return brute_knn_lists(position, alive, n, dim, space, k)
    grid = build_device_knn_grid(position, alive, space, n, dim, n_alive, k)
    return grid_knn_lists(grid, n, dim, space, k)


def to_host(start: Any, index: Any, n: int) -> NeighborList:
    """The device lists as a host :class:`NeighborList` (copies (n + 1) + M int64)."""
    host_start = start.copy_to_host()
    m = int(host_start[n])
    return NeighborList(host_start, index[:m].copy_to_host() if m else np.zeros(0, dtype=np.int64))
