"""Cell geometry of the k-nearest grid: in open space, an axis the flock spans thinly is one cell.

A flock in open sky often flies as a slab, a few metres thick and hundreds wide. On an axis the
alive agents span in fewer than two cell widths, a cell's 3x3(x3) block already holds every cell of
the axis (the block reaches one cell either side), so making that axis one cell leaves every
agent's candidates as they were and halves the blocks to gather; the cells' width on the other
axes is then solved again for the same occupancy, as for a flock of the lower dimension (a slab is
searched like a 2D flock). Any geometry gives the same neighbours (the search is exact): only the
speed depends on it. Periodic space keeps cells that tile the box.
"""

from __future__ import annotations

import math

import numpy as np

from flocksim.neighbors.grid import CELL_SLACK, GridGeometry, geometry_from_bounds
from flocksim.neighbors.knn import agents_per_cell, knn_width_from_bounds
from flocksim.space import PERIODIC, Space

THIN_CELLS = 2.0
"""An open-space axis the alive agents span in less than this many cell widths is thin: one cell."""


def knn_axes(lo: np.ndarray, hi: np.ndarray, n_alive: int, space: Space, k: int) -> tuple[float, np.ndarray]:
    """Cell width (same units as the positions) of the k-nearest grid's axes that are not thin, and
    which axes are thin (bool, (dim,)), from the alive agents' per-axis bounds lo, hi and count.

    The width gives ``agents_per_cell(k)`` agents per cell at the agents' mean density, a thin axis's
    one cell spanning its whole extent. Thin axes are found again after each new width (a wider
    width can make another axis thin); at least one axis stays divided. None in periodic space or
    when an extent is not finite (the grid then refuses it, as for any search)."""
    dim = len(lo)
    width = knn_width_from_bounds(lo, hi, n_alive, space, k)
    thin = np.zeros(dim, dtype=bool)
    extent = hi - lo
    if space.kind == PERIODIC or not np.isfinite(extent).all() or not math.isfinite(width):
        return width, thin
    floor = 1e-12 + 1e-9 * float(extent.max(initial=0.0))
    for _ in range(dim):
        more = thin | (extent < THIN_CELLS * width)
        if more.all() or (more == thin).all():
            break
        thin = more
        wide = extent[~thin]
        width = float((np.prod(np.maximum(wide, floor)) * agents_per_cell(k) / max(n_alive, 1)) ** (1.0 / len(wide)))
    return width, thin


def knn_geometry(
    lo: np.ndarray, hi: np.ndarray, n_alive: int, space: Space, width: float, thin: np.ndarray
) -> GridGeometry:
    """Grid geometry with cells ``width`` wide (at least) on the axes not ``thin`` and one cell on each
    thin axis (as wide as the agents' extent there, and no narrower than the other cells), at most
    max(64, 2 n_alive) cells as :func:`flocksim.neighbors.grid.geometry_from_bounds` allows."""
    if not thin.any():
        return geometry_from_bounds(lo, hi, n_alive, space, width)
    dim = len(lo)
    extent = np.maximum(hi - lo, 0.0)
    max_cells = max(64, 2 * n_alive)
    w = width * CELL_SLACK
    while True:  # as geometry_from_bounds: counts compared as floats, wider cells while too many
        with np.errstate(over="ignore"):
            counts = np.where(thin, 1.0, np.floor(extent / w) + 1.0)
        if math.prod(float(c) for c in counts) <= max_cells:
            break
        w *= 1.25
    widths = np.where(thin, np.maximum(extent * CELL_SLACK, w), w)
    o = [float(v) for v in lo] + [0.0] * (3 - dim)
    c = [float(v) for v in widths] + [1.0] * (3 - dim)
    n = [int(v) for v in counts] + [1] * (3 - dim)
    return GridGeometry(o[0], o[1], o[2], c[0], c[1], c[2], n[0], n[1], n[2], False)
