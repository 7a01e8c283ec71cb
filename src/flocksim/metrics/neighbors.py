"""Neighbourhood statistics: mean neighbour count, nearest-neighbour distances, local misalignment."""

from __future__ import annotations

import numpy as np

from flocksim.metrics.order import unit_headings
from flocksim.neighbors import find_neighbors
from flocksim.space import Space, displacement_array, make_space

MISALIGNMENT_NEIGHBORS = 6
"""Nearest neighbours whose mean heading :func:`local_misalignment` compares each bird's with (about
the topological range of starlings' interactions: Ballerini et al. 2008)."""


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


def misalignment_angles(
    position: np.ndarray, velocity: np.ndarray, k: int = MISALIGNMENT_NEIGHBORS, space: Space | None = None
) -> np.ndarray:
    """Per bird, the angle [rad, 0..pi] between its heading and the mean unit heading of its ``k``
    nearest other birds (minimum image if ``space`` is periodic); NaN for a bird standing still or
    whose neighbours' headings cancel. Empty for ``k`` or fewer birds."""
    p = np.ascontiguousarray(position, dtype=np.float64)
    if len(p) <= k:
        return np.zeros(0)
    space = space or make_space("open", [1.0] * p.shape[1])
    nbrs = find_neighbors(p, np.ones(len(p), dtype=bool), space, "topological", k=k)
    u = unit_headings(velocity)
    local = u[nbrs.index].reshape(len(p), k, -1).sum(axis=1)
    along = np.einsum("ij,ij->i", u, local)
    across = np.linalg.norm(local - along[:, None] * u, axis=1)
    defined = (np.linalg.norm(u, axis=1) > 0) & (np.linalg.norm(local, axis=1) > 0)
    return np.where(defined, np.arctan2(across, along), np.nan)


def local_misalignment(
    position: np.ndarray, velocity: np.ndarray, k: int = MISALIGNMENT_NEIGHBORS, space: Space | None = None
) -> float:
    """Mean over birds of :func:`misalignment_angles` [rad]: 0 when every bird flies as its ``k``
    nearest neighbours do on average, about pi/2 for headings unrelated to position (in 2D). It sees
    local alignment where the polarization of the whole flock is near 1 whatever the coupling. NaN
    for ``k`` or fewer birds."""
    angles = misalignment_angles(position, velocity, k, space)
    angles = angles[np.isfinite(angles)]
    return float(angles.mean()) if len(angles) else float("nan")
