"""Correlation, shape and group-state analyses on hand-made configurations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.metrics.correlation import (
    correlation_function,
    correlation_length,
    correlation_sum_rule,
    fluctuations,
)
from flocksim.metrics.groupstate import classify, group_state
from flocksim.metrics.shape import anisotropy_gamma, ellipsoid_axes
from flocksim.space import make_space


def test_correlation_by_hand():
    """Three agents on a line at x = 0, 1, 3 with speeds 1, 2, 6: phi = -2, -1, 3, c0 = 14/3.
    Pairs (ordered, i != j): d = 1: 2 x (2); d = 2: 2 x (-3); d = 3: 2 x (-6)."""
    p = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    v = np.array([[1.0, 0.0], [2.0, 0.0], [6.0, 0.0]])
    np.testing.assert_allclose(fluctuations(v, "speed")[:, 0], [-2.0, -1.0, 3.0])
    corr = correlation_function(p, v, "speed", bins=np.array([0.5, 1.5, 2.5, 3.5]))
    c0 = 14.0 / 3.0
    np.testing.assert_array_equal(corr.pairs, [2, 2, 2])
    np.testing.assert_allclose(corr.c, [2.0 / c0, -3.0 / c0, -6.0 / c0])
    assert correlation_sum_rule(corr) == pytest.approx(0.0, abs=1e-15)
    # first zero crossing between the centres 1 and 2: C = 0.4286 and -0.6429
    r0 = 1.0 + (2.0 / c0) / (2.0 / c0 + 3.0 / c0)
    assert correlation_length(corr) == pytest.approx(r0)


def test_orientation_fluctuations_and_sum_rule_3d():
    rng = np.random.default_rng(4)
    p = rng.random((150, 3)) * 5
    v = rng.standard_normal((150, 3)) * rng.uniform(1, 3, (150, 1))
    u = fluctuations(v, "orientation")
    np.testing.assert_allclose(u.sum(axis=0), 0.0, atol=1e-12)
    corr = correlation_function(p, v, "orientation", bins=12)
    assert corr.pairs.sum() == 150 * 149
    assert abs(correlation_sum_rule(corr)) < 1e-12
    assert np.nanmax(np.abs(corr.c)) < 0.2  # independent headings: no correlation at r > 0


def test_correlation_uses_the_minimum_image():
    p = np.array([[0.1, 5.0], [9.9, 5.0], [5.0, 5.0]])
    v = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]])
    space = make_space("periodic", [10.0, 10.0])
    corr = correlation_function(p, v, "orientation", bins=np.array([0.0, 1.0, 20.0]), space=space)
    assert corr.pairs.tolist() == [2, 4]  # 0-1 are 0.2 apart across the edge


def test_correlation_rejects_bad_input():
    with pytest.raises(ValueError, match="at least 2"):
        correlation_function(np.zeros((1, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="kind"):
        fluctuations(np.ones((3, 2)), "spin")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bins"):
        correlation_function(np.zeros((3, 2)), np.ones((3, 2)), bins=np.array([1.0, 0.5]))


def test_correlation_length_nan_without_a_crossing():
    p = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    v = np.array([[1.0, 0.0], [2.0, 0.0], [6.0, 0.0]])
    corr = correlation_function(p, v, "speed", bins=np.array([0.5, 1.5]))
    assert math.isnan(correlation_length(corr))


def test_ellipsoid_axes_by_hand():
    """Points at +-a on each axis (3D): variance a^2 / 3 per axis, I = 2 sqrt(5 a^2 / 3)."""
    a = np.array([1.0, 2.0, 3.0])
    pts = np.concatenate([np.diag(a), -np.diag(a)])
    np.testing.assert_allclose(ellipsoid_axes(pts), 2 * np.sqrt(5 * a**2 / 3))
    assert np.all(np.isnan(ellipsoid_axes(np.zeros((2, 3)))))
    # 2D: a uniform disc of radius 1 has variance 1/4 per axis: I = 2 sqrt(4 / 4) = 2
    rng = np.random.default_rng(0)
    r, t = np.sqrt(rng.random(40000)), rng.random(40000) * 2 * np.pi
    np.testing.assert_allclose(ellipsoid_axes(np.stack([r * np.cos(t), r * np.sin(t)], 1)), [2, 2], rtol=0.01)


def test_gamma_of_side_by_side_neighbours_is_one():
    """Birds in sheets across the heading (spacing 1 across, 3 along): the first 4 neighbours are beside,
    so the direction with fewest neighbours is the heading: gamma = 1."""
    g = np.stack(np.meshgrid(np.arange(8) * 3.0, np.arange(8) * 1.0, np.arange(8) * 1.0, indexing="ij"), -1)
    p = g.reshape(-1, 3) + np.random.default_rng(1).normal(0, 0.01, (512, 3))
    v = np.tile([1.0, 0.0, 0.0], (512, 1))
    gamma = anisotropy_gamma(p, v, n_max=4)
    assert gamma[0] > 0.99 and gamma[1] > 0.99


def test_gamma_of_neighbours_ahead_is_zero_and_centres_select_birds():
    g = np.stack(np.meshgrid(np.arange(8) * 1.0, np.arange(8) * 3.0, np.arange(8) * 3.3, indexing="ij"), -1)
    p = g.reshape(-1, 3) + np.random.default_rng(1).normal(0, 0.01, (512, 3))
    v = np.tile([1.0, 0.0, 0.0], (512, 1))
    assert anisotropy_gamma(p, v, n_max=2)[0] < 0.01
    inner = np.all((p > 2.5) & (p < 18), axis=1)
    assert anisotropy_gamma(p, v, n_max=2, centres=inner)[0] < 0.01
    assert anisotropy_gamma(p, v, n_max=2, centres=np.flatnonzero(inner))[0] < 0.01
    assert np.isnan(anisotropy_gamma(p[:3], v[:3], n_max=4)[2:]).all()


def test_gamma_isotropic_mean_is_one_over_dim():
    rng = np.random.default_rng(7)
    for dim in (2, 3):
        values = []
        for _ in range(60):
            h = rng.standard_normal((300, dim))
            values.append(anisotropy_gamma(rng.random((300, dim)), h, n_max=1)[0])
        assert np.mean(values) == pytest.approx(1 / dim, abs=3 * 0.32 / math.sqrt(60))


@pytest.mark.parametrize(
    ("p", "m", "state"),
    [
        (0.9, 0.1, "polarized"),
        (0.1, 0.9, "milling"),
        (0.1, 0.1, "swarm"),
        (0.5, 0.1, "transitional"),
        (0.66, 0.5, "transitional"),
        (0.65, 0.0, "transitional"),  # thresholds are strict
        (math.nan, 0.1, "transitional"),
    ],
)
def test_classify(p, m, state):
    assert classify(p, m) == state


def test_group_state_of_a_ring():
    a = np.linspace(0, 2 * np.pi, 50, endpoint=False)
    pos = np.stack([np.cos(a), np.sin(a)], 1)
    vel = np.stack([-np.sin(a), np.cos(a)], 1)
    state, p, m = group_state(pos, vel)
    assert state == "milling" and p < 1e-12 and m == pytest.approx(1.0)
