"""A coordinate's cell along one axis of a uniform grid, clamped to the grid: the binning that the
neighbour grid (:mod:`flocksim.neighbors.grid`) and the obstacle grid (:mod:`flocksim.kernels.obstacles`)
share."""

from __future__ import annotations

import math

from flocksim.kernels.compile import device


@device
def axis_cell(x, origin, width, count):
    c = int(math.floor((x - origin) / width))  # noqa: RUF046 (numba-cuda's floor returns a float)
    if c < 0:
        return 0
    if c >= count:
        return count - 1
    return c
