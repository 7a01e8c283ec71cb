"""Directions on the circle and the sphere (no allocation): tilting a unit vector, random
directions from pre-drawn numbers. Used by the noise of the research models."""

from __future__ import annotations

import math

from flocksim.kernels.compile import device


@device
def perpendicular_basis(mx, my, mz):
    """Two unit vectors e1, e2 with (m, e1, e2) right-handed and orthonormal, for a unit vector m.

    e1 = normalize(m x helper) with helper = +z unless m is within ~25 degrees of the z axis
    (then +x); e2 = m x e1. A deterministic choice: the same m always gives the same basis.
    """
    if abs(mz) < 0.9:
        ax, ay, az = my, -mx, 0.0  # m x (0, 0, 1)
    else:
        ax, ay, az = 0.0, mz, -my  # m x (1, 0, 0)
    n = math.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / n, ay / n, az / n
    return ax, ay, az, my * az - mz * ay, mz * ax - mx * az, mx * ay - my * ax


@device
def tilt(mx, my, mz, theta, phi):
    """The unit vector at angle ``theta`` [rad] from the unit vector m, at azimuth ``phi`` [rad]
    about m (measured from e1 of :func:`perpendicular_basis`): cos(theta) m + sin(theta)
    (cos(phi) e1 + sin(phi) e2)."""
    e1x, e1y, e1z, e2x, e2y, e2z = perpendicular_basis(mx, my, mz)
    c = math.cos(theta)
    s = math.sin(theta)
    cp = math.cos(phi)
    sp = math.sin(phi)
    return (
        c * mx + s * (cp * e1x + sp * e2x),
        c * my + s * (cp * e1y + sp * e2y),
        c * mz + s * (cp * e1z + sp * e2z),
    )


@device
def rotate_in_plane(x, y, angle):
    """(x, y) rotated counterclockwise by ``angle`` [rad]."""
    c = math.cos(angle)
    s = math.sin(angle)
    return c * x - s * y, s * x + c * y
