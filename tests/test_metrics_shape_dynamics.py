"""Shape over time (flocksim.metrics.shape_dynamics) on an ellipsoid whose axes oscillate with a known CV."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.metrics import coefficient_of_variation, shape_series, shape_variation


def breathing_flock(samples: int = 40, n: int = 500):
    """A fixed cloud with zero mean and identity covariance (whitened), stretched per sample to full
    axes 2 sqrt(5) x (a, b, c) with a = 1 + 0.2 sin(w t), b = 3 + 0.3 cos(w t), c = 6 (constant), and
    turned about the vertical by 7 degrees a sample, over exactly 4 periods (10 samples each).

    The equivalent ellipsoid's full axis is 2 sqrt(5 var), so thickness = 2 sqrt(5) a(t) exactly. Over
    whole periods of equally spaced samples, mean(1 + e sin) = 1 and sd = e / sqrt(2): CV(thickness) =
    0.2 / sqrt(2), CV(width) = 0.1 / sqrt(2), CV(length) = 0."""
    rng = np.random.default_rng(5)
    cloud = rng.standard_normal((n, 3))
    cloud -= cloud.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov(cloud.T, bias=True))
    cloud = cloud @ vectors / np.sqrt(values)  # covariance exactly the identity
    w = 2 * math.pi / 10
    t = np.arange(samples)
    a, b, c = 1 + 0.2 * np.sin(w * t), 3 + 0.3 * np.cos(w * t), np.full(samples, 6.0)
    position = np.empty((samples, n, 3))
    for k in range(samples):
        body = cloud * [c[k], a[k], b[k]]  # length along x, thickness along y (up), width along z
        turn = math.radians(7 * k)
        rot = np.array([[math.cos(turn), 0, -math.sin(turn)], [0, 1, 0], [math.sin(turn), 0, math.cos(turn)]])
        position[k] = body @ rot.T + [100.0 * k, 40.0, 0.0]
    return position, a, b, c


def test_axes_follow_the_breathing_ellipsoid():
    position, a, b, c = breathing_flock()
    s = shape_series(position)
    scale = 2 * math.sqrt(5)
    np.testing.assert_allclose(s["thickness"], scale * a, rtol=1e-9)
    np.testing.assert_allclose(s["width"], scale * b, rtol=1e-9)
    np.testing.assert_allclose(s["length"], scale * c, rtol=1e-9)
    np.testing.assert_allclose(s["thickness_to_length"], a / c, rtol=1e-9)


def test_coefficients_of_variation_by_hand():
    position, *_ = breathing_flock()
    out = shape_variation(position)
    assert out["samples"] == 40
    assert out["cv_thickness"] == pytest.approx(0.2 / math.sqrt(2), rel=1e-9)
    assert out["cv_width"] == pytest.approx(0.1 / math.sqrt(2) / 1.0, rel=1e-9)
    assert out["cv_length"] == pytest.approx(0.0, abs=1e-12)
    assert out["mean_thickness"] == pytest.approx(2 * math.sqrt(5) * 1.0, rel=1e-9)
    assert out["cv_thickness_to_length"] == pytest.approx(0.2 / math.sqrt(2), rel=1e-9)
    # the first half period only (samples 0..5, sin >= 0): thickness 1 + 0.2 sin(k pi / 5)
    where = np.zeros(40, dtype=bool)
    where[:6] = True
    x = 1 + 0.2 * np.sin(np.arange(6) * math.pi / 5)
    part = shape_variation(position, where=where)
    assert part["samples"] == 6
    assert part["cv_thickness"] == pytest.approx(x.std() / x.mean(), rel=1e-9)


def test_dead_birds_and_small_samples():
    position, a, *_ = breathing_flock(samples=10)
    alive = np.ones(position.shape[:2], dtype=bool)
    position[3, :250] = 1e9  # dead birds far away must not count
    alive[3, :250] = False
    alive[4, 3:] = False  # 3 birds: no ellipsoid in 3D
    s = shape_series(position, alive)
    assert math.isnan(s["thickness"][4]) and math.isnan(s["thickness_to_length"][4])
    assert s["thickness"][3] == pytest.approx(2 * math.sqrt(5) * a[3], rel=0.15)  # half the cloud
    assert math.isfinite(shape_variation(position, alive)["cv_thickness"])
    assert coefficient_of_variation(np.array([2.0, 4.0, np.nan])) == pytest.approx(1 / 3)
    assert math.isnan(coefficient_of_variation(np.array([1.0])))


def test_two_dimensional_flocks_have_width_and_length():
    rng = np.random.default_rng(2)
    p = rng.standard_normal((2, 300, 2)) * [4.0, 1.0]
    s = shape_series(p)
    assert set(s) == {"width", "length", "width_to_length"}
    assert np.all(s["length"] > s["width"])


def test_shape_bad_input_names_the_field():
    position, *_ = breathing_flock(samples=3, n=20)
    with pytest.raises(ValueError, match="position"):
        shape_series(position[0])
    with pytest.raises(ValueError, match="where"):
        shape_variation(position, where=np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="alive"):
        shape_series(position, np.ones((3, 21), dtype=bool))
