"""The k-nearest grid search on dense, clustered 3D flocks (the starlings' case: crowded cells,
exact distance ties, repeated points): rows bitwise equal to the brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest

from flocksim.neighbors.brute import knn_neighbors_brute
from flocksim.neighbors.search import knn_neighbors_grid
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


def assert_grid_equals_brute(pos: np.ndarray, alive: np.ndarray, space, ks: tuple[int, ...]) -> None:
    """The grid search's rows are bitwise the brute-force reference's, for each k."""
    for k in ks:
        ref = knn_neighbors_brute(pos, alive, space, k)
        got = knn_neighbors_grid(pos, alive, space, k)
        np.testing.assert_array_equal(got.start, ref.start)
        np.testing.assert_array_equal(got.index, ref.index)


@pytest.mark.parametrize("kind", ["open", "periodic"])
def test_grid_search_equals_brute_force_on_dense_flocks(kind):
    rng = np.random.default_rng(11)
    pos = flock(rng, 6000)
    space = make_space(kind, [900.0, 900.0, 900.0])
    if kind == "periodic":
        pos = np.mod(pos, 900.0)
    alive = np.ones(len(pos), dtype=bool)
    alive[rng.choice(len(pos), 200, replace=False)] = False
    assert_grid_equals_brute(pos, alive, space, (1, 7, 12))


def block_paths_flock(rng: np.random.Generator, dim: int, side: float) -> np.ndarray:
    """Points that take every path of the cell-by-cell search: a sparse uniform cloud (outliers whose
    k-th neighbour lies beyond their cell's block: the ring search), a lattice patch (exact ties), 40
    birds on one point (more shortlisted candidates than are ranked: insertion), and 2600 birds in a
    ball of radius 0.05 (a block too full to gather: the ring search for the whole cell)."""
    cloud = rng.uniform(0.0, side, size=(400, dim))
    lattice = np.stack(np.meshgrid(*[np.arange(6, dtype=np.float64)] * dim, indexing="ij"), -1).reshape(-1, dim)
    point = np.full((40, dim), 0.3 * side)
    ball = 0.7 * side + rng.normal(scale=0.05, size=(2600, dim))
    pos = np.concatenate([cloud, lattice * 0.25 + 0.5 * side, point, ball])
    return pos[rng.permutation(len(pos))]


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind", ["open", "periodic"])
def test_cell_by_cell_search_paths_equal_brute_force(kind, dim):
    rng = np.random.default_rng(5)
    side = 40.0
    pos = block_paths_flock(rng, dim, side)
    space = make_space(kind, [side] * dim)
    if kind == "periodic":
        pos = np.mod(pos, side)
    alive = np.ones(len(pos), dtype=bool)
    alive[rng.choice(len(pos), 50, replace=False)] = False
    assert_grid_equals_brute(pos, alive, space, (1, 7, 30))
