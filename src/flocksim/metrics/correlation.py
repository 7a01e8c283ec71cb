"""Connected velocity correlations (Cavagna et al. 2010, PNAS 107:11865).

For the living agents with unit headings h_i and speeds s_i, the fluctuations about
the group mean are u_i = h_i - mean(h) ("orientation") or phi_i = s_i - mean(s)
("speed"). Their sum over the group is zero by construction, hence the sum rule
sum_i sum_j u_i . u_j = 0. The connected correlation function is

    C(r) = sum_{i != j, r_ij in bin} u_i . u_j / (pairs in bin) / c0,   c0 = mean_i u_i . u_i

so C is 1 at r = 0 (the i = j term). When the bins hold every pair, the sum rule reads
sum_bins pairs(bin) c0 C(bin) = -N c0 (:func:`correlation_sum_rule` returns its relative
residual): C must go negative somewhere, so it has a zero. The correlation length is the
first zero crossing r0 of C(r) (linear interpolation between bin centres).
Distances use the minimum image when a periodic :class:`~flocksim.space.Space` is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from flocksim.metrics.order import unit_headings
from flocksim.space import Space, displacement_array

Kind = Literal["orientation", "speed"]
CHUNK = 512
"""Most rows of the pair computation done at once."""
CHUNK_BYTES = 32 * 2**20
"""Memory the rows done at once may take [bytes] (at least one row: N x :func:`pair_bytes`)."""


def pair_bytes(dim: int) -> int:
    """Memory one pair of the computation takes while its chunk is worked on [bytes]: offsets and
    their squares (dim float64 each), distance, dot product, bin index, masks."""
    return 16 * dim + 40


def chunk_rows(n: int, dim: int) -> int:
    """Rows done at once for ``n`` agents in ``dim`` dimensions: as many as fit :data:`CHUNK_BYTES`,
    at least 1 and at most :data:`CHUNK`."""
    return max(1, min(CHUNK, CHUNK_BYTES // max(n * pair_bytes(dim), 1)))


def fluctuations(velocity: np.ndarray, kind: Kind = "orientation") -> np.ndarray:
    """Per-agent fluctuation about the group mean: (N, dim) for orientation, (N, 1) for speed."""
    v = np.asarray(velocity, dtype=np.float64)
    if kind == "orientation":
        h = unit_headings(v)
        return h - h.mean(axis=0)
    if kind == "speed":
        s = np.linalg.norm(v, axis=1)
        return (s - s.mean())[:, None]
    raise ValueError(f"kind: unknown fluctuation {kind!r}; allowed: orientation, speed")


@dataclass(frozen=True)
class Correlation:
    """C(r) on bins: ``edges`` (B + 1,), ``centres`` (B,), ``c`` (B,) (NaN in empty bins),
    ``pairs`` (B,) ordered pairs i != j per bin, ``pair_sums`` (B,) unnormalised sums of
    u_i . u_j, ``c0`` = mean u_i . u_i, ``n`` agents."""

    edges: np.ndarray
    centres: np.ndarray
    c: np.ndarray
    pairs: np.ndarray
    pair_sums: np.ndarray
    c0: float
    n: int


def correlation_function(
    position: np.ndarray,
    velocity: np.ndarray,
    kind: Kind = "orientation",
    bins: int | np.ndarray = 30,
    space: Space | None = None,
) -> Correlation:
    """Connected correlation function C(r) of orientation or speed fluctuations.

    ``bins``: bin edges [units], or a number of equal bins from 0 to the largest pair
    distance (which then holds every pair). Pairs beyond the last edge are left out.
    O(N^2) in chunks of rows (:func:`chunk_rows`: about :data:`CHUNK_BYTES` at a time).
    """
    p = np.asarray(position, dtype=np.float64)
    u = fluctuations(velocity, kind)
    n = len(p)
    if n < 2:
        raise ValueError(f"correlation_function: needs at least 2 agents, got {n}")
    if np.isscalar(bins):
        edges = np.linspace(0.0, _largest_distance(p, space) * (1.0 + 1e-12), int(bins) + 1)
    else:
        edges = np.asarray(bins, dtype=np.float64)
    if edges.ndim != 1 or len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("bins: needs increasing edges (at least 2) or a positive number of bins")
    nb = len(edges) - 1
    pairs = np.zeros(nb, dtype=np.int64)
    sums = np.zeros(nb)
    rows = chunk_rows(n, p.shape[1])
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        d = np.linalg.norm(_offsets(p[lo:hi], p, space), axis=-1)
        dot = u[lo:hi] @ u.T
        keep = np.ones(d.shape, dtype=bool)
        keep[np.arange(hi - lo), np.arange(lo, hi)] = False  # i == j is the r = 0 term, kept out of the bins
        which = np.searchsorted(edges, d, side="right") - 1
        keep &= (which >= 0) & (which < nb) & (d <= edges[-1])
        pairs += np.bincount(which[keep], minlength=nb)
        sums += np.bincount(which[keep], weights=dot[keep], minlength=nb)
    c0 = float(np.mean(np.sum(u * u, axis=1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.where(pairs > 0, sums / np.maximum(pairs, 1) / c0 if c0 > 0 else np.nan, np.nan)
    return Correlation(edges, 0.5 * (edges[1:] + edges[:-1]), c, pairs, sums, c0, n)


def correlation_sum_rule(corr: Correlation) -> float:
    """(sum of every pair's u_i . u_j + sum of u_i . u_i) / (N c0): 0 up to rounding when the bins
    hold every pair (the fluctuations sum to zero); NaN when c0 = 0."""
    if corr.c0 == 0:
        return math.nan
    return float((corr.pair_sums.sum() + corr.n * corr.c0) / (corr.n * corr.c0))


def correlation_length(corr: Correlation) -> float:
    """First zero crossing r0 of C(r) [units], linearly interpolated between bin centres
    (empty bins skipped); NaN when C never crosses zero."""
    ok = np.isfinite(corr.c)
    r, c = corr.centres[ok], corr.c[ok]
    below = np.flatnonzero(c <= 0.0)
    if len(below) == 0:
        return math.nan
    k = int(below[0])
    if k == 0:
        return float(r[0])
    r1, r2, c1, c2 = r[k - 1], r[k], c[k - 1], c[k]
    return float(r1 + (r2 - r1) * c1 / (c1 - c2))


def _offsets(a: np.ndarray, b: np.ndarray, space: Space | None) -> np.ndarray:
    if space is None:
        return b[None, :, :] - a[:, None, :]
    return displacement_array(a[:, None, :], b[None, :, :], space)


def _largest_distance(p: np.ndarray, space: Space | None) -> float:
    largest = 0.0
    rows = chunk_rows(len(p), p.shape[1])
    for lo in range(0, len(p), rows):
        d = np.linalg.norm(_offsets(p[lo : lo + rows], p, space), axis=-1)
        largest = max(largest, float(d.max()))
    return largest if largest > 0 else 1.0
