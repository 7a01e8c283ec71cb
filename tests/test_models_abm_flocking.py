"""abm-flocking model (the Agents.jl / Mesa / NetLogo / MASON Flocking benchmark):
one synchronous step for two and three birds, against hand-computed values.

Per bird (reading step t): cohere = sum(p_j - p_i), separate = -sum(p_j - p_i) over
neighbours closer than ``separation``, match = sum(h_j); each / max(count, 1) x factor;
h <- normalize(h + cohere + separate + match); p <- wrap(p + speed h); v = speed h / dt.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from flocksim import parse_params
from flocksim.engines.cpu import CpuEngine
from flocksim.models.abm_flocking import AbmFlockingModel, abm_accumulate_fixed, fixed_point_scales, to_fixed
from flocksim.state import new_state


def abm_params(
    dim=2,
    size=100.0,
    vision=5.0,
    separation=1.0,
    speed=1.0,
    cohere=0.1,
    separate=0.2,
    match=0.3,
    dt=1.0,
    mode="metric",
    k=7,
):
    return parse_params(
        {
            "model": "abm-flocking",
            "world": {"dim": dim, "dt": dt, "bounds": {"kind": "periodic", "size": [size] * dim}},
            "agents": {"n": 0},
            "neighbors": {"mode": mode, "k": k, "method": "brute"},
            "flocking": {
                "vision": vision,
                "separation": separation,
                "speed": speed,
                "cohere_factor": cohere,
                "separate_factor": separate,
                "match_factor": match,
            },
        }
    )


def step(params, position, velocity, alive=None):
    state = new_state(np.array(position, dtype=float), np.array(velocity, dtype=float))
    if alive is not None:
        state.alive[:] = alive
    CpuEngine(AbmFlockingModel(params)).step(state, params.world.dt)
    return state


def unit(*v):
    v = np.array(v, dtype=float)
    return v / np.linalg.norm(v)


def test_two_birds():
    # A(10,10) h(1,0); B(12,10) h(0,1); vision 5, separation 1 (B is 2 away: no separation).
    # factors cohere 0.03, separate 0.015, match 0.05 (benchmark defaults), speed 1, dt 1.
    p = abm_params(cohere=0.03, separate=0.015, match=0.05)
    s = step(p, [[10.0, 10.0], [12.0, 10.0]], [[1.0, 0.0], [0.0, 1.0]])
    # A: cohere (2,0) * 0.03 = (0.06, 0); match (0,1) * 0.05 = (0, 0.05); count 1.
    #    h = normalize((1,0) + (0.06, 0.05)) = (1.06, 0.05) / sqrt(1.1261)
    # B: cohere (-2,0) * 0.03 = (-0.06, 0); match (1,0) * 0.05 = (0.05, 0)
    #    h = normalize((0,1) + (-0.01, 0)) = (-0.01, 1) / sqrt(1.0001)
    ha = np.array([1.06, 0.05]) / math.sqrt(1.1261)
    hb = np.array([-0.01, 1.0]) / math.sqrt(1.0001)
    assert_allclose(s.position, np.array([[10.0, 10.0], [12.0, 10.0]]) + np.array([ha, hb]), rtol=1e-14)
    assert_allclose(s.velocity, [ha, hb], rtol=1e-13)


def test_three_birds_separation_division_and_normalisation():
    # A(10,10) v(1,0); B(10.5,10) v(0,3) (heading (0,1): velocities are normalised); C(10,13) v(-2,0).
    # vision 5: every pair sees each other (A-B 0.5, A-C 3, B-C 3.04): count 2 each.
    # separation 1: only the A-B pair repels. Factors cohere 0.1, separate 0.2, match 0.3.
    # speed 2, dt 0.5.
    p = abm_params(speed=2.0, dt=0.5)
    s = step(p, [[10.0, 10.0], [10.5, 10.0], [10.0, 13.0]], [[1.0, 0.0], [0.0, 3.0], [-2.0, 0.0]])
    # A: cohere (0.5,0)+(0,3) = (0.5,3) -> *0.1 = (0.05, 0.3); separate -(0.5,0) -> *0.2 = (-0.1, 0)
    #    match (0,1)+(-1,0) = (-1,1) -> *0.3 = (-0.3, 0.3); sum (-0.35, 0.6) / 2 = (-0.175, 0.3)
    #    h = normalize((1,0) + (-0.175, 0.3)) = normalize(0.825, 0.3)
    # B: cohere (-0.5,0)+(-0.5,3) = (-1,3) -> (-0.1, 0.3); separate -(-0.5,0) = (0.5,0) -> (0.1, 0)
    #    match (1,0)+(-1,0) = 0; sum (0, 0.3)/2 = (0, 0.15); h = normalize(0, 1.15) = (0, 1)
    # C: cohere (0,-3)+(0.5,-3) = (0.5,-6) -> (0.05,-0.6); no separation; match (1,0)+(0,1) -> (0.3,0.3)
    #    sum (0.35,-0.3)/2 = (0.175,-0.15); h = normalize((-1,0) + (0.175,-0.15)) = normalize(-0.825,-0.15)
    ha = unit(0.825, 0.3)
    hb = np.array([0.0, 1.0])
    hc = unit(-0.825, -0.15)
    expected_pos = [[10.0, 10.0] + 2 * ha, [10.5, 10.0] + 2 * hb, [10.0, 13.0] + 2 * hc]
    assert_allclose(s.position, expected_pos, rtol=1e-14)
    # velocity = speed h / dt = 4 h
    assert_allclose(s.velocity, [4 * ha, 4 * hb, 4 * hc], rtol=1e-13, atol=1e-15)


def test_division_by_count_not_by_separation_count():
    # A(10,10) h(1,0) with B(10.5,10) and C(13,10) both to its right, vision 5, separation 1;
    # only cohesion and separation on (match 0): factors 0.1, 0.2.
    # A: cohere (0.5,0)+(3,0) = (3.5,0)*0.1 = (0.35,0); separate -(0.5,0)*0.2 = (-0.1,0); /2 -> (0.125,0)
    #    h stays (1,0) (only x changes) -> moves (1,0).
    # B (10.5,10) h(0,1): cohere (-0.5,0)+(2.5,0) = (2,0) -> (0.2,0); separate (0.5,0)*0.2 = (0.1,0)
    #    /2 -> (0.15, 0); h = normalize(0.15, 1).
    # (Dividing separation by its own count 1 would give B (0.2, 0) instead.)
    p = abm_params(match=0.0)
    s = step(p, [[10.0, 10.0], [10.5, 10.0], [13.0, 10.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    assert_allclose(s.position[0], [11.0, 10.0], rtol=1e-15)
    assert_allclose(s.position[1], np.array([10.5, 10.0]) + unit(0.15, 1.0), rtol=1e-14)


def test_minimum_image_across_periodic_edge():
    # box 20: A(19.5, 10) h(1,0), B(0.5, 10) h(0,1). A -> B is +1 across the edge (raw -19).
    # vision 5, separation 0 (off), cohere 0.1, match 0.3, speed 1, dt 1.
    p = abm_params(size=20.0, separation=0.0)
    s = step(p, [[19.5, 10.0], [0.5, 10.0]], [[1.0, 0.0], [0.0, 1.0]])
    # A: cohere (1,0)*0.1 = (0.1,0); match (0,1)*0.3 = (0,0.3); h = normalize(1.1, 0.3)
    #    p = 19.5 + 1.1/sqrt(1.3) = 20.4648 -> wraps to 0.4648; y = 10 + 0.3/sqrt(1.3)
    # B: cohere (-1,0)*0.1; match (1,0)*0.3 -> (0.2, 0); h = normalize(0.2, 1)
    ha = unit(1.1, 0.3)
    hb = unit(0.2, 1.0)
    assert_allclose(s.position[0], [19.5 + ha[0] - 20.0, 10.0 + ha[1]], rtol=1e-12)
    assert_allclose(s.position[1], [0.5 + hb[0], 10.0 + hb[1]], rtol=1e-14)
    assert (s.position >= 0).all() and (s.position < 20).all()


def test_lone_bird_keeps_heading_and_moves_speed_units():
    # A(5,5) v(3,4) (heading (0.6,0.8)); B far away (50,50) v(0,-1). No neighbours (vision 5):
    # count 0 -> max(count,1) = 1, all sums zero -> h unchanged; speed 2: p += 2 (0.6, 0.8).
    p = abm_params(speed=2.0, dt=0.25)
    s = step(p, [[5.0, 5.0], [50.0, 50.0]], [[3.0, 4.0], [0.0, -1.0]])
    assert_allclose(s.position, [[6.2, 6.6], [50.0, 48.0]], rtol=1e-15)
    # velocity reported as speed h / dt = 8 h
    assert_allclose(s.velocity, [[4.8, 6.4], [0.0, -8.0]], rtol=1e-15)
    assert np.isfinite(s.velocity).all()


def test_zero_sum_keeps_old_heading():
    # A(10,10) h(1,0), B(9,10) h(-1,0); cohere 0.5, match 0.5, separation 0.
    # A: (1,0) + (-1,0)*0.5 + (-1,0)*0.5 = (0, 0) -> keeps (1, 0); moves to (11, 10).
    # B: (-1,0) + (1,0)*0.5 + (1,0)*0.5 = 0 -> keeps (-1, 0); moves to (8, 10).
    p = abm_params(cohere=0.5, match=0.5, separation=0.0)
    s = step(p, [[10.0, 10.0], [9.0, 10.0]], [[1.0, 0.0], [-1.0, 0.0]])
    assert_allclose(s.position, [[11.0, 10.0], [8.0, 10.0]], atol=0)
    assert np.isfinite(s.velocity).all()


def test_vision_is_a_cutoff():
    # B at distance 6 > vision 5: no influence; at 4: influence.
    p = abm_params(match=0.0, separate=0.0, cohere=0.1)
    s = step(p, [[10.0, 10.0], [10.0, 16.0]], [[1.0, 0.0], [1.0, 0.0]])
    assert_allclose(s.position[0], [11.0, 10.0], atol=0)
    s = step(p, [[10.0, 10.0], [10.0, 14.0]], [[1.0, 0.0], [1.0, 0.0]])
    # A: (1,0) + (0,4)*0.1 = (1, 0.4) -> normalised
    assert_allclose(s.position[0], np.array([10.0, 10.0]) + unit(1.0, 0.4), rtol=1e-14)


def test_topological_uses_k_nearest_regardless_of_vision():
    # k = 1, vision 1: A(10,10) h(1,0) sees B(10,13) (3 away) in topological mode only.
    # A: cohere (0,3)*0.1 = (0, 0.3); match (0,1)*0.3 -> (0, 0.3); h = normalize(1, 0.6)
    pos = [[10.0, 10.0], [10.0, 13.0]]
    vel = [[1.0, 0.0], [0.0, 1.0]]
    s = step(abm_params(vision=1.0, mode="topological", k=1), pos, vel)
    assert_allclose(s.position[0], np.array([10.0, 10.0]) + unit(1.0, 0.6), rtol=1e-14)
    s = step(abm_params(vision=1.0, mode="metric"), pos, vel)
    assert_allclose(s.position[0], [11.0, 10.0], atol=0)


def test_three_birds_3d():
    # A(10,10,10) h(0,0,1); B(11,10,10) h(1,0,0); C(10,12,10) h(0,1,0); vision 5, separation 1.5.
    # A: neighbours B (1 away, separates) and C (2). cohere (1,0,0)+(0,2,0) = (1,2,0) *0.1 = (0.1,0.2,0)
    #    separate -(1,0,0)*0.2 = (-0.2,0,0); match (1,0,0)+(0,1,0) = (1,1,0)*0.3 = (0.3,0.3,0)
    #    sum (0.2, 0.5, 0)/2 = (0.1, 0.25, 0); h = normalize(0.1, 0.25, 1)
    p = abm_params(dim=3, separation=1.5)
    pos = [[10.0, 10.0, 10.0], [11.0, 10.0, 10.0], [10.0, 12.0, 10.0]]
    vel = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    s = step(p, pos, vel)
    assert_allclose(s.position[0], np.array(pos[0]) + unit(0.1, 0.25, 1.0), rtol=1e-14)
    # B: offsets A (-1,0,0), C (-1,2,0) [dist sqrt5 = 2.24 > 1.5]: cohere (-2,2,0)*0.1 = (-0.2,0.2,0)
    #    separate -(-1,0,0)*0.2 = (0.2,0,0); match (0,0,1)+(0,1,0) -> (0,0.3,0.3)
    #    sum (0, 0.5, 0.3)/2 = (0, 0.25, 0.15); h = normalize(1, 0.25, 0.15)
    assert_allclose(s.position[1], np.array(pos[1]) + unit(1.0, 0.25, 0.15), rtol=1e-14)


@pytest.mark.parametrize("mode", ["metric", "topological"])
def test_dead_bird_does_not_move_and_is_not_seen(mode):
    # B dead next to A: A behaves as a lone bird.
    p = abm_params(mode=mode, k=2)
    s = step(p, [[10.0, 10.0], [10.5, 10.0]], [[1.0, 0.0], [0.0, 1.0]], alive=[True, False])
    assert_allclose(s.position, [[11.0, 10.0], [10.5, 10.0]], atol=0)
    assert_allclose(s.velocity[1], [0.0, 1.0], atol=0)


def test_fixed_point_scales_leave_headroom_for_every_neighbour():
    # vision 15 <= 2^4: displacements in units of 2^(40 - 4); headings in 2^-40
    s = fixed_point_scales(15.0, 1000)
    assert s.displacement == 2.0**36
    assert s.heading == 2.0**40
    assert s.inv_displacement * s.displacement == 1.0
    # huge N: fewer bits, so N terms of magnitude <= 2^bits stay below 2^62
    big = fixed_point_scales(15.0, 50_000_000)
    bits = math.log2(big.heading)
    assert bits < 40
    assert 50_000_000 * 2.0**bits < 2.0**62


def test_to_fixed_rounds_toward_zero():
    assert to_fixed.py_func(0.75, 4.0) == 3
    assert to_fixed.py_func(0.99, 4.0) == 3
    assert to_fixed.py_func(-0.99, 4.0) == -3


def test_accumulate_fixed_counts_only_others_within_the_vision():
    c = AbmFlockingModel(abm_params(vision=5.0, separation=1.0)).coefficients
    acc = (0,) * 10
    acc = abm_accumulate_fixed.py_func(acc, 3, -2, 0, 0.5, 7, 8, 0, True, c)  # close neighbour
    acc = abm_accumulate_fixed.py_func(acc, 10, 20, 0, 4.0, 1, 1, 0, True, c)  # neighbour, not close
    acc = abm_accumulate_fixed.py_func(acc, 99, 99, 0, 25.5, 5, 5, 0, True, c)  # beyond the vision
    acc = abm_accumulate_fixed.py_func(acc, 0, 0, 0, 0.0, 9, 9, 0, False, c)  # the bird itself
    assert acc == (2, 13, 18, 0, -3, 2, 0, 8, 9, 0)


@pytest.mark.parametrize("dim", [2, 3])
def test_metric_step_does_not_depend_on_agent_order(dim):
    """Fixed-point sums are exact, so relabelling the birds permutes the result and
    changes no bit (float sums in another order would differ in the last bits)."""
    rng = np.random.default_rng(5)
    n = 300
    position = rng.uniform(0.0, 20.0, (n, dim))
    velocity = rng.normal(size=(n, dim))
    params = abm_params(dim=dim, size=20.0, vision=3.0, separation=1.0)
    perm = rng.permutation(n)
    a = step(params, position, velocity)
    b = step(params, position[perm], velocity[perm])
    assert np.array_equal(a.position[perm], b.position)
    assert np.array_equal(a.velocity[perm], b.velocity)
