"""The murmuration hallmarks' measures (flocksim.metrics.hallmarks) on flocks whose answers are
known by construction, and the experiments' wave-front helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.experiments import rotated
from flocksim.metrics.hallmarks import (
    border_birds,
    border_interior_nnd,
    flock_count,
    flock_proportions,
    linear_size,
    uniform_like,
)


def slab(rng: np.random.Generator, n: int = 4000) -> np.ndarray:
    """Uniform points in a 2 (y) x 10 (z) x 40 (x) box: thickness along gravity, length along x."""
    return rng.random((n, 3)) * np.array([40.0, 2.0, 10.0])


def test_proportions_of_a_horizontal_slab():
    p = slab(np.random.default_rng(1))
    v = np.tile([1.0, 0.0, 0.0], (len(p), 1))
    out = flock_proportions(p, v)
    # a uniform box of side a has variance a^2/12; the equivalent ellipsoid's axis is 2 sqrt(5 var)
    for name, side in (("thickness", 2.0), ("width", 10.0), ("length", 40.0)):
        assert out[name] == pytest.approx(2 * math.sqrt(5 * side**2 / 12), rel=0.03), name
    assert out["thickness_to_length"] == pytest.approx(2.0 / 40.0, rel=0.05)
    assert out["width_to_length"] == pytest.approx(10.0 / 40.0, rel=0.05)
    assert out["thickness_gravity_cos"] == pytest.approx(1.0, abs=1e-3)
    assert out["heading_length_cos"] == pytest.approx(1.0, abs=1e-3)
    assert out["heading_thickness_cos"] == pytest.approx(0.0, abs=1e-2)
    # flying along the width: the heading is across the length
    across = flock_proportions(p, np.tile([0.0, 0.0, 1.0], (len(p), 1)))
    assert across["heading_length_cos"] == pytest.approx(0.0, abs=1e-2)
    # stood on its edge (thickness along x): gravity lies in the sheet
    upright = flock_proportions(p[:, [1, 0, 2]], v)
    assert upright["thickness_gravity_cos"] == pytest.approx(0.0, abs=1e-2)
    assert math.isnan(flock_proportions(p[:3], v[:3])["thickness"])


def test_border_birds_are_the_hull_and_a_denser_border_reads_below_one():
    grid = np.stack(np.meshgrid(*[np.arange(5.0)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    border = border_birds(grid)
    corners = np.all((grid == 0) | (grid == 4), axis=1)
    assert border[corners].all() and border.sum() >= 8
    assert not border[np.all((grid > 0) & (grid < 4), axis=1)].any()
    assert border_interior_nnd(grid) == pytest.approx(1.0)
    # give every hull bird a twin 0.5 further out: the border packs tighter, the interior does not change
    outward = grid[border] - 2.0
    outward /= np.linalg.norm(outward, axis=1, keepdims=True)
    tight = np.concatenate([grid, grid[border] + 0.5 * outward])
    mask = np.concatenate([border, np.ones(border.sum(), dtype=bool)])
    assert border_interior_nnd(tight, mask) == pytest.approx(0.5)
    assert math.isnan(border_interior_nnd(grid, np.zeros(len(grid), dtype=bool)))


@pytest.mark.parametrize("dim", [2, 3])
def test_the_uniform_control_fills_the_flocks_ellipsoid_evenly(dim):
    rng = np.random.default_rng(4)
    # a tilted, offset ellipsoid of semi-axes 12, 4 (and 1 in 3D), filled uniformly by rejection
    semi = np.array([12.0, 4.0, 1.0][:dim])
    q = rng.uniform(-1.0, 1.0, (60000, dim))
    q = q[np.sum(q * q, axis=1) <= 1.0][:20000] * semi
    angle = 0.4
    turn = np.eye(dim)
    turn[:2, :2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
    flock = q @ turn.T + 5.0
    control = uniform_like(flock, np.random.default_rng(5))
    assert control.shape == flock.shape
    assert_close = np.testing.assert_allclose
    assert_close(control.mean(axis=0), flock.mean(axis=0), atol=0.1)
    assert_close(np.cov(control.T), np.cov(flock.T), rtol=0.05, atol=0.05)
    # every point inside the ellipsoid (within the 2 % its estimate from 20 000 points may be off),
    # and as many in its inner half (radius 1/2: 2^-dim of the volume) as a uniform fill puts there
    local = (control - 5.0) @ turn / semi
    radius = np.sqrt(np.sum(local * local, axis=1))
    assert radius.max() <= 1.02
    assert np.mean(radius <= 0.5) == pytest.approx(0.5**dim, abs=0.01)
    # the hull's points of a uniform cloud lie farther from their nearest neighbour than the
    # inside ones: the control's border ratio is above 1
    assert border_interior_nnd(control[:2000]) > 1.05


def test_flock_count_chains_neighbours_and_splits_at_gaps():
    line = np.zeros((20, 3))
    line[:, 0] = np.arange(20.0)  # birds 1 apart
    assert flock_count(line, 1.5) == 1  # one chain, however long
    split = line.copy()
    split[10:, 0] += 10.0
    assert flock_count(split, 1.5) == 2
    assert flock_count(split, 20.0) == 1
    assert flock_count(np.zeros((0, 3)), 1.0) == 0


def test_linear_size_is_the_largest_pair_distance():
    rng = np.random.default_rng(2)
    p = rng.normal(size=(300, 3))
    d = np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1)).max()
    assert linear_size(p) == pytest.approx(d)
    flat = p.copy()
    flat[:, 1] = 0.0  # no 3D hull: every pair, in chunks
    d = np.sqrt(((flat[:, None] - flat[None]) ** 2).sum(-1)).max()
    assert linear_size(flat) == pytest.approx(d)
    assert linear_size(p[:1]) == 0.0


def test_rotated_turns_rows_about_an_axis():
    v = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    out = rotated(v, np.array([0.0, 1.0, 0.0]), math.pi / 2)  # about +y: x -> -z, z -> x
    assert out == pytest.approx(np.array([[0.0, 0.0, -1.0], [2.0, 0.0, 0.0]]))
    planar = rotated(np.array([[1.0, 0.0]]), np.array([0.0, 0.0, 1.0]), math.radians(0.001))
    assert math.degrees(math.atan2(planar[0, 1], planar[0, 0])) == pytest.approx(0.001)
