"""Separation: move away from close neighbours, harder when closer (docs/design.md §3.1).

Per-pair terms take the displacement (dx, dy, dz) from the agent to its
neighbour and its squared length d2; the rule sums them over neighbours
closer than the separation radius.
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device

SEPARATION_RAW = 0
"""Raw form: (p_i - p_j) / max(|p_i - p_j|^2, eps)."""
SEPARATION_MINION = 1
"""Minion form: (p_i - p_j)/|p_i - p_j| / |p_i - p_j|, skipping pairs closer than min_distance."""


@device
def separation_term(dx, dy, dz, d2, form, eps, min_distance):
    """One neighbour's separation contribution (points away from it)."""
    if form == SEPARATION_RAW:
        s = 1.0 / max(d2, eps)
        return -dx * s, -dy * s, -dz * s
    d = math.sqrt(d2)
    if d <= min_distance or d == 0.0:
        return 0.0, 0.0, 0.0
    s = 1.0 / (d * d)
    return -dx * s, -dy * s, -dz * s
