"""Topological neighbours: the k nearest, found on the cell grid.

The agents of a cell are searched together first (``knn_rows_by_cell`` in coherent.py): the cell's
3x3(x3) block is gathered once and each agent keeps the k nearest of the candidates nearer than
anything outside the block. An agent whose block cannot prove its k nearest takes the ring search:
cells are searched in rings of growing Chebyshev distance r
from its own cell; after ring r every unvisited agent is at least r cell
widths away, so the search stops once the k-th distance is below that bound.
The result is exact and equals the brute-force reference: rows sorted by
(distance, id), ties to the lower id. Neighbourhoods are asymmetric (j may be
among i's k nearest without i being among j's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flocksim.kernels.compile import device
from flocksim.space import PERIODIC, Space


def agents_per_cell(k: int) -> float:
    """Target mean occupancy of the k-nearest grid: about k/2.2, so that at uniform
    density the k-th neighbour usually lies within the first ring of cells (27 or so
    candidates for k = 7) without making the rings needlessly crowded."""
    return max(2.0, k / 2.2)


@device
def offset_range(c, count, periodic):
    """Smallest and largest cell offset from cell c that reach distinct cells on one axis."""
    if periodic:
        return -((count - 1) // 2), count // 2
    return -c, count - 1 - c


@device
def wrap_offset(c, o, count):
    v = c + o
    if v < 0:
        v += count
    elif v >= count:
        v -= count
    return v


def knn_cell_width(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> float:
    """Cell width giving about ``agents_per_cell(k)`` agents per cell at uniform density."""
    from flocksim.neighbors.grid import alive_bounds

    dim = position.shape[1]
    lo = np.zeros(dim)
    hi = np.zeros(dim)
    n_alive = alive_bounds(position, alive, lo, hi)
    return knn_width_from_bounds(lo, hi, n_alive, space, k)


def knn_width_from_bounds(lo: np.ndarray, hi: np.ndarray, n_alive: int, space: Space, k: int) -> float:
    """:func:`knn_cell_width` from the alive agents' per-axis bounds and count."""
    dim = len(lo)
    n_alive = max(n_alive, 1)
    extent = np.array([space.lx, space.ly, space.lz])[:dim] if space.kind == PERIODIC else hi - lo
    extent = np.maximum(extent, 1e-12 + 1e-9 * float(extent.max(initial=0.0)))
    return float((np.prod(extent) * agents_per_cell(k) / n_alive) ** (1.0 / dim))


_MOVED = ("knn_neighbors_grid",)
"""Searches that moved to :mod:`flocksim.neighbors.search` (the package's chain: this module is below
the scans they run); their old names here still work, with a DeprecationWarning."""


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib
        import warnings

        warnings.warn(
            f"{__name__}.{name} moved to flocksim.neighbors.search (or use flocksim.neighbors.{name})",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("flocksim.neighbors.search"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
