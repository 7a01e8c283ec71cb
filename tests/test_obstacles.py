"""Obstacles: distances, steering push, the obstacle grid, the avoid rule, the schema."""

import math

import numpy as np
import pytest

from flocksim import Simulation
from flocksim.config import ConfigError, validate
from flocksim.kernels.obstacles import BOX, CIRCLE, SEGMENT, avoid_push, core_offset, obstacle_push_sum, steering_push
from flocksim.obstacles import build_obstacle_set
from flocksim.params import Obstacles

offset = core_offset.py_func
push = steering_push.py_func


def test_circle_push_is_seed_004_formula():
    """d = 1 from the centre, influence 4: push (away/d) (1 - 1/4) = 0.75 along +x."""
    ux, uy, uz, d, ok = offset(6.0, 5.0, 0.0, CIRCLE, 5.0, 5.0, 0.0, 5.0, 5.0, 0.0, False)
    assert ok and d == 1.0 and (ux, uy, uz) == (1.0, 0.0, 0.0)
    assert push(ux, uy, uz, d, 4.0) == (0.75, 0.0, 0.0)
    assert push(ux, uy, uz, 4.0, 4.0) == (0.0, 0.0, 0.0)  # zero at the influence boundary and beyond


def test_segment_and_box_distances():
    ux, uy, uz, d, ok = offset(3.0, 2.0, 0.0, SEGMENT, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, False)
    assert ok and d == 2.0 and (ux, uy) == (0.0, 1.0)
    ux, uy, uz, d, ok = offset(9.0, 4.0, 0.0, SEGMENT, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, False)  # past the end: 3-4-5
    assert ok and d == pytest.approx(5.0) and (ux, uy) == pytest.approx((0.6, 0.8))
    ux, uy, uz, d, ok = offset(5.0, 1.5, 0.0, BOX, 0.0, 0.0, 0.0, 4.0, 2.0, 0.0, False)  # beside the box
    assert ok and d == 1.0 and (ux, uy) == (1.0, 0.0)
    ux, uy, uz, d, ok = offset(1.0, 1.8, 0.0, BOX, 0.0, 0.0, 0.0, 4.0, 2.0, 0.0, False)  # inside, near the top
    assert ok and d == pytest.approx(-0.2) and (ux, uy) == (0.0, 1.0)
    assert push(ux, uy, uz, d, 2.0) == (0.0, 1.0, 0.0)  # inside: the full push


def test_coincident_centre_has_no_direction():
    *_, ok = offset(5.0, 5.0, 0.0, CIRCLE, 5.0, 5.0, 0.0, 5.0, 5.0, 0.0, False)
    assert not ok


def test_planar_circle_is_a_vertical_cylinder():
    ux, uy, uz, d, ok = offset(6.0, 30.0, 5.0, CIRCLE, 5.0, 0.0, 5.0, 5.0, 0.0, 5.0, True)
    assert ok and d == 1.0 and (ux, uy, uz) == (1.0, 0.0, 0.0)


def test_pushes_are_summed_and_capped():
    """Two rocks either side of a corridor-free point, both 1 away along x and y: pushes 0.5 each,
    summed (not averaged) to length 0.5 sqrt(2); a cap of 0.6 shortens the sum."""
    obs = Obstacles(
        circles=[
            {"center": [4.0, 5.0], "body_radius": 0.2, "influence_radius": 2.0},
            {"center": [5.0, 4.0], "body_radius": 0.2, "influence_radius": 2.0},
        ]
    )
    sset = build_obstacle_set(obs, 2)
    sx, sy, sz = obstacle_push_sum(5.0, 5.0, 0.0, *sset, False)
    assert (sx, sy, sz) == pytest.approx((0.5, 0.5, 0.0))
    cx, cy, _ = avoid_push(5.0, 5.0, 0.0, 0.0, 0.0, 0.0, *sset, 0.0, 0.6, False)
    assert math.hypot(cx, cy) == pytest.approx(0.6)
    # look-ahead: an agent 3 left of the first rock, moving +x at 2 for 1 s, feels the rock at 1 ahead
    lx, ly, _ = avoid_push(1.0, 5.0, 0.0, 2.0, 0.0, 0.0, *sset, 1.0, 10.0, False)
    assert (lx, ly) == pytest.approx((-0.5, 0.0))


