"""The k-nearest grid on flocks that are thin on some axis in open space (a slab, a line, a flat
sheet): the thin axis is one cell (neighbors/knn_geometry.py), and rows stay bitwise the
brute-force reference's."""

from __future__ import annotations

import numpy as np
import pytest

from flocksim.neighbors.brute import knn_neighbors_brute
from flocksim.neighbors.coherent import build_knn_grid
from flocksim.neighbors.knn import agents_per_cell
from flocksim.neighbors.knn_geometry import knn_axes
from flocksim.neighbors.search import knn_neighbors_grid
from flocksim.space import make_space


def thin_flock(rng: np.random.Generator, dim: int, thick: tuple[float, ...]) -> np.ndarray:
    """Clumps and a sparse cloud 80 units wide with extent ``thick[a]`` on axis a (0: wide), a
    lattice patch (exact ties) and repeated points (distance 0)."""
    scale = np.array([t if t > 0 else 80.0 for t in thick[:dim]])
    centres = rng.uniform(0.0, 1.0, size=(5, dim)) * scale
    clumps = centres[rng.integers(0, 5, 1200)] + rng.normal(scale=1.5, size=(1200, dim)) * (scale / 80.0)
    cloud = rng.uniform(0.0, 1.0, size=(500, dim)) * scale
    lattice = np.stack(np.meshgrid(*[np.arange(5, dtype=np.float64)] * dim, indexing="ij"), -1).reshape(-1, dim)
    patch = 20.0 + lattice * 0.5 * np.where(np.array(thick[:dim]) > 0, 0.0, 1.0)
    pos = np.concatenate([clumps, cloud, patch, clumps[:40]])
    pos = np.clip(pos, 0.0, scale)  # the thin extents stay as asked
    return pos[rng.permutation(len(pos))]


CASES = {
    "slab 3D": (3, (0.0, 2.0, 0.0)),
    "sheet 3D (zero thickness)": (3, (0.0, 1e-300, 0.0)),
    "line 3D": (3, (0.0, 0.3, 0.3)),
    "strip 2D": (2, (0.0, 0.4)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_thin_flocks_search_equals_brute_force(case):
    dim, thick = CASES[case]
    rng = np.random.default_rng(3)
    pos = thin_flock(rng, dim, thick)
    if thick[1] < 1e-100:
        pos[:, 1] = 7.0
    space = make_space("open", [80.0] * dim)
    alive = np.ones(len(pos), dtype=bool)
    alive[rng.choice(len(pos), 60, replace=False)] = False
    g = build_knn_grid(pos, alive, space, 7).geometry
    counts = (g.nx, g.ny, g.nz)[:dim]
    thin_ok = counts[1] == 1 and (dim == 2 or thick[2] == 0.0 or counts[2] == 1)
    assert thin_ok and counts[0] > 3, f"{case}: a thin axis is not one cell: {g}"
    for k in (1, 7, 12):
        ref = knn_neighbors_brute(pos, alive, space, k)
        got = knn_neighbors_grid(pos, alive, space, k)
        np.testing.assert_array_equal(got.start, ref.start, err_msg=f"{case} k={k}")
        np.testing.assert_array_equal(got.index, ref.index, err_msg=f"{case} k={k}")


def test_thin_axes_and_width():
    space = make_space("open", [100.0, 100.0, 100.0])
    lo = np.zeros(3)
    # a slab 100 x 3 x 100 of 10 000 agents: y thin, the width solved over x and z
    width, thin = knn_axes(lo, np.array([100.0, 3.0, 100.0]), 10_000, space, 7)
    assert thin.tolist() == [False, True, False]
    assert width == pytest.approx((100.0 * 100.0 * agents_per_cell(7) / 10_000) ** 0.5)
    # a cube: no thin axis, the cubic width
    width, thin = knn_axes(lo, np.full(3, 100.0), 10_000, space, 7)
    assert not thin.any()
    assert width == pytest.approx((1e6 * agents_per_cell(7) / 10_000) ** (1 / 3))
    # periodic space keeps cells that tile the box
    _, thin = knn_axes(lo, np.array([100.0, 3.0, 100.0]), 10_000, make_space("periodic", [100.0] * 3), 7)
    assert not thin.any()
    # a few agents: every axis under two widths, one stays divided
    _, thin = knn_axes(lo, np.ones(3), 5, space, 7)
    assert not thin.all()
