"""How a flock's shape changes over time (Hemelrijk & Hildenbrandt 2011, PLoS ONE 6:e22479).

Per sample, the flock's thickness <= width <= length [units]: the full axes of the uniform
ellipsoid with the same position covariance as the birds alive
(:func:`flocksim.metrics.ellipsoid_axes`, as :func:`flocksim.metrics.hallmarks.flock_proportions`;
Ballerini et al. 2008, Animal Behaviour 76:201 measure the same three axes). The variability of
each over the samples is its coefficient of variation, CV = sd / mean (population sd, ddof 0;
dimensionless): the measure of shape variability that Hemelrijk & Hildenbrandt 2011 compare across
flock sizes, numbers of interaction partners, turning and banking. The ratios thickness / length
and width / length get the same CV. ``where`` restricts the statistics to some samples (e.g. those
in a turn, :func:`flocksim.metrics.turns.collective_turns`) to compare shape variability through
turns with that in straight flight.
"""

from __future__ import annotations

import math

import numpy as np

from flocksim.metrics.samples import as_alive, as_samples
from flocksim.metrics.shape import ellipsoid_axes

AXES = ("thickness", "width", "length")
RATIOS = ("thickness_to_length", "width_to_length")


def shape_series(position: np.ndarray, alive: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per sample (T,): ``thickness``, ``width``, ``length`` [units] (2D: ``width`` and ``length``
    only) and their ratios to the length; NaN where fewer than dim + 1 birds are alive.
    ``position`` (T, N, dim), ``alive`` (T, N) (None: all)."""
    p = as_samples("position", position)
    live = as_alive(alive, p.shape[:2])
    dim = p.shape[2]
    names = AXES[3 - dim :]
    axes = np.full((len(p), dim), np.nan)
    for t in range(len(p)):
        axes[t] = ellipsoid_axes(p[t][live[t]])
    out = {name: axes[:, k] for k, name in enumerate(names)}
    length = out["length"]
    with np.errstate(invalid="ignore", divide="ignore"):
        for name in names[:-1]:
            out[f"{name}_to_length"] = np.where(length > 0, out[name] / length, np.nan)
    return out


def coefficient_of_variation(values: np.ndarray) -> float:
    """sd / mean of the finite values (population sd); NaN for fewer than 2 or a zero mean."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) < 2 or v.mean() == 0:
        return math.nan
    return float(v.std() / abs(v.mean()))


def shape_variation(
    position: np.ndarray, alive: np.ndarray | None = None, where: np.ndarray | None = None
) -> dict[str, float]:
    """Over the samples (those with ``where`` True, (T,) bool; None: all): ``mean_NAME`` [units or
    ratio] and ``cv_NAME`` (dimensionless) for NAME each of :func:`shape_series`'s series, and
    ``samples``, the number of samples used."""
    series = shape_series(position, alive)
    count = len(next(iter(series.values())))
    chosen = np.ones(count, dtype=bool) if where is None else np.asarray(where, dtype=bool)
    if chosen.shape != (count,):
        raise ValueError(f"where: needs shape ({count},) (one flag per sample), got {chosen.shape}")
    out: dict[str, float] = {"samples": float(chosen.sum())}
    for name, values in series.items():
        v = values[chosen]
        finite = v[np.isfinite(v)]
        out[f"mean_{name}"] = float(finite.mean()) if len(finite) else math.nan
        out[f"cv_{name}"] = coefficient_of_variation(v)
    return out
