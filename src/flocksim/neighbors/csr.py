"""Neighbour lists in compressed sparse row form (freud's shape).

Row ``i`` holds the neighbours of agent ``i`` in ``index[start[i]:start[i+1]]``.
Metric rows are sorted by neighbour index; topological rows by (distance, id),
nearest first. An agent is never its own neighbour; dead agents have empty
rows and appear in no row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flocksim.budgets import PairBudget

UNLIMITED = PairBudget(max_pairs=2**62)
"""The budget of searches called without one (tests, metrics of a given list of points)."""


@dataclass(frozen=True)
class NeighborList:
    start: np.ndarray  # (N + 1,) int64
    index: np.ndarray  # (M,) int64

    @property
    def counts(self) -> np.ndarray:
        """Neighbours per agent, shape (N,)."""
        return np.diff(self.start)

    def row(self, i: int) -> np.ndarray:
        return self.index[self.start[i] : self.start[i + 1]]

    def as_sets(self) -> list[set[int]]:
        return [set(self.row(i).tolist()) for i in range(len(self.start) - 1)]

    @staticmethod
    def empty(n: int) -> NeighborList:
        return NeighborList(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))


def starts_from_counts(counts: np.ndarray) -> np.ndarray:
    start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    return start
