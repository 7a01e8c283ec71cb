"""The steering transform (Reynolds 1999; docs/design.md §3.4): a desired velocity becomes a limited force.

Reynolds writes the steering force of one update as desired velocity minus
velocity, truncated to the largest force. A velocity difference becomes an
acceleration by dividing it by the time over which the change is asked for:
``gain`` = 1 / rules.response_time [1/s]. Code written per second (game engines
that add ``steer * deltaTime``) has a response time of 1 s; code written per
displayed frame (v += steer once a frame) has a response time of one frame.
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.vector import limit

STEERING_REYNOLDS = 0
"""Each rule's force is limit(v_max * d/|d| - v, s_max); the weighted sum is not re-limited."""
STEERING_CLAMPED_SUM = 1
"""Raw rule forces are weighted and summed, then the sum is clamped to s_max."""


@device
def steer(dx, dy, dz, vx, vy, vz, max_speed, max_force, gain):
    """limit(gain (max_speed * d/|d| - v), max_force); zero when d is zero [units/s^2].

    ``gain`` = 1 / response time [1/s] turns the velocity difference into an acceleration.
    """
    n2 = dx * dx + dy * dy + dz * dz
    if n2 == 0.0:
        return 0.0, 0.0, 0.0
    s = max_speed / math.sqrt(n2)
    return limit((dx * s - vx) * gain, (dy * s - vy) * gain, (dz * s - vz) * gain, max_force)
