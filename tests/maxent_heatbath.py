"""Headings drawn from the maximum-entropy model itself, not from its spin-wave approximation, and
without flocksim: plain numpy, brute-force neighbours.

The model (Bialek et al. 2012, PNAS 109:4786) on fixed 3D positions: unit headings s_i with
P(s) ~ exp((J/2) sum_i sum_j n_ij s_i.s_j), n_ij = 1 when j is one of the n_c nearest birds of i.
Bird i's conditional given the others is a von Mises-Fisher distribution on the sphere with
natural parameter h_i = (J/2) sum_j (n_ij + n_ji) s_j. A heat-bath (Gibbs) sweep draws every bird
from it in turn: the birds are coloured so that no two of a colour are coupled, and a colour's
birds are drawn at once (their conditionals do not depend on one another), which is the same chain
as one bird at a time in colour order. The von Mises-Fisher draw in 3D is exact: the cosine w to
the mean direction from w = 1 + log(u + (1 - u) exp(-2 kappa)) / kappa, u uniform (Wood 1994),
the azimuth uniform. tests/test_maxent.py checks flocksim's estimator on these headings.
"""

from __future__ import annotations

import numpy as np


def neighbor_matrix(position: np.ndarray, nc: int) -> np.ndarray:
    """(n, n) 0/1 matrix n_ij: j among the ``nc`` nearest birds of i (Euclidean, brute force; ties
    by the lower index)."""
    d2 = ((position[:, None, :] - position[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d2, np.inf)
    nearest = np.argsort(d2, axis=1, kind="stable")[:, :nc]
    n = np.zeros(d2.shape)
    n[np.repeat(np.arange(len(position)), nc), nearest.ravel()] = 1.0
    return n


def colouring(coupled: np.ndarray) -> list[np.ndarray]:
    """Greedy colouring of the graph ``coupled`` (symmetric boolean): the birds of each colour."""
    colour = np.full(len(coupled), -1)
    for i in range(len(coupled)):
        taken = set(colour[coupled[i]].tolist())
        colour[i] = next(c for c in range(len(coupled)) if c not in taken)
    return [np.flatnonzero(colour == c) for c in range(colour.max() + 1)]


def von_mises_fisher(field: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One unit vector per row of ``field`` (m, 3), from the density ~ exp(field . s) on the sphere."""
    kappa = np.linalg.norm(field, axis=1)
    mean = field / kappa[:, None]
    u = rng.random(len(field))
    w = 1.0 + np.log(u + (1.0 - u) * np.exp(-2.0 * kappa)) / kappa
    phi = rng.uniform(0.0, 2.0 * np.pi, len(field))
    # an orthonormal pair perpendicular to each mean direction
    helper = np.where(np.abs(mean[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    e1 = np.cross(mean, helper)
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
    e2 = np.cross(mean, e1)
    r = np.sqrt(np.clip(1.0 - w * w, 0.0, None))
    return w[:, None] * mean + r[:, None] * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2)


def heat_bath_headings(
    position: np.ndarray,
    coupling: float,
    nc: int,
    frames: int,
    rng: np.random.Generator,
    burn_in: int = 400,
    every: int = 40,
) -> list[np.ndarray]:
    """``frames`` samples of unit headings (n, 3) at ``position`` (n, 3), ``every`` sweeps apart
    after ``burn_in`` sweeps from all birds heading along +x."""
    n = neighbor_matrix(position, nc)
    weights = 0.5 * coupling * (n + n.T)
    colours = colouring((n + n.T) > 0)
    s = np.zeros((len(position), 3))
    s[:, 0] = 1.0
    out = []
    for sweep in range(burn_in + frames * every):
        for members in colours:
            s[members] = von_mises_fisher(weights[members] @ s, rng)
        if sweep >= burn_in and (sweep - burn_in) % every == every - 1:
            out.append(s.copy())
    return out
