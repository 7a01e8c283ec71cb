"""Neighbourhood statistics: mean neighbour count, nearest-neighbour distances."""

from __future__ import annotations

import numpy as np

from flocksim.neighbors import find_neighbors
from flocksim.space import Space, displacement_array, make_space


def mean_neighbor_count(counts: np.ndarray) -> float:
    """Mean number of neighbours an agent actually used; NaN for no agent."""
    counts = np.asarray(counts)
    return float(counts.mean()) if len(counts) else float("nan")


def nearest_neighbor_distances(position: np.ndarray, space: Space | None = None) -> np.ndarray:
    """Distance from each agent to its nearest other agent [units] (minimum image if periodic).

    Uses the grid k-nearest search, so it is O(N). Empty for fewer than 2 agents.
    """
    p = np.ascontiguousarray(position, dtype=np.float64)
    if len(p) < 2:
        return np.zeros(0)
    space = space or make_space("open", [1.0] * p.shape[1])
    nbrs = find_neighbors(p, np.ones(len(p), dtype=bool), space, "topological", k=1)
    d = displacement_array(p, p[nbrs.index], space)
    return np.linalg.norm(d, axis=1)


def nearest_neighbor_stats(position: np.ndarray, space: Space | None = None) -> dict[str, float]:
    """Mean, standard deviation, min, median and max of nearest-neighbour distances [units]."""
    d = nearest_neighbor_distances(position, space)
    if len(d) == 0:
        nan = float("nan")
        return {"mean": nan, "std": nan, "min": nan, "median": nan, "max": nan}
    return {
        "mean": float(d.mean()),
        "std": float(d.std()),
        "min": float(d.min()),
        "median": float(np.median(d)),
        "max": float(d.max()),
    }
