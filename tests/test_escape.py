"""Escape manoeuvres copied between neighbours (agitation waves): sides, starts near a predator,
the copy chain's timing, the zig-zag urge, refractory time, checkpoints and the parameter check,
each computed by hand on a few birds."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import flocksim
from flocksim.components.escape import side_vectors
from flocksim.config import ConfigError, apply_overrides

DT = 1.0 / 60.0


def escape_sim(n: int, *overrides: str) -> flocksim.Simulation:
    params = apply_overrides(
        flocksim.load_preset("starlings-3d"),
        [
            f"agents.n={n}",
            "escape.enabled=true",
            "rules.flight.speed_wander=0",
            "rules.flight.steer_wander=0",
            *overrides,
        ],
    )
    return flocksim.Simulation(params, seed=0)


def host_at(sim: flocksim.Simulation, t: float, predators=()) -> SimpleNamespace:
    """The simulation seen by the component at time t [s], with predators at the given points."""
    sim.model.predators = np.array(predators, dtype=np.float64).reshape(-1, 3)
    return SimpleNamespace(state=sim.state, model=sim.model, params=sim.params, dt=DT, time=t)


def line_of_birds(sim: flocksim.Simulation, gaps: list[float]) -> None:
    """Birds on the x axis, each gap larger than the one before (so each bird's nearest neighbour is
    the one before it), all flying +z at 10 m/s (side vector h x up = +z x +y = -x)."""
    x = np.concatenate([[0.0], np.cumsum(gaps)])
    sim.state.position[:] = 0.0
    sim.state.position[:, 0] = x
    sim.state.velocity[:] = [0.0, 0.0, 10.0]
    sim.state.spin[:] = 0.0


def test_side_vectors_are_heading_cross_up():
    v = np.array([[10.0, 0.0, 0.0], [0.0, 0.0, 5.0], [3.0, 4.0, 0.0], [0.0, 7.0, 0.0], [0.0, 0.0, 0.0]])
    side = side_vectors(v, 3)
    np.testing.assert_allclose(side[0], [0.0, 0.0, 1.0])  # +x x +y = +z
    np.testing.assert_allclose(side[1], [-1.0, 0.0, 0.0])  # +z x +y = -x
    np.testing.assert_allclose(side[2], [0.0, 0.0, 1.0])  # climbing: its horizontal part's side
    np.testing.assert_allclose(side[3], [0.0, 0.0, 1.0])  # straight up: +z, as the flight kernel
    np.testing.assert_allclose(side[4], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(side_vectors(np.array([[10.0, 0.0], [0.0, 2.0]]), 2), [[0.0, -1.0], [1.0, 0.0]])


def test_birds_near_a_predator_start_on_the_side_away_from_it():
    sim = escape_sim(4, "escape.detection=10", "escape.copy_from=0")
    line_of_birds(sim, [3.0, 20.0, 40.0])  # x = 0, 3, 23, 63
    escape = next(c for c in sim.components if c.name == "escape")
    # predator at x = -5: birds at 0 (5 m) and 3 (8 m) see it; sides +z heading: side = -x,
    # away from the predator is +x, so their first side is -1
    escape.before_step(host_at(sim, 1.0, [[-5.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(escape.start, [1.0, 1.0, -np.inf, -np.inf])
    np.testing.assert_array_equal(escape.first_side[:2], [-1.0, -1.0])
    assert escape.started == 2
    # the urge: strength toward the first side at once
    np.testing.assert_array_equal(sim.state.spin[:, 2], [-20.0, -20.0, 0.0, 0.0])
    # a predator on the other side (x = 8: 5 m from the bird at 3, 8 from the one at 0) -> side +1
    sim2 = escape_sim(2, "escape.detection=10", "escape.copy_from=0")
    line_of_birds(sim2, [3.0])
    escape2 = next(c for c in sim2.components if c.name == "escape")
    escape2.before_step(host_at(sim2, 0.0, [[8.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(escape2.first_side, [1.0, 1.0])


def test_the_copy_travels_one_neighbour_per_latency():
    """Birds at x = 0, 1, 2.5, 4.5, 7 (each one's nearest: the one before); bird 0 starts at t = 0;
    with latency 0.05 s = 3 steps of 1/60 s, bird j starts at step 3 j."""
    sim = escape_sim(5, "escape.copy_from=1", "escape.latency=0.05", "escape.duration=5", "escape.period=10")
    line_of_birds(sim, [1.0, 1.5, 2.0, 2.5])
    escape = next(c for c in sim.components if c.name == "escape")
    escape.begin(np.array([0]), np.array([1.0]), 0.0)
    for step in range(1, 13):
        escape.before_step(host_at(sim, step * DT))
    np.testing.assert_allclose(escape.start, [0.0, 3 * DT, 6 * DT, 9 * DT, 12 * DT], rtol=1e-12)
    np.testing.assert_array_equal(escape.first_side, [1.0] * 5)  # the neighbour's side copied
    assert escape.started == 5


def test_no_copy_within_the_step_of_a_start_even_without_latency():
    sim = escape_sim(3, "escape.copy_from=1", "escape.latency=0")
    line_of_birds(sim, [1.0, 1.5])
    escape = next(c for c in sim.components if c.name == "escape")
    escape.begin(np.array([0]), np.array([1.0]), 0.0)
    escape.before_step(host_at(sim, 0.0))
    np.testing.assert_array_equal(escape.start, [0.0, -np.inf, -np.inf])
    escape.before_step(host_at(sim, DT))
    escape.before_step(host_at(sim, 2 * DT))
    np.testing.assert_allclose(escape.start, [0.0, DT, 2 * DT])


def test_the_urge_zig_zags_ends_at_zero_and_the_bird_rests_its_refractory_time():
    sim = escape_sim(2, "escape.copy_from=0", "escape.period=0.5", "escape.duration=1", "escape.refractory=2")
    line_of_birds(sim, [50.0])
    escape = next(c for c in sim.components if c.name == "escape")
    escape.begin(np.array([0]), np.array([-1.0]), 0.0)
    expected = {0.0: -20.0, 0.2: -20.0, 0.3: 20.0, 0.6: -20.0, 0.8: 20.0, 0.99: 20.0, 1.01: 0.0}
    for t, urge in expected.items():
        escape.before_step(host_at(sim, t))
        assert sim.state.spin[0, 2] == urge, t
    assert sim.state.spin[1, 2] == 0.0
    # within the refractory time a predator at the bird starts nothing; after it, it does
    escape.before_step(host_at(sim, 2.9, [[0.0, 0.0, 0.0]]))
    assert escape.start[0] == 0.0
    escape.before_step(host_at(sim, 3.0, [[0.0, 0.0, 0.0]]))
    assert escape.start[0] == 3.0


def test_a_started_bird_banks_toward_its_side_in_the_flight_kernel():
    """A lone bird (no neighbour steers it), flying +z: side -x."""
    sim = escape_sim(1, "escape.copy_from=0")
    line_of_birds(sim, [])
    escape = next(c for c in sim.components if c.name == "escape")
    escape.begin(np.array([0]), np.array([1.0]), sim.time)
    sim.step(15)  # a quarter second
    bank = math.degrees(sim.state.spin[0, 0])
    assert bank > 30.0  # target atan(20 / 9.81) = 64 degrees, clipped to 60, at roll_in 10 /s
    assert sim.state.velocity[0, 0] < -0.5  # it has turned toward its side, -x
    sim.step(60)  # past the manoeuvre (1 s): the urge is gone and the bird rolls level
    assert sim.state.spin[0, 2] == 0.0


def test_a_checkpointed_twin_continues_the_wave_bit_for_bit():
    from flocksim.experiments.common import twin

    sim = escape_sim(60)
    sim.step(30)
    escape = next(c for c in sim.components if c.name == "escape")
    escape.begin(np.arange(5), np.ones(5), sim.time)
    copy = twin(sim)
    sim.step(40)
    copy.step(40)
    np.testing.assert_array_equal(sim.state.position, copy.state.position)
    other = next(c for c in copy.components if c.name == "escape")
    np.testing.assert_array_equal(escape.start, other.start)
    assert escape.started == other.started > 5


def test_escape_needs_banked_flight():
    with pytest.raises(ConfigError) as exc:
        apply_overrides(flocksim.load_preset("boids-2d"), ["escape.enabled=true"])
    assert "escape.enabled" in str(exc.value) and "banked" in str(exc.value)


def test_an_unknown_escape_value_is_refused_by_name():
    with pytest.raises(ConfigError) as exc:
        apply_overrides(flocksim.load_preset("starlings-3d"), ["escape.copy_from=-1"])
    assert "escape.copy_from" in str(exc.value)


def test_a_neighbour_beyond_reach_is_not_copied():
    """Birds at x = 0 and 6: with reach 5 the second never watches the first; with reach 7 it copies
    it after one latency (3 steps)."""
    for reach, expected in ((5.0, -np.inf), (7.0, 3 * DT)):
        sim = escape_sim(2, "escape.copy_from=1", f"escape.reach={reach}", "escape.duration=5")
        line_of_birds(sim, [6.0])
        escape = next(c for c in sim.components if c.name == "escape")
        escape.begin(np.array([0]), np.array([1.0]), 0.0)
        for step in range(1, 6):
            escape.before_step(host_at(sim, step * DT))
        assert escape.start[1] == pytest.approx(expected), reach


def test_in_a_periodic_world_birds_watch_across_the_edge():
    """A 20 m periodic box: birds at x = 0.5 and 19.5 are 1 m apart across the edge, the third at
    x = 8 is 7.5 m from the first; with one neighbour watched and reach 5, the bird at 19.5 copies
    the one at 0.5 and the one at 8 copies nobody. A predator across the edge is seen too."""
    box = ["world.bounds.kind=periodic", "world.bounds.size=[20.0, 20.0, 20.0]"]
    sim = escape_sim(3, *box, "escape.copy_from=1", "escape.duration=5", "escape.detection=2")
    line_of_birds(sim, [19.0, 7.5])  # flying +z, then placed inside the box:
    sim.state.position[:, 0] = [0.5, 19.5, 8.0]
    sim.state.position[:, 1:] = 10.0
    escape = next(c for c in sim.components if c.name == "escape")
    escape.begin(np.array([0]), np.array([1.0]), 0.0)
    for step in range(1, 6):
        escape.before_step(host_at(sim, step * DT))
    np.testing.assert_allclose(escape.start, [0.0, 3 * DT, -np.inf])
    # a predator at x = 19.9 is 0.6 m from bird 0 across the edge (its side away: +x, i.e. -1 here)
    sim2 = escape_sim(3, *box, "escape.copy_from=0", "escape.detection=1")
    sim2.state.position[:] = 10.0
    sim2.state.position[:, 0] = [0.5, 5.0, 10.0]
    sim2.state.velocity[:] = [0.0, 0.0, 10.0]
    other = next(c for c in sim2.components if c.name == "escape")
    other.before_step(host_at(sim2, 0.0, [[19.9, 10.0, 10.0]]))
    np.testing.assert_array_equal(other.start, [0.0, -np.inf, -np.inf])
    assert other.first_side[0] == -1.0
