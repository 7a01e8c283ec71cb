"""Neighbour search (SPEC 2): metric (radius) and topological (k nearest),
by brute force (the reference) or on a uniform grid."""

from __future__ import annotations

from typing import Literal

import numpy as np

from flocksim.neighbors.brute import knn_neighbors_brute, metric_neighbors_brute
from flocksim.neighbors.csr import NeighborList
from flocksim.neighbors.grid import metric_neighbors_grid
from flocksim.neighbors.knn import knn_neighbors_grid
from flocksim.space import Space

BRUTE_FORCE_BELOW = 64
"""``method = "auto"`` uses brute force below this many agents."""


def find_neighbors(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    mode: Literal["metric", "topological"],
    radius: float = 0.0,
    k: int = 7,
    method: Literal["auto", "grid", "brute"] = "auto",
) -> NeighborList:
    """Neighbour list of every agent; ``method`` changes the speed, never the result."""
    if mode == "topological" and k < 1:
        raise ValueError(f"k: must be >= 1 for topological neighbours, got {k}")
    brute = method == "brute" or (method == "auto" and len(position) < BRUTE_FORCE_BELOW)
    if mode == "metric":
        return (metric_neighbors_brute if brute else metric_neighbors_grid)(position, alive, space, radius)
    return (knn_neighbors_brute if brute else knn_neighbors_grid)(position, alive, space, k)


__all__ = [
    "NeighborList",
    "find_neighbors",
    "knn_neighbors_brute",
    "knn_neighbors_grid",
    "metric_neighbors_brute",
    "metric_neighbors_grid",
]
