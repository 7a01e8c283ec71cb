"""How much wing an observer sees of a banked bird: the darkness behind an agitation wave's band.

A starling seen against the sky is dark in proportion to the wing area it shows along the line
of sight. Its wings are taken as one flat surface whose normal is the bird's body axis b, the
direction of its lift in banked flight (:func:`flocksim.kernels.flight.banked_velocity`):
b = u cos(bank) + s sin(bank), with s = h x up the bird's side and u = s x h its level up, h the unit
heading (up = +y; a vertical heading takes s = +z, as the flight kernel does). Seen along the unit
direction d, the visible share of the wing area is |b . d| (1: the wings face the observer; 0:
edge on). The body's own thickness is left out.

Hemelrijk, van Zuidam & Hildenbrandt (2015, Behav. Ecol. Sociobiol. 69:755) explain the dark
bands of agitation waves this way: birds that bank show the observer more of their wings. Whether
a band reads darker or lighter depends on where the observer stands: from straight below, level
wings face the observer and a bank shows less of them; from the side at a low elevation, level
wings are nearly edge on and a bank shows more.
"""

from __future__ import annotations

import math

import numpy as np


def body_axes(velocity: np.ndarray, bank: np.ndarray) -> np.ndarray:
    """(N, 3) unit body axes b of 3D birds with velocity (N, 3) [units/s] and bank angle (N,) [rad]
    (positive: lift tilted toward the side h x up), in the flight kernel's frame (module docstring)."""
    v = np.asarray(velocity, dtype=np.float64)
    speed = np.sqrt(np.sum(v * v, axis=1))
    h = v / np.maximum(speed, 1e-300)[:, None]
    sx, sz = -h[:, 2], h[:, 0].copy()
    n = np.sqrt(sx * sx + sz * sz)
    level = n > 1e-9
    sx = np.where(level, sx / np.where(level, n, 1.0), 0.0)
    sz = np.where(level, sz / np.where(level, n, 1.0), 1.0)
    side = np.stack([sx, np.zeros_like(sx), sz], axis=1)
    up = np.stack([-sz * h[:, 1], sz * h[:, 0] - sx * h[:, 2], sx * h[:, 1]], axis=1)
    b = np.asarray(bank, dtype=np.float64)[:, None]
    return up * np.cos(b) + side * np.sin(b)


def visible_wing(velocity: np.ndarray, bank: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """(N,) share of each bird's wing area seen along the line of sight ``direction`` (3,), any
    length > 0: |b . d| of the module docstring, in [0, 1]."""
    d = np.asarray(direction, dtype=np.float64)
    norm = float(np.linalg.norm(d)) if d.shape == (3,) else 0.0
    if not norm > 0 or not math.isfinite(norm):
        raise ValueError(f"direction: needs a non-zero finite 3D vector, got {direction!r}")
    return np.abs(body_axes(velocity, bank) @ (d / norm))


def side_view(heading: np.ndarray, elevation_deg: float) -> np.ndarray:
    """The line of sight (3,) of an observer on the ground beside a flock with mean ``heading`` (3,),
    looking up at ``elevation_deg`` above the horizon across the flight direction (toward -side,
    side = heading x up: the observer stands on the flock's side); 90 degrees looks straight up."""
    h = np.asarray(heading, dtype=np.float64)
    side = np.array([-h[2], 0.0, h[0]])
    norm = float(np.linalg.norm(side))
    side = side / norm if norm > 1e-12 else np.array([0.0, 0.0, 1.0])
    e = math.radians(elevation_deg)
    return -side * math.cos(e) + np.array([0.0, 1.0, 0.0]) * math.sin(e)
