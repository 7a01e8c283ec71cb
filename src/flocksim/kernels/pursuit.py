"""A predator's pursuit (docs/starlings.md, Predators): nearest prey, aim, limited turn, move.

Only additions, multiplications, divisions and square roots (correctly rounded in IEEE 754
arithmetic), no BLAS, no SIMD reductions and no inverse trigonometric functions, so that a
chase, which is chaotic, follows the same path on every machine. The largest turn per step
enters as its cosine and sine, computed once by the caller.
"""

from __future__ import annotations

import math

import numba

from flocksim.kernels.rotation import turn_heading_toward
from flocksim.kernels.vector import load, norm, store
from flocksim.space import displacement, wrap


@numba.njit(cache=True, nogil=True)
def nearest_alive(px, py, pz, position, alive, dim, space):
    """Row of the living agent nearest to (px, py, pz) (the lowest row on a tie), or -1 when none lives."""
    best = math.inf
    row = -1
    for i in range(position.shape[0]):
        if alive[i]:
            qx, qy, qz = load(position, i, dim)
            dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
            d2 = dx * dx + dy * dy + dz * dz
            if d2 < best:
                best = d2
                row = i
    return row


@numba.njit(cache=True, nogil=True)
def pursue(pred_position, pred_velocity, rows, position, velocity, dim, space, speed, lead_max, cos_max, sin_max, dt):
    """One step of every predator, in place.

    A predator with a target row (rows[k] >= 0) aims at the target's predicted position
    p + v lead, lead = min(distance / speed, lead_max) [s], and turns its heading toward it
    by at most the angle of (cos_max, sin_max); every predator then flies ``speed`` x dt along its
    heading (wrapped in periodic space).
    """
    for k in range(pred_position.shape[0]):
        px, py, pz = load(pred_position, k, dim)
        vx, vy, vz = load(pred_velocity, k, dim)
        s = norm(vx, vy, vz)
        hx, hy, hz = vx / s, vy / s, vz / s
        row = rows[k]
        if row >= 0:
            qx, qy, qz = load(position, row, dim)
            gx, gy, gz = displacement(px, py, pz, qx, qy, qz, space)
            lead = min(norm(gx, gy, gz) / speed, lead_max)
            tx, ty, tz = load(velocity, row, dim)
            ax = gx + tx * lead
            ay = gy + ty * lead
            az = gz + tz * lead
            an = norm(ax, ay, az)
            if an > 0.0:
                hx, hy, hz = turn_heading_toward(hx, hy, hz, ax / an, ay / an, az / an, cos_max, sin_max, dim)
        vx, vy, vz = hx * speed, hy * speed, hz * speed
        store(pred_velocity, k, dim, vx, vy, vz)
        px, py, pz = wrap(px + vx * dt, py + vy * dt, pz + vz * dt, space)
        store(pred_position, k, dim, px, py, pz)


@numba.njit(cache=True, nogil=True)
def distance_to(pred_position, k, position, row, dim, space):
    """Distance from predator k to the agent in ``row`` (minimum image)."""
    px, py, pz = load(pred_position, k, dim)
    qx, qy, qz = load(position, row, dim)
    dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
    return norm(dx, dy, dz)
