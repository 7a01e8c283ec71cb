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
def knn_insert_keyed(row_slot, row_key, row_d2, tid, m, k, slot, key, d2):
    """Insert (d2, key) into row ``tid`` of a k-nearest buffer sorted by (d2, key), ties to the
    lower key; ``slot`` is stored beside it (``row_slot`` may be ``row_key`` when they are the
    same). ``m`` is the row's fill; returns the new fill."""
    if m == k:
        last = k - 1
        if d2 > row_d2[tid, last] or (d2 == row_d2[tid, last] and key > row_key[tid, last]):
            return m
        pos = last
    else:
        pos = m
        m += 1
    while pos > 0 and (row_d2[tid, pos - 1] > d2 or (row_d2[tid, pos - 1] == d2 and row_key[tid, pos - 1] > key)):
        row_d2[tid, pos] = row_d2[tid, pos - 1]
        row_key[tid, pos] = row_key[tid, pos - 1]
        row_slot[tid, pos] = row_slot[tid, pos - 1]
        pos -= 1
    row_d2[tid, pos] = d2
    row_key[tid, pos] = key
    row_slot[tid, pos] = slot
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
