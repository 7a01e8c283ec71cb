"""Flock shape and neighbour anisotropy.

- :func:`ellipsoid_axes`: axes I1 <= I2 (<= I3) of the uniform ellipsoid with the same
  position covariance: I = 2 sqrt(5 lambda) for each covariance eigenvalue lambda (a
  uniform solid ellipsoid of semi-axis a has variance a^2/5 along it; 2D: the uniform
  ellipse, I = 2 sqrt(4 lambda)). The heading's relation to the axes is
  :func:`flocksim.metrics.starlings.flock_shape`.
- :func:`anisotropy_gamma`: Ballerini et al. 2008 (PNAS 105:1232) anisotropy gamma(n) of
  the n-th nearest neighbour: for every bird i (of the chosen centres), the unit vector
  u_i(n) to its n-th nearest neighbour; M(n) = mean_i u_i u_i^T; W(n) its eigenvector of
  smallest eigenvalue (the direction with fewest neighbours); gamma(n) = (W(n) . V)^2 with
  V the flock's mean heading. Isotropic neighbours give 1/3 in 3D (1/2 in 2D); starlings:
  gamma(1) about 0.6, falling to 1/3 after n about 7 (neighbours sit beside, not ahead).
"""

from __future__ import annotations

import numpy as np

from flocksim.metrics.starlings import mean_heading
from flocksim.neighbors import find_neighbors
from flocksim.space import Space, displacement_array, make_space


def ellipsoid_axes(position: np.ndarray) -> np.ndarray:
    """Full axis lengths I1 <= I2 (<= I3) [units] of the equivalent uniform ellipse (2D) or
    ellipsoid (3D); NaN for fewer than dim + 1 agents."""
    p = np.asarray(position, dtype=np.float64)
    dim = p.shape[1]
    if len(p) < dim + 1:
        return np.full(dim, np.nan)
    values = np.clip(np.linalg.eigvalsh(np.cov(p.T, bias=True)), 0.0, None)
    return 2.0 * np.sqrt((dim + 2) * values)


def anisotropy_gamma(
    position: np.ndarray,
    velocity: np.ndarray,
    n_max: int = 10,
    centres: np.ndarray | None = None,
    space: Space | None = None,
) -> np.ndarray:
    """Ballerini's gamma(n) for n = 1..n_max (array of n_max values).

    ``centres``: boolean mask or indices of the birds whose neighbours are counted
    (Ballerini: interior birds only, to avoid the border's bias); default all. Neighbours
    come from the whole flock. NaN entries for n >= number of birds.
    """
    p = np.ascontiguousarray(position, dtype=np.float64)
    n, dim = p.shape
    space = space or make_space("open", [1.0] * dim)
    v_mean = mean_heading(velocity)
    gamma = np.full(n_max, np.nan)
    k = min(n_max, n - 1)
    if k < 1 or not np.any(v_mean):
        return gamma
    nbrs = find_neighbors(p, np.ones(n, dtype=bool), space, "topological", k=k)
    rows = nbrs.index.reshape(n, k)  # every row holds k neighbours, nearest first
    if centres is None:
        chosen = np.arange(n)
    else:
        centres = np.asarray(centres)
        chosen = np.flatnonzero(centres) if centres.dtype == bool else centres.astype(np.int64)
    for m in range(k):
        d = displacement_array(p[chosen], p[rows[chosen, m]], space)
        u = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-300)
        w = np.linalg.eigh(u.T @ u / len(u))[1][:, 0]
        gamma[m] = float(w @ v_mean) ** 2
    return gamma


def isotropic_gamma(dim: int) -> float:
    """gamma of isotropically placed neighbours: 1/dim."""
    return 1.0 / dim
