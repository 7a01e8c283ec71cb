"""Fleeing from predators (docs/design.md §5.2, docs/starlings.md).

An agent reacts to its nearest predator when it is closer than the detection
distance D: closeness c = 1 - d/D (1 at the predator, 0 at D). Its speed limit
becomes max_speed * (1 + (flee_speed - 1) c) and it steers away from the
predator with weight flee_weight * c; its rule weights are multiplied by the
panic multipliers (applied by the model's kernel).
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.steering import steer
from flocksim.space import displacement


@device
def nearest_predator(px, py, pz, predators, space):
    """(dx, dy, dz, d2) from the agent to its nearest predator; d2 = inf when there is none.

    ``predators`` is a (P, 3) array of positions (z = 0 in 2D); the lowest
    index wins a tie.
    """
    best = math.inf
    bx = by = bz = 0.0
    for q in range(predators.shape[0]):
        dx, dy, dz = displacement(px, py, pz, predators[q, 0], predators[q, 1], predators[q, 2], space)
        d2 = dx * dx + dy * dy + dz * dz
        if d2 < best:
            best = d2
            bx = dx
            by = dy
            bz = dz
    return bx, by, bz, best


@device
def closeness(d, detection):
    """1 - d/detection inside the detection distance (d < detection), else 0."""
    if d < detection:
        return 1.0 - d / detection
    return 0.0


@device
def flee_speed_limit(max_speed, flee_speed, c):
    """Speed limit of an agent at closeness c: max_speed * (1 + (flee_speed - 1) c) [units/s]."""
    return max_speed * (1.0 + (flee_speed - 1.0) * c)


@device
def flee_force(dx, dy, dz, vx, vy, vz, speed_limit, max_force, gain):
    """Steering away from a predator at displacement (dx, dy, dz): limit(gain (speed_limit * away - v), max_force).

    Zero when the predator sits exactly on the agent (no direction to flee in).
    """
    return steer(-dx, -dy, -dz, vx, vy, vz, speed_limit, max_force, gain)
