"""Group states from polarization P and milling (angular momentum) M.

Thresholds of Tunstrom et al. 2013 (PLoS Comput. Biol. 9:e1002915): polarized when
P > 0.65 and M < 0.35; milling when M > 0.65 and P < 0.35; swarm when both are below
0.35; anything else is transitional. P and M as :func:`flocksim.metrics.polarization`
and :func:`flocksim.metrics.milling` (Couzin et al. 2002's p_group and m_group).
"""

from __future__ import annotations

import math

import numpy as np

from flocksim.metrics.order import milling, polarization

HIGH = 0.65
LOW = 0.35
STATES = ("swarm", "milling", "polarized", "transitional")


def classify(p: float, m: float, high: float = HIGH, low: float = LOW) -> str:
    """One of :data:`STATES` for polarization ``p`` and milling ``m`` (NaN in: transitional)."""
    if math.isnan(p) or math.isnan(m):
        return "transitional"
    if p > high and m < low:
        return "polarized"
    if m > high and p < low:
        return "milling"
    if p < low and m < low:
        return "swarm"
    return "transitional"


def group_state(position: np.ndarray, velocity: np.ndarray) -> tuple[str, float, float]:
    """(state, P, M) of a group of agents (open space: milling needs a centroid)."""
    p = polarization(velocity)
    m = milling(position, velocity)
    return classify(p, m), p, m
