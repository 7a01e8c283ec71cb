"""Soft walls: an inward acceleration near the edge of the region (docs/design.md §3.8).

Inside the margin the push grows linearly from 0 at ``margin`` from the wall
to ``turn_strength`` at the wall, and keeps growing beyond it; with margin 0
it is ``turn_strength`` outside the region and 0 inside. Periodic and open
spaces have no walls.
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.space import BOX, ELLIPSOID


@device
def wall_ramp(depth, margin):
    """Push factor for a point ``depth`` units inside the wall-margin band (depth = margin - distance to wall)."""
    if margin > 0.0:
        return max(depth, 0.0) / margin
    return 1.0 if depth > 0.0 else 0.0


@device
def axis_push(x, length, margin):
    """Signed push along one box axis spanning [0, length)."""
    return wall_ramp(margin - x, margin) - wall_ramp(x - (length - margin), margin)


@device
def wall_push(px, py, pz, dim, space, margin, turn_strength):
    """Inward acceleration at (px, py, pz) [units/s^2]."""
    if space.kind == BOX:
        fx = axis_push(px, space.lx, margin)
        fy = axis_push(py, space.ly, margin)
        fz = axis_push(pz, space.lz, margin) if dim == 3 else 0.0
        return fx * turn_strength, fy * turn_strength, fz * turn_strength
    if space.kind == ELLIPSOID:
        gx = px / (space.lx * space.lx)
        gy = py / (space.ly * space.ly)
        gz = pz / (space.lz * space.lz) if dim == 3 else 0.0
        q2 = px * gx + py * gy + pz * gz  # (x/a)^2 + (y/b)^2 (+ (z/c)^2)
        if q2 == 0.0:
            return 0.0, 0.0, 0.0
        q = math.sqrt(q2)
        gnorm = math.sqrt(gx * gx + gy * gy + gz * gz)
        # first-order distance to the surface q = 1 along the gradient of q
        distance = (1.0 - q) * q / gnorm
        ramp = wall_ramp(margin - distance, margin)
        if ramp == 0.0:
            return 0.0, 0.0, 0.0
        s = -turn_strength * ramp / gnorm
        return gx * s, gy * s, gz * s
    return 0.0, 0.0, 0.0
