"""The murmuration analyses of docs/starlings.md (docs/design.md §5.6), computable from any run.

Snapshot measures take the positions and velocities of the living birds,
(N, dim) arrays; time-series measures take sequences of samples. Angles are in
radians. The reference starling simulator states its results but not all of its definitions; the
definitions chosen here are written out in each docstring and in
docs/starlings.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from flocksim.metrics.order import unit_headings


def mean_heading(velocity: np.ndarray) -> np.ndarray:
    """Unit vector of the sum of unit headings (zeros if it vanishes)."""
    h = unit_headings(velocity).sum(axis=0)
    n = np.linalg.norm(h)
    return h / n if n > 0 else np.zeros_like(h)


def heading_deviation(velocity: np.ndarray) -> np.ndarray:
    """Angle [rad] between each bird's heading and the flock's mean heading, in [0, pi]."""
    h = unit_headings(velocity)
    m = mean_heading(velocity)
    return np.arccos(np.clip(h @ m, -1.0, 1.0))


def edge_interior_deviation(
    position: np.ndarray, velocity: np.ndarray, edge_fraction: float = 0.1, interior_fraction: float = 0.5
) -> tuple[float, float]:
    """(edge, interior): mean heading deviation [rad] of the outer ``edge_fraction`` and of
    the inner ``interior_fraction`` of the birds by distance from the centroid
    (Attanasi et al. 2015; by default the outer 10 % and the inner 50 %).

    Each group has at least one bird; NaN for fewer than 2 birds. The experiments measure it only
    while polarization >= 0.85 (the caller selects those snapshots).
    """
    p = np.asarray(position, dtype=np.float64)
    n = len(p)
    if n < 2:
        return math.nan, math.nan
    r = np.linalg.norm(p - p.mean(axis=0), axis=1)
    order = np.argsort(r, kind="stable")
    dev = heading_deviation(velocity)
    n_edge = max(1, round(edge_fraction * n))
    n_inner = max(1, round(interior_fraction * n))
    return float(dev[order[n - n_edge :]].mean()), float(dev[order[:n_inner]].mean())


def flock_shape(position: np.ndarray, velocity: np.ndarray) -> dict[str, float]:
    """Principal axes of the position covariance and their relation to the heading.

    Returns ``axis_cos``: |cos| between the mean heading and the longest principal axis
    (real flocks: usually < 0.5, the flock is wider than long);
    ``length``, ``width`` (and ``height`` in 3D): square roots of the covariance
    eigenvalues, longest first [units]; ``aspect``: width / length.
    NaN for fewer than ``dim + 1`` birds.
    """
    p = np.asarray(position, dtype=np.float64)
    dim = p.shape[1]
    names = ["length", "width", "height"][:dim]
    if len(p) < dim + 1:
        return {"axis_cos": math.nan, "aspect": math.nan, **dict.fromkeys(names, math.nan)}
    values, vectors = np.linalg.eigh(np.cov(p.T))
    values = values[::-1]
    longest = vectors[:, -1]
    sizes = np.sqrt(np.maximum(values, 0.0))
    out = {"axis_cos": float(abs(mean_heading(velocity) @ longest))}
    out.update({name: float(s) for name, s in zip(names, sizes, strict=True)})
    out["aspect"] = float(sizes[1] / sizes[0]) if sizes[0] > 0 else math.nan
    return out


def speed_fluctuation(velocity: np.ndarray) -> float:
    """Variance of the individual speeds relative to the squared mean speed,
    var(|v_i|) / mean(|v_i|)^2 (dimensionless; Bialek et al. 2014 report about 0.005 for
    starlings, the reference starling simulator about 0.002 for its defaults). NaN without birds or speed."""
    s = np.linalg.norm(np.asarray(velocity, dtype=np.float64), axis=1)
    if len(s) == 0 or s.mean() == 0:
        return math.nan
    return float(s.var() / s.mean() ** 2)


def repetition_index(path: np.ndarray | Sequence[Sequence[float]]) -> float:
    """How closely a path (the flock centroid, sampled at equal intervals) retraces itself.

    With c(t) the path minus its mean, the normalised correlation
    R(tau) = sum_t c(t).c(t+tau) / sqrt(sum_t |c(t)|^2 sum_t |c(t+tau)|^2) over the
    overlap; the index is the largest R(tau) after R first drops below 0, for tau up
    to half the samples. 1: the path repeats exactly (a flock bouncing along the same
    track); near 0 or below: it never comes back. NaN when R does not drop below 0 in
    the first half (too short to tell) or for fewer than 8 samples.
    """
    c = np.asarray(path, dtype=np.float64)
    if c.ndim == 1:
        c = c[:, None]
    n = len(c)
    if n < 8:
        return math.nan
    c = c - c.mean(axis=0)
    corr = []
    for tau in range(1, n // 2 + 1):
        a, b = c[:-tau], c[tau:]
        den = math.sqrt(float(np.sum(a * a)) * float(np.sum(b * b)))
        corr.append(float(np.sum(a * b)) / den if den > 0 else 0.0)
    r = np.array(corr)
    below = np.flatnonzero(r < 0.0)
    if len(below) == 0:
        return math.nan
    return float(r[below[0] :].max())


def fraction_below(values: Sequence[float] | np.ndarray, threshold: float) -> float:
    """Fraction of samples below ``threshold`` (e.g. time with polarization < 0.6); NaN if empty."""
    v = np.asarray(values, dtype=np.float64)
    return float((v < threshold).mean()) if len(v) else math.nan


def catch_rate(caught: int, seconds: float) -> float:
    """Catches per minute of simulated time."""
    return 60.0 * caught / seconds if seconds > 0 else math.nan
