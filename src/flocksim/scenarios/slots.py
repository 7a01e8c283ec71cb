"""Attack slots and random offsets around a target (docs/design.md §3.6).

Offsets are 2D, in the ground plane (x, y in 2D worlds; x, z in 3D worlds): the
targets component adds them to a group's target every step, so slots move with it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linear_sum_assignment


def ring_offsets(count: int, radius: float, spacing: float) -> np.ndarray:
    """``count`` slot offsets (count, 2) on rings around the origin [units].

    Ring k has radius ``radius + k * spacing`` and holds floor(2 pi r_k / spacing) slots
    (at least 1; a ring of radius 0 is the centre itself). Rings fill inside out; the last
    one holds the remainder, spread evenly over the whole ring. Slots of one ring start at
    angle 0 (+x) and go counter-clockwise.
    """
    out = np.zeros((count, 2))
    placed = 0
    ring = 0
    while placed < count:
        r = radius + ring * spacing
        capacity = 1 if r == 0.0 else max(1, math.floor(2.0 * math.pi * r / spacing + 1e-9))
        take = min(capacity, count - placed)
        angle = 2.0 * math.pi * np.arange(take) / take
        out[placed : placed + take, 0] = r * np.cos(angle)
        out[placed : placed + take, 1] = r * np.sin(angle)
        placed += take
        ring += 1
    return out


def random_offsets(count: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """``count`` offsets (count, 2) uniform in the disc of ``radius`` [units]."""
    r = radius * np.sqrt(rng.random(count))
    angle = 2.0 * math.pi * rng.random(count)
    return np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)


def assign_slots(agents: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Slot index of every agent: one distinct slot each, smallest summed distance.

    ``agents`` (n, 2) and ``slots`` (m, 2) with m >= n, both absolute positions. Solved
    exactly with scipy's linear_sum_assignment (O(n^2 m) time; fine for groups of a few
    thousand agents).
    """
    n, m = len(agents), len(slots)
    if m < n:
        raise ValueError(f"assign_slots: {n} agents need at least as many slots, got {m}")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    gap = agents[:, None, :] - slots[None, :, :]
    cost = np.sqrt(np.einsum("ijk,ijk->ij", gap, gap))
    rows, cols = linear_sum_assignment(cost)
    out = np.empty(n, dtype=np.int64)
    out[rows] = cols
    return out
