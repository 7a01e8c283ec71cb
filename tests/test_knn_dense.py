"""The k-nearest grid search on dense, clustered 3D flocks (the starlings' case: crowded cells,
exact distance ties, repeated points): rows bitwise equal to the brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest

from flocksim.neighbors.brute import knn_neighbors_brute
from flocksim.neighbors.knn import knn_neighbors_grid
from flocksim.space import make_space


def flock(rng: np.random.Generator, n: int) -> np.ndarray:
    """A dense murmuration-like flock: tight Gaussian clumps in a wide sparse cloud, a lattice
    patch (exact distance ties) and repeated points (distance 0)."""
    centres = rng.uniform(-300, 300, size=(6, 3))
    clumps = centres[rng.integers(0, 6, n // 2)] + rng.normal(scale=4.0, size=(n // 2, 3))
    cloud = rng.uniform(-400, 400, size=(n // 4, 3))
    side = 8
    grid = np.stack(np.meshgrid(*[np.arange(side, dtype=np.float64)] * 3, indexing="ij"), -1).reshape(-1, 3)
    twins = clumps[: n // 20]
    pos = np.concatenate([clumps, cloud, grid * 0.5 + 50.0, twins])
    return pos[rng.permutation(len(pos))]


@pytest.mark.parametrize("kind", ["open", "periodic"])
def test_grid_search_equals_brute_force_on_dense_flocks(kind):
    rng = np.random.default_rng(11)
    pos = flock(rng, 6000)
    space = make_space(kind, [900.0, 900.0, 900.0])
    if kind == "periodic":
        pos = np.mod(pos, 900.0)
    alive = np.ones(len(pos), dtype=bool)
    alive[rng.choice(len(pos), 200, replace=False)] = False
    for k in (1, 7, 12):
        ref = knn_neighbors_brute(pos, alive, space, k)
        got = knn_neighbors_grid(pos, alive, space, k)
        np.testing.assert_array_equal(got.start, ref.start)
        np.testing.assert_array_equal(got.index, ref.index)
