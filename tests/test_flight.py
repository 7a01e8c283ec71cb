"""Banked flight and the roost (rules.flight, rules.roost; Hildenbrandt et al. 2010): each
ingredient against numbers computed by hand, the parameter checks, and whole flocks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim import Simulation, load_preset
from flocksim.config import apply_overrides
from flocksim.kernels.flight import banked_velocity, flight_frame, rolled_bank, roost_pull
from flocksim.models.reynolds import coefficients
from flocksim.params import ReynoldsParams

G = 9.81


def coeffs(dim: int = 3, **flight):
    """Kernel coefficients of banked flight (cruise 10 units/s, speed time 1 s) with ``flight``
    overrides and the roost centred on the origin (radius 100, pull 3, stiffness 0.25, climb 2)."""
    params = ReynoldsParams.model_validate(
        {
            "world": {"dim": dim, "bounds": {"kind": "open", "size": [10.0] * dim}},
            "rules": {
                "flight": {"mode": "banked", **flight},
                "roost": {
                    "weight": 1.0,
                    "center": [0.0] * dim,
                    "radius": 100.0,
                    "pull": 3.0,
                    "altitude_stiffness": 0.25,
                    "max_climb": 2.0,
                },
            },
        }
    )
    return coefficients(params)


def test_the_flight_frame_is_right_handed_and_level():
    side_up = flight_frame(1.0, 0.0, 0.0, 3)
    assert side_up == pytest.approx((0.0, 0.0, 1.0, 0.0, 1.0, 0.0))
    h = np.array([0.6, 0.0, 0.8])
    s, u = np.array(flight_frame(*h, 3)[:3]), np.array(flight_frame(*h, 3)[3:])
    assert s == pytest.approx(np.cross(h, [0.0, 1.0, 0.0]))
    assert u == pytest.approx([0.0, 1.0, 0.0])
    climbing = np.array([0.6, 0.8, 0.0])  # side stays horizontal, up tilts back
    s, u = np.array(flight_frame(*climbing, 3)[:3]), np.array(flight_frame(*climbing, 3)[3:])
    assert s == pytest.approx([0.0, 0.0, 1.0]) and u == pytest.approx([-0.8, 0.6, 0.0])
    assert flight_frame(0.0, 1.0, 0.0, 3)[:3] == (0.0, 0.0, 1.0)  # straight up: a side all the same
    assert flight_frame(1.0, 0.0, 0.0, 2) == (0.0, -1.0, 0.0, 0.0, 0.0, 0.0)


def test_the_bank_follows_its_target_at_the_roll_rates():
    max_bank = math.radians(60.0)
    # target atan(g / g) = 45 degrees, growing: 10 /s x 0.01 s = a tenth of the way
    assert rolled_bank(0.0, G, G, max_bank, 10.0, 3.0, 0.01) == pytest.approx(0.1 * math.pi / 4)
    # no lateral demand: back toward level at the roll-out rate, 3 /s x 0.1 s
    assert rolled_bank(0.5, 0.0, G, max_bank, 10.0, 3.0, 0.1) == pytest.approx(0.5 * 0.7)
    # a change of side is a roll-out; a large step never overshoots the target
    assert rolled_bank(0.5, -G, G, max_bank, 10.0, 3.0, 0.1) == pytest.approx(0.5 + (-math.pi / 4 - 0.5) * 0.3)
    assert rolled_bank(0.0, G, G, max_bank, 10.0, 3.0, 1.0) == pytest.approx(math.pi / 4)
    # the target is clipped to the largest bank
    assert rolled_bank(0.0, 100 * G, G, max_bank, 10.0, 3.0, 1.0) == pytest.approx(max_bank)
    assert rolled_bank(0.0, -100 * G, G, max_bank, 10.0, 3.0, 1.0) == pytest.approx(-max_bank)


def test_level_flight_at_cruise_speed_is_steady():
    c = coeffs()
    assert banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3, 0.01, c) == (10.0, 0.0, 0.0, 0.0)
    assert banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2, 0.01, c) == (10.0, 0.0, 0.0, 0.0)
    assert banked_velocity(0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.2, 0.0, 0.0, 3, 0.01, c) == (0.0, 0.0, 0.0, 0.2)


def test_a_bank_tilts_the_lift_and_bends_the_path():
    c = coeffs(roll_out=2.0)
    dt = 0.01
    bank = 0.4 * (1 - 2.0 * dt)  # no lateral demand: it rolls out at 2 /s first
    vx, vy, vz, b = banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0, 3, dt, c)
    assert b == pytest.approx(bank)
    # lift g along (0, cos b, sin b) against gravity: sideways g sin b, down g (1 - cos b)
    assert (vx, vy, vz) == pytest.approx((10.0, (G * math.cos(bank) - G) * dt, G * math.sin(bank) * dt))
    # 2D: a level banked turn seen from above, g tan(bank) toward side = (h_y, -h_x)
    vx, vy, vz, b = banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0, 2, dt, c)
    assert (vx, vy, vz) == pytest.approx((10.0, -G * math.tan(bank) * dt, 0.0))


def test_only_the_lateral_steering_waits_for_the_bank():
    c = coeffs()
    dt = 0.01
    # forward 2 and vertical 3 act at once; lateral 5 only starts the roll
    vx, vy, vz, b = banked_velocity(10.0, 0.0, 0.0, 2.0, 3.0, 5.0, 0.0, 0.0, 0.0, 3, dt, c)
    bank = math.atan2(5.0, G) * 10.0 * dt
    assert b == pytest.approx(bank)
    assert vx == pytest.approx(10.0 + 2.0 * dt)
    assert vy == pytest.approx(10.0 * 0.0 + (3.0 + G * math.cos(bank) - G) * dt)
    assert vz == pytest.approx(G * math.sin(bank) * dt)


def test_speed_relaxes_to_cruise_and_a_slow_bird_sinks():
    c = coeffs(speed_time=0.5)
    dt = 0.01
    vx, vy, vz, _ = banked_velocity(5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3, dt, c)
    # thrust (10 - 5) / 0.5 along h; lift g (5/10)^2 = g/4 against g
    assert (vx, vy, vz) == pytest.approx((5.0 + 10.0 * dt, -0.75 * G * dt, 0.0))
    vx, _, _, _ = banked_velocity(15.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3, dt, c)
    assert vx == pytest.approx(15.0 - 10.0 * dt)


def test_the_roost_turns_birds_back_and_holds_their_altitude():
    c = coeffs()
    # inside the roost radius, level: nothing
    assert roost_pull(50.0, 0.0, 0.0, 10.0, 0.0, 0.0, 3, c) == (0.0, 0.0, 0.0)
    # at 150 (half the ramp), flying along +z past the centre on its left: a sideways pull of 1.5
    # toward -x, the full sine of the right angle
    fx, fy, fz = roost_pull(150.0, 0.0, 0.0, 0.0, 0.0, 10.0, 3, c)
    assert (fx, fy, fz) == pytest.approx((-1.5, 0.0, 0.0))
    # flying straight away: the full pull, to the positive side (h x up = +z for h = +x), never a brake
    assert roost_pull(300.0, 0.0, 0.0, 10.0, 0.0, 0.0, 3, c) == pytest.approx((0.0, 0.0, 3.0))
    # heading 45 degrees off the centre, ahead: sin 45 of the pull, perpendicular to the heading
    h = np.array([-1.0, 0.0, 1.0]) / math.sqrt(2)
    f = np.array(roost_pull(300.0, 0.0, 0.0, *(10 * h), 3, c))
    assert f @ h == pytest.approx(0.0, abs=1e-12) and np.linalg.norm(f) == pytest.approx(3.0 * math.sqrt(0.5))
    # altitude: a damped spring, 0.25 x (0 - 4) - 2 x 0.5 x 1 = -2, clipped at 2
    assert roost_pull(0.0, 4.0, 0.0, 10.0, 1.0, 0.0, 3, c) == pytest.approx((0.0, -2.0, 0.0))
    assert roost_pull(0.0, -1.0, 0.0, 10.0, 0.0, 0.0, 3, c) == pytest.approx((0.0, 0.25, 0.0))
    # 2D: the plane is horizontal, no altitude
    assert roost_pull(300.0, 0.0, 0.0, 10.0, 0.0, 0.0, 2, coeffs(2)) == pytest.approx((0.0, 3.0, 0.0))


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("rules.alignment.mode=inertial-spin", "rules.alignment.mode"),
        ("rules.cruise.restore=5.0", "rules.cruise.restore"),
        ("rules.flight.max_bank=90.0", "max_bank"),
        ("rules.flight.mode=gliding", "mode"),
    ],
)
def test_banked_flight_refuses_what_it_cannot_fly(override, field):
    with pytest.raises(ValueError, match=field):
        apply_overrides(load_preset("starlings-3d"), [override])


def test_a_roost_centre_needs_a_number_per_axis():
    with pytest.raises(ValueError, match=r"rules\.roost\.center"):
        apply_overrides(load_preset("starlings-3d"), ["rules.roost.center=[1.0, 2.0]"])


@pytest.mark.parametrize("name", ["starlings-2d", "starlings-3d"])
def test_a_murmuration_holds_order_speed_and_its_display_area(name):
    """30 s of the preset: ordered in every second (>= 0.9), at cruise speed, every bird within
    twice the roost's radius of its centre, no NaN. With the roost off the flock flies away,
    so the area check can fail."""
    params = apply_overrides(load_preset(name), ["agents.n=200"])
    sim = Simulation(params, seed=3)
    roost = params.rules.roost
    centre = np.array(roost.center[: params.world.dim])
    horizontal = [0, 2] if params.world.dim == 3 else [0, 1]
    farthest = 0.0
    for _ in range(30):
        sim.step(round(1.0 / sim.dt))
        v = sim.state.velocity
        assert np.isfinite(sim.state.position).all() and np.isfinite(v).all()
        h = v / np.linalg.norm(v, axis=1, keepdims=True)
        assert np.linalg.norm(h.mean(axis=0)) >= 0.9
        d = np.linalg.norm((sim.state.position - centre)[:, horizontal], axis=1)
        farthest = max(farthest, float(d.max()))
    speed = np.linalg.norm(sim.state.velocity, axis=1)
    assert abs(speed.mean() - params.rules.flight.cruise_speed) < 0.5
    assert farthest < 2 * roost.radius, farthest
    free = Simulation(apply_overrides(params, ["rules.roost.weight=0.0"]), seed=3)
    free.step(round(30.0 / free.dt))
    assert np.linalg.norm((free.state.position - centre)[:, horizontal], axis=1).max() > 2 * roost.radius
