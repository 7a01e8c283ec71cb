"""Collective turns (flocksim.metrics.turns) on a heading that turns by 90 degrees at known times."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.metrics import collective_turns, flock_headings
from flocksim.metrics.turns import heading_angle


def azimuth_deg(t: np.ndarray) -> np.ndarray:
    """Straight until 10 s; +90 deg at 45 deg/s from 10 to 12 s; straight; -90 deg at 30 deg/s from 30
    to 33 s; straight; a slow drift of 1 deg/s from 40 s on (3 deg per 3 s window: no turn)."""
    a = np.clip(t - 10.0, 0.0, 2.0) * 45.0 - np.clip(t - 30.0, 0.0, 3.0) * 30.0
    return a + np.clip(t - 40.0, 0.0, None) * 1.0


def headings_3d(azimuth: np.ndarray, pitch: np.ndarray | None = None) -> np.ndarray:
    """Unit headings (y up) from azimuth in the horizontal x-z plane and pitch above it [deg]."""
    a = np.radians(azimuth)
    p = np.zeros_like(a) if pitch is None else np.radians(pitch)
    return np.c_[np.cos(p) * np.cos(a), np.sin(p), np.cos(p) * np.sin(a)]


def test_two_turns_at_their_times():
    t = np.arange(601) * 0.1  # 60 s
    out = collective_turns(t, 3.0 * headings_3d(azimuth_deg(t)))  # the length of a heading does not matter
    assert len(out.starts) == 2
    np.testing.assert_allclose(out.starts, [10.0, 30.0], atol=1e-9)
    np.testing.assert_allclose(out.ends, [12.0, 33.0], atol=1e-9)
    np.testing.assert_allclose(out.turned, [90.0, 90.0], rtol=1e-9)
    assert out.minutes == pytest.approx(1.0)
    assert out.turns_per_minute == pytest.approx(2.0)
    assert out.turning_fraction == pytest.approx(5.0 / 60.0, rel=1e-9)
    assert out.turned_deg_per_s == pytest.approx((90 + 90 + 20) / 60.0, rel=1e-9)
    assert out.turning.sum() == 21 + 31 and out.turning[100] and not out.turning[99] and not out.turning[331]


def test_threshold_and_window():
    t = np.arange(601) * 0.1
    h = headings_3d(azimuth_deg(t))
    # a second turn of 90 deg spread over 3 s needs 1.5 s to reach 45: a 1 s window misses it
    assert len(collective_turns(t, h, window=1.0).starts) == 1
    # a threshold above 90 degrees: nothing turns that far
    assert len(collective_turns(t, h, angle=91.0).starts) == 0
    # a 20 deg / 25 s threshold catches the slow drift too (40 s on: 20 deg by 60 s)
    slow = collective_turns(t, h, angle=20.0, window=25.0)
    assert len(slow.starts) == 3 and slow.ends[-1] == pytest.approx(60.0)


def test_climbs_count_unless_horizontal():
    t = np.arange(601) * 0.1
    pitch = np.clip(t - 45.0, 0.0, 2.0) * 30.0  # climb to 60 deg above the horizon from 45 to 47 s
    h = headings_3d(azimuth_deg(t), pitch)
    assert len(collective_turns(t, h).starts) == 3
    assert len(collective_turns(t, h, horizontal=True).starts) == 2


def test_flock_headings_of_living_birds():
    # 3 samples of 4 birds: two at +-30 deg about the flock's heading, one straight on, one dead bird flying across
    angles = np.radians([0.0, 90.0, 180.0])
    v = np.zeros((3, 4, 3))
    for k, a in enumerate(angles):
        for i, d in enumerate(np.radians([30.0, -30.0, 0.0])):
            v[k, i] = 5.0 * np.array([math.cos(a + d), 0.0, math.sin(a + d)])
        v[k, 3] = [-100.0 * math.sin(a), 0.0, 100.0 * math.cos(a)]
    alive = np.ones((3, 4), dtype=bool)
    alive[:, 3] = False
    h = flock_headings(v, alive)
    np.testing.assert_allclose(h, headings_3d(np.array([0.0, 90.0, 180.0])), atol=1e-12)
    alive[1] = False
    assert np.all(flock_headings(v, alive)[1] == 0.0)
    assert heading_angle(h[0], h[2]) == pytest.approx(180.0)
    assert heading_angle(h[0], h[0]) == 0.0


def test_turns_bad_input_names_the_field():
    t = np.arange(5.0)
    h = headings_3d(np.zeros(5))
    with pytest.raises(ValueError, match="angle"):
        collective_turns(t, h, angle=0.0)
    with pytest.raises(ValueError, match="window"):
        collective_turns(t, h, window=-1.0)
    with pytest.raises(ValueError, match="heading"):
        collective_turns(t, h[:, :1])
    with pytest.raises(ValueError, match="time"):
        collective_turns(t[:4], h)
