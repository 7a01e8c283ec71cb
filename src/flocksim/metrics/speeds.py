"""Speed correlations of a flock (Cavagna et al. 2010, PNAS 107:11865; Bialek et al. 2014, PNAS 111:7212).

Each bird's speed fluctuation is its speed minus the flock's mean speed, phi_i = s_i - mean_k s_k
[units/s] (so sum_i phi_i = 0). The connected correlation function C_sp(r) is the mean of
phi_i phi_j over the pairs i != j at distance r, divided by mean_i phi_i^2, so that C_sp = 1 at r = 0
(:func:`flocksim.metrics.correlation_function` with ``kind="speed"``). Because the fluctuations sum to
zero, C_sp turns negative somewhere; its first zero crossing is the speed correlation length xi_sp
[units] (linear interpolation between bin centres). Cavagna et al. 2010 found xi_sp proportional to
the flock's linear size L (the largest distance between two birds, :func:`flocksim.metrics.hallmarks.
linear_size`): speed correlations are scale-free, so xi_sp / L is the number to compare across sizes.
Bialek et al. 2014 infer from the same data that speed is controlled socially (each bird relaxes
toward its neighbours' speeds) and report the relative speed fluctuation var(s) / mean(s)^2 about
0.005 (:func:`flocksim.metrics.speed_fluctuation`).

Each sample is O(N^2) in time (chunked pair sums), so the series takes a subset of samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from flocksim.metrics.correlation import Correlation, correlation_function, correlation_length
from flocksim.metrics.hallmarks import linear_size
from flocksim.metrics.samples import as_alive, as_samples
from flocksim.metrics.starlings import speed_fluctuation

BINS = 30
"""Equal distance bins from 0 to the largest pair distance (as ``flocksim analyze``)."""


@dataclass(frozen=True)
class SpeedCorrelation:
    """One sample's speed correlations: ``correlation`` C_sp(r) on its bins; ``xi`` the speed
    correlation length xi_sp [units] (NaN if C_sp never crosses zero); ``size`` L [units];
    ``xi_over_size`` xi_sp / L; ``relative_fluctuation`` var(s) / mean(s)^2; ``n`` birds."""

    correlation: Correlation
    xi: float
    size: float
    xi_over_size: float
    relative_fluctuation: float
    n: int


def speed_correlation(position: np.ndarray, velocity: np.ndarray, bins: int | np.ndarray = BINS) -> SpeedCorrelation:
    """Speed correlations of one flock: (N, dim) positions [units] and velocities [units/s] of the
    birds alive (module docstring). ``bins``: bin edges [units] or a number of equal bins up to the
    largest pair distance. ValueError for fewer than 2 birds."""
    p = np.asarray(position, dtype=np.float64)
    v = np.asarray(velocity, dtype=np.float64)
    if p.ndim != 2 or v.shape != p.shape:
        raise ValueError(f"position, velocity: need the same shape (birds, dim), got {p.shape} and {v.shape}")
    corr = correlation_function(p, v, "speed", bins=bins)
    xi = correlation_length(corr)
    size = linear_size(p)
    ratio = xi / size if size > 0 else math.nan
    return SpeedCorrelation(corr, xi, size, ratio, speed_fluctuation(v), len(p))


@dataclass(frozen=True)
class SpeedCorrelationSeries:
    """Speed correlations over chosen samples: ``samples`` their indices (K,); ``xi``, ``size``,
    ``xi_over_size``, ``relative_fluctuation``, ``n`` per chosen sample (K,) (NaN where a sample has
    fewer than 2 birds alive); ``mean``: name -> mean over the chosen samples (NaN ignored)."""

    samples: np.ndarray
    xi: np.ndarray
    size: np.ndarray
    xi_over_size: np.ndarray
    relative_fluctuation: np.ndarray
    n: np.ndarray
    mean: dict[str, float]


def speed_correlation_series(
    position: np.ndarray,
    velocity: np.ndarray,
    alive: np.ndarray | None = None,
    samples: np.ndarray | None = None,
    bins: int | np.ndarray = BINS,
) -> SpeedCorrelationSeries:
    """:func:`speed_correlation` on each chosen sample of a run: ``position``, ``velocity`` (T, N, dim),
    ``alive`` (T, N) (None: all), ``samples`` the sample indices to measure (None: every sample; each
    costs O(N^2))."""
    p = as_samples("position", position)
    v = as_samples("velocity", velocity)
    if v.shape != p.shape:
        raise ValueError(f"velocity: needs the shape of position {p.shape}, got {v.shape}")
    live = as_alive(alive, p.shape[:2])
    chosen = np.arange(len(p)) if samples is None else np.asarray(samples, dtype=np.int64).reshape(-1)
    if np.any((chosen < 0) | (chosen >= len(p))):
        raise ValueError(f"samples: indices must lie in [0, {len(p) - 1}]")
    names = ("xi", "size", "xi_over_size", "relative_fluctuation", "n")
    out = {name: np.full(len(chosen), np.nan) for name in names}
    for k, t in enumerate(chosen):
        mask = live[t]
        if mask.sum() < 2:
            out["n"][k] = float(mask.sum())
            continue
        one = speed_correlation(p[t][mask], v[t][mask], bins)
        for name in names:
            out[name][k] = float(getattr(one, name))
    mean = {name: _nanmean(out[name]) for name in names}
    return SpeedCorrelationSeries(chosen, *(out[name] for name in names), mean)


def _nanmean(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else math.nan
