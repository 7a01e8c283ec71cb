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

L is sparse (about 2 n_c entries a row), so the quadratic form costs O(N n_c), and the sum of the
log non-zero eigenvalues is taken without eigenvalues: by the matrix-tree theorem their product is,
per connected component of m birds, m times the determinant of the component's Laplacian with one
row and column removed (positive definite), whose log is read off a sparse LU factorisation
(SuperLU, symmetric mode, no pivoting: a Cholesky in effect). A frame of 5000 birds takes
0.02-0.2 s per n_c instead of an eigendecomposition of a dense 5000 x 5000 matrix (tens of s).
Frames run on threads (SuperLU releases the GIL).

With many birds the n_c of largest likelihood is found by a golden-section search over 1..max_nc,
which assumes the likelihood has one peak in n_c (as in Bialek et al. 2012's Fig. 2); every n_c the
search tries is in :attr:`MaxentEstimate.log_likelihood`, the others are NaN. ``search="full"``
tries them all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu
from scipy.spatial import cKDTree

from flocksim._threading import usable_cpus

MAX_NC = 40
"""Largest neighbour count tried."""
MIN_POLARIZATION = 0.7
"""The spin-wave approximation needs an ordered flock: frames with lower polarization are left out."""
FULL_SEARCH_BIRDS = 1000
"""``search="auto"`` tries every n_c up to this many birds a frame, and searches above it."""
SEARCHES = ("auto", "full", "peak")
"""How the n_c of largest likelihood is found: every n_c (``full``), a golden-section search that
assumes one peak (``peak``), or ``full`` up to :data:`FULL_SEARCH_BIRDS` birds and ``peak`` above."""


class MaxentError(ValueError):
    """No frame fits the estimate: one line saying why and what is allowed."""


@dataclass(frozen=True)
class MaxentEstimate:
    """``coupling`` J (dimensionless), ``neighbors`` n_c, ``frames`` used, ``log_likelihood``
    per n_c (index n_c - 1; NaN where the search did not try it), ``birds`` (mean per frame used),
    ``search`` ("full" or "peak")."""

    coupling: float
    neighbors: int
    frames: int
    birds: float
    log_likelihood: np.ndarray
    search: str = "full"

    @property
    def tried(self) -> int:
        """How many n_c the search evaluated."""
        return int(np.sum(~np.isnan(self.log_likelihood)))


def neighbor_table(position: np.ndarray, k: int, box: np.ndarray | None = None) -> np.ndarray:
    """(n, k) rows of each bird's ``k`` nearest other birds, nearest first (minimum image in a
    periodic ``box`` of sides [units])."""
    p = np.asarray(position, dtype=np.float64)
    tree = cKDTree(np.mod(p, box), boxsize=box) if box is not None else cKDTree(p)
    _, idx = tree.query(np.mod(p, box) if box is not None else p, k=k + 1)
    return idx[:, 1:]


def sparse_laplacian(neighbors: np.ndarray, nc: int) -> sparse.csr_matrix:
    """(n, n) sparse Laplacian of the symmetrised matrix of each bird's first ``nc`` neighbours in
    the table ``neighbors`` (:func:`neighbor_table`)."""
    n = len(neighbors)
    rows = np.repeat(np.arange(n), nc)
    a = sparse.csr_matrix((np.full(n * nc, 0.5), (rows, neighbors[:, :nc].ravel())), shape=(n, n))
    a = a + a.T
    return (sparse.diags(np.asarray(a.sum(axis=1)).ravel()) - a).tocsr()


def topological_laplacian(position: np.ndarray, nc: int, box: np.ndarray | None = None) -> np.ndarray:
    """(n, n) dense Laplacian of the symmetrised matrix of each bird's ``nc`` nearest neighbours
    (minimum image in a periodic ``box`` of sides [units])."""
    return sparse_laplacian(neighbor_table(position, nc, box), nc).toarray()


def log_pseudo_determinant(lap: sparse.spmatrix) -> tuple[float, int]:
    """(sum of the logs of the non-zero eigenvalues, their count) of a graph Laplacian, by the
    matrix-tree theorem (module docstring): exact up to rounding, without eigenvalues."""
    lap = sparse.csr_matrix(lap)
    count, labels = connected_components(lap, directed=False)
    parts = [np.arange(lap.shape[0])] if count == 1 else [np.flatnonzero(labels == c) for c in range(count)]
    total, modes = 0.0, 0
    for members in parts:
        m = len(members)
        if m < 2:
            continue
        block = lap if count == 1 else lap[members][:, members]
        reduced = sparse.csc_matrix(block[1:, 1:])
        lu = splu(reduced, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        total += math.log(m) + float(np.sum(np.log(np.abs(lu.U.diagonal()))))
        modes += m - 1
    return total, modes


def deviations(velocity: np.ndarray) -> np.ndarray:
    """(n, dim-1) components of the unit headings perpendicular to their mean direction."""
    s = velocity / np.linalg.norm(velocity, axis=1, keepdims=True)
    mean = s.mean(axis=0)
    mean /= np.linalg.norm(mean)
    # an orthonormal basis of the plane (or line) perpendicular to the mean heading
    basis = np.linalg.svd(np.eye(len(mean)) - np.outer(mean, mean))[0][:, : len(mean) - 1]
    return s @ basis


def _ordered_frames(positions: list[np.ndarray], velocities: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
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
    return frames


def peak_of(f: Callable[[int], float], low: int, high: int) -> int:
    """The integer in [low, high] of largest ``f``, by a golden-section search that assumes ``f`` has
    one peak there (ties to the smaller); ``f`` is called about 2 + 1.44 log2(high - low) times
    (memoise it: points are reused)."""
    a, b = low, high
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    while b - a > 3:
        m1 = b - round(ratio * (b - a))
        m2 = a + round(ratio * (b - a))
        if m2 <= m1:
            m2 = m1 + 1
        if f(m1) >= f(m2):
            b = m2 - 1
        else:
            a = m1 + 1
    return max(range(a, b + 1), key=lambda x: (f(x), -x))


def maxent_alignment(
    positions: list[np.ndarray],
    velocities: list[np.ndarray],
    box: np.ndarray | None = None,
    max_nc: int = MAX_NC,
    search: str = "auto",
    threads: int | None = None,
) -> MaxentEstimate:
    """J and n_c of the module docstring from frames of (n, dim) positions [units] and velocities
    (any speed: only headings count). Frames with polarization below :data:`MIN_POLARIZATION` or
    fewer than max_nc + 2 birds are left out; MaxentError if none is left. ``search``: one of
    :data:`SEARCHES`; ``threads``: frames worked on at once (default: the usable CPUs)."""
    if search not in SEARCHES:
        raise MaxentError(f"--maxent search: {search!r}; allowed: {', '.join(SEARCHES)}")
    frames = _ordered_frames(positions, velocities)
    birds = min(len(p) for p, _ in frames)
    top = min(max_nc, birds - 2)
    if top < 1:
        raise MaxentError("--maxent: frames need at least 3 birds")
    dim = frames[0][0].shape[1]
    if search == "auto":
        search = "full" if birds <= FULL_SEARCH_BIRDS else "peak"
    tables = [neighbor_table(p, top, box) for p, _ in frames]
    pis = [deviations(v) for _, v in frames]
    loglik = np.full(top, np.nan)
    couplings = np.full(top, np.nan)
    workers = max(1, min(threads or int(usable_cpus()), len(frames)))

    def frame_terms(i: int, nc: int) -> tuple[float, float, int]:
        lap = sparse_laplacian(tables[i], nc)
        pi = pis[i]
        quad = float(np.sum(pi * (lap @ pi)))
        logdet, modes = log_pseudo_determinant(lap)
        return quad, logdet, modes

    with ThreadPoolExecutor(max_workers=workers) as pool:

        def likelihood(nc: int) -> float:
            if np.isnan(loglik[nc - 1]):
                terms = list(pool.map(lambda i: frame_terms(i, nc), range(len(frames))))
                quad = sum(t[0] for t in terms)
                logdet = sum(t[1] for t in terms)
                modes = sum(t[2] for t in terms)
                if quad <= 0:
                    loglik[nc - 1] = -np.inf
                else:
                    J = (dim - 1) * modes / quad
                    couplings[nc - 1] = J
                    loglik[nc - 1] = 0.5 * (dim - 1) * (modes * math.log(J / (2 * math.pi)) + logdet) - 0.5 * J * quad
            return float(loglik[nc - 1])

        if search == "full":
            for nc in range(1, top + 1):
                likelihood(nc)
            best = int(np.nanargmax(np.where(np.isnan(loglik), -np.inf, loglik))) + 1
        else:
            best = peak_of(likelihood, 1, top)
    return MaxentEstimate(
        coupling=float(couplings[best - 1]),
        neighbors=best,
        frames=len(frames),
        birds=float(np.mean([len(p) for p, _ in frames])),
        log_likelihood=loglik,
        search=search,
    )


def sample_maxent_flock(
    position: np.ndarray, coupling: float, nc: int, rng: np.random.Generator, heading: np.ndarray | None = None
) -> np.ndarray:
    """Unit headings (n, dim) drawn from the spin-wave maxent distribution of coupling J and ``nc``
    neighbours at ``position`` (open space): deviations pi ~ Normal(0, (J L)^+) per perpendicular
    component, headings normalised from mean + pi. A synthetic flock of known coupling."""
    n, dim = position.shape
    lam, vec = np.linalg.eigh(topological_laplacian(position, nc))
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
        ("maxent neighbours n_c", f"{estimate.neighbors}", _search_words(estimate)),
    ]


def _search_words(estimate: MaxentEstimate) -> str:
    top = len(estimate.log_likelihood)
    if estimate.search == "full":
        return f"most likely of 1..{top}"
    return f"most likely of 1..{top}, by a search that assumes one peak ({estimate.tried} tried)"
