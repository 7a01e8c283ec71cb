"""Point-by-point comparison of flocksim's runs with an independent reference, several seeds each.

At every point (one noise value, one zone width...) the reference gives one time-averaged
number per seed; flocksim gives its own, from its own random streams. Under the hypothesis
that both implement the same model, the two seed means differ only by sampling noise, whose
standard error follows from the reference's seed-to-seed spread s:

    |mean_flocksim - mean_reference| <= Z s sqrt(1 / n_reference + 1 / n_flocksim) + FLOOR

Z = 3.5 standard errors: a point fails by chance with probability about 5e-4 for normally
distributed seed means (about 1 % over 12 points, 3 % over 56), while a model whose mean
moves by more than the tolerance fails. FLOOR (1e-4) keeps a point whose seeds agree to
every printed digit from failing on rounding alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from flocksim.validate.checks import Measurement

Z = 3.5
FLOOR = 1e-4


def seed_spread(values: Sequence[float]) -> float:
    """Sample standard deviation over seeds (ddof = 1); 0 for a single seed."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def tolerance(reference: Sequence[float], n_flocksim: int) -> float:
    """Allowed |difference of means| at one point (see the module text)."""
    return Z * seed_spread(reference) * math.sqrt(1.0 / len(reference) + 1.0 / n_flocksim) + FLOOR


def against_reference(name: str, measured: Sequence[float], reference: Sequence[float], what: str) -> Measurement:
    """flocksim's seed mean at one point, held to the reference's seed mean +- :func:`tolerance`."""
    ref_mean = float(np.mean(reference))
    tol = tolerance(reference, len(measured))
    return Measurement(
        name,
        float(np.mean(measured)),
        ref_mean - tol,
        ref_mean + tol,
        f"{ref_mean:.4f} +- {tol:.4f} ({what}: mean of {len(reference)} seeds, "
        f"s = {seed_spread(reference):.4f}; {Z:g} standard errors)",
    )
