"""Point-by-point comparison of flocksim's runs with an independent reference, several seeds each.

At every point (one noise value, one zone width...) the reference gives one time-averaged
number per seed; flocksim gives its own, from its own random streams. Under the hypothesis
that both implement the same model, the two seed means differ only by sampling noise, whose
standard error follows from the reference's seed-to-seed spread s (n_reference seeds):

    |mean_flocksim - mean_reference| <= t s sqrt(1 / n_reference + 1 / n_flocksim) + FLOOR

The ratio of the difference to s sqrt(...) follows Student's t with n_reference - 1 degrees
of freedom (s is itself estimated); t is its quantile such that a check of k points fails by
chance with probability FAMILY_RISK = 1 % (Bonferroni: two-sided 1 % / k per point, for
normally distributed seed means): with 12 reference seeds t = 3.50 for 2 points, 4.55 for 12
and 5.53 for 56; with 16 seeds 4.31 for 16 points; with 48 seeds 2.68 for 1 point. A model
whose mean moves by more than the tolerance fails. FLOOR (1e-4) keeps a point whose seeds agree
to every printed digit from failing on rounding alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import t as student_t

from flocksim.validate.checks import Measurement

FAMILY_RISK = 0.01
FLOOR = 1e-4


def allowed_errors(points: int, n_reference: int) -> float:
    """Standard errors allowed per point when a check compares ``points`` points with a reference of
    ``n_reference`` seeds (see the module text)."""
    return float(student_t.ppf(1.0 - FAMILY_RISK / (2 * points), n_reference - 1))


def seed_spread(values: Sequence[float]) -> float:
    """Sample standard deviation over seeds (ddof = 1); 0 for a single seed."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def tolerance(reference: Sequence[float], n_flocksim: int, points: int) -> float:
    """Allowed |difference of means| at one of ``points`` points (see the module text)."""
    spread = seed_spread(reference) * math.sqrt(1.0 / len(reference) + 1.0 / n_flocksim)
    return allowed_errors(points, len(reference)) * spread + FLOOR


def against_reference(
    name: str, measured: Sequence[float], reference: Sequence[float], points: int, what: str
) -> Measurement:
    """flocksim's seed mean at one of ``points`` points, held to the reference's seed mean +- :func:`tolerance`."""
    ref_mean = float(np.mean(reference))
    tol = tolerance(reference, len(measured), points)
    return Measurement(
        name,
        float(np.mean(measured)),
        ref_mean - tol,
        ref_mean + tol,
        f"{ref_mean:.4f} +- {tol:.2g} ({what}: mean of {len(reference)} seeds, "
        f"s = {seed_spread(reference):.2g}; {allowed_errors(points, len(reference)):.2f} standard errors)",
    )
