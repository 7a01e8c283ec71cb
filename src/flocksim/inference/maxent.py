"""Maximum-entropy estimate of topological alignment from headings alone (Bialek et al. 2012, PNAS
109:4786).

The least structured distribution of the birds' unit headings s_i that reproduces the mean
alignment of each bird with its n_c nearest neighbours is P(s) ~ exp((J/2) sum_i sum_j n_ij s_i.s_j),
n_ij = 1 when j is one of the n_c nearest neighbours of i. In an ordered flock the headings are
s_i ~ (1 - |pi_i|^2/2) n + pi_i, pi_i their (dim-1)-dimensional deviation from the mean heading n
(the spin-wave approximation of the paper), and the distribution is Gaussian:
log P = (dim-1)/2 sum_{k>=2} log(J lambda_k / 2 pi) - (J/2) sum_a pi_a^T L pi_a, with L the Laplacian
of the symmetrised neighbour matrix (n + n^T)/2 and lambda_k its non-zero eigenvalues. For each n_c
the J of largest likelihood over the frames is J = (dim-1)(N-1) T / sum_frames sum_a pi_a^T L pi_a;
n_c is the one of largest likelihood. J is dimensionless (the coupling in units of the headings'
own temperature); n_c counts neighbours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

MAX_NC = 40
"""Largest neighbour count tried."""
MIN_POLARIZATION = 0.7
"""The spin-wave approximation needs an ordered flock: frames with lower polarization are left out."""


class MaxentError(ValueError):
    """No frame fits the estimate: one line saying why and what is allowed."""


@dataclass(frozen=True)
class MaxentEstimate:
    """``coupling`` J (dimensionless), ``neighbors`` n_c, ``frames`` used, ``log_likelihood``
    per n_c tried (index n_c - 1), ``birds`` (mean per frame used)."""

    coupling: float
    neighbors: int
    frames: int
    birds: float
    log_likelihood: np.ndarray


def topological_laplacian(position: np.ndarray, nc: int, box: np.ndarray | None = None) -> np.ndarray:
    """(n, n) Laplacian of the symmetrised matrix of each bird's ``nc`` nearest neighbours
    (minimum image in a periodic ``box`` of sides [units])."""
    n = len(position)
    p = np.asarray(position, dtype=np.float64)
    tree = cKDTree(np.mod(p, box), boxsize=box) if box is not None else cKDTree(p)
    _, idx = tree.query(np.mod(p, box) if box is not None else p, k=nc + 1)
    a = np.zeros((n, n))
    rows = np.repeat(np.arange(n), nc)
    a[rows, idx[:, 1:].ravel()] = 1.0
    a = 0.5 * (a + a.T)
    return np.diag(a.sum(axis=1)) - a


def deviations(velocity: np.ndarray) -> np.ndarray:
    """(n, dim-1) components of the unit headings perpendicular to their mean direction."""
    s = velocity / np.linalg.norm(velocity, axis=1, keepdims=True)
    mean = s.mean(axis=0)
    mean /= np.linalg.norm(mean)
    # an orthonormal basis of the plane (or line) perpendicular to the mean heading
    basis = np.linalg.svd(np.eye(len(mean)) - np.outer(mean, mean))[0][:, : len(mean) - 1]
    return s @ basis


def maxent_alignment(
    positions: list[np.ndarray], velocities: list[np.ndarray], box: np.ndarray | None = None, max_nc: int = MAX_NC
) -> MaxentEstimate:
    """J and n_c of the module docstring from frames of (n, dim) positions [units] and velocities
    (any speed: only headings count). Frames with polarization below :data:`MIN_POLARIZATION` or
    fewer than max_nc + 2 birds are left out; MaxentError if none is left."""
    frames = []
    for p, v in zip(positions, velocities, strict=True):
        keep = np.all(np.isfinite(p), axis=1) & np.all(np.isfinite(v), axis=1) & (np.linalg.norm(v, axis=1) > 0)
        p, v = p[keep], v[keep]
        if len(p) < 3:
            continue
        s = v / np.linalg.norm(v, axis=1, keepdims=True)
        if np.linalg.norm(s.mean(axis=0)) >= MIN_POLARIZATION:
            frames.append((p, v))
    if not frames:
        raise MaxentError(
            f"--maxent: no frame with polarization >= {MIN_POLARIZATION} and 3 birds or more; allowed: tracks of "
            "an ordered flock (the estimate assumes small deviations from the mean heading)"
        )
    birds = min(len(p) for p, _ in frames)
    top = min(max_nc, birds - 2)
    if top < 1:
        raise MaxentError("--maxent: frames need at least 3 birds")
    dim = frames[0][0].shape[1]
    loglik = np.full(top, -np.inf)
    couplings = np.full(top, np.nan)
    pis = [deviations(v) for _, v in frames]
    for nc in range(1, top + 1):
        quad, logdet, modes = 0.0, 0.0, 0
        for (p, _), pi in zip(frames, pis, strict=True):
            lap = topological_laplacian(p, nc, box)
            quad += float(np.einsum("ia,ij,ja->", pi, lap, pi))
            lam = np.linalg.eigvalsh(lap)[1:]  # the zero mode (the mean heading) is not a deviation
            lam = lam[lam > 1e-12]
            logdet += float(np.sum(np.log(lam)))
            modes += len(lam)
        if quad <= 0:
            continue
        J = (dim - 1) * modes / quad
        couplings[nc - 1] = J
        loglik[nc - 1] = 0.5 * (dim - 1) * (modes * math.log(J / (2 * math.pi)) + logdet) - 0.5 * J * quad
    best = int(np.argmax(loglik))
    return MaxentEstimate(
        coupling=float(couplings[best]),
        neighbors=best + 1,
        frames=len(frames),
        birds=float(np.mean([len(p) for p, _ in frames])),
        log_likelihood=loglik,
    )


def sample_maxent_flock(
    position: np.ndarray, coupling: float, nc: int, rng: np.random.Generator, heading: np.ndarray | None = None
) -> np.ndarray:
    """Unit headings (n, dim) drawn from the spin-wave maxent distribution of coupling J and ``nc``
    neighbours at ``position`` (open space): deviations pi ~ Normal(0, (J L)^+) per perpendicular
    component, headings normalised from mean + pi. A synthetic flock of known coupling."""
    n, dim = position.shape
    lap = topological_laplacian(position, nc)
    lam, vec = np.linalg.eigh(lap)
    mean = np.zeros(dim) if heading is None else np.asarray(heading, dtype=np.float64)
    if heading is None:
        mean[0] = 1.0
    mean /= np.linalg.norm(mean)
    basis = np.linalg.svd(np.eye(dim) - np.outer(mean, mean))[0][:, : dim - 1]
    z = rng.standard_normal((n, dim - 1))
    scale = np.zeros(n)
    scale[1:] = 1.0 / np.sqrt(coupling * lam[1:])
    pi = vec @ (scale[:, None] * (vec.T @ z))
    s = mean[None, :] + pi @ basis.T
    return s / np.linalg.norm(s, axis=1, keepdims=True)


def maxent_rows(ds, frames: np.ndarray) -> list[tuple[str, str, str]]:
    """``flocksim analyze --maxent``: (label, value, what) rows of the estimate over ``frames`` of an
    :func:`flocksim.io.open_tracks` dataset (its birds present in each frame, its periodic box)."""
    position, velocity, present = ds["position"].values, ds["velocity"].values, ds["present"].values
    box = np.asarray(ds.attrs["box"]) if ds.attrs["box"] else None
    estimate = maxent_alignment(
        [position[t][present[t]] for t in frames], [velocity[t][present[t]] for t in frames], box=box
    )
    used = f"{estimate.frames} frames with P >= {MIN_POLARIZATION}, {estimate.birds:.0f} birds"
    return [
        ("maxent coupling J", f"{estimate.coupling:.4g}", f"Bialek et al. 2012, spin-wave; {used}"),
        ("maxent neighbours n_c", f"{estimate.neighbors}", f"most likely of 1..{len(estimate.log_likelihood)}"),
    ]
