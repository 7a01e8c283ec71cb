"""What a bird perceives: the blind cone behind it and centrality-weighted cohesion (StarDisplay's
ingredients, Hildenbrandt et al. 2010; Hemelrijk & Hildenbrandt 2011), against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from flocksim import Simulation, load_preset
from flocksim.config import apply_overrides
from flocksim.models.reynolds import centrality_factor, in_blind_cone
from test_models_reynolds import accelerations, make_params

COS_45 = math.cos(math.radians(45.0))


def test_the_blind_cone_is_behind_the_heading_and_half_the_angle_wide():
    # heading +x; blind angle 90 deg: the cone is within 45 deg of -x
    h = (1.0, 0.0, 0.0)
    assert in_blind_cone(-1.0, 0.0, 0.0, 1.0, *h, COS_45)  # straight behind
    assert in_blind_cone(-1.0, 0.9, 0.0, 1.81, *h, COS_45)  # 42 deg off the tail
    assert not in_blind_cone(-1.0, 1.1, 0.0, 2.21, *h, COS_45)  # 48 deg off the tail
    assert not in_blind_cone(0.0, 1.0, 0.0, 1.0, *h, COS_45)  # beside
    assert not in_blind_cone(1.0, 0.0, 0.0, 1.0, *h, COS_45)  # ahead
    # 3D: 42 deg off the tail toward +z is inside too (a cone, not a wedge)
    assert in_blind_cone(-1.0, 0.0, 0.9, 1.81, *h, COS_45)
    # blind angle 270 deg (cos 135 deg < 0): everything but the 45 deg in front
    wide = math.cos(math.radians(135.0))
    assert in_blind_cone(0.0, 1.0, 0.0, 1.0, *h, wide)
    assert in_blind_cone(1.0, 1.1, 0.0, 2.21, *h, wide)  # 48 deg off the nose
    assert not in_blind_cone(1.0, 0.9, 0.0, 1.81, *h, wide)  # 42 deg off the nose
    # no heading, or a neighbour at the bird's own position: nothing is hidden
    assert not in_blind_cone(-1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, wide)
    assert not in_blind_cone(0.0, 0.0, 0.0, 0.0, *h, wide)


def test_centrality_is_the_length_of_the_mean_unit_vector():
    # neighbours on one side: C = 1
    assert centrality_factor(3.0, 0.0, 0.0, 3, 2.0) == 1.0
    # two opposite neighbours and one to the side: |(0, 1, 0)| / 3 = 1/3, squared 1/9
    assert centrality_factor(0.0, 1.0, 0.0, 3, 2.0) == pytest.approx(1.0 / 9.0, rel=1e-15)
    # power 1: C itself; a lone bird (no neighbours) keeps its cohesion
    assert centrality_factor(0.0, 1.0, 0.0, 4, 1.0) == pytest.approx(0.25, rel=1e-15)
    assert centrality_factor(0.0, 0.0, 0.0, 0, 2.0) == 1.0


# Three birds, 2D, all flying +x at (1, 0): A(0, 0), B(2, 0) in front of A, C(-2, 0.5) behind A
# (14 deg off its tail). Blind angle 90 deg. Seen from A: B ahead, C in the blind cone.
# Seen from B: A and C behind it (0 and 7 deg off the tail), both blind. From C: A and B ahead.
BLIND_POS = [[0.0, 0.0], [2.0, 0.0], [-2.0, 0.5]]
BLIND_VEL = [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]


def test_cohesion_ignores_the_birds_in_the_blind_cone():
    rules = {"cohesion": {"weight": 1.0, "radius": 10.0}, "blind_angle": 90.0}
    p = make_params(steering="clamped-sum", rules=rules)
    # A: only B: (2, 0); B: nobody: 0; C: mean((2, -0.5), (4, -0.5)) = (3, -0.5)
    assert_allclose(accelerations(p, BLIND_POS, BLIND_VEL), [[2.0, 0.0], [0.0, 0.0], [3.0, -0.5]], atol=1e-15)
    # without the blind angle A sees C too: mean((2, 0), (-2, 0.5)) = (0, 0.25)
    p = make_params(steering="clamped-sum", rules={"cohesion": {"weight": 1.0, "radius": 10.0}})
    assert_allclose(accelerations(p, BLIND_POS, BLIND_VEL)[0], [0.0, 0.25], atol=1e-15)


def test_alignment_ignores_the_birds_in_the_blind_cone_and_separation_does_not():
    # same places, all heading +x at speeds 1, 2, 3
    vel = [[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]
    rules = {"alignment": {"weight": 1.0, "radius": 10.0}, "blind_angle": 90.0}
    p = make_params(steering="clamped-sum", rules=rules)
    # A: only B: v_B - v_A = (1, 0); B: nobody: 0; C: mean(v_A, v_B) - v_C = (-1.5, 0)
    assert_allclose(accelerations(p, BLIND_POS, vel), [[1.0, 0.0], [0.0, 0.0], [-1.5, 0.0]], atol=1e-15)
    # without it A also aligns with C: mean(v_B, v_C) - v_A = (1.5, 0)
    p = make_params(steering="clamped-sum", rules={"alignment": {"weight": 1.0, "radius": 10.0}})
    assert_allclose(accelerations(p, BLIND_POS, vel)[0], [1.5, 0.0], atol=1e-15)
    # separation sees every neighbour: B feels A and C behind it (raw form -d/|d|^2):
    # from A d = (-2, 0) -> (0.5, 0); from C d = (-4, 0.5) -> (4, -0.5) / 16.25
    rules = {"separation": {"weight": 1.0, "radius": 10.0}, "blind_angle": 90.0}
    p = make_params(steering="clamped-sum", rules=rules)
    assert_allclose(accelerations(p, BLIND_POS, BLIND_VEL)[1], [0.5 + 4.0 / 16.25, -0.5 / 16.25], rtol=1e-14)


def test_centrality_weighs_cohesion_at_the_border_and_not_inside():
    # 2D, all at rest (no heading, so no blind cone matters): A(0, 0) between B(-1, 0) and
    # C(1, 0), D(0, 3) above. Cohesion radius 1.5: A sees B, C (D at 3 is outside, also later);
    # B sees A (C at 2 outside), C sees A, D sees nobody.
    pos = [[0.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [0.0, 3.0]]
    vel = np.zeros((4, 2))
    rules = {"cohesion": {"weight": 1.0, "radius": 1.5, "centrality": 2.0}}
    p = make_params(steering="clamped-sum", rules=rules)
    # A: unit vectors (-1, 0) + (1, 0) = 0 -> C = 0: no cohesion (its mean offset is 0 anyway)
    # B: one neighbour -> C = 1: cohesion (1, 0); C: (-1, 0); D: no neighbours: 0
    assert_allclose(accelerations(p, pos, vel), [[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]], atol=1e-15)
    # A off centre: A(0, 0.5) sees B (-1, -0.5) and C (1, -0.5), |d| = sqrt(1.25):
    # unit sum (0, -1/sqrt1.25), C = (1/sqrt1.25)/2 = 0.4472, C^2 = 0.2; mean offset (0, -0.5)
    pos[0] = [0.0, 0.5]
    acc = accelerations(p, pos, vel)
    assert_allclose(acc[0], [0.0, -0.5 * 0.2], rtol=1e-14)
    # the reynolds steering scales the weight, not the direction: 5 x (0, -1) x 0.2 = (0, -1)
    p = make_params(steering="reynolds", rules=rules)
    assert_allclose(accelerations(p, pos, vel)[0], [0.0, -1.0], rtol=1e-14)


def test_a_blind_cone_in_metric_mode_takes_the_neighbour_list():
    # the grid path sums no blind cone and no centrality: the stepper must take the list, whose
    # result is the brute-force reference's
    sets = ["agents.n=400", "rules.blind_angle=120", "rules.cohesion.centrality=1"]
    runs = {}
    for method in ("grid", "brute"):
        sim = Simulation(apply_overrides(load_preset("boids-2d"), [*sets, f"neighbors.method={method}"]))
        sim.step(20)
        runs[method] = sim.state
    assert np.array_equal(runs["grid"].position, runs["brute"].position)
    assert np.array_equal(runs["grid"].velocity, runs["brute"].velocity)


def test_a_blind_angle_is_bounded():
    with pytest.raises(ValueError, match="blind_angle"):
        apply_overrides(load_preset("starlings-3d"), ["rules.blind_angle=360"])
    with pytest.raises(ValueError, match="centrality"):
        apply_overrides(load_preset("starlings-3d"), ["rules.cohesion.centrality=-1"])
