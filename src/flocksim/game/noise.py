"""Seeded smooth value noise in 3D: random values on an integer lattice, blended with smoothstep.

``value_noise(points, seed, scale)`` is in [-1, 1], continuous with continuous first derivatives
across lattice cells, and depends only on the point, the seed and the scale (no state, no
allocation beyond the output's size), so any chunk of a course can be sampled in any order.
"""

from __future__ import annotations

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_PRIMES = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (uint64 arithmetic wraps)."""
    h = (h ^ (h >> np.uint64(30))) * _M1
    h = (h ^ (h >> np.uint64(27))) * _M2
    return h ^ (h >> np.uint64(31))


def lattice_values(ix: np.ndarray, iy: np.ndarray, iz: np.ndarray, seed: int) -> np.ndarray:
    """Value in [-1, 1) of the lattice points (ix, iy, iz) (int64 arrays) for ``seed``."""
    h = np.full(np.shape(ix), np.uint64(seed & 0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    for axis, prime in zip((ix, iy, iz), _PRIMES, strict=True):
        h = _mix(h ^ (axis.astype(np.int64).view(np.uint64) * prime))
    return (h >> np.uint64(11)).astype(np.float64) * (2.0 / 2.0**53) - 1.0


def _smooth(t: np.ndarray) -> np.ndarray:
    return t * t * (3.0 - 2.0 * t)


def value_noise(points: np.ndarray, seed: int, scale: float) -> np.ndarray:
    """Noise at ``points`` (..., 3) [units]; lattice spacing ``scale`` [units]; result in [-1, 1]."""
    p = np.asarray(points, dtype=np.float64) / scale
    base = np.floor(p)
    t = _smooth(p - base)
    i = base.astype(np.int64)
    out = np.zeros(p.shape[:-1])
    for dx in (0, 1):
        wx = t[..., 0] if dx else 1.0 - t[..., 0]
        for dy in (0, 1):
            wy = t[..., 1] if dy else 1.0 - t[..., 1]
            for dz in (0, 1):
                wz = t[..., 2] if dz else 1.0 - t[..., 2]
                out += wx * wy * wz * lattice_values(i[..., 0] + dx, i[..., 1] + dy, i[..., 2] + dz, seed)
    return out
