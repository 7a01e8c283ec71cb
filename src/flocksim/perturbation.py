"""Perturbations: turn the birds around a chosen bird, to watch the change spread (docs/design.md §5.4)."""

from __future__ import annotations

import math

import numpy as np

from flocksim.kernels.rotation import rotate
from flocksim.space import Space, displacement_array
from flocksim.state import FlockState

UP_3D = (0.0, 1.0, 0.0)
"""The vertical axis of 3D scenes (+y)."""


def perturbed_rows(
    state: FlockState, center_id: int, space: Space, radius: float | None = None, count: int | None = None
) -> np.ndarray:
    """Rows of the living birds around the bird with stable id ``center_id``, the bird included.

    ``radius``: those within this distance (<=); ``count``: the ``count`` nearest
    (the bird itself first, ties to the lower row). Exactly one of them must be given.
    """
    if (radius is None) == (count is None):
        raise ValueError("perturb_turn: give exactly one of radius or count")
    rows = np.flatnonzero(state.ids == center_id)
    if len(rows) == 0:
        raise ValueError(f"perturb_turn: no agent with id {center_id}")
    center = int(rows[0])
    if not state.alive[center]:
        raise ValueError(f"perturb_turn: agent {center_id} is not alive")
    alive = np.flatnonzero(state.alive)
    gap = displacement_array(state.position[center], state.position[alive], space)
    d2 = np.einsum("ij,ij->i", gap, gap)
    if radius is not None:
        if not (radius >= 0 and math.isfinite(radius)):
            raise ValueError(f"perturb_turn: radius must be >= 0 and finite, got {radius!r}")
        return alive[d2 <= radius * radius]
    if count < 1:
        raise ValueError(f"perturb_turn: count must be >= 1, got {count}")
    order = np.lexsort((alive, d2))  # by distance, then row; the centre (d = 0) comes first
    return alive[order[:count]]


def perturb_turn(
    state: FlockState,
    space: Space,
    center_id: int = 0,
    radius: float | None = None,
    count: int | None = None,
    angle_deg: float = 120.0,
) -> np.ndarray:
    """Rotate the velocities of the birds around bird ``center_id`` by ``angle_deg``, in place.

    Positive angles turn left (counterclockwise seen from above), negative right;
    2D: about +z (x-y plane with y up; on a screen with y down it looks
    clockwise); 3D: about the vertical axis +y, so the vertical component of
    each velocity is kept. Speeds are kept; spins are not touched. Returns the
    rows that were turned.
    """
    if not math.isfinite(angle_deg):
        raise ValueError(f"perturb_turn: angle_deg must be finite, got {angle_deg!r}")
    rows = perturbed_rows(state, center_id, space, radius, count)
    a = math.radians(angle_deg)
    axis = (0.0, 0.0, a) if state.dim == 2 else (UP_3D[0] * a, UP_3D[1] * a, UP_3D[2] * a)
    for r in rows:
        v = state.velocity[r]
        vz = v[2] if state.dim == 3 else 0.0
        x, y, z = rotate(float(v[0]), float(v[1]), float(vz), *axis)
        state.velocity[r, 0] = x
        state.velocity[r, 1] = y
        if state.dim == 3:
            state.velocity[r, 2] = z
    return rows
