"""Per-pair helpers shared by every neighbour search."""

from __future__ import annotations

from flocksim.kernels.compile import device
from flocksim.kernels.vector import load
from flocksim.space import displacement


@device
def pair_distance2(position, i, j, dim, space):
    """Squared distance from agent i to agent j (minimum image in periodic space)."""
    px, py, pz = load(position, i, dim)
    qx, qy, qz = load(position, j, dim)
    dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
    return dx * dx + dy * dy + dz * dz


@device
def knn_insert(row_index, row_d2, i, m, k, j, d2):
    """Insert neighbour j at squared distance d2 into row i of a k-nearest buffer.

    Rows are kept sorted by (d2, j) ascending, so ties go to the lower id.
    ``m`` is the row's current fill; returns the new fill.
    """
    if m == k:
        last = k - 1
        if d2 > row_d2[i, last] or (d2 == row_d2[i, last] and j > row_index[i, last]):
            return m
        pos = last
    else:
        pos = m
        m += 1
    while pos > 0 and (row_d2[i, pos - 1] > d2 or (row_d2[i, pos - 1] == d2 and row_index[i, pos - 1] > j)):
        row_d2[i, pos] = row_d2[i, pos - 1]
        row_index[i, pos] = row_index[i, pos - 1]
        pos -= 1
    row_d2[i, pos] = d2
    row_index[i, pos] = j
    return m


@device
def sort_row(index, lo, hi):
    """Insertion sort of index[lo:hi] ascending (rows are short)."""
    for a in range(lo + 1, hi):
        v = index[a]
        b = a - 1
        while b >= lo and index[b] > v:
            index[b + 1] = index[b]
            b -= 1
        index[b + 1] = v
