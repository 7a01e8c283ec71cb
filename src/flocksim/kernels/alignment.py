"""Basic alignment: steer toward the neighbours' mean velocity (docs/design.md §3.2)."""

from __future__ import annotations

from flocksim.kernels.compile import device


@device
def alignment_raw(sum_x, sum_y, sum_z, count, vx, vy, vz, gain):
    """The clamped-sum force gain (mean(v_j) - v_i) from the neighbour velocity sum; zero with no neighbour.

    ``gain`` = 1 / response time [1/s].
    """
    if count == 0:
        return 0.0, 0.0, 0.0
    inv = 1.0 / count
    return (sum_x * inv - vx) * gain, (sum_y * inv - vy) * gain, (sum_z * inv - vz) * gain


@device
def alignment_direction(sum_x, sum_y, sum_z, count):
    """Desired direction mean(v_j) for the steering transform; zero with no neighbour."""
    if count == 0:
        return 0.0, 0.0, 0.0
    inv = 1.0 / count
    return sum_x * inv, sum_y * inv, sum_z * inv
