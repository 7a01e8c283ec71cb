"""Scalar kernels (SPEC 3) and space helpers against values worked out by hand.

Every expected number below is derived in the comment next to it; none is
computed by calling flocksim code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from flocksim.kernels.alignment import alignment_direction, alignment_raw
from flocksim.kernels.bounds import wall_push
from flocksim.kernels.cohesion import cohesion_offset
from flocksim.kernels.seek import seek_velocity
from flocksim.kernels.separation import SEPARATION_MINION, SEPARATION_RAW, separation_term
from flocksim.kernels.steering import steer
from flocksim.space import displacement, make_space, min_image, wrap, wrap_array, wrap_coordinate

# ---------------------------------------------------------------- steering


def test_steer_zero_direction_gives_zero_force():
    # d = 0: no desire, no force, whatever the velocity.
    assert steer(0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 1.0) == (0.0, 0.0, 0.0)


def test_steer_unlimited():
    # d = (3, 4, 0), |d| = 5, max_speed 10 -> desired 10 * (0.6, 0.8) = (6, 8);
    # minus v = (1, 0, 0) -> (5, 8, 0); |.| = sqrt(89) ~ 9.43 < 100, not limited.
    assert_allclose(steer(3.0, 4.0, 0.0, 1.0, 0.0, 0.0, 10.0, 100.0, 1.0), (5.0, 8.0, 0.0), rtol=1e-15)


def test_steer_direction_length_does_not_matter():
    # d = (0, 0.001, 0) and (0, 1000, 0) both mean "up": desired (0, 5, 0), v = 0.
    assert_allclose(steer(0.0, 0.001, 0.0, 0.0, 0.0, 0.0, 5.0, 100.0, 1.0), (0.0, 5.0, 0.0), rtol=1e-15)
    assert_allclose(steer(0.0, 1000.0, 0.0, 0.0, 0.0, 0.0, 5.0, 100.0, 1.0), (0.0, 5.0, 0.0), rtol=1e-15)


def test_steer_limit_applies():
    # d = (0, 2, 0) -> desired (0, 5, 0), v = 0 -> (0, 5, 0), |.| = 5 > 3 -> (0, 3, 0).
    assert_allclose(steer(0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 5.0, 3.0, 1.0), (0.0, 3.0, 0.0), rtol=1e-15)
    # 3D: d = (0, 0, -1) -> desired (0, 0, -4); minus v = (0, 3, 0) -> (0, -3, -4), |.| = 5;
    # limited to 2.5 -> half of it: (0, -1.5, -2).
    assert_allclose(steer(0.0, 0.0, -1.0, 0.0, 3.0, 0.0, 4.0, 2.5, 1.0), (0.0, -1.5, -2.0), rtol=1e-15, atol=1e-15)


def test_steer_at_exactly_the_limit_is_unchanged():
    # desired (3, 4, 0) - v (0, 0, 0) has length 5 == max_force: returned as is.
    assert_allclose(steer(6.0, 8.0, 0.0, 0.0, 0.0, 0.0, 5.0, 5.0, 1.0), (3.0, 4.0, 0.0), rtol=1e-15)


def test_steer_response_time_scales_the_velocity_difference():
    # desired (0, 5, 0) - v (0, 3, 0) = (0, 2, 0) asked for within 1/60 s: gain 60 -> (0, 120, 0),
    # limited to 100; within 0.5 s: gain 2 -> (0, 4, 0), not limited.
    assert_allclose(steer(0.0, 1.0, 0.0, 0.0, 3.0, 0.0, 5.0, 100.0, 60.0), (0.0, 100.0, 0.0), rtol=1e-15)
    assert_allclose(steer(0.0, 1.0, 0.0, 0.0, 3.0, 0.0, 5.0, 100.0, 2.0), (0.0, 4.0, 0.0), rtol=1e-15)
    # clamped-sum alignment: (mean(v_j) - v) x gain
    assert_allclose(alignment_raw(2.0, 4.0, 0.0, 2, 1.0, 1.0, 0.0, 3.0), (0.0, 3.0, 0.0), atol=0)


def test_steer_zero_max_force_gives_zero():
    assert_allclose(steer(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 1.0), (0.0, 0.0, 0.0), atol=0)


# ---------------------------------------------------------------- separation


def test_separation_raw_far():
    # offset to neighbour (3, 4, 0), d2 = 25 > eps: -(3, 4, 0) / 25 = (-0.12, -0.16, 0).
    assert_allclose(separation_term(3.0, 4.0, 0.0, 25.0, SEPARATION_RAW, 1e-4, 1e-3), (-0.12, -0.16, 0.0), rtol=1e-15)


def test_separation_raw_3d():
    # offset (1, 2, 2), d2 = 9: -(1, 2, 2) / 9.
    assert_allclose(
        separation_term(1.0, 2.0, 2.0, 9.0, SEPARATION_RAW, 1e-4, 1e-3), (-1 / 9, -2 / 9, -2 / 9), rtol=1e-15
    )


def test_separation_raw_eps_clamp():
    # offset (0.001, 0, 0), d2 = 1e-6 < eps 1e-4, so divide by eps: -(0.001)/1e-4 = -10.
    assert_allclose(separation_term(0.001, 0.0, 0.0, 1e-6, SEPARATION_RAW, 1e-4, 1e-3), (-10.0, 0.0, 0.0), rtol=1e-12)
    # eps 0.01, offset (0.05, 0, 0), d2 = 0.0025 < 0.01: -0.05 / 0.01 = -5.
    assert_allclose(separation_term(0.05, 0.0, 0.0, 0.0025, SEPARATION_RAW, 0.01, 0.0), (-5.0, 0.0, 0.0), rtol=1e-12)


def test_separation_raw_coincident_is_finite_and_zero():
    # offset 0: 0 / eps = 0 (no NaN).
    out = separation_term(0.0, 0.0, 0.0, 0.0, SEPARATION_RAW, 1e-4, 1e-3)
    assert out == (0.0, 0.0, 0.0)


def test_separation_minion_far():
    # offset (3, 4, 0), d = 5 > min_distance: -(unit (0.6, 0.8)) / 5 = (-0.12, -0.16, 0).
    assert_allclose(
        separation_term(3.0, 4.0, 0.0, 25.0, SEPARATION_MINION, 1e-4, 1e-3), (-0.12, -0.16, 0.0), rtol=1e-15
    )
    # offset (0, -0.5, 0), d = 0.5: -(0, -1) / 0.5 = (0, 2, 0)
    assert_allclose(separation_term(0.0, -0.5, 0.0, 0.25, SEPARATION_MINION, 1e-4, 1e-3), (0.0, 2.0, 0.0), rtol=1e-15)


def test_separation_minion_has_no_eps_clamp():
    # d2 = 1e-6 < eps, but the minion form ignores eps: -(0.001)/1e-6 = -1000 (min_distance 1e-4 < d = 1e-3).
    assert_allclose(
        separation_term(0.001, 0.0, 0.0, 1e-6, SEPARATION_MINION, 1e-4, 1e-4), (-1000.0, 0.0, 0.0), rtol=1e-12
    )


def test_separation_minion_skips_below_min_distance():
    # d = 0.05 <= min_distance 0.1: skipped.
    assert separation_term(0.05, 0.0, 0.0, 0.0025, SEPARATION_MINION, 1e-4, 0.1) == (0.0, 0.0, 0.0)
    # d == min_distance (0.5, 0.25 = 0.5^2 exactly): skipped too (<=).
    assert separation_term(0.0, 0.5, 0.0, 0.25, SEPARATION_MINION, 1e-4, 0.5) == (0.0, 0.0, 0.0)
    # d = 0 with min_distance 0: skipped, no division by zero.
    assert separation_term(0.0, 0.0, 0.0, 0.0, SEPARATION_MINION, 1e-4, 0.0) == (0.0, 0.0, 0.0)


# ---------------------------------------------------------------- alignment / cohesion


def test_alignment_raw():
    # sum of neighbour velocities (2, 4, 0) over 2 neighbours -> mean (1, 2, 0); minus v (1, 1, 0) = (0, 1, 0).
    assert_allclose(alignment_raw(2.0, 4.0, 0.0, 2, 1.0, 1.0, 0.0, 1.0), (0.0, 1.0, 0.0), atol=0)
    # 3D: sum (3, -6, 9) / 3 = (1, -2, 3); minus (0.5, 0.5, 0.5) = (0.5, -2.5, 2.5).
    assert_allclose(alignment_raw(3.0, -6.0, 9.0, 3, 0.5, 0.5, 0.5, 1.0), (0.5, -2.5, 2.5), rtol=1e-15)


def test_alignment_raw_no_neighbour_is_zero_not_minus_v():
    # With no neighbour the rule contributes zero (SPEC 2.3), not mean() - v = -v.
    assert alignment_raw(0.0, 0.0, 0.0, 0, 1.0, 2.0, 3.0, 1.0) == (0.0, 0.0, 0.0)


def test_alignment_direction():
    # (2, 4, 6) / 2 = (1, 2, 3).
    assert_allclose(alignment_direction(2.0, 4.0, 6.0, 2), (1.0, 2.0, 3.0), atol=0)
    assert alignment_direction(0.0, 0.0, 0.0, 0) == (0.0, 0.0, 0.0)


def test_cohesion_offset():
    # summed displacements (3, 6, -9) over 3 neighbours: mean offset (1, 2, -3).
    assert_allclose(cohesion_offset(3.0, 6.0, -9.0, 3), (1.0, 2.0, -3.0), rtol=1e-15)
    # one neighbour at (2, 0): offset (2, 0).
    assert_allclose(cohesion_offset(2.0, 0.0, 0.0, 1), (2.0, 0.0, 0.0), atol=0)
    assert cohesion_offset(0.0, 0.0, 0.0, 0) == (0.0, 0.0, 0.0)


# ---------------------------------------------------------------- seek


def test_seek_outside_arrival():
    # target at (6, 8, 0), dist 10 >= arrival 5: full speed 5 along (0.6, 0.8) = (3, 4).
    x, y, z, active = seek_velocity(6.0, 8.0, 0.0, 5.0, 5.0, 0.0)
    assert active
    assert_allclose((x, y, z), (3.0, 4.0, 0.0), rtol=1e-15)


def test_seek_arrival_off():
    # arrival_radius 0: always full speed: (3, 4, 0); even very close: (0, 0, 0.01) -> (0, 0, 5).
    x, y, z, active = seek_velocity(6.0, 8.0, 0.0, 5.0, 0.0, 0.0)
    assert active
    assert_allclose((x, y, z), (3.0, 4.0, 0.0), rtol=1e-15)
    x, y, z, active = seek_velocity(0.0, 0.0, 0.01, 5.0, 0.0, 0.0)
    assert active
    assert_allclose((x, y, z), (0.0, 0.0, 5.0), rtol=1e-15)


def test_seek_arrival_linear_ramp():
    # dist 10 inside arrival 20, stop 0: speed 5 * 10/20 = 2.5 -> 2.5 * (0.6, 0.8) = (1.5, 2).
    x, y, z, active = seek_velocity(6.0, 8.0, 0.0, 5.0, 20.0, 0.0)
    assert active
    assert_allclose((x, y, z), (1.5, 2.0, 0.0), rtol=1e-15)
    # stop 4: speed 5 * (10 - 4) / (20 - 4) = 1.875 -> (1.125, 1.5).
    x, y, z, active = seek_velocity(6.0, 8.0, 0.0, 5.0, 20.0, 4.0)
    assert active
    assert_allclose((x, y, z), (1.125, 1.5, 0.0), rtol=1e-15)
    # 3D: target (0, 0, -12), arrival 24: speed 2.5 straight down.
    x, y, z, active = seek_velocity(0.0, 0.0, -12.0, 5.0, 24.0, 0.0)
    assert active
    assert_allclose((x, y, z), (0.0, 0.0, -2.5), rtol=1e-15)


def test_seek_inside_stop_radius_brakes():
    # dist 1 <= stop 2: desired velocity 0 but still active (it brakes).
    assert seek_velocity(0.6, 0.8, 0.0, 5.0, 20.0, 2.0) == (0.0, 0.0, 0.0, True)
    # exactly at the stop radius: also stopped.
    assert seek_velocity(2.0, 0.0, 0.0, 5.0, 20.0, 2.0) == (0.0, 0.0, 0.0, True)
    # on the target with arrival on and stop 0: dist 0 <= 0, brake.
    assert seek_velocity(0.0, 0.0, 0.0, 5.0, 20.0, 0.0) == (0.0, 0.0, 0.0, True)


def test_seek_on_target_without_arrival_is_inactive():
    assert seek_velocity(0.0, 0.0, 0.0, 5.0, 0.0, 0.0) == (0.0, 0.0, 0.0, False)


# ---------------------------------------------------------------- walls

BOX2 = make_space("box", [100.0, 100.0])
BOX3 = make_space("box", [100.0, 100.0, 100.0])


def test_box_wall_centre_is_zero():
    assert wall_push(50.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0) == (0.0, 0.0, 0.0)
    assert wall_push(50.0, 50.0, 50.0, 3, BOX3, 10.0, 20.0) == (0.0, 0.0, 0.0)


def test_box_wall_margin_ramp():
    # x = 5: 5 units into the 10-unit margin -> 5/10 = 0.5 of 20 = 10, pointing +x.
    assert_allclose(wall_push(5.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0), (10.0, 0.0, 0.0), atol=1e-12)
    # x = 97 (3 from the far wall): 7/10 of 20 = 14 pointing -x.
    assert_allclose(wall_push(97.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0), (-14.0, 0.0, 0.0), atol=1e-12)
    # x = 10 exactly at the margin edge: 0.
    assert_allclose(wall_push(10.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0), (0.0, 0.0, 0.0), atol=0)
    # at the wall x = 0: full strength 20.
    assert_allclose(wall_push(0.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0), (20.0, 0.0, 0.0), atol=0)


def test_box_wall_corner():
    # (2, 3): x 8/10 -> 16, y 7/10 -> 14, both inward.
    assert_allclose(wall_push(2.0, 3.0, 0.0, 2, BOX2, 10.0, 20.0), (16.0, 14.0, 0.0), rtol=1e-12)
    # (97, 98, 1) in 3D: x -0.7 -> -14, y -0.8 -> -16, z +0.9 -> +18.
    assert_allclose(wall_push(97.0, 98.0, 1.0, 3, BOX3, 10.0, 20.0), (-14.0, -16.0, 18.0), rtol=1e-12)


def test_box_wall_outside_keeps_growing():
    # x = -5: depth 15 into a 10 margin -> 1.5 * 20 = 30.
    assert_allclose(wall_push(-5.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0), (30.0, 0.0, 0.0), rtol=1e-12)
    # y = 110: depth 20 -> -2 * 20 = -40.
    assert_allclose(wall_push(50.0, 110.0, 0.0, 2, BOX2, 10.0, 20.0), (0.0, -40.0, 0.0), rtol=1e-12)


def test_box_wall_margin_zero():
    # margin 0: nothing inside, full strength outside.
    assert wall_push(0.5, 99.5, 0.0, 2, BOX2, 0.0, 20.0) == (0.0, 0.0, 0.0)
    assert_allclose(wall_push(-1.0, 50.0, 0.0, 2, BOX2, 0.0, 20.0), (20.0, 0.0, 0.0), atol=0)
    assert_allclose(wall_push(50.0, 101.0, 0.0, 2, BOX2, 0.0, 20.0), (0.0, -20.0, 0.0), atol=0)


def test_box_wall_2d_ignores_z():
    # In 2D z = 0 is not "at the z wall": no z push; in 3D the same point is at the wall (push 20 up).
    assert_allclose(wall_push(50.0, 50.0, 0.0, 2, BOX2, 10.0, 20.0), (0.0, 0.0, 0.0), atol=0)
    assert_allclose(wall_push(50.0, 50.0, 0.0, 3, BOX3, 10.0, 20.0), (0.0, 0.0, 20.0), atol=0)


def test_no_walls_in_periodic_and_open():
    for kind in ("periodic", "open"):
        space = make_space(kind, [100.0, 100.0])
        assert wall_push(-50.0, 500.0, 0.0, 2, space, 10.0, 20.0) == (0.0, 0.0, 0.0)


ELL = make_space("ellipsoid", [100.0, 50.0, 50.0])
SPHERE = make_space("ellipsoid", [50.0, 50.0, 50.0])


def test_ellipsoid_centre_and_deep_inside_are_zero():
    assert wall_push(0.0, 0.0, 0.0, 3, ELL, 10.0, 20.0) == (0.0, 0.0, 0.0)
    # (50, 0, 0): 50 from the surface along x, beyond the 10 margin.
    assert_allclose(wall_push(50.0, 0.0, 0.0, 3, ELL, 10.0, 20.0), (0.0, 0.0, 0.0), atol=0)


def test_ellipsoid_on_axes():
    # (95, 0, 0), semi-axis 100: 5 from the surface, ramp (10 - 5)/10 = 0.5 -> 10 toward -x.
    assert_allclose(wall_push(95.0, 0.0, 0.0, 3, ELL, 10.0, 20.0), (-10.0, 0.0, 0.0), rtol=1e-12, atol=1e-12)
    # (0, 45, 0), semi-axis 50: 5 from the surface -> (0, -10, 0).
    assert_allclose(wall_push(0.0, 45.0, 0.0, 3, ELL, 10.0, 20.0), (0.0, -10.0, 0.0), rtol=1e-12, atol=1e-12)
    # (0, 0, -48): 2 from the surface, ramp 0.8 -> 16 toward +z.
    assert_allclose(wall_push(0.0, 0.0, -48.0, 3, ELL, 10.0, 20.0), (0.0, 0.0, 16.0), rtol=1e-12, atol=1e-12)


def test_sphere_off_axis_pushes_radially():
    # sphere radius 50, p = (24, 0, 32), |p| = 40: 10 from the surface; margin 20 -> ramp 0.5,
    # push 20 * 0.5 = 10 along -p/|p| = -(0.6, 0, 0.8) -> (-6, 0, -8).
    assert_allclose(wall_push(24.0, 0.0, 32.0, 3, SPHERE, 20.0, 20.0), (-6.0, 0.0, -8.0), rtol=1e-12, atol=1e-12)


def test_ellipse_2d_pushes_inward_along_normal():
    # 2D ellipse a = 100, b = 50; p = (80, 24): q^2 = 0.64 + 0.2304 = 0.8704.
    # Outward normal ~ gradient (x/a^2, y/b^2) = (0.008, 0.0096).
    # First-order distance to the surface: (1 - q) q / |g| with q = sqrt(0.8704), |g| = sqrt(0.008^2 + 0.0096^2).
    space = make_space("ellipsoid", [100.0, 50.0])
    q = math.sqrt(0.8704)
    gnorm = math.sqrt(0.008**2 + 0.0096**2)
    distance = (1 - q) * q / gnorm  # ~ 5.48
    ramp = (10.0 - distance) / 10.0
    expected = (-20.0 * ramp * 0.008 / gnorm, -20.0 * ramp * 0.0096 / gnorm, 0.0)
    out = wall_push(80.0, 24.0, 0.0, 2, space, 10.0, 20.0)
    assert_allclose(out, expected, rtol=1e-12)
    # direction: antiparallel to the normal (cross product 0, dot product < 0).
    assert abs(out[0] * 0.0096 - out[1] * 0.008) < 1e-12
    assert out[0] * 0.008 + out[1] * 0.0096 < 0


def test_ellipsoid_outside_pushes_harder_than_at_surface():
    # (110, 0, 0): 10 outside, ramp (10 + 10)/10 = 2 -> 40 toward -x (first-order distance is
    # (1 - 1.1) * 1.1 / (110/100^2) = -10 exactly).
    assert_allclose(wall_push(110.0, 0.0, 0.0, 3, ELL, 10.0, 20.0), (-40.0, 0.0, 0.0), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- space


def test_min_image():
    # 7 on an axis of 10: the nearer image is -3; -7 -> 3; 3 stays; 23 -> 3.
    assert min_image(7.0, 10.0) == -3.0
    assert min_image(-7.0, 10.0) == 3.0
    assert min_image(3.0, 10.0) == 3.0
    assert min_image(23.0, 10.0) == 3.0
    # half the box: both +5 and -5 map to the same image, -5.
    assert min_image(5.0, 10.0) == -5.0
    assert min_image(-5.0, 10.0) == -5.0


def test_displacement_periodic_and_box():
    per = make_space("periodic", [10.0, 10.0])
    box = make_space("box", [10.0, 10.0])
    # p = (9.5, 0.5), q = (0.5, 9.5): raw q - p = (-9, 9); across the edges (1, -1).
    assert_allclose(displacement(9.5, 0.5, 0.0, 0.5, 9.5, 0.0, per), (1.0, -1.0, 0.0), atol=1e-15)
    assert_allclose(displacement(9.5, 0.5, 0.0, 0.5, 9.5, 0.0, box), (-9.0, 9.0, 0.0), atol=0)
    per3 = make_space("periodic", [10.0, 20.0, 30.0])
    # z: 29 -> 1 is +2 across the edge of 30; y: 1 -> 12 is +11, nearer than -9? no: 11 > 10 = 20/2 -> -9.
    assert_allclose(displacement(5.0, 1.0, 29.0, 5.0, 12.0, 1.0, per3), (0.0, -9.0, 2.0), atol=1e-12)


def test_wrap_periodic_edges():
    per = make_space("periodic", [10.0, 10.0])
    assert wrap_coordinate(10.0, 10.0) == 0.0  # exactly L -> 0
    assert wrap_coordinate(-1e-17, 10.0) == 0.0  # a hair below 0 would round to L; must give 0
    assert wrap_coordinate(0.0, 10.0) == 0.0
    assert_allclose(wrap_coordinate(10.5, 10.0), 0.5, rtol=1e-14)
    assert_allclose(wrap_coordinate(-0.5, 10.0), 9.5, rtol=1e-15)
    assert_allclose(wrap_coordinate(25.0, 10.0), 5.0, rtol=1e-15)
    x, y, z = wrap(10.0, -1e-17, 0.0, per)
    assert (x, y, z) == (0.0, 0.0, 0.0)
    # box and open: positions are not wrapped.
    assert wrap(10.5, -0.5, 0.0, make_space("box", [10.0, 10.0])) == (10.5, -0.5, 0.0)
    assert wrap(10.5, -0.5, 0.0, make_space("open", [10.0, 10.0])) == (10.5, -0.5, 0.0)


def test_wrap_array_matches_edges():
    per = make_space("periodic", [10.0, 10.0])
    out = wrap_array(np.array([[10.0, -1e-17], [-0.5, 25.0]]), per)
    assert_allclose(out, [[0.0, 0.0], [9.5, 5.0]], atol=1e-14)
    assert (out < 10.0).all() and (out >= 0.0).all()


@settings(max_examples=300, deadline=None)
@given(
    x=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
    length=st.floats(min_value=1e-3, max_value=1e4),
)
def test_wrap_in_range_and_min_image_bounded(x, length):
    w = wrap_coordinate(x, length)
    assert 0.0 <= w < length
    m = min_image(x, length)
    # the image is within half a box (plus round-off) and differs from x by a whole number of boxes
    assert abs(m) <= length / 2 * (1 + 1e-12) + 1e-9 * abs(x) / length
    k = (x - m) / length
    assert abs(k - round(k)) < 1e-6


@settings(max_examples=300, deadline=None)
@given(k=st.integers(min_value=-1000, max_value=1000), length=st.floats(min_value=1e-2, max_value=1e2))
def test_wrap_just_below_a_multiple_of_length_stays_in_range(k, length):
    # x = one ulp below k * L: x / L can round up to exactly k, and x - k * L is then a tiny negative
    # number; it must still map into [0, L) (regression: it used to come back negative).
    x = float(np.nextafter(k * length, -np.inf))
    w = wrap_coordinate(x, length)
    assert 0.0 <= w < length
    space = make_space("periodic", [length, length])
    wa = wrap_array(np.array([[x, -5e-324]]), space)
    assert (wa >= 0.0).all() and (wa < length).all()


def test_wrap_negative_subnormal():
    # -5e-324 / L rounds to -0.0, floor(-0.0) = -0.0, so x - L * floor(..) = -5e-324 < 0 unless caught.
    assert wrap_coordinate(-5e-324, 2.0) == 0.0
    assert wrap_array(np.array([[-5e-324, 1.0]]), make_space("periodic", [2.0, 2.0]))[0, 0] == 0.0


@pytest.mark.parametrize("form", [SEPARATION_RAW, SEPARATION_MINION])
def test_separation_points_away_and_decays(form):
    # Farther neighbours push less (both forms fall off as 1/d once d2 > eps):
    # at d = 1: 1, d = 2: 0.5, d = 4: 0.25.
    mags = [abs(separation_term(d, 0.0, 0.0, d * d, form, 1e-4, 1e-3)[0]) for d in (1.0, 2.0, 4.0)]
    assert_allclose(mags, [1.0, 0.5, 0.25], rtol=1e-15)
    assert separation_term(1.0, 0.0, 0.0, 1.0, form, 1e-4, 1e-3)[0] < 0
