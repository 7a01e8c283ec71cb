"""Rotations of three-component vectors (no allocation).

A rotation is given as a rotation vector r: angle |r| [rad] about the axis
r/|r|, counterclockwise (right-handed) when looking down the axis. In 2D the
axis is +z or -z and a vector in the x-y plane stays in it (its z stays 0).
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device


@device
def rotate(vx, vy, vz, rx, ry, rz):
    """(vx, vy, vz) rotated by the rotation vector (rx, ry, rz) (Rodrigues' formula).

    A zero rotation vector returns the vector unchanged, bit for bit.
    """
    angle2 = rx * rx + ry * ry + rz * rz
    if angle2 == 0.0:
        return vx, vy, vz
    angle = math.sqrt(angle2)
    kx = rx / angle
    ky = ry / angle
    kz = rz / angle
    c = math.cos(angle)
    s = math.sin(angle)
    kv = kx * vx + ky * vy + kz * vz
    cx = ky * vz - kz * vy
    cy = kz * vx - kx * vz
    cz = kx * vy - ky * vx
    t = kv * (1.0 - c)
    return vx * c + cx * s + kx * t, vy * c + cy * s + ky * t, vz * c + cz * s + kz * t
