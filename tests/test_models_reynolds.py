"""Reynolds model: per-agent accelerations and integration against hand-computed values.

Each test switches on one rule (every other weight 0, walls off unless tested),
builds the state directly, runs the CPU kernel and compares with numbers
derived by hand in the comments. "clamped" below is the 'clamped-sum'
convention (raw forces, weighted sum clamped to max_force), "reynolds" the
steering transform limit(v_max d/|d| - v, max_force) per rule, summed unclamped.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from flocksim import parse_params
from flocksim.engines.cpu import CpuEngine, integrate_all, reynolds_accelerations
from flocksim.models.reynolds import ReynoldsModel
from flocksim.neighbors import find_neighbors
from flocksim.space import make_space
from flocksim.state import new_state

ZERO_RULES = {
    "separation": {"weight": 0.0},
    "alignment": {"weight": 0.0},
    "cohesion": {"weight": 0.0},
    "seek": {"weight": 0.0},
    "bounds": {"weight": 0.0},
}


def merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def make_params(dim=2, steering="reynolds", rules=None, agents=None, neighbors=None, bounds=None, n=0):
    """Open space, all rules off, max_speed 5, max_force 100, plus the given overrides."""
    data = {
        "world": {"dim": dim, "bounds": merge({"kind": "open", "size": [100.0] * dim}, bounds or {})},
        "agents": merge({"n": n, "max_speed": 5.0, "max_force": 100.0}, agents or {}),
        "neighbors": merge({"mode": "metric", "method": "brute"}, neighbors or {}),
        "rules": merge(merge(ZERO_RULES, {"steering": steering}), rules or {}),
    }
    return parse_params(data)


def accelerations(params, position, velocity, alive=None):
    """Accelerations of every agent, as CpuEngine.step computes them (phase one)."""
    model = ReynoldsModel(params)
    state = new_state(np.array(position, dtype=float), np.array(velocity, dtype=float))
    if alive is not None:
        state.alive[:] = alive
    q = model.neighbor_query()
    nbrs = find_neighbors(state.position, state.alive, model.space, q.mode, q.radius, q.k, q.method)
    out = np.zeros((state.n, 3))
    reynolds_accelerations(
        state.position,
        state.velocity,
        state.alive,
        nbrs.start,
        nbrs.index,
        state.dim,
        model.space,
        model.coefficients,
        model.inputs(state),
        out,
        model.aux(state.n),
    )
    return out[:, : state.dim]


def unit(*v):
    n = math.sqrt(sum(c * c for c in v))
    return np.array(v) / n


# ================================================================= separation

# Three agents, 2D: A(0,0), B(3,0), C(0,4). Separation radius 4.5: A-B = 3 and A-C = 4 are
# inside, B-C = 5 is not. Raw (and minion, identical when d2 > eps and d > min_distance) terms
# -(offset)/d^2:
#   A: from B -(3,0)/9 = (-1/3, 0); from C -(0,4)/16 = (0, -1/4)  -> sum (-1/3, -1/4), |.| = 5/12
#   B: from A -(-3,0)/9 = (1/3, 0)                                -> (1/3, 0)
#   C: from A -(0,-4)/16 = (0, 1/4)                               -> (0, 1/4)
SEP_POS = [[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]
SEP_VEL0 = np.zeros((3, 2))


@pytest.mark.parametrize("form", ["raw", "minion"])
def test_separation_three_agents_clamped(form):
    p = make_params(steering="clamped-sum", rules={"separation": {"weight": 1.5, "radius": 4.5, "form": form}})
    # w_sep 1.5 x raw sums: A (-0.5, -0.375), B (0.5, 0), C (0, 0.375); all shorter than 100.
    expected = [[-0.5, -0.375], [0.5, 0.0], [0.0, 0.375]]
    assert_allclose(accelerations(p, SEP_POS, SEP_VEL0), expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("form", ["raw", "minion"])
def test_separation_three_agents_reynolds(form):
    p = make_params(steering="reynolds", rules={"separation": {"weight": 1.5, "radius": 4.5, "form": form}})
    # A: d = (-1/3, -1/4) -> unit (-0.8, -0.6) -> 5 * unit - v(0) = (-4, -3), |.| = 5 < 100; x 1.5 = (-6, -4.5)
    # B: (5, 0) x 1.5 = (7.5, 0); C: (0, 5) x 1.5 = (0, 7.5)
    expected = [[-6.0, -4.5], [7.5, 0.0], [0.0, 7.5]]
    assert_allclose(accelerations(p, SEP_POS, SEP_VEL0), expected, rtol=1e-14, atol=1e-14)


def test_separation_reynolds_subtracts_velocity():
    p = make_params(steering="reynolds", rules={"separation": {"weight": 1.0, "radius": 4.5}})
    vel = [[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]
    # A: (-4, -3) - (1, 0) = (-5, -3); B: (5, 0); C: (0, 5) - (0, 2) = (0, 3)
    expected = [[-5.0, -3.0], [5.0, 0.0], [0.0, 3.0]]
    assert_allclose(accelerations(p, SEP_POS, vel), expected, rtol=1e-14, atol=1e-14)


def test_separation_two_agents_limit_reynolds_vs_clamped():
    pos = [[0.0, 0.0], [0.5, 0.0]]
    # raw term on A: -(0.5, 0)/0.25 = (-2, 0); on B: (2, 0).
    p = make_params(steering="clamped-sum", agents={"max_force": 3.0}, rules={"separation": {"weight": 2.0}})
    # clamped: w 2 -> (-4, 0), |.| = 4 > 3 -> (-3, 0)
    assert_allclose(accelerations(p, pos, np.zeros((2, 2))), [[-3.0, 0.0], [3.0, 0.0]], atol=1e-15)
    p = make_params(steering="reynolds", agents={"max_force": 3.0}, rules={"separation": {"weight": 2.0}})
    # reynolds: steer -> (-5, 0) limited to (-3, 0); times w 2 -> (-6, 0): the weighted result exceeds max_force.
    assert_allclose(accelerations(p, pos, np.zeros((2, 2))), [[-6.0, 0.0], [6.0, 0.0]], atol=1e-15)


def test_separation_raw_eps_vs_minion_min_distance():
    # A(0,0), B(0.05,0), C(0,0.5); radius 1, eps 0.01, min_distance 0.1; clamped-sum, w 1.
    pos = [[0.0, 0.0], [0.05, 0.0], [0.0, 0.5]]
    vel = np.zeros((3, 2))
    p = make_params(
        steering="clamped-sum",
        rules={"separation": {"weight": 1.0, "radius": 1.0, "form": "raw", "eps": 0.01, "min_distance": 0.1}},
    )
    # raw: A-B d2 = 0.0025 < eps -> divide by 0.01:  A from B -(0.05,0)/0.01 = (-5, 0)
    #      A from C: -(0,0.5)/0.25 = (0, -2)                          -> A (-5, -2)
    #      B from A: (5, 0); B from C: offset (-0.05, 0.5), d2 = 0.2525 -> (0.05, -0.5)/0.2525 = (20/101, -200/101)
    #      C from A: (0, 2); C from B: offset (0.05, -0.5) -> (-20/101, 200/101)
    expected_raw = [[-5.0, -2.0], [5.0 + 20 / 101, -200 / 101], [-20 / 101, 2.0 + 200 / 101]]
    assert_allclose(accelerations(p, pos, vel), expected_raw, rtol=1e-12)
    p = make_params(
        steering="clamped-sum",
        rules={"separation": {"weight": 1.0, "radius": 1.0, "form": "minion", "eps": 0.01, "min_distance": 0.1}},
    )
    # minion: A-B (d = 0.05 <= 0.1) skipped both ways; the rest as above.
    expected_minion = [[0.0, -2.0], [20 / 101, -200 / 101], [-20 / 101, 2.0 + 200 / 101]]
    assert_allclose(accelerations(p, pos, vel), expected_minion, rtol=1e-12, atol=1e-15)


def test_separation_radius_is_strict_and_other_agents_ignored():
    # A(0,0), B(2,0) with separation radius 2: "closer than radius", so no push; radius 2.5 pushes.
    pos = [[0.0, 0.0], [2.0, 0.0]]
    p = make_params(steering="clamped-sum", rules={"separation": {"weight": 1.0, "radius": 2.0}})
    assert_allclose(accelerations(p, pos, np.zeros((2, 2))), np.zeros((2, 2)), atol=0)
    p = make_params(steering="clamped-sum", rules={"separation": {"weight": 1.0, "radius": 2.5}})
    # -(2, 0)/4 = (-0.5, 0)
    assert_allclose(accelerations(p, pos, np.zeros((2, 2))), [[-0.5, 0.0], [0.5, 0.0]], atol=1e-15)


def test_separation_3d_two_agents():
    # A(0,0,0), B(1,2,2): offset (1,2,2), d = 3, d2 = 9; radius 4.
    pos = [[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]]
    vel = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    p = make_params(dim=3, steering="clamped-sum", rules={"separation": {"weight": 1.0, "radius": 4.0}})
    # clamped: A -(1,2,2)/9; B +(1,2,2)/9
    assert_allclose(accelerations(p, pos, vel), [[-1 / 9, -2 / 9, -2 / 9], [1 / 9, 2 / 9, 2 / 9]], rtol=1e-14)
    p = make_params(dim=3, steering="reynolds", rules={"separation": {"weight": 1.0, "radius": 4.0, "form": "minion"}})
    # reynolds: A 5 * -(1,2,2)/3 = (-5/3, -10/3, -10/3); B (5/3, 10/3, 10/3) - (0,0,1) = (5/3, 10/3, 7/3)
    expected = [[-5 / 3, -10 / 3, -10 / 3], [5 / 3, 10 / 3, 7 / 3]]
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14)


# ================================================================= alignment

# Two agents: A(0,0) v(1,0), B(1,0) v(0,2); radius 3.
ALI2_POS = [[0.0, 0.0], [1.0, 0.0]]
ALI2_VEL = [[1.0, 0.0], [0.0, 2.0]]


def test_alignment_two_agents_clamped():
    p = make_params(steering="clamped-sum", rules={"alignment": {"weight": 1.0, "radius": 3.0}})
    # A: (0,2) - (1,0) = (-1, 2); B: (1,0) - (0,2) = (1, -2)
    assert_allclose(accelerations(p, ALI2_POS, ALI2_VEL), [[-1.0, 2.0], [1.0, -2.0]], atol=1e-15)


def test_alignment_two_agents_reynolds():
    p = make_params(steering="reynolds", rules={"alignment": {"weight": 0.5, "radius": 3.0}})
    # A: d = (0,2) -> (0,5) - (1,0) = (-1, 5), x 0.5 = (-0.5, 2.5)
    # B: d = (1,0) -> (5,0) - (0,2) = (5, -2), x 0.5 = (2.5, -1)
    assert_allclose(accelerations(p, ALI2_POS, ALI2_VEL), [[-0.5, 2.5], [2.5, -1.0]], atol=1e-15)


# Three agents: A(0,0) v(1,0); B(1,0) v(0,2); C(0,2) v(-3,2). Radius 2.1:
# A-B 1, A-C 2 inside; B-C sqrt(5) ~ 2.236 outside. A sees B, C; B sees A; C sees A.
ALI3_POS = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]
ALI3_VEL = [[1.0, 0.0], [0.0, 2.0], [-3.0, 2.0]]


def test_alignment_three_agents_clamped():
    p = make_params(steering="clamped-sum", rules={"alignment": {"weight": 1.0, "radius": 2.1}})
    # A: mean((0,2), (-3,2)) = (-1.5, 2); minus (1,0) = (-2.5, 2)
    # B: (1,0) - (0,2) = (1, -2);  C: (1,0) - (-3,2) = (4, -2)
    assert_allclose(accelerations(p, ALI3_POS, ALI3_VEL), [[-2.5, 2.0], [1.0, -2.0], [4.0, -2.0]], atol=1e-15)


def test_alignment_three_agents_reynolds_with_limit():
    p = make_params(steering="reynolds", agents={"max_force": 5.0}, rules={"alignment": {"weight": 1.0, "radius": 2.1}})
    # A: d = (-1.5, 2), |d| = 2.5 -> 5 * (-0.6, 0.8) = (-3, 4); minus (1,0) = (-4, 4), |.| = 5.657 > 5
    #    -> (-4, 4) * 5 / sqrt(32) = (-5/sqrt2, 5/sqrt2)
    # B: (5,0) - (0,2) = (5, -2), |.| = sqrt(29) = 5.385 > 5 -> (5, -2) * 5 / sqrt(29)
    # C: (5,0) - (-3,2) = (8, -2), |.| = sqrt(68) -> (8, -2) * 5 / sqrt(68)
    s2 = 5 / math.sqrt(2)
    expected = [[-s2, s2], [25 / math.sqrt(29), -10 / math.sqrt(29)], [40 / math.sqrt(68), -10 / math.sqrt(68)]]
    assert_allclose(accelerations(p, ALI3_POS, ALI3_VEL), expected, rtol=1e-14)


def test_alignment_no_neighbour_and_zero_mean_velocity():
    # A(0,0) v(1,0) alone within radius 2 (B at 10): zero in both conventions (not -v).
    pos = [[0.0, 0.0], [10.0, 0.0]]
    vel = [[1.0, 0.0], [0.0, 3.0]]
    for steering in ("reynolds", "clamped-sum"):
        p = make_params(steering=steering, rules={"alignment": {"weight": 1.0, "radius": 2.0}})
        assert_allclose(accelerations(p, pos, vel), np.zeros((2, 2)), atol=0)
    # Neighbours whose mean velocity is zero: reynolds has no direction -> 0; clamped-sum gives 0 - v = -v.
    pos = [[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]]
    vel = [[1.0, 1.0], [0.0, 2.0], [0.0, -2.0]]
    p = make_params(steering="reynolds", rules={"alignment": {"weight": 1.0, "radius": 1.5}})
    assert_allclose(accelerations(p, pos, vel)[0], [0.0, 0.0], atol=0)
    p = make_params(steering="clamped-sum", rules={"alignment": {"weight": 1.0, "radius": 1.5}})
    assert_allclose(accelerations(p, pos, vel)[0], [-1.0, -1.0], atol=0)


def test_alignment_3d():
    # A(0,0,0) v(0,0,1); B(0,1,0) v(3,0,4); C(0,0,1) v(0,0,2)... radius 1.2: A-B 1, A-C 1, B-C sqrt2 = 1.414 out.
    pos = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    vel = [[0.0, 0.0, 1.0], [3.0, 0.0, 4.0], [0.0, 0.0, 2.0]]
    p = make_params(dim=3, steering="clamped-sum", rules={"alignment": {"weight": 2.0, "radius": 1.2}})
    # A: mean((3,0,4), (0,0,2)) = (1.5, 0, 3); minus (0,0,1) = (1.5, 0, 2); x 2 = (3, 0, 4)
    # B: (0,0,1) - (3,0,4) = (-3, 0, -3); x 2 = (-6, 0, -6)
    # C: (0,0,1) - (0,0,2) = (0, 0, -1); x 2 = (0, 0, -2)
    assert_allclose(accelerations(p, pos, vel), [[3.0, 0.0, 4.0], [-6.0, 0.0, -6.0], [0.0, 0.0, -2.0]], atol=1e-15)
    p = make_params(dim=3, steering="reynolds", rules={"alignment": {"weight": 1.0, "radius": 1.2}})
    # A: d = (1.5, 0, 3) -> 5 * (1, 0, 2)/sqrt5 = (sqrt5, 0, 2 sqrt5); minus (0,0,1)
    # B: d = (0,0,1) -> (0,0,5) - (3,0,4) = (-3, 0, 1)
    # C: d = (0,0,1) -> (0,0,5) - (0,0,2) = (0, 0, 3)
    r5 = math.sqrt(5)
    expected = [[r5, 0.0, 2 * r5 - 1.0], [-3.0, 0.0, 1.0], [0.0, 0.0, 3.0]]
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14, atol=1e-15)


# ================================================================= cohesion


def test_cohesion_two_agents():
    pos = [[0.0, 0.0], [2.0, 0.0]]
    vel = [[0.0, 1.0], [0.0, 0.0]]
    p = make_params(steering="clamped-sum", rules={"cohesion": {"weight": 1.0, "radius": 3.0}})
    # A: mean(p_j) - p_A = (2, 0); B: (-2, 0)  (velocity plays no part)
    assert_allclose(accelerations(p, pos, vel), [[2.0, 0.0], [-2.0, 0.0]], atol=0)
    p = make_params(steering="reynolds", rules={"cohesion": {"weight": 1.0, "radius": 3.0}})
    # A: (5, 0) - (0, 1) = (5, -1); B: (-5, 0)
    assert_allclose(accelerations(p, pos, vel), [[5.0, -1.0], [-5.0, 0.0]], atol=0)


def test_cohesion_three_agents():
    # A(0,0), B(3,0), C(0,4); radius 4.5: A sees B, C; B and C see only A (B-C = 5).
    pos = [[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]
    vel = np.zeros((3, 2))
    p = make_params(steering="clamped-sum", rules={"cohesion": {"weight": 0.5, "radius": 4.5}})
    # A: mean((3,0),(0,4)) = (1.5, 2) x 0.5 = (0.75, 1); B: (-3, 0) x 0.5; C: (0, -4) x 0.5
    assert_allclose(accelerations(p, pos, vel), [[0.75, 1.0], [-1.5, 0.0], [0.0, -2.0]], atol=1e-15)
    p = make_params(steering="reynolds", rules={"cohesion": {"weight": 0.5, "radius": 4.5}})
    # A: 5 * (0.6, 0.8) = (3, 4) x 0.5 = (1.5, 2); B: (-5, 0) x 0.5; C: (0, -5) x 0.5
    assert_allclose(accelerations(p, pos, vel), [[1.5, 2.0], [-2.5, 0.0], [0.0, -2.5]], atol=1e-15)
    p = make_params(
        steering="clamped-sum", agents={"max_force": 1.0}, rules={"cohesion": {"weight": 1.0, "radius": 4.5}}
    )
    # clamped to 1: A (1.5, 2)/2.5 = (0.6, 0.8); B (-1, 0); C (0, -1)
    assert_allclose(accelerations(p, pos, vel), [[0.6, 0.8], [-1.0, 0.0], [0.0, -1.0]], atol=1e-15)


def test_cohesion_3d():
    # A(0,0,0) with B(2,0,0) and C(0,0,4): radius 5 (B-C = sqrt 20 = 4.47 also inside).
    pos = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 4.0]]
    vel = np.zeros((3, 3))
    p = make_params(dim=3, steering="clamped-sum", rules={"cohesion": {"weight": 1.0, "radius": 5.0}})
    # A: mean((2,0,0),(0,0,4)) = (1, 0, 2); B: mean((-2,0,0),(-2,0,4)) = (-2, 0, 2);
    # C: mean((0,0,-4),(2,0,-4)) = (1, 0, -4)
    assert_allclose(accelerations(p, pos, vel), [[1.0, 0.0, 2.0], [-2.0, 0.0, 2.0], [1.0, 0.0, -4.0]], atol=1e-15)
    p = make_params(dim=3, steering="reynolds", rules={"cohesion": {"weight": 1.0, "radius": 5.0}})
    # reynolds: 5 * unit: A 5(1,0,2)/sqrt5 = (sqrt5, 0, 2 sqrt5); B 5(-1,0,1)/sqrt2; C 5(1,0,-4)/sqrt17
    r5, r2, r17 = math.sqrt(5), math.sqrt(2), math.sqrt(17)
    expected = [[r5, 0.0, 2 * r5], [-5 / r2, 0.0, 5 / r2], [5 / r17, 0.0, -20 / r17]]
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14, atol=1e-15)


# ================================================================= per-rule radii, topological


def test_per_rule_radii():
    # A(0,0) v(1,0), B(2,0) v(0,1): alignment radius 1 (B outside), cohesion radius 3 (B inside).
    pos = [[0.0, 0.0], [2.0, 0.0]]
    vel = [[1.0, 0.0], [0.0, 1.0]]
    rules = {"alignment": {"weight": 1.0, "radius": 1.0}, "cohesion": {"weight": 1.0, "radius": 3.0}}
    p = make_params(steering="clamped-sum", rules=rules)
    # only cohesion: A (2, 0), B (-2, 0). (With alignment A would get (-1, 1) more.)
    assert_allclose(accelerations(p, pos, vel), [[2.0, 0.0], [-2.0, 0.0]], atol=0)
    p = make_params(steering="reynolds", rules=rules)
    # A: (5,0) - (1,0) = (4, 0); B: (-5, 0) - (0, 1) = (-5, -1)
    assert_allclose(accelerations(p, pos, vel), [[4.0, 0.0], [-5.0, -1.0]], atol=0)
    # swap the radii: alignment sees B, cohesion does not.
    rules = {"alignment": {"weight": 1.0, "radius": 3.0}, "cohesion": {"weight": 1.0, "radius": 1.0}}
    p = make_params(steering="clamped-sum", rules=rules)
    # A: (0,1) - (1,0) = (-1, 1); B: (1,0) - (0,1) = (1, -1)
    assert_allclose(accelerations(p, pos, vel), [[-1.0, 1.0], [1.0, -1.0]], atol=0)


def test_separation_radius_larger_than_others():
    # The neighbour search must reach the separation radius even when it is the largest.
    pos = [[0.0, 0.0], [4.0, 0.0]]
    rules = {
        "separation": {"weight": 1.0, "radius": 5.0},
        "alignment": {"weight": 1.0, "radius": 1.0},
        "cohesion": {"weight": 1.0, "radius": 1.0},
    }
    p = make_params(steering="clamped-sum", rules=rules)
    # A: -(4,0)/16 = (-0.25, 0); alignment/cohesion: nobody within 1.
    assert_allclose(accelerations(p, pos, np.zeros((2, 2))), [[-0.25, 0.0], [0.25, 0.0]], atol=1e-15)


def test_topological_alignment_cohesion_use_all_k():
    # A(0,0), B(10,0), C(30,0): far beyond every radius (1). k = 1:
    # nearest of A is B (10), of B is A (10 < 20), of C is B (20 < 30).
    pos = [[0.0, 0.0], [10.0, 0.0], [30.0, 0.0]]
    vel = [[0.0, 1.0], [2.0, 0.0], [0.0, -1.0]]
    rules = {"cohesion": {"weight": 1.0, "radius": 1.0}}
    p = make_params(steering="clamped-sum", rules=rules, neighbors={"mode": "topological", "k": 1})
    # cohesion: A (10,0); B (-10,0); C (-20,0)
    assert_allclose(accelerations(p, pos, vel), [[10.0, 0.0], [-10.0, 0.0], [-20.0, 0.0]], atol=0)
    p = make_params(steering="clamped-sum", rules=rules, neighbors={"mode": "metric"})
    assert_allclose(accelerations(p, pos, vel), np.zeros((3, 2)), atol=0)
    rules = {"alignment": {"weight": 1.0, "radius": 1.0}}
    p = make_params(steering="clamped-sum", rules=rules, neighbors={"mode": "topological", "k": 1})
    # alignment: A v_B - v_A = (2,0)-(0,1) = (2,-1); B (0,1)-(2,0) = (-2, 1); C (2,0)-(0,-1) = (2, 1)
    assert_allclose(accelerations(p, pos, vel), [[2.0, -1.0], [-2.0, 1.0], [2.0, 1.0]], atol=0)
    p = make_params(steering="reynolds", rules=rules, neighbors={"mode": "topological", "k": 2})
    # k = 2: everyone sees both others.
    # A: mean((2,0),(0,-1)) = (1, -0.5) -> 5 (2,-1)/sqrt5 = (2 sqrt5, -sqrt5); minus (0,1)
    # B: mean((0,1),(0,-1)) = (0,0) -> no direction -> 0
    # C: mean((0,1),(2,0)) = (1, 0.5) -> (2 sqrt5, sqrt5) - (0,-1)
    r5 = math.sqrt(5)
    expected = [[2 * r5, -r5 - 1.0], [0.0, 0.0], [2 * r5, r5 + 1.0]]
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14, atol=1e-15)


def test_topological_separation_only_within_radius():
    # A(0,0), B(0.5,0), C(5,0), k = 2 (everyone sees both others), separation radius 1.
    pos = [[0.0, 0.0], [0.5, 0.0], [5.0, 0.0]]
    vel = np.zeros((3, 2))
    p = make_params(
        steering="clamped-sum",
        rules={"separation": {"weight": 1.0, "radius": 1.0}},
        neighbors={"mode": "topological", "k": 2},
    )
    # A: from B -(0.5,0)/0.25 = (-2, 0); C at 5 is a topological neighbour but outside the radius.
    # B: (2, 0); C: both neighbours outside the radius -> 0.
    assert_allclose(accelerations(p, pos, vel), [[-2.0, 0.0], [2.0, 0.0], [0.0, 0.0]], atol=0)


# ================================================================= seek


def test_seek_two_agents_no_arrival():
    # target (10, 0); A(0,0) v(0,1); B(10,0) on the target, v(1,0).
    pos = [[0.0, 0.0], [10.0, 0.0]]
    vel = [[0.0, 1.0], [1.0, 0.0]]
    rules = {"seek": {"weight": 1.0, "target": [10.0, 0.0]}}
    p = make_params(steering="clamped-sum", rules=rules)
    # A: desired (5, 0) - (0, 1) = (5, -1); B: on target, arrival off -> no desire -> 0
    assert_allclose(accelerations(p, pos, vel), [[5.0, -1.0], [0.0, 0.0]], atol=0)
    p = make_params(steering="reynolds", agents={"max_force": 2.0}, rules=rules)
    # reynolds: limit((5, -1), 2) = (5, -1) * 2/sqrt26
    r26 = math.sqrt(26)
    assert_allclose(accelerations(p, pos, vel), [[10 / r26, -2 / r26], [0.0, 0.0]], rtol=1e-14)


def test_seek_three_agents_with_arrival():
    # target (0,0), arrival 20, stop 2. Agents: (12,16) dist 20 (not < 20: full speed);
    # (-10,0) dist 10: speed 5 (10-2)/(20-2) = 20/9; (1,0) dist 1 <= 2: brake (desired 0).
    pos = [[12.0, 16.0], [-10.0, 0.0], [1.0, 0.0]]
    vel = [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    rules = {"seek": {"weight": 2.0, "target": [0.0, 0.0], "arrival_radius": 20.0, "stop_radius": 2.0}}
    p = make_params(steering="clamped-sum", rules=rules)
    # A: 5 * (-0.6, -0.8) - 0 = (-3, -4); x 2 = (-6, -8)
    # B: (20/9, 0) - (0, 1); x 2 = (40/9, -2)
    # C: (0, 0) - (1, 1) = (-1, -1); x 2 = (-2, -2)
    expected = [[-6.0, -8.0], [40 / 9, -2.0], [-2.0, -2.0]]
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14)
    p = make_params(steering="reynolds", rules=rules)
    # reynolds with max_force 100: same (nothing is limited, the weighted sum is not clamped).
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14)
    p = make_params(steering="clamped-sum", agents={"max_force": 5.0}, rules=rules)
    # clamped-sum, max_force 5: A (-6,-8) -> (-3,-4); B |(40/9, -2)| = 4.87 < 5 kept; C kept.
    assert_allclose(accelerations(p, pos, vel), [[-3.0, -4.0], [40 / 9, -2.0], [-2.0, -2.0]], rtol=1e-14)
    p = make_params(steering="reynolds", agents={"max_force": 2.0}, rules=rules)
    # reynolds, max_force 2: the per-rule force is limited before the weight:
    # A (-3,-4) -> (-1.2,-1.6), x 2 = (-2.4, -3.2); B (20/9, -1) |.| = 2.437 -> scaled to 2, x 2;
    # C (-1,-1) |.| = 1.414 < 2 kept, x 2 = (-2, -2).
    b = np.array([20 / 9, -1.0])
    b = 4 * b / np.linalg.norm(b)
    assert_allclose(accelerations(p, pos, vel), [[-2.4, -3.2], b, [-2.0, -2.0]], rtol=1e-14)


def test_seek_2d_ignores_target_z_and_3d_uses_it():
    pos2 = [[0.0, 0.0]]
    rules = {"seek": {"weight": 1.0, "target": [3.0, 4.0, 100.0]}}
    p = make_params(dim=2, steering="clamped-sum", rules=rules)
    # 2D: target (3, 4): 5 * (0.6, 0.8) = (3, 4)
    assert_allclose(accelerations(p, pos2, [[0.0, 0.0]]), [[3.0, 4.0]], rtol=1e-15)
    p = make_params(
        dim=3,
        steering="clamped-sum",
        rules={"seek": {"weight": 1.0, "target": [0.0, 0.0, 12.0], "arrival_radius": 24.0}},
    )
    # 3D: target straight up at 12 inside arrival 24: speed 2.5 -> (0,0,2.5) - v(0,1,0) = (0, -1, 2.5)
    assert_allclose(accelerations(p, [[0.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]), [[0.0, -1.0, 2.5]], rtol=1e-15)


def test_seek_periodic_goes_the_short_way():
    # Periodic 10 x 10, target (0.5, 5), agent at (9.5, 5): shortest way is +1 in x (across the edge).
    p = make_params(
        steering="clamped-sum",
        bounds={"kind": "periodic", "size": [10.0, 10.0]},
        rules={"seek": {"weight": 1.0, "target": [0.5, 5.0]}},
    )
    assert_allclose(accelerations(p, [[9.5, 5.0]], [[0.0, 0.0]]), [[5.0, 0.0]], rtol=1e-14)


# ================================================================= bounds


@pytest.mark.parametrize("steering", ["reynolds", "clamped-sum"])
def test_bounds_box_two_agents_added_unclamped(steering):
    # box 100 x 100, margin 10, turn_strength 20, weight 0.5; max_force 1 (the push is not clamped).
    # A(5, 50): x ramp 5/10 -> 0.5 * 20 * 0.5 = 5 in +x.  B(97, 98): x -0.7, y -0.8 -> (-14, -16) * 0.5 = (-7, -8).
    p = make_params(
        steering=steering,
        agents={"max_force": 1.0},
        bounds={"kind": "box", "margin": 10.0, "turn_strength": 20.0},
        rules={"bounds": {"weight": 0.5}},
    )
    pos = [[5.0, 50.0], [97.0, 98.0], [50.0, 50.0]]
    assert_allclose(accelerations(p, pos, np.zeros((3, 2))), [[5.0, 0.0], [-7.0, -8.0], [0.0, 0.0]], rtol=1e-12)


def test_bounds_added_after_clamp():
    # clamped-sum: rule forces are clamped, then the wall push is added.
    # A(5,50) alone, v(0,0); seek target (5, 60): raw (0,5), clamped to max_force 1 -> (0,1); wall (10, 0) (w 1).
    p = make_params(
        steering="clamped-sum",
        agents={"max_force": 1.0},
        bounds={"kind": "box", "margin": 10.0, "turn_strength": 20.0},
        rules={"bounds": {"weight": 1.0}, "seek": {"weight": 1.0, "target": [5.0, 60.0]}},
    )
    assert_allclose(accelerations(p, [[5.0, 50.0]], [[0.0, 0.0]]), [[10.0, 1.0]], rtol=1e-12)


@pytest.mark.parametrize("steering", ["reynolds", "clamped-sum"])
def test_bounds_3d_box_and_ellipsoid(steering):
    p = make_params(
        dim=3,
        steering=steering,
        bounds={"kind": "box", "size": [100.0, 100.0, 100.0], "margin": 10.0, "turn_strength": 20.0},
        rules={"bounds": {"weight": 1.0}},
    )
    # (50, 50, 2): z 8/10 -> 16 up; (50, 50, 50): 0; (95, 50, 99): x -0.5 -> -10, z -0.9 -> -18.
    pos = [[50.0, 50.0, 2.0], [50.0, 50.0, 50.0], [95.0, 50.0, 99.0]]
    expected = [[0.0, 0.0, 16.0], [0.0, 0.0, 0.0], [-10.0, 0.0, -18.0]]
    assert_allclose(accelerations(p, pos, np.zeros((3, 3))), expected, rtol=1e-12, atol=1e-12)
    p = make_params(
        dim=3,
        steering=steering,
        bounds={"kind": "ellipsoid", "size": [100.0, 50.0, 50.0], "margin": 10.0, "turn_strength": 20.0},
        rules={"bounds": {"weight": 1.0}},
    )
    # (95,0,0): 5 from the surface -> ramp 0.5 -> (-10, 0, 0); (0,0,0): 0; (0,-48,0): 2 from it, ramp 0.8 -> (0,16,0)
    pos = [[95.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, -48.0, 0.0]]
    expected = [[-10.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 16.0, 0.0]]
    assert_allclose(accelerations(p, pos, np.zeros((3, 3))), expected, rtol=1e-12, atol=1e-12)


# ================================================================= conventions combined


def test_reynolds_does_not_relimit_sum_but_clamped_sum_does():
    # A(0,0) v(0,0), B(2,0) v(0,3); alignment and cohesion weight 1, radius 3, max_force 1.
    pos = [[0.0, 0.0], [2.0, 0.0]]
    vel = [[0.0, 0.0], [0.0, 3.0]]
    rules = {"alignment": {"weight": 1.0, "radius": 3.0}, "cohesion": {"weight": 1.0, "radius": 3.0}}
    p = make_params(steering="reynolds", agents={"max_force": 1.0}, rules=rules)
    # A: alignment d (0,3) -> (0,5) -> limit 1 -> (0,1); cohesion d (2,0) -> (5,0) -> (1,0); sum (1,1), |.| = 1.41 > 1
    a = accelerations(p, pos, vel)
    assert_allclose(a[0], [1.0, 1.0], rtol=1e-15)
    # B: alignment d (0,0) (A is still) -> 0; cohesion (-5, 0) - (0, 3) -> limit 1 -> (-5, -3)/sqrt34
    assert_allclose(a[1], np.array([-5.0, -3.0]) / math.sqrt(34), rtol=1e-14)
    p = make_params(steering="clamped-sum", agents={"max_force": 1.0}, rules=rules)
    # A: alignment (0,3) - 0 = (0,3); cohesion (2,0); sum (2,3) -> clamped (2,3)/sqrt13
    # B: alignment (0,0) - (0,3) = (0,-3); cohesion (-2,0); sum (-2,-3) -> (-2,-3)/sqrt13
    r13 = math.sqrt(13)
    assert_allclose(accelerations(p, pos, vel), [[2 / r13, 3 / r13], [-2 / r13, -3 / r13]], rtol=1e-14)


def test_all_rules_three_agents_clamped_sum():
    # A(0,0) v(1,0), B(3,0) v(0,0), C(0,4) v(0,1); radii 4.5 for every rule (B-C = 5 outside);
    # weights sep 1, ali 1, coh 1, seek 1 toward (0,0) no arrival; max_force 100.
    pos = [[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]
    vel = [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
    rules = {
        "separation": {"weight": 1.0, "radius": 4.5},
        "alignment": {"weight": 1.0, "radius": 4.5},
        "cohesion": {"weight": 1.0, "radius": 4.5},
        "seek": {"weight": 1.0, "target": [0.0, 0.0]},
    }
    p = make_params(steering="clamped-sum", rules=rules)
    # A: sep (-1/3, -1/4); ali mean((0,0),(0,1)) - (1,0) = (-1, 0.5); coh (1.5, 2); seek on target -> 0
    #    sum (-1/3 - 1 + 1.5, -1/4 + 0.5 + 2) = (1/6, 2.25)
    # B: sep (1/3, 0); ali (1,0) - 0 = (1, 0); coh (-3, 0); seek (-5, 0) - 0 -> sum (-20/3, 0)
    # C: sep (0, 1/4); ali (1,0) - (0,1) = (1, -1); coh (0, -4); seek (0,-5) - (0,1) = (0,-6)
    #    sum (1, 0.25 - 1 - 4 - 6) = (1, -10.75)
    expected = [[1 / 6, 2.25], [-20 / 3, 0.0], [1.0, -10.75]]
    assert_allclose(accelerations(p, pos, vel), expected, rtol=1e-14)


def test_dead_agent_gets_no_acceleration_and_is_ignored():
    # A(0,0), B(2,0) dead, C(0,2); cohesion radius 3 clamped-sum.
    pos = [[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]]
    p = make_params(steering="clamped-sum", rules={"cohesion": {"weight": 1.0, "radius": 3.0}})
    a = accelerations(p, pos, np.zeros((3, 2)), alive=[True, False, True])
    # A sees only C: (0, 2); C sees only A: (0, -2); B's slot untouched (zero).
    assert_allclose(a, [[0.0, 2.0], [0.0, 0.0], [0.0, -2.0]], atol=0)


# ================================================================= integration

PER = make_space("periodic", [10.0, 10.0])
OPEN = make_space("open", [10.0, 10.0])


def integrate(pos, vel, acc, space=OPEN, dt=0.1, min_speed=0.0, max_speed=5.0, alive=None):
    pos = np.array(pos, dtype=float)
    vel = np.array(vel, dtype=float)
    n, dim = pos.shape
    acc3 = np.zeros((n, 3))
    acc3[:, :dim] = acc
    alive = np.ones(n, dtype=bool) if alive is None else np.array(alive)
    model = ReynoldsModel(make_params(dim=dim, agents={"min_speed": min_speed, "max_speed": max_speed}))
    aux = model.aux(n)
    aux[:, 3] = max_speed  # phase one's speed limit (no predator)
    state = new_state(pos, vel)
    integrate_all(pos, vel, alive, acc3, aux, model.inputs(state), dim, space, dt, model.coefficients)
    return pos, vel


def test_integrate_v_plus_a_dt_then_p_plus_v_dt():
    # v = (1,0) + (10,-5) * 0.1 = (2, -0.5); p = (1,1) + (2,-0.5) * 0.1 = (1.2, 0.95)  (semi-implicit)
    pos, vel = integrate([[1.0, 1.0]], [[1.0, 0.0]], [[10.0, -5.0]])
    assert_allclose(vel, [[2.0, -0.5]], rtol=1e-15)
    assert_allclose(pos, [[1.2, 0.95]], rtol=1e-15)


def test_integrate_clamps_to_max_speed():
    # v = (3,4) + (30,40)*0.1 = (6, 8), |.| = 10 > 5 -> (3, 4); p = (0,0) + (0.3, 0.4)
    pos, vel = integrate([[0.0, 0.0]], [[3.0, 4.0]], [[30.0, 40.0]])
    assert_allclose(vel, [[3.0, 4.0]], rtol=1e-15)
    assert_allclose(pos, [[0.3, 0.4]], rtol=1e-15)


def test_integrate_clamps_to_min_speed_and_zero_stays_zero():
    # A: v (0.3, 0.4), |.| = 0.5 < min 2 -> (1.2, 1.6); p (0,0) -> (0.12, 0.16)
    # B: v (0, 0), a 0: stays (0, 0) (no direction to speed up along), p unchanged.
    pos, vel = integrate([[0.0, 0.0], [5.0, 5.0]], [[0.3, 0.4], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], min_speed=2.0)
    assert_allclose(vel, [[1.2, 1.6], [0.0, 0.0]], rtol=1e-15)
    assert_allclose(pos, [[0.12, 0.16], [5.0, 5.0]], rtol=1e-15)
    assert np.isfinite(vel).all()


def test_integrate_3d_and_periodic_wrap():
    # periodic 10x10: p (9.95, 0.02), v (1, -1), a 0, dt 0.1 -> (10.05, -0.08) -> wrapped (0.05, 9.92)
    pos, vel = integrate([[9.95, 0.02]], [[1.0, -1.0]], [[0.0, 0.0]], space=PER)
    assert_allclose(pos, [[0.05, 9.92]], rtol=1e-12)
    assert_allclose(vel, [[1.0, -1.0]], atol=0)
    # open space: no wrap
    pos, _ = integrate([[9.95, 0.02]], [[1.0, -1.0]], [[0.0, 0.0]], space=OPEN)
    assert_allclose(pos, [[10.05, -0.08]], rtol=1e-12)
    # 3D: v (0,0,1) + (0,0,100)*0.1 = (0,0,11) -> clamped to 5; p z: 1 + 0.5
    pos, vel = integrate([[1.0, 1.0, 1.0]], [[0.0, 0.0, 1.0]], [[0.0, 0.0, 100.0]])
    assert_allclose(vel, [[0.0, 0.0, 5.0]], atol=0)
    assert_allclose(pos, [[1.0, 1.0, 1.5]], rtol=1e-15)


def test_integrate_skips_dead():
    pos, vel = integrate(
        [[1.0, 1.0], [2.0, 2.0]], [[1.0, 0.0], [1.0, 0.0]], [[10.0, 0.0], [10.0, 0.0]], alive=[True, False]
    )
    assert_allclose(pos[1], [2.0, 2.0], atol=0)
    assert_allclose(vel[1], [1.0, 0.0], atol=0)
    assert_allclose(vel[0], [2.0, 0.0], atol=0)


def test_engine_step_cohesion_two_agents():
    # Whole step through CpuEngine: clamped-sum cohesion, A(0,0) v(1,0), B(2,0) v(-1,0), dt 0.1.
    # a_A = (2,0), a_B = (-2,0); v_A = (1.2, 0), v_B = (-1.2, 0); p_A = (0.12, 0), p_B = (1.88, 0).
    p = make_params(steering="clamped-sum", rules={"cohesion": {"weight": 1.0, "radius": 3.0}})
    model = ReynoldsModel(p)
    state = new_state(np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[1.0, 0.0], [-1.0, 0.0]]))
    CpuEngine(model).step(state, 0.1)
    assert_allclose(state.velocity, [[1.2, 0.0], [-1.2, 0.0]], rtol=1e-15)
    assert_allclose(state.position, [[0.12, 0.0], [1.88, 0.0]], rtol=1e-15)


def test_engine_step_is_two_phase():
    # Two agents approaching each other with alignment: if B read A's already-updated velocity the
    # result would differ. A v(1,0), B v(-1,0), clamped-sum alignment, radius 3, dt 0.5, max_force 100.
    # Both read the snapshot: a_A = (-1,0) - (1,0) = (-2, 0) -> v_A = 0; a_B = (2,0) -> v_B = 0.
    # (Sequential update would give B: (0,0) - (-1,0) = (1, 0) -> v_B = -0.5.)
    p = make_params(steering="clamped-sum", rules={"alignment": {"weight": 1.0, "radius": 3.0}})
    model = ReynoldsModel(p)
    state = new_state(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [-1.0, 0.0]]))
    CpuEngine(model).step(state, 0.5)
    assert_allclose(state.velocity, [[0.0, 0.0], [0.0, 0.0]], atol=0)
    assert_allclose(state.position, [[0.0, 0.0], [1.0, 0.0]], atol=0)
