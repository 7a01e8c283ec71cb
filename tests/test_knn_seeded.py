"""The k-nearest grid search seeded with a bound from the thread's previous search
(neighbors/coherent.py: seed_bound, knn_search_within): hand-computed bounds, and rows bitwise
equal to the brute-force reference on dense, clustered 3D flocks with exact ties."""

from __future__ import annotations

import numpy as np
import pytest

from flocksim.neighbors.brute import knn_neighbors_brute
from flocksim.neighbors.coherent import seed_bound
from flocksim.neighbors.knn import knn_neighbors_grid
from flocksim.space import make_space


def line(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs = np.arange(n, dtype=np.float64)
    return xs, np.zeros(n), np.zeros(n)


def test_seed_bound_by_hand():
    xs, ys, zs = line(8)
    space = make_space("open", [100.0, 100.0, 100.0])
    rs = np.zeros((1, 8), dtype=np.int64)
    rs[0, :2] = [0, 2]  # the previous search: slot 1, its 2 nearest were slots 0 and 2
    # slot 2 (k = 2): candidates slot 1 (d^2 1) and slot 0 (d^2 4), itself left out: k of them -> 4
    assert seed_bound(2, 1, 2, xs, ys, zs, 3, space, 2, 0, rs) == 4.0
    # slot 5 (k = 2): slots 1, 0, 2 at d^2 16, 25, 9: k + 1 of them -> the 2nd smallest, 16
    assert seed_bound(5, 1, 2, xs, ys, zs, 3, space, 2, 0, rs) == 16.0
    # k = 3 for slot 2: only 2 candidates -> no bound
    assert seed_bound(2, 1, 2, xs, ys, zs, 3, space, 3, 0, rs) == np.inf
    assert seed_bound(2, -1, 0, xs, ys, zs, 3, space, 1, 0, rs) == np.inf  # no previous search


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
def test_seeded_grid_search_equals_brute_force(kind):
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
