"""Neighbourhood statistics: mean neighbour count, nearest-neighbour distances, local misalignment."""

from __future__ import annotations

import numpy as np

from flocksim.metrics.order import unit_headings
from flocksim.neighbors import find_neighbors
from flocksim.space import Space, displacement_array, make_space, tree_points

MISALIGNMENT_NEIGHBORS = 6
"""Nearest neighbours whose mean heading :func:`local_misalignment` compares each bird's with (about
the topological range of starlings' interactions: Ballerini et al. 2008)."""


def mean_neighbor_count(counts: np.ndarray) -> float:
    """Mean number of neighbours an agent actually used; NaN for no agent."""
    counts = np.asarray(counts)
    return float(counts.mean()) if len(counts) else float("nan")


KD_TREE_MOST = 2000
"""Up to this many agents (every preset's default flock but the largest), :func:`nearest_neighbor_distances`
finds each one's nearest other with SciPy's k-d tree, which needs no compile (the grid search costs
a model that has no k-nearest search of its own about 20 s of compile); above, with the grid k-nearest
search, compiled on first use and faster on large flocks (measured, 2 cores: 0.4 / 0.3 ms at 300
agents, 3.1 / 1.3 ms at 2000, 60 / 7 ms at 10 000, 3D)."""
KD_TREE_CANDIDATES = 4
"""Nearest points the k-d tree returns per agent, of which the nearest other by the simulation's own
squared distance is kept (the tree's distances may differ from it in the last bit)."""


def nearest_neighbor_distances(position: np.ndarray, space: Space | None = None) -> np.ndarray:
    """Distance from each agent to its nearest other agent [units] (minimum image if periodic).

    The nearest other is the one with the smallest squared distance as the kernels compute it, the
    lower index on a tie (as the grid k-nearest search orders its rows), so the distances are the
    same bits whichever search finds it. O(N log N) with a k-d tree up to :data:`KD_TREE_MOST`
    agents, O(N) with the grid search above. Empty for fewer than 2 agents.
    """
    p = np.ascontiguousarray(position, dtype=np.float64)
    if len(p) < 2:
        return np.zeros(0)
    space = space or make_space("open", [1.0] * p.shape[1])
    if len(p) <= KD_TREE_MOST:
        nearest = _nearest_others_by_tree(p, space)
    else:
        nearest = find_neighbors(p, np.ones(len(p), dtype=bool), space, "topological", k=1).index
    d = displacement_array(p, p[nearest], space)
    return np.linalg.norm(d, axis=1)


def _nearest_others_by_tree(p: np.ndarray, space: Space) -> np.ndarray:
    """Index of each agent's nearest other agent (smallest kernel squared distance, then index)."""
    from scipy.spatial import cKDTree

    n = len(p)
    points, box = tree_points(p, space)
    k = min(n, KD_TREE_CANDIDATES)
    _, candidates = cKDTree(points, boxsize=box).query(points, k=k)
    candidates = np.asarray(candidates).reshape(n, k)
    d = displacement_array(p[:, None, :], p[candidates], space)
    d2 = d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1]  # the kernels' order of the sum
    if p.shape[1] == 3:
        d2 = d2 + d[..., 2] * d[..., 2]
    d2[candidates == np.arange(n)[:, None]] = np.inf  # an agent is not its own neighbour
    nearest_d2 = d2.min(axis=1, keepdims=True)
    return np.where(d2 == nearest_d2, candidates, n).min(axis=1)  # positions are finite (the tree checks)


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
