"""Pre-drawn noise of the stochastic research models (vicsek, couzin).

Determinism: one seeded numpy Generator per run; kernels take
pre-drawn numbers, never draw inside a parallel loop, so a run is bitwise the
same whatever the thread count. The simulation's noise component
(:class:`flocksim.components.noise.PreDrawnNoise`) calls :meth:`NoiseBuffer.draw`
with the run's Generator before every step; the engine reads :attr:`NoiseBuffer.values`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

NOISE_COLUMNS = 2


class NoiseBuffer:
    """(N, 2) numbers per step. ``draw_row`` maps (rng, n) to a fresh (n, 2) array; ``neutral`` is
    the row that means "no noise", used by an engine stepped on its own (the simulation's
    warm-up compiles on a copy without the component) before any draw."""

    def __init__(self, draw_rows: Callable[[np.random.Generator, int], np.ndarray], neutral: tuple[float, float]):
        self._draw_rows = draw_rows
        self._neutral = neutral
        self.values = np.zeros((0, NOISE_COLUMNS))

    def draw(self, rng: np.random.Generator, n: int) -> None:
        self.values = np.ascontiguousarray(self._draw_rows(rng, n), dtype=np.float64)

    def for_agents(self, n: int) -> np.ndarray:
        """The drawn numbers for n agents (neutral rows when none were drawn for this n)."""
        if self.values.shape[0] != n:
            self.values = np.tile(np.asarray(self._neutral, dtype=np.float64), (n, 1))
        return self.values