@pytest.mark.parametrize("dim", [2, 3])
def test_obstacle_grid_matches_all_obstacles(dim):
    """The grid's sum equals the sum over every obstacle, at random points (inside and outside the grid)."""
    rng = np.random.default_rng(dim)
    circles = [
        {"center": list(rng.uniform(0, 50, dim)), "body_radius": float(b), "influence_radius": float(b + i)}
        for b, i in zip(rng.uniform(0.5, 3, 60), rng.uniform(0.5, 4, 60), strict=True)
    ]
    lo = rng.uniform(0, 45, (5, dim))
    boxes = [{"min_corner": list(a), "max_corner": list(a + rng.uniform(0.5, 5, dim))} for a in lo]
    segments = [{"a": list(rng.uniform(0, 50, dim)), "b": list(rng.uniform(0, 50, dim))} for _ in range(5)]
    obs = Obstacles(circles=circles, boxes=boxes, segments=segments)
    sset = build_obstacle_set(obs, dim)
    shapes = sset.shapes
    points = rng.uniform(-10, 60, (400, dim))
    for p in points:
        x, y, z = (*p, 0.0)[:3] if dim == 2 else p
        want = np.zeros(3)
        for k in range(len(shapes)):
            ux, uy, uz, d, ok = offset(x, y, z, int(shapes[k, 0]), *shapes[k, 1:7], False)
            if ok:
                want += push(ux, uy, uz, d, shapes[k, 8])
        got = obstacle_push_sum(x, y, z, *sset, False)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_obstacle_schema_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"obstacles.circles.0.body_radius: .*allowed: >= 0"):
        validate({"obstacles": {"circles": [{"center": [1, 2], "body_radius": -1}]}})
    with pytest.raises(ConfigError, match=r"obstacles.circles\[0\].center: needs 2 numbers"):
        validate({"obstacles": {"circles": [{"center": [1, 2, 3]}]}})
    with pytest.raises(ConfigError, match=r"obstacles.boxes.0.size: unknown key; allowed keys here: min_corner"):
        validate({"obstacles": {"boxes": [{"min_corner": [0, 0], "max_corner": [1, 1], "size": 1}]}})
    with pytest.raises(ConfigError, match="periodic"):
        validate({"world": {"bounds": {"kind": "periodic"}}, "obstacles": {"circles": [{"center": [1, 2]}]}})
    with pytest.raises(ConfigError, match=r"agents\.planar: needs world\.dim = 3"):
        validate({"agents": {"planar": True}})
    with pytest.raises(ConfigError, match="fractions must sum to 1"):
        validate({"agents": {"kinds": [{"fraction": 0.5}]}})


def test_agents_steer_around_a_rock():
    """An agent heading straight past a rock's edge is deflected (the avoid rule acts) and never enters it."""
    params = {
        "world": {"dim": 2, "bounds": {"kind": "open", "size": [40.0, 40.0]}},
        "agents": {"n": 1, "max_speed": 4.0, "radius": 0.3},
        "rules": {"separation": {"weight": 0.0}, "alignment": {"weight": 0.0}, "cohesion": {"weight": 0.0},
                  "avoid": {"weight": 1.0, "strength": 30.0}},
        "obstacles": {"circles": [{"center": [0.0, 0.5], "body_radius": 1.0, "influence_radius": 3.0}]},
    }  # fmt: skip
    sim = Simulation(params, seed=0)
    sim.state.position[0] = [-8.0, 0.0]
    sim.state.velocity[0] = [4.0, 0.0]
    closest = np.inf
    for _ in range(240):
        sim.step()
        closest = min(closest, float(np.linalg.norm(sim.state.position[0] - [0.0, 0.5])))
    assert closest > 1.0 + 0.3
    assert sim.state.position[0, 1] < -0.5  # passed below the rock


def test_obstacle_coordinates_past_1e12_are_refused_by_name():
    """Before, a wall from [-1e308, 125] to [1e308, 125] on boids-2d was accepted: the obstacle grid's
    extent overflowed to inf (RuntimeWarning at its sizing) and the first steps ran past 240 s."""
    from flocksim import apply_overrides, load_preset

    cases = {
        "obstacles.segments=[{a=[-1e308, 125], b=[1e308, 125]}]": "obstacles.segments.0.a.0",
        "obstacles.circles=[{center=[0, 1e13]}]": "obstacles.circles.0.center.1",
        "obstacles.boxes=[{min_corner=[0, 0], max_corner=[2e12, 1]}]": "obstacles.boxes.0.max_corner.0",
    }
    for override, field in cases.items():
        with pytest.raises(ConfigError) as info:
            apply_overrides(load_preset("boids-2d"), [override])
        text = str(info.value)
        assert text.startswith(field + ":") and "allowed:" in text and "each from -1e12 to 1e12" in text, text


def test_the_widest_allowed_obstacles_give_a_finite_grid():
    obstacles = Obstacles.model_validate(
        {"segments": [{"a": [-1e12, 125.0], "b": [1e12, 125.0]}], "circles": [{"center": [1e12, -1e12]}]}
    )
    with np.errstate(all="raise"):  # no overflow, no inf / inf on the way
        built = build_obstacle_set(obstacles, 2, max_agent_radius=0.5)
    assert np.isfinite(built.grid).all()
    assert int(np.prod(built.grid[6:8])) <= 4096  # the cell budget of a few obstacles
