"""Order parameters: polarization and milling (Couzin et al. 2002), speed statistics.

Inputs are plain (N, dim) arrays of alive agents; agents with zero velocity
have no heading and count as a zero unit vector (they lower the order).
"""

from __future__ import annotations

import numpy as np


def unit_headings(velocity: np.ndarray) -> np.ndarray:
    """Velocity / |velocity| per row; zero rows stay zero."""
    v = np.asarray(velocity, dtype=np.float64)
    speed = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, speed, out=np.zeros_like(v), where=speed > 0)


def polarization(velocity: np.ndarray) -> float:
    """|sum of unit headings| / N, in [0, 1]; 1 when all agents move alike.

    Random 2D headings give about 0.886 / sqrt(N) (sqrt(pi)/2 / sqrt(N)).
    NaN for N = 0.
    """
    v = np.asarray(velocity)
    if len(v) == 0:
        return float("nan")
    return float(np.linalg.norm(unit_headings(v).sum(axis=0)) / len(v))


def milling(position: np.ndarray, velocity: np.ndarray) -> float:
    """Couzin's group angular momentum |sum_i r_ic x v_i| / N with unit vectors, in [0, 1].

    r_ic is the unit vector from the centroid to agent i, v_i its unit heading;
    1 for an ideal ring rotating about its centre. Meaningless across a
    periodic edge (the centroid is not defined there). NaN for N = 0.
    """
    p = np.asarray(position, dtype=np.float64)
    if len(p) == 0:
        return float("nan")
    r = unit_headings(p - p.mean(axis=0))
    h = unit_headings(velocity)
    if p.shape[1] == 2:
        total = np.abs(np.sum(r[:, 0] * h[:, 1] - r[:, 1] * h[:, 0]))
    else:
        total = np.linalg.norm(np.cross(r, h).sum(axis=0))
    return float(total / len(p))


def speed_stats(velocity: np.ndarray) -> tuple[float, float]:
    """(mean, standard deviation) of |velocity| [units/s]; NaN for N = 0."""
    v = np.asarray(velocity)
    if len(v) == 0:
        return float("nan"), float("nan")
    s = np.linalg.norm(v, axis=1)
    return float(s.mean()), float(s.std())
