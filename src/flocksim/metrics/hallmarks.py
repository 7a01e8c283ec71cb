"""The measured hallmarks of starling murmurations, per frame of one flock (3D, y up).

- :func:`flock_proportions`: thickness <= width <= length, the full axes of the uniform ellipsoid
  with the flock's position covariance (:func:`flocksim.metrics.shape.ellipsoid_axes`), their
  ratios, and how the axes sit: |cos| between the thickness axis and gravity (1: the flock is a
  horizontal sheet), between the heading and the length axis, and between the heading and the
  thickness axis (Ballerini et al. 2008, Animal Behaviour 76:201: flocks are thin, with
  constant proportions, and slide parallel to the ground).
- :func:`border_birds`: the birds on the flock's convex hull.
- :func:`border_interior_nnd`: mean nearest-neighbour distance of the border birds over that of
  the others (below 1: packed more tightly at the border, as Ballerini et al. 2008 found).
- :func:`uniform_like`: the control for the border measure: as many points, uniformly random in
  the ellipsoid (ellipse in 2D) with the flock's mean and covariance. A point on the hull of a
  uniform cloud has fewer neighbours on one side, so its nearest neighbour is farther than an
  inside point's: the border ratio of a flock of uniform density is above 1, and only a ratio
  below that control's shows birds packed more tightly at the border.
- :func:`flock_labels`, :func:`flock_count`: groups of birds linked by chains of neighbours closer than a
  distance.
- :func:`linear_size`: the largest distance between two birds, the L that Cavagna et al. 2010
  (PNAS 107:11865) plot the correlation length r0 against.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from flocksim.metrics.shape import ellipsoid_axes
from flocksim.metrics.starlings import mean_heading

GRAVITY_AXIS = 1
"""Index of the vertical axis (y up)."""


def flock_proportions(position: np.ndarray, velocity: np.ndarray) -> dict[str, float]:
    """Thickness, width, length [units] and their ratios, with the axes' orientation (module
    docstring); NaN for fewer than 4 birds or no mean heading."""
    p = np.asarray(position, dtype=np.float64)
    names = (
        "thickness",
        "width",
        "length",
        "thickness_to_length",
        "width_to_length",
        "thickness_gravity_cos",
        "heading_length_cos",
        "heading_thickness_cos",
    )
    if p.ndim != 2 or p.shape[1] != 3 or len(p) < 4:
        return dict.fromkeys(names, math.nan)
    axes = ellipsoid_axes(p)
    vectors = np.linalg.eigh(np.cov(p.T, bias=True))[1]  # columns, by increasing variance like axes
    heading = mean_heading(velocity)
    has_heading = bool(np.any(heading))
    thickness, width, length = (float(a) for a in axes)
    return {
        "thickness": thickness,
        "width": width,
        "length": length,
        "thickness_to_length": thickness / length if length > 0 else math.nan,
        "width_to_length": width / length if length > 0 else math.nan,
        "thickness_gravity_cos": float(abs(vectors[GRAVITY_AXIS, 0])),
        "heading_length_cos": float(abs(vectors[:, 2] @ heading)) if has_heading else math.nan,
        "heading_thickness_cos": float(abs(vectors[:, 0] @ heading)) if has_heading else math.nan,
    }


def border_birds(position: np.ndarray) -> np.ndarray:
    """Boolean mask of the birds on the convex hull of the flock (all False for a flock too small
    or too flat for a hull)."""
    from scipy.spatial import ConvexHull, QhullError

    p = np.asarray(position, dtype=np.float64)
    mask = np.zeros(len(p), dtype=bool)
    if len(p) <= p.shape[1]:
        return mask
    with contextlib.suppress(QhullError):
        mask[ConvexHull(p).vertices] = True
    return mask


def border_interior_nnd(position: np.ndarray, border: np.ndarray | None = None) -> float:
    """Mean nearest-neighbour distance of the border birds over that of the interior ones (NaN
    when either group is empty). ``border``: mask of the border birds (default: the hull's)."""
    from scipy.spatial import cKDTree

    p = np.asarray(position, dtype=np.float64)
    if len(p) < 2:
        return math.nan
    mask = border_birds(p) if border is None else np.asarray(border, dtype=bool)
    if not mask.any() or mask.all():
        return math.nan
    nnd = cKDTree(p).query(p, k=2)[0][:, 1]
    return float(nnd[mask].mean() / nnd[~mask].mean())


def uniform_like(position: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """As many points as ``position`` (N, d), uniformly random in the ellipsoid with its mean and
    covariance: a uniform d-ball of radius a has variance a^2 / (d + 2) along each axis, so the
    semi-axes are sqrt((d + 2) x the covariance's eigenvalues)."""
    p = np.asarray(position, dtype=np.float64)
    n, d = p.shape
    values, vectors = np.linalg.eigh(np.cov(p.T, bias=True))
    semi = np.sqrt((d + 2) * np.clip(values, 0.0, None))
    direction = rng.standard_normal((n, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    ball = direction * rng.random((n, 1)) ** (1.0 / d)  # uniform in the unit ball
    return p.mean(axis=0) + (ball * semi) @ vectors.T


def flock_labels(position: np.ndarray, link: float) -> np.ndarray:
    """Flock label 0, 1, ... of each bird (N,): groups of birds joined by chains of neighbours closer
    than ``link`` [units] (single linkage)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    p = np.asarray(position, dtype=np.float64)
    n = len(p)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    pairs = cKDTree(p).query_pairs(link, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def flock_count(position: np.ndarray, link: float) -> int:
    """Number of flocks: groups of birds joined by chains of neighbours closer than ``link``
    [units] (single linkage, :func:`flock_labels`); 0 for no bird."""
    labels = flock_labels(position, link)
    return int(labels.max()) + 1 if len(labels) else 0


def linear_size(position: np.ndarray, hull: np.ndarray | None = None) -> float:
    """The largest distance between two birds [units] (0 for fewer than two): from the convex
    hull's vertices, so O(N log N) rather than over every pair. ``hull``: the mask of
    :func:`border_birds` when already at hand."""
    p = np.asarray(position, dtype=np.float64)
    if len(p) < 2:
        return 0.0
    hull = border_birds(p) if hull is None else np.asarray(hull, dtype=bool)
    q = p[hull] if hull.sum() >= 2 else p
    largest = 0.0
    for lo in range(0, len(q), 1024):  # rows in chunks: bounded memory when the hull is degenerate
        d = q[lo : lo + 1024, None, :] - q[None, :, :]
        largest = max(largest, float((d * d).sum(axis=-1).max()))
    return math.sqrt(largest)
