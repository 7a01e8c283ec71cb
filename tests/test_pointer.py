"""Pointer attract / repel: the turn rule by hand, its properties, and in a Simulation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flocksim import load_preset
from flocksim.components.pointer import PointerSteering, pointer_turn
from flocksim.config import ConfigError, apply_overrides
from flocksim.simulation import Simulation
from flocksim.space import displacement_array, make_space

OPEN2 = make_space("open", [10.0, 10.0])
OPEN3 = make_space("open", [10.0, 10.0, 10.0])
NINE = math.radians(9.0)  # 90 deg/s x 0.1 s


def turn(position, velocity, point, sign=1.0, max_angle=NINE, radius=0.0, space=OPEN2, alive=None, planar=False):
    p = np.array(position, dtype=float)
    v = np.array(velocity, dtype=float)
    a = np.ones(len(p), dtype=bool) if alive is None else np.array(alive)
    rows = pointer_turn(p, v, a, np.array(point, dtype=float), sign, max_angle, radius, space, planar)
    return v, rows


# ------------------------------------------------------------------------------ the rule by hand


def test_attract_turns_by_the_rate_toward_the_point():
    v, rows = turn([[0.0, 0.0]], [[2.0, 0.0]], [0.0, 10.0])
    np.testing.assert_allclose(v[0], [2 * math.cos(NINE), 2 * math.sin(NINE)], rtol=0, atol=1e-12)
    assert rows.tolist() == [0]


def test_repel_turns_away_from_the_point():
    v, _ = turn([[0.0, 0.0]], [[2.0, 0.0]], [0.0, 10.0], sign=-1.0)
    np.testing.assert_allclose(v[0], [2 * math.cos(NINE), -2 * math.sin(NINE)], rtol=0, atol=1e-12)


def test_a_small_angle_is_closed_exactly():
    """40 degrees to go with 90 allowed: the heading ends on the point, the speed unchanged."""
    target = [math.cos(math.radians(40.0)), math.sin(math.radians(40.0))]
    v, _ = turn([[0.0, 0.0]], [[3.0, 0.0]], target, max_angle=math.radians(90.0))
    np.testing.assert_allclose(v[0], 3 * np.array(target), rtol=0, atol=1e-12)


def test_a_point_straight_behind_turns_left_in_2d_and_toward_h_cross_up_in_3d():
    v2, _ = turn([[0.0, 0.0]], [[1.0, 0.0]], [-5.0, 0.0])
    np.testing.assert_allclose(v2[0], [math.cos(NINE), math.sin(NINE)], atol=1e-12)
    v3, _ = turn([[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], [-5.0, 0.0, 0.0], space=OPEN3)
    # h x up = (1, 0, 0) x (0, 1, 0) = (0, 0, 1)
    np.testing.assert_allclose(v3[0], [math.cos(NINE), 0.0, math.sin(NINE)], atol=1e-12)


def test_3d_turn_happens_in_the_plane_of_heading_and_point():
    v, _ = turn([[1.0, 1.0, 1.0]], [[2.0, 0.0, 0.0]], [1.0, 1.0, 6.0], space=OPEN3)
    np.testing.assert_allclose(v[0], [2 * math.cos(NINE), 0.0, 2 * math.sin(NINE)], atol=1e-12)


def test_radius_limits_who_reacts():
    v, rows = turn([[0.0, 0.0], [20.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], [0.0, 5.0], radius=6.0)
    assert rows.tolist() == [0]
    np.testing.assert_array_equal(v[1], [1.0, 0.0])
    assert v[0, 1] > 0


def test_dead_resting_and_coincident_agents_are_left_alone():
    v, rows = turn(
        [[0.0, 0.0], [1.0, 1.0], [0.0, 5.0], [3.0, 0.0]],
        [[1.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
        [0.0, 5.0],
        alive=[True, True, True, False],
    )
    assert rows.tolist() == [0]
    np.testing.assert_array_equal(v[1:], [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]])


def test_an_agent_already_heading_for_the_point_keeps_its_velocity():
    v, rows = turn([[0.0, 0.0]], [[0.0, 4.0]], [0.0, 5.0])
    assert rows.tolist() == []
    np.testing.assert_array_equal(v[0], [0.0, 4.0])


def test_periodic_space_turns_along_the_minimum_image():
    box = make_space("periodic", [10.0, 10.0])
    v, _ = turn([[1.0, 5.0]], [[0.0, 1.0]], [9.0, 5.0], space=box)  # 2 units away across the edge (-x)
    assert v[0, 0] < 0


def test_planar_agents_turn_within_their_plane():
    v, rows = turn([[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], [0.0, 5.0, 5.0], space=OPEN3, planar=True)
    np.testing.assert_allclose(v[0], [math.cos(NINE), 0.0, math.sin(NINE)], atol=1e-12)
    v, rows = turn([[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], [0.0, 5.0, 0.0], space=OPEN3, planar=True)
    assert rows.tolist() == []  # straight above: nothing to turn toward in the plane


# ------------------------------------------------------------------------------ properties

coord = st.floats(-100.0, 100.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    dim=st.sampled_from([2, 3]),
    data=st.data(),
    sign=st.sampled_from([1.0, -1.0]),
    max_angle=st.floats(0.0, 4.0),
    radius=st.sampled_from([0.0, 30.0]),
)
def test_turns_keep_speed_stay_finite_and_never_exceed_the_rate(dim, data, sign, max_angle, radius):
    n = data.draw(st.integers(1, 12))
    p = np.array(data.draw(st.lists(st.lists(coord, min_size=dim, max_size=dim), min_size=n, max_size=n)))
    v = np.array(data.draw(st.lists(st.lists(coord, min_size=dim, max_size=dim), min_size=n, max_size=n)))
    point = np.array(data.draw(st.lists(coord, min_size=dim, max_size=dim)))
    before = v.copy()
    space = OPEN2 if dim == 2 else OPEN3
    pointer_turn(p, v, np.ones(n, dtype=bool), point, sign, max_angle, radius, space)
    assert np.isfinite(v).all()
    speed0 = np.linalg.norm(before, axis=1)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), speed0, rtol=1e-12, atol=1e-12)
    moving = speed0 > 1e-9
    cos = np.einsum("ij,ij->i", before[moving], v[moving]) / speed0[moving] ** 2
    turned = np.arccos(np.clip(cos, -1.0, 1.0))
    assert (turned <= max_angle + 1e-6).all()
    d = sign * (point - p[moving])
    dn = np.linalg.norm(d, axis=1)
    ok = dn > 1e-9
    scale = speed0[moving][ok] * dn[ok]
    angle0 = np.arccos(np.clip(np.einsum("ij,ij->i", before[moving][ok], d[ok]) / scale, -1, 1))
    angle1 = np.arccos(np.clip(np.einsum("ij,ij->i", v[moving][ok], d[ok]) / scale, -1, 1))
    assert (angle1 <= angle0 + 1e-6).all()  # never turns away from the wanted direction


# ------------------------------------------------------------------------------ in a Simulation


def boids(n=80, **changes):
    params = apply_overrides(load_preset("boids-2d"), [f"agents.n={n}"] + [f"{k}={v}" for k, v in changes.items()])
    return Simulation(params)


def centroid(sim):
    return sim.state.position[sim.state.alive].mean(axis=0)


def test_attract_moves_the_flock_centroid_toward_the_point():
    free, pulled = boids(), boids()
    start = centroid(free)
    point = start + np.array([150.0, 0.0])
    pulled.set_pointer(point, "attract")
    free.step(120)
    pulled.step(120)
    assert np.linalg.norm(centroid(pulled) - point) < np.linalg.norm(centroid(free) - point) - 20.0


def test_repel_moves_the_flock_away():
    free, pushed = boids(), boids()
    point = centroid(free)
    pushed.set_pointer(point, "repel")
    free.step(60)
    pushed.step(60)
    spread = lambda s: np.linalg.norm(s.state.position - point, axis=1).mean()  # noqa: E731
    assert spread(pushed) > spread(free)


def test_off_stops_the_effect_and_is_reproducible():
    a, b = boids(), boids()
    for sim in (a, b):
        sim.set_pointer([10.0, 10.0], "attract")
        sim.step(10)
        sim.set_pointer(None, "off")
        sim.step(10)
    np.testing.assert_array_equal(a.state.velocity, b.state.velocity)
    pointer = next(c for c in a.components if c.name == "pointer")
    assert pointer.mode == "off"
    assert len(pointer.last_rows) == 0


def test_off_without_a_pointer_adds_nothing():
    sim = boids()
    sim.set_pointer(None, "off")
    assert all(c.name != "pointer" for c in sim.components)


@pytest.mark.parametrize(
    ("point", "mode", "message"),
    [
        ([1.0, 2.0], "pull", "pointer.mode: allowed: attract, repel, off"),
        ([1.0, 2.0, 3.0], "attract", "pointer.point: needs 2 numbers"),
        ([1.0, float("nan")], "repel", "pointer.point: must be finite"),
        ("here", "attract", "pointer.point: needs 2 numbers"),
    ],
)
def test_bad_pointer_values_are_one_line_errors(point, mode, message):
    sim = boids()
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        sim.set_pointer(point, mode)
    assert all(c.name != "pointer" for c in sim.components)


def test_pointer_parameters_are_validated_by_the_schema():
    with pytest.raises(ConfigError, match=r"pointer\.turn_rate_deg"):
        apply_overrides(load_preset("boids-2d"), ["pointer.turn_rate_deg=0"])
    with pytest.raises(ConfigError, match=r"pointer\.radius"):
        apply_overrides(load_preset("vicsek"), ["pointer.radius=-1"])


def test_radius_parameter_limits_the_agents_that_turn():
    sim = boids(n=200, **{"pointer.radius": 30.0})
    point = sim.state.position[0].copy()
    sim.set_pointer(point, "attract")
    sim.step()
    pointer = next(c for c in sim.components if c.name == "pointer")
    rows = pointer.last_rows
    assert 0 < len(rows) < 200
    gap = np.linalg.norm(sim.state.position[rows] - point, axis=1)
    assert (gap <= 30.0 + 1e-9).all()


@pytest.mark.parametrize("preset", ["vicsek", "couzin", "abm-flocking-small", "starlings-3d"])
def test_every_model_turns_toward_the_pointer(preset):
    """After a few steps with attract, more agents head for the point than without."""
    params = apply_overrides(load_preset(preset), ["agents.n=60"])
    free, pulled = Simulation(params), Simulation(params)
    point = free.state.position.mean(axis=0) + 0.3 * np.ptp(free.state.position, axis=0)
    pulled.set_pointer(point, "attract")
    free.step(5)
    pulled.step(5)

    def facing(sim):
        v = sim.state.velocity
        d = displacement_array(sim.state.position, point, sim.model.space)
        return np.mean(np.einsum("ij,ij->i", v, d) / (np.linalg.norm(v, axis=1) * np.linalg.norm(d, axis=1)))

    assert facing(pulled) > facing(free) + 0.05
    assert np.isfinite(pulled.state.velocity).all()


def test_checkpoint_restores_the_pointer_bitwise():
    sim = boids()
    sim.set_pointer([30.0, 40.0], "attract")
    sim.step(3)
    saved = sim.checkpoint()
    assert "pointer" in saved["components"]
    again = Simulation(sim.params)  # has no pointer until restored
    again.restore(saved)
    sim.step(5)
    again.step(5)
    np.testing.assert_array_equal(sim.state.velocity, again.state.velocity)
    plain = boids()
    plain.restore(boids().checkpoint())  # no pointer on either side: nothing changes
    assert all(c.name != "pointer" for c in plain.components)
    with_pointer = boids()
    with_pointer.set_pointer([0.0, 0.0], "repel")
    with_pointer.restore(boids().checkpoint())  # the checkpoint has none: it goes
    assert all(c.name != "pointer" for c in with_pointer.components)


def test_component_state_round_trips():
    sim = boids()
    c = PointerSteering(sim)
    c.set([1.0, 2.0], "repel")
    d = PointerSteering(sim)
    d.load_state_dict(c.state_dict())
    assert d.mode == "repel"
    np.testing.assert_array_equal(d.point, [1.0, 2.0])
    c.set(None, "off")
    d.load_state_dict(c.state_dict())
    assert d.mode == "off"
    assert d.point is None


@pytest.mark.parametrize("far", [1e308, 1e200, -1e308])
def test_a_point_too_far_for_a_finite_distance_still_turns_agents(far):
    """A point at 1e308 has no finite distance from an agent (its square overflows): the direction
    toward it used to be [0, 0], and nothing turned."""
    v, rows = turn([[0.0, 0.0]], [[2.0, 0.0]], [0.0, far])
    side = math.copysign(1.0, far)
    np.testing.assert_allclose(v[0], [2 * math.cos(NINE), side * 2 * math.sin(NINE)], rtol=0, atol=1e-12)
    assert rows.tolist() == [0]
