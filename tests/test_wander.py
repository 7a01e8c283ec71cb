"""Speed that breathes: each banked bird's own speed and turning urges (Ornstein-Uhlenbeck processes
drawn from the run's generator) and the speed control that is soft near cruise
(``rules.flight.speed_band``, ``speed_wander``, ``steer_wander``, ``wander_time``), against numbers
computed by hand and the processes' known statistics."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.components import FlightWander
from flocksim.config import ConfigError
from flocksim.kernels.flight import banked_velocity, speed_control, wander_step
from flocksim.models.reynolds import coefficients

URGES = ["rules.flight.speed_wander=3.0", "rules.flight.steer_wander=1.0", "rules.flight.wander_time=1.0"]
CALM = ["rules.flight.speed_wander=0", "rules.flight.steer_wander=0", "rules.flight.speed_band=0"]


def starlings(*overrides: str, n: int = 200):
    return apply_overrides(load_preset("starlings-3d"), [f"agents.n={n}", *overrides])


def flight_coefficients(*overrides: str):
    return coefficients(starlings(*CALM, *overrides))


# ================================================================= by hand


def test_an_urge_steps_exactly_as_the_ornstein_uhlenbeck_process():
    decay = math.exp(-0.1 / 2.0)
    expected = 1.5 * decay + 3.0 * math.sqrt(1.0 - decay * decay) * -0.7
    assert wander_step(1.5, -0.7, 3.0, 0.1, 2.0) == pytest.approx(expected, rel=1e-15)
    assert wander_step(0.0, 0.0, 3.0, 0.1, 2.0) == 0.0
    assert wander_step(2.0, 5.0, 0.0, 0.1, 2.0) == pytest.approx(2.0 * decay, rel=1e-15)


def test_speed_control_is_linear_without_a_band_and_cubic_with_one():
    linear = flight_coefficients("rules.flight.speed_time=2.0")
    assert speed_control(7.0, 0.01, linear) == pytest.approx((10.0 - 7.0) / 2.0)
    assert speed_control(13.0, 0.01, linear) == pytest.approx(-1.5)
    banded = flight_coefficients("rules.flight.speed_time=2.0", "rules.flight.speed_band=1.5")
    assert speed_control(7.0, 0.01, banded) == pytest.approx(1.5 * (3.0 / 1.5) ** 2)  # stronger far off
    assert speed_control(9.5, 0.01, banded) == pytest.approx(0.25 * (0.5 / 1.5) ** 2)  # weak near cruise
    assert speed_control(13.0, 0.01, banded) == pytest.approx(-1.5 * 4.0)  # the sign kept
    assert speed_control(10.0, 0.01, banded) == 0.0


def test_speed_control_never_carries_the_speed_past_cruise_in_one_step():
    """A stiff law (a tiny band, or speed_time below dt) is capped at rate 1/dt: one step lands on
    cruise instead of overshooting it and growing (seen: speed_band 1e-300 gave NaN in 2 steps)."""
    dt = 0.01
    for overrides in (("rules.flight.speed_band=1e-300",), ("rules.flight.speed_time=1e-3",)):
        c = flight_coefficients(*overrides)
        for speed in (0.5, 7.0, 9.999, 10.001, 13.0, 1e6):
            thrust = speed_control(speed, dt, c)
            assert thrust == pytest.approx((10.0 - speed) / dt, rel=1e-12)
            assert speed + thrust * dt == pytest.approx(10.0, rel=1e-9)
    # where the cap does not bind, the law is untouched (the presets' runs bit for bit)
    banded = flight_coefficients("rules.flight.speed_band=1.5")
    assert speed_control(4.0, dt, banded) == 6.0 * (6.0 / 1.5) ** 2


def test_the_speed_urge_adds_to_thrust_and_the_turning_urge_sets_the_bank():
    c = flight_coefficients()
    dt = 0.01
    # at cruise, level: lift equals gravity, so only the urge changes the speed
    vx, vy, vz, bank = banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 3, dt, c)
    assert (vx, vy, vz, bank) == pytest.approx((10.0 + 2.0 * dt, 0.0, 0.0, 0.0), abs=1e-12)
    # the turning urge is a lateral acceleration: target bank atan(urge / g), followed at roll_in
    _, _, _, bank = banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 3, dt, c)
    roll_in = c.flight_roll_in
    assert bank == pytest.approx(math.atan2(3.0, c.flight_gravity) * roll_in * dt, rel=1e-12)
    # the same as steering the bird sideways by 3 m/s^2 (side = h x up = +z for h = +x)
    steered = banked_velocity(10.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3, dt, c)
    assert steered[3] == bank


# ================================================================= statistics


@pytest.mark.parametrize("dt", [1 / 60, 0.25])
def test_urges_have_the_asked_spread_and_correlation_time_at_any_step(dt):
    """Many independent urges from 0: after 5 correlation times their spread is sd; the correlation
    over one wander_time is 1/e; neither depends on dt (the update is exact)."""
    sd, tau, chains = 3.0, 0.5, 4000
    rng = np.random.default_rng(5)
    step = np.vectorize(lambda u, z: wander_step(u, z, sd, dt, tau))
    urges = np.zeros(chains)
    lag = round(tau / dt)
    steps = round(5 * tau / dt)
    for _ in range(steps):
        urges = step(urges, rng.standard_normal(chains))
    start = urges.copy()
    for _ in range(lag):
        urges = step(urges, rng.standard_normal(chains))
    assert urges.std() == pytest.approx(sd, rel=0.05)
    correlation = np.corrcoef(start, urges)[0, 1]
    assert correlation == pytest.approx(math.exp(-lag * dt / tau), abs=0.04)


# ================================================================= in a run


def test_urges_make_speeds_fluctuate_and_off_they_leave_no_trace():
    calm = Simulation(starlings(*CALM), seed=3)
    assert not any(isinstance(c, FlightWander) for c in calm.components)
    moving = Simulation(starlings("rules.flight.speed_band=1.5", *URGES), seed=3)
    assert isinstance(moving.components[0], FlightWander)
    calm.step(240)
    moving.step(240)
    assert not calm.state.spin[:, 1:].any()
    urges = moving.state.spin[:, 1:3]
    assert 1.5 < urges[:, 0].std() < 4.5 and 0.5 < urges[:, 1].std() < 1.5

    def fluctuation(sim):
        speed = np.linalg.norm(sim.state.velocity, axis=1)
        return speed.var() / speed.mean() ** 2

    assert fluctuation(moving) > 10 * fluctuation(calm)
    assert np.isfinite(moving.state.position).all()


def test_every_step_draws_new_numbers_from_the_run_generator():
    sim = Simulation(starlings(*URGES, n=50), seed=1)
    sim.step(1)
    first = sim.model.wander.copy()
    sim.step(1)
    assert first.shape == (50, 2) and not np.array_equal(first, sim.model.wander)
    again = Simulation(starlings(*URGES, n=50), seed=1)
    again.step(1)
    assert np.array_equal(again.model.wander, first)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads on this machine")
def test_a_run_with_urges_is_bitwise_independent_of_threads_and_resumes_from_a_checkpoint():
    p = starlings("rules.flight.speed_band=1.5", *URGES)
    before = numba.get_num_threads()
    try:
        one = Simulation(p, seed=4, threads=1)
        one.step(30)
        saved = one.checkpoint()
        one.step(30)
        two = Simulation(p, seed=4, threads=2)
        two.step(60)
    finally:
        numba.set_num_threads(before)
    resumed = Simulation(p, seed=4)
    resumed.restore(saved)
    resumed.step(30)
    for name in ("position", "velocity", "spin"):
        expected = getattr(one.state, name).tobytes()
        assert getattr(two.state, name).tobytes() == expected, name
        assert getattr(resumed.state, name).tobytes() == expected, name


@pytest.mark.parametrize(
    "override",
    ["rules.flight.speed_band=-1", "rules.flight.speed_wander=-0.5", "rules.flight.steer_wander=nan",
     "rules.flight.wander_time=0"],
)  # fmt: skip
def test_bad_values_are_refused_by_name(override):
    field = override.split("=")[0].split(".")[-1]
    with pytest.raises((ConfigError, ValueError), match=field):
        starlings(override)
