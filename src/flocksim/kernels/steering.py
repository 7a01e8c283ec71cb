"""The steering transform of SPEC 3.4 (Reynolds 1999; seeds 001, 002, 003)."""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.vector import limit

STEERING_REYNOLDS = 0
"""Each rule's force is limit(v_max * d/|d| - v, s_max); the weighted sum is not re-limited."""
STEERING_CLAMPED_SUM = 1
"""Raw rule forces are weighted and summed, then the sum is clamped to s_max (seed 000)."""


@device
def steer(dx, dy, dz, vx, vy, vz, max_speed, max_force):
    """limit(max_speed * d/|d| - v, max_force); zero when d is zero [units/s^2]."""
    n2 = dx * dx + dy * dy + dz * dz
    if n2 == 0.0:
        return 0.0, 0.0, 0.0
    s = max_speed / math.sqrt(n2)
    return limit(dx * s - vx, dy * s - vy, dz * s - vz, max_force)
