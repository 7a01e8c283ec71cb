"""The murmuration analyses on hand-made flocks with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from flocksim.metrics import (
    catch_rate,
    edge_interior_deviation,
    flock_shape,
    fraction_below,
    heading_deviation,
    mean_heading,
    repetition_index,
    speed_fluctuation,
)


def headings(angles, speed=1.0):
    a = np.asarray(angles, dtype=float)
    return speed * np.c_[np.cos(a), np.sin(a)]


def test_heading_deviation_and_mean_heading():
    v = headings([0.3, -0.3, 0.0]) * [[2.0], [1.0], [5.0]]  # speeds do not matter
    assert_allclose(mean_heading(v), [1.0, 0.0], atol=1e-15)
    assert_allclose(heading_deviation(v), [0.3, 0.3, 0.0], rtol=1e-12, atol=1e-15)
    assert_allclose(mean_heading(np.array([[1.0, 0.0], [-1.0, 0.0]])), [0.0, 0.0], atol=0)


def test_edge_interior_deviation():
    # 20 birds: 18 within radius 1 of the origin heading +x, two at (+-100, 0) heading +-0.4 rad.
    # Symmetric, so the mean heading is +x: outer 10 % (2 birds) deviate 0.4, inner 50 % (10) 0.
    rng = np.random.default_rng(1)
    inner = rng.uniform(-0.5, 0.5, (18, 2))
    pos = np.vstack([inner, [[100.0, 0.0], [-100.0, 0.0]]])
    vel = np.vstack([headings(np.zeros(18)), headings([0.4, -0.4])])
    edge, interior = edge_interior_deviation(pos, vel)
    assert edge == pytest.approx(0.4, rel=1e-12)
    assert interior == pytest.approx(0.0, abs=1e-15)
    # swap: the outer birds aligned, some inner ones deviating -> the edge is calmer
    vel2 = vel.copy()
    order = np.argsort(np.linalg.norm(pos - pos.mean(axis=0), axis=1))
    vel2[order[:2]] = headings([0.2, -0.2])
    vel2[18:] = headings([0.0, 0.0])
    edge, interior = edge_interior_deviation(pos, vel2)
    assert edge == pytest.approx(0.0, abs=1e-15)
    assert interior == pytest.approx(0.4 / 10, rel=1e-12)
    assert all(math.isnan(x) for x in edge_interior_deviation(pos[:1], vel[:1]))


def test_flock_shape_axis_cos():
    rng = np.random.default_rng(2)
    n = 400
    # long along y (sd 30), thin along x (sd 5); heading +x: perpendicular to the longest axis
    pos = np.c_[rng.normal(0, 5, n), rng.normal(0, 30, n)]
    vel = headings(np.zeros(n))
    shape = flock_shape(pos, vel)
    assert shape["axis_cos"] < 0.05
    assert shape["length"] == pytest.approx(30, rel=0.1) and shape["width"] == pytest.approx(5, rel=0.1)
    assert shape["aspect"] == pytest.approx(shape["width"] / shape["length"])
    # heading along the long axis -> 1; at 45 degrees -> cos 45
    assert flock_shape(pos, headings(np.full(n, math.pi / 2)))["axis_cos"] > 0.99
    assert flock_shape(pos, headings(np.full(n, math.pi / 4)))["axis_cos"] == pytest.approx(math.sqrt(0.5), abs=0.02)
    # 3D: a slab wide along z, heading x
    pos3 = np.c_[rng.normal(0, 4, n), rng.normal(0, 8, n), rng.normal(0, 40, n)]
    shape3 = flock_shape(pos3, np.tile([1.0, 0.0, 0.0], (n, 1)))
    assert shape3["axis_cos"] < 0.05 and set(shape3) == {"axis_cos", "length", "width", "height", "aspect"}
    assert math.isnan(flock_shape(pos[:2], vel[:2])["axis_cos"])


def test_speed_fluctuation():
    # speeds 1 and 3: mean 2, variance 1 -> 1/4
    v = np.array([[1.0, 0.0], [0.0, 3.0]])
    assert speed_fluctuation(v) == pytest.approx(0.25)
    assert speed_fluctuation(np.tile([3.0, 4.0], (5, 1))) == 0.0
    assert math.isnan(speed_fluctuation(np.zeros((0, 2))))


def test_repetition_index():
    t = np.arange(400)
    # a flock bouncing back and forth along the same track, period 40 samples: repeats exactly
    bounce = np.c_[100 * np.sin(2 * np.pi * t / 40), 20 * np.cos(2 * np.pi * t / 40)]
    assert repetition_index(bounce) == pytest.approx(1.0, abs=1e-9)
    # a random walk does not come back
    rng = np.random.default_rng(3)
    walk = np.cumsum(rng.normal(size=(400, 2)), axis=0)
    assert repetition_index(walk) < 0.6
    # the same track, each lap disturbed: in between
    noisy = bounce + rng.normal(0, 40, bounce.shape)
    assert 0.3 < repetition_index(noisy) < 0.95
    assert math.isnan(repetition_index(bounce[:5]))


def test_fraction_below_and_catch_rate():
    assert fraction_below([0.5, 0.7, 0.59, 0.6], 0.6) == 0.5
    assert math.isnan(fraction_below([], 0.6))
    assert catch_rate(12, 240.0) == 3.0
    assert math.isnan(catch_rate(1, 0.0))
