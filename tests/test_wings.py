"""The wing area an observer sees of a banked bird (flocksim/metrics/wings.py), computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim.kernels.flight import flight_frame
from flocksim.metrics.wings import body_axes, side_view, visible_wing

EAST = np.array([[10.0, 0.0, 0.0]])  # flying along +x: side = h x up = (0, 0, 1), level up = (0, 1, 0)


def test_a_level_bird_shows_its_whole_wing_from_below_and_none_edge_on():
    assert body_axes(EAST, np.zeros(1)) == pytest.approx(np.array([[0.0, 1.0, 0.0]]))
    assert visible_wing(EAST, np.zeros(1), np.array([0.0, 1.0, 0.0])) == pytest.approx([1.0])
    assert visible_wing(EAST, np.zeros(1), np.array([0.0, 0.0, -1.0])) == pytest.approx([0.0])


def test_a_bank_tilts_the_wing_toward_the_side():
    bank = math.radians(60.0)
    b = body_axes(EAST, np.array([bank]))[0]
    assert b == pytest.approx([0.0, 0.5, math.sqrt(3.0) / 2.0])  # cos 60 up + sin 60 side (+z)
    below = np.array([0.0, 1.0, 0.0])
    assert visible_wing(EAST, np.array([bank]), below) == pytest.approx([0.5])  # less from below
    # beside the flock on +z, looking up at 30 degrees: d = (0, sin 30, -cos 30)
    d = side_view(EAST[0], 30.0)
    assert d == pytest.approx([0.0, 0.5, -math.sqrt(3.0) / 2.0])
    assert visible_wing(EAST, np.zeros(1), d) == pytest.approx([0.5])  # level: sin 30
    assert visible_wing(EAST, np.array([bank]), d) == pytest.approx([abs(0.25 - 0.75)])  # toward: 0.5
    assert visible_wing(EAST, np.array([-bank]), d) == pytest.approx([0.25 + 0.75])  # away: faces it


def test_the_body_axis_is_the_flight_kernels_lift_direction():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((50, 3)) * 5.0
    bank = rng.uniform(-1.0, 1.0, 50)
    b = body_axes(v, bank)
    for i in range(50):
        speed = float(np.linalg.norm(v[i]))
        sx, sy, sz, ux, uy, uz = flight_frame(v[i, 0] / speed, v[i, 1] / speed, v[i, 2] / speed, 3)
        lift = np.array([ux, uy, uz]) * math.cos(bank[i]) + np.array([sx, sy, sz]) * math.sin(bank[i])
        assert b[i] == pytest.approx(lift, abs=1e-12)
    assert np.linalg.norm(b, axis=1) == pytest.approx(np.ones(50))


def test_a_line_of_sight_must_be_a_finite_vector():
    with pytest.raises(ValueError, match="direction"):
        visible_wing(EAST, np.zeros(1), np.zeros(3))
    with pytest.raises(ValueError, match="direction"):
        visible_wing(EAST, np.zeros(1), np.array([np.inf, 0.0, 0.0]))
