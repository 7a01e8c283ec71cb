"""Neighbour search (SPEC 2): metric (radius) and topological (k nearest),
by brute force (the reference) or on a uniform grid."""

from __future__ import annotations

from typing import Literal

import numpy as np

from flocksim.budgets import PairBudget
from flocksim.neighbors.brute import knn_neighbors_brute, metric_counts_brute, metric_neighbors_brute
from flocksim.neighbors.coherent import build_coherent_grid
from flocksim.neighbors.csr import NeighborList
from flocksim.neighbors.grid import metric_counts_grid, metric_neighbors_grid
from flocksim.neighbors.knn import knn_neighbors_grid
from flocksim.space import Space

BRUTE_FORCE_BELOW = 64
"""``method = "auto"`` uses brute force below this many agents."""


def _brute(position: np.ndarray, method: str) -> bool:
    return method == "brute" or (method == "auto" and len(position) < BRUTE_FORCE_BELOW)


def find_neighbors(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    mode: Literal["metric", "topological"],
    radius: float = 0.0,
    k: int = 7,
    method: Literal["auto", "grid", "brute"] = "auto",
    budget: PairBudget | None = None,
) -> NeighborList:
    """Neighbour list of every agent; ``method`` changes the speed, never the result. A list that
    would hold more pairs than ``budget`` (default: :data:`flocksim.budgets.DEFAULT_MAX_PAIRS`) raises
    :class:`flocksim.budgets.BudgetError` before it is allocated."""
    if mode == "topological" and k < 1:
        raise ValueError(f"k: must be >= 1 for topological neighbours, got {k}")
    budget = PairBudget() if budget is None else budget
    brute = _brute(position, method)
    if mode == "metric":
        return (metric_neighbors_brute if brute else metric_neighbors_grid)(position, alive, space, radius, budget)
    return (knn_neighbors_brute if brute else knn_neighbors_grid)(position, alive, space, k, budget)


def count_metric_pairs(
    position: np.ndarray, alive: np.ndarray, space: Space, radius: float, method: Literal["auto", "grid", "brute"]
) -> int:
    """The pairs a metric :func:`find_neighbors` would hold, counted by the search's first pass
    without storing them (a topological search holds N x k)."""
    if len(position) == 0 or radius <= 0.0 or _brute(position, method):
        return int(metric_counts_brute(position, alive, space, radius).sum())
    grid = build_coherent_grid(position, alive, space, radius)
    return int(metric_counts_grid(grid, len(position), position.shape[1], space, radius)[0].sum())


__all__ = [
    "NeighborList",
    "count_metric_pairs",
    "find_neighbors",
    "knn_neighbors_brute",
    "knn_neighbors_grid",
    "metric_neighbors_brute",
    "metric_neighbors_grid",
]
