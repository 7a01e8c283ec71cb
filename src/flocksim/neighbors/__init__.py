"""Neighbour search (docs/design.md §2): metric (radius) and topological (k nearest),
by brute force (the reference) or on a uniform grid."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from flocksim.budgets import PairBudget
from flocksim.neighbors.brute import knn_neighbors_brute, metric_counts_brute, metric_neighbors_brute
from flocksim.neighbors.coherent_build import build_coherent_grid
from flocksim.neighbors.csr import NeighborList
from flocksim.neighbors.search import knn_neighbors_grid, metric_counts_grid, metric_neighbors_grid
from flocksim.space import Space

BRUTE_FORCE_BELOW = 64
"""``method = "auto"`` uses brute force below this many agents."""


def _brute(position: np.ndarray, method: str) -> bool:
    return method == "brute" or (method == "auto" and len(position) < BRUTE_FORCE_BELOW)


def metric_search_on_grid(position: np.ndarray, radius: float, method: str) -> bool:
    """Whether :func:`find_neighbors` builds a metric list of ``radius`` on the coherent grid
    (:func:`metric_neighbors_grid`), not by brute force."""
    return len(position) > 0 and radius > 0.0 and not _brute(position, method)


def find_neighbors(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    mode: Literal["metric", "topological"],
    radius: float = 0.0,
    k: int = 7,
    method: Literal["auto", "grid", "brute"] = "auto",
    budget: PairBudget | None = None,
    query: np.ndarray | None = None,
) -> NeighborList:
    """Neighbour list of every agent; ``method`` changes the speed, never the result. A list that
    would hold more pairs than ``budget`` (default: :data:`flocksim.budgets.DEFAULT_MAX_PAIRS`) raises
    :class:`flocksim.budgets.BudgetError` before it is allocated. ``query`` (N,) bool: only the rows
    of the alive agents it marks are searched, each bitwise its row in the full list; the other rows
    are empty (None: every alive agent's row)."""
    if mode == "topological" and k < 1:
        raise ValueError(f"k: must be >= 1 for topological neighbours, got {k}")
    budget = PairBudget() if budget is None else budget
    brute = _brute(position, method)
    if mode == "metric":
        search = metric_neighbors_brute if brute else metric_neighbors_grid
        return search(position, alive, space, radius, budget, query)
    return (knn_neighbors_brute if brute else knn_neighbors_grid)(position, alive, space, k, budget, query)


LOWER_BOUND_MAX_CELLS = 2**62
"""Above this many fine cells :func:`metric_pairs_lower_bound` gives up (returns 0)."""


def metric_pairs_lower_bound(position: np.ndarray, alive: np.ndarray, radius: float) -> int:
    """A lower bound on the metric pairs within ``radius`` (inclusive), in O(N log N) without a
    neighbour search: alive agents sharing a cell of side radius / sqrt(dim) are within the radius
    of each other (also in periodic space, whose minimum image is never longer), so a cell of c
    agents holds c (c - 1) pairs. Used to refuse a hopeless neighbour list before counting it."""
    points = position[alive]
    n, dim = points.shape
    if n < 2 or not radius > 0.0:
        return 0
    width = radius / math.sqrt(dim)
    lo = points.min(axis=0)
    sides = np.floor((points.max(axis=0) - lo) / width) + 1.0
    if not np.isfinite(sides).all() or math.prod(float(s) for s in sides) > LOWER_BOUND_MAX_CELLS:
        return 0
    cells = np.floor((points - lo) / width).astype(np.int64)
    key = cells[:, 0]
    for axis in range(1, dim):
        key = key * int(sides[axis]) + cells[:, axis]
    counts = np.unique(key, return_counts=True)[1]
    return int(np.dot(counts, counts - 1))


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
    "metric_pairs_lower_bound",
    "find_neighbors",
    "knn_neighbors_brute",
    "knn_neighbors_grid",
    "metric_neighbors_brute",
    "metric_neighbors_grid",
    "metric_search_on_grid",
]
