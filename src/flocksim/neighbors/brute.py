"""Brute-force neighbour search: O(N^2), the reference every fast path is tested against."""

from __future__ import annotations

import numba
import numpy as np

from flocksim.budgets import PairBudget
from flocksim.neighbors.csr import UNLIMITED, NeighborList, starts_from_counts
from flocksim.neighbors.pairs import knn_insert_keyed, pair_distance2
from flocksim.space import Space


@numba.njit(parallel=True, cache=True)
def _metric_pass(position, alive, query, dim, space, radius2, start, index, write):
    n = position.shape[0]
    for i in numba.prange(n):
        if not (alive[i] and query[i]):
            if not write:
                start[i] = 0
            continue
        count = 0
        out = start[i] if write else 0
        for j in range(n):
            if j == i or not alive[j]:
                continue
            if pair_distance2(position, i, j, dim, space) <= radius2:
                if write:
                    index[out + count] = j
                count += 1
        if not write:
            start[i] = count


def metric_counts_brute(
    position: np.ndarray, alive: np.ndarray, space: Space, radius: float, query: np.ndarray | None = None
) -> np.ndarray:
    """Row lengths (N,) of :func:`metric_neighbors_brute` (nothing else is allocated)."""
    n, dim = position.shape
    counts = np.zeros(n, dtype=np.int64)
    query = alive if query is None else query
    _metric_pass(position, alive, query, dim, space, radius * radius, counts, np.zeros(0, dtype=np.int64), False)
    return counts


def metric_neighbors_brute(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    radius: float,
    budget: PairBudget = UNLIMITED,
    query: np.ndarray | None = None,
) -> NeighborList:
    """All alive agents within ``radius`` (inclusive) of each alive agent; BudgetError before the
    list is allocated when it would hold more pairs than ``budget``. ``query`` (N,) bool: only
    the rows of the alive agents it marks are searched, the others are empty (None: all)."""
    dim = position.shape[1]
    query = alive if query is None else query
    start = starts_from_counts(metric_counts_brute(position, alive, space, radius, query))
    budget.check_metric(int(start[-1]), int(np.count_nonzero(alive)), radius)
    index = np.empty(start[-1], dtype=np.int64)
    _metric_pass(position, alive, query, dim, space, radius * radius, start, index, True)
    return NeighborList(start, index)


@numba.njit(parallel=True, cache=True)
def _knn_brute(position, alive, query, dim, space, k, row_index, row_d2, fill):
    n = position.shape[0]
    for i in numba.prange(n):
        m = 0
        if alive[i] and query[i]:
            for j in range(n):
                if j != i and alive[j]:
                    d2 = pair_distance2(position, i, j, dim, space)
                    m = knn_insert_keyed(row_index, row_index, row_d2, i, m, k, j, j, d2)
        fill[i] = m


def compact_rows(row_index: np.ndarray, fill: np.ndarray) -> NeighborList:
    """CSR list from a (N, k) buffer whose row i holds fill[i] entries."""
    start = starts_from_counts(fill)
    k = row_index.shape[1]
    if start[-1] == row_index.size:  # every row full (the usual case): the buffer is the list
        return NeighborList(start, row_index.reshape(-1).astype(np.int64, copy=False))
    mask = np.arange(k)[None, :] < fill[:, None]
    return NeighborList(start, row_index[mask].astype(np.int64, copy=False))


def knn_buffers(n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros((n, k), dtype=np.int64), np.zeros((n, k), dtype=np.float64), np.zeros(n, dtype=np.int64)


def knn_neighbors_brute(
    position: np.ndarray,
    alive: np.ndarray,
    space: Space,
    k: int,
    budget: PairBudget = UNLIMITED,
    query: np.ndarray | None = None,
) -> NeighborList:
    """The k nearest alive agents of each alive agent, nearest first, ties by lower id;
    BudgetError before the N x k rows are allocated when they are over ``budget``. ``query``:
    as for :func:`metric_neighbors_brute`."""
    n, dim = position.shape
    budget.check_topological(n, k)
    row_index, row_d2, fill = knn_buffers(n, k)
    _knn_brute(position, alive, alive if query is None else query, dim, space, k, row_index, row_d2, fill)
    return compact_rows(row_index, fill)
