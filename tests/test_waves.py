"""The turn-waves metrics on hand-made arrays, and the field-unit waves preset as the same run scaled."""

from __future__ import annotations

import math

import numpy as np

from flocksim.config import apply_overrides
from flocksim.experiments import EXPERIMENTS
from flocksim.experiments.waves import (
    AGREE_S,
    FIELD,
    FIELD_SCALE,
    WAVE_PRESET,
    arrival_times,
    field_units,
    front_agreement,
    front_fit,
    switched,
)
from flocksim.scenarios import load_preset
from flocksim.simulation import Simulation


def test_arrival_times_are_the_end_of_the_first_step_at_or_above_each_level():
    # 3 steps of dt = 0.5 s, 3 birds: bird 0 reaches 0.1 in step 0 and 0.3 in step 2; bird 1 reaches
    # 0.1 and 0.3 in step 1; bird 2 never reaches 0.1 (0.09 stays below it).
    divergence = np.array([[0.1, 0.0, 0.09], [0.2, 0.3, 0.0], [0.3, 0.1, 0.05]])
    got = arrival_times(divergence, np.array([0.1, 0.3]), 0.5)
    assert np.array_equal(got, [[0.5, 1.0, math.inf], [1.5, 1.0, math.inf]])


def test_front_agreement_is_the_median_lag_and_the_share_of_birds_that_differ():
    dt = 0.05
    front = np.array([0.10, 0.20, math.inf, math.inf, 0.50])
    control = np.array([0.15, 0.50, 0.30, math.inf, 0.50])
    lag, mismatch = front_agreement(front, control, dt)
    # reached in both: birds 0, 1, 4 with lags 0.05, 0.30, 0.00 s -> median 0.05 s, 1 step of 0.05 s; reached
    # in either: 0, 1, 2, 4; differing: bird 1 (0.30 > AGREE_S) and bird 2 (reached by the control only): 2 of 4
    assert AGREE_S == 0.1
    assert lag == 1.0 and mismatch == 0.5
    assert front_agreement(front, front, dt) == (0.0, 0.0)
    # an even count: the median of lags 0.05 and 0.10 s is 0.075 s, 1.5 steps
    assert front_agreement(np.array([0.1, 0.2]), np.array([0.15, 0.3]), dt) == (1.5, 0.0)


def test_front_fit_recovers_a_straight_front_and_says_nan_below_20_birds():
    r = np.linspace(1.0, 20.0, 40)
    fit = front_fit(r, 0.1 + r / 25.0)
    assert math.isclose(fit["speed"], 25.0) and math.isclose(fit["r2"], 1.0) and math.isclose(fit["exponent"], 1.0)
    # t = 0.1 + r^2 / 100: diffusive arrival, exponent 2
    assert math.isclose(front_fit(r, 0.1 + r**2 / 100.0)["exponent"], 2.0)
    assert all(math.isnan(v) for v in front_fit(r[:19], r[:19]).values())


def test_field_units_are_the_same_run_at_one_sixteenth_of_the_size():
    """16 units per metre is a power of two: every length divided by it gives the pixel run, bit for bit,
    scaled. Leaving one length out (the separation radius) is a different flock: the check can fail."""
    assert FIELD_SCALE == 16.0
    base = apply_overrides(load_preset(WAVE_PRESET), ["agents.n=200"])
    overrides = list(field_units(WAVE_PRESET))
    assert "agents.max_speed=11.25" in overrides and "world.bounds.size=[15.0, 15.0, 15.0]" in overrides
    pixel = Simulation(base, seed=3)
    field = Simulation(apply_overrides(base, overrides), seed=3)
    partial = Simulation(apply_overrides(base, [o for o in overrides if "separation" not in o]), seed=3)
    for sim in (pixel, field, partial):
        sim.step(60)
    assert np.array_equal(pixel.state.position / FIELD_SCALE, field.state.position)
    assert np.array_equal(pixel.state.velocity / FIELD_SCALE, field.state.velocity)
    assert np.array_equal(pixel.state.spin, field.state.spin)
    assert not np.array_equal(pixel.state.position / FIELD_SCALE, partial.state.position)


def test_turn_propagation_times_its_waves_in_metres_and_seconds_as_turn_waves_does():
    """turn-propagation's wave conditions carry the field-unit overrides (every length / 16), as turn-waves'
    conditions do: their speed and theory_speed are in m/s (410 units/s in the table before: 25.6 m/s)."""
    waves = {c.label: c for c in EXPERIMENTS["turn-propagation"].conditions if c.label.startswith("wave: ")}
    front = {c.label: c for c in EXPERIMENTS["turn-waves"].conditions}
    assert set(waves) == {"wave: underdamped", "wave: overdamped (eta = chi)"}
    assert "agents.max_speed=11.25" in FIELD  # the preset's 180 units/s over 16 units per metre
    for label, condition in waves.items():
        assert condition.preset == WAVE_PRESET
        assert set(FIELD) <= set(condition.overrides)
        assert condition.overrides == front[label.removeprefix("wave: ")].overrides


def test_switched_continues_the_same_state_with_new_parameters():
    """The damping switched off after a warm-up: the same birds, spins and clock, eta 0 from then on,
    and the next step differs from the run that kept it (the switch acts)."""
    sim = Simulation(apply_overrides(load_preset(WAVE_PRESET), ["agents.n=60"]), seed=1)
    sim.step(5)
    same = switched(sim, ())
    assert same is sim
    off = switched(sim, ("rules.alignment.eta=0.0",))
    assert off.params.rules.alignment.eta == 0.0 and sim.params.rules.alignment.eta == 0.02
    assert off.time == sim.time and np.array_equal(off.state.position, sim.state.position)
    assert np.array_equal(off.state.spin, sim.state.spin)
    sim.step()
    off.step()
    assert not np.array_equal(off.state.velocity, sim.state.velocity)
