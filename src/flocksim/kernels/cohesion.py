"""Cohesion: steer toward the neighbours' mean position (docs/design.md §3.3).

Works on summed displacements (p_j - p_i, minimum image in periodic space),
so mean(p_j) - p_i is well defined across a periodic edge.
"""

from __future__ import annotations

from flocksim.kernels.compile import device


@device
def cohesion_offset(sum_dx, sum_dy, sum_dz, count):
    """mean(p_j) - p_i from the summed displacements; zero with no neighbour.

    It is both the raw force (``clamped-sum``) and the desired direction for steering.
    """
    if count == 0:
        return 0.0, 0.0, 0.0
    inv = 1.0 / count
    return sum_dx * inv, sum_dy * inv, sum_dz * inv
