"""Seek with arrival (Reynolds 1999; docs/design.md §3.6)."""

from __future__ import annotations

import math

from flocksim.kernels.compile import device


@device
def seek_velocity(dx, dy, dz, max_speed, arrival_radius, stop_radius):
    """Desired velocity toward a target at displacement (dx, dy, dz) [units/s].

    max_speed outside ``arrival_radius``; inside it the desired speed falls
    linearly to 0 at ``stop_radius``; inside ``stop_radius`` it is 0 (brake).
    ``arrival_radius`` 0 disables arrival.

    Returns (x, y, z, active): ``active`` is False when there is no desire at
    all (on the target with arrival off), which the steering transform turns
    into a zero force; a desired velocity of 0 with ``active`` True brakes. A target whose
    distance overflows to inf (a target at 1e308) is sought at max_speed along its direction
    (its displacement scaled by its largest component first), not braked toward.
    """
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist == math.inf:  # a target so far that its distance overflows (at 1e308): only its direction counts
        m = max(abs(dx), abs(dy), abs(dz))
        if m == math.inf:
            return 0.0, 0.0, 0.0, False
        ux, uy, uz = dx / m, dy / m, dz / m  # largest component +-1: a finite length
        s = max_speed / math.sqrt(ux * ux + uy * uy + uz * uz)
        return ux * s, uy * s, uz * s, True
    arriving = arrival_radius > 0.0 and dist < arrival_radius
    if arriving:
        if dist <= stop_radius:
            return 0.0, 0.0, 0.0, True
        speed = max_speed * (dist - stop_radius) / (arrival_radius - stop_radius)
    else:
        if dist == 0.0:
            return 0.0, 0.0, 0.0, False
        speed = max_speed
    s = speed / dist
    return dx * s, dy * s, dz * s, True
