"""Speed correlations (flocksim.metrics.speeds) on flocks whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.metrics import speed_correlation, speed_correlation_series


def ring(n: int = 720, radius: float = 10.0, mean_speed: float = 10.0, amplitude: float = 1.0):
    """n birds evenly spaced on a horizontal circle of ``radius`` (3D, y up), flying along +x with
    speed mean_speed + amplitude cos(theta) at angle theta.

    Pairs at angular separation d are at distance r = 2 R sin(d / 2), and the mean over the ring of
    cos(theta) cos(theta + d) is cos(d) / 2 (exact for evenly spaced birds), with mean phi^2 = 1/2:
    C_sp(r) = cos(d) = 1 - r^2 / (2 R^2), zero at r = sqrt(2) R. The largest distance is L = 2 R,
    so xi_sp / L = sqrt(2) / 2. Speeds: var = amplitude^2 / 2, so var / mean^2 = amplitude^2 / (2 mean^2).
    """
    theta = 2 * math.pi * np.arange(n) / n
    position = np.c_[radius * np.cos(theta), np.full(n, 50.0), radius * np.sin(theta)]
    speed = mean_speed + amplitude * np.cos(theta)
    velocity = np.c_[speed, np.zeros(n), np.zeros(n)]
    return position, velocity


def test_ring_speed_correlation_length_is_sqrt2_radius():
    p, v = ring()
    out = speed_correlation(p, v, bins=80)
    assert out.xi == pytest.approx(math.sqrt(2) * 10.0, rel=0.005)
    assert out.size == pytest.approx(20.0, rel=1e-6)
    assert out.xi_over_size == pytest.approx(math.sqrt(2) / 2, rel=0.005)
    assert out.relative_fluctuation == pytest.approx(1.0 / (2 * 100.0), rel=1e-9)
    assert out.n == 720
    # C_sp(r) = 1 - r^2 / (2 R^2) bin by bin (bin means of a smooth curve: within a bin's width)
    c, r = out.correlation.c, out.correlation.centres
    ok = np.isfinite(c)
    assert np.max(np.abs(c[ok] - (1 - r[ok] ** 2 / 200.0))) < 0.03
    # headings do not enter: turning every bird by a random angle in the horizontal plane changes nothing
    rng = np.random.default_rng(3)
    angle = rng.uniform(0, 2 * math.pi, len(v))
    s = v[:, 0]
    turned = np.c_[s * np.cos(angle), np.zeros(len(s)), s * np.sin(angle)]
    assert speed_correlation(p, turned, bins=80).xi == pytest.approx(out.xi, rel=1e-9)


def test_a_wider_ring_scales_xi_with_its_size():
    # scale-free: doubling the radius doubles xi_sp and leaves xi_sp / L alone
    p, v = ring(radius=10.0)
    big = speed_correlation(2 * p, v, bins=80)
    assert big.xi == pytest.approx(2 * math.sqrt(2) * 10.0, rel=0.005)
    assert big.xi_over_size == pytest.approx(math.sqrt(2) / 2, rel=0.005)


def test_speed_correlation_series_skips_dead_birds():
    p, v = ring(n=360)
    frames = 3
    position = np.repeat(p[None], frames, axis=0)
    velocity = np.repeat(v[None], frames, axis=0)
    alive = np.ones((frames, 360), dtype=bool)
    alive[1, 1::2] = False  # every other bird gone: still an evenly spaced ring of 180
    position[1, 1::2] = np.nan  # what a dead bird's row holds must not matter
    velocity[1, 1::2] = 1e6
    alive[2, 1:] = False  # one bird: no correlation
    out = speed_correlation_series(position, velocity, alive, bins=60)
    assert list(out.samples) == [0, 1, 2]
    assert out.xi[0] == pytest.approx(math.sqrt(2) * 10.0, rel=0.01)
    assert out.xi[1] == pytest.approx(math.sqrt(2) * 10.0, rel=0.01)
    assert out.n[1] == 180 and out.n[2] == 1 and math.isnan(out.xi[2])
    assert out.mean["xi_over_size"] == pytest.approx(math.sqrt(2) / 2, rel=0.01)
    assert out.mean["relative_fluctuation"] == pytest.approx(0.005, rel=1e-9)
    only = speed_correlation_series(position, velocity, alive, samples=np.array([1]), bins=60)
    assert len(only.xi) == 1 and only.xi[0] == out.xi[1]


def test_speed_correlation_bad_input_names_the_field():
    p, v = ring(n=10)
    with pytest.raises(ValueError, match="position"):
        speed_correlation_series(p, v)
    with pytest.raises(ValueError, match="alive"):
        speed_correlation_series(p[None], v[None], np.ones((2, 10), dtype=bool))
    with pytest.raises(ValueError, match="samples"):
        speed_correlation_series(p[None], v[None], samples=np.array([1]))
    with pytest.raises(ValueError, match="velocity"):
        speed_correlation(p, v[:5])
