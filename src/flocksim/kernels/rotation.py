"""Rotations of three-component vectors (no allocation).

A rotation is given as a rotation vector r: angle |r| [rad] about the axis
r/|r|, counterclockwise (right-handed) when looking down the axis. In 2D the
axis is +z or -z and a vector in the x-y plane stays in it (its z stays 0).
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.vector import norm


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


@device
def turn_heading_toward(hx, hy, hz, ux, uy, uz, cos_max, sin_max, dim):
    """Unit heading h turned toward the unit direction u by at most the angle a (cos_max = cos a, sin_max = sin a).

    Within the limit (h.u >= cos a) the result is u itself. Otherwise h turns by a in the
    plane of h and u; when u is exactly opposite to h the plane is the x-y plane in 2D and,
    in 3D, the plane of h and +z (+x when h is within about 26 degrees of the z axis).
    """
    c = hx * ux + hy * uy + hz * uz
    if c >= cos_max:
        return ux, uy, uz
    wx = ux - c * hx
    wy = uy - c * hy
    wz = uz - c * hz
    wn = norm(wx, wy, wz)
    if wn == 0.0:
        if dim == 2:
            wx, wy, wz = -hy, hx, 0.0
        else:
            gx, gy, gz = (0.0, 0.0, 1.0) if abs(hz) < 0.9 else (1.0, 0.0, 0.0)
            g = gx * hx + gy * hy + gz * hz
            wx, wy, wz = gx - g * hx, gy - g * hy, gz - g * hz
        wn = norm(wx, wy, wz)
    nx = cos_max * hx + sin_max * wx / wn
    ny = cos_max * hy + sin_max * wy / wn
    nz = cos_max * hz + sin_max * wz / wn
    n = norm(nx, ny, nz)
    return nx / n, ny / n, nz / n
