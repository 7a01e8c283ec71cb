"""Spontaneous turns copied from neighbour to neighbour (``turning.propagation = "copied"``) and turns
flown through the bank (``turning.turn_by = "bank"``) on the banked starling preset: the start times on
a line of birds (hop x latency), the signal speed, the urge, determinism, checkpoints and the
parameter checks, computed by hand on a few birds."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import flocksim
from flocksim.config import ConfigError, apply_overrides

DT = 1.0 / 60.0


def turning_sim(n: int, *overrides: str, seed: int = 0) -> flocksim.Simulation:
    params = apply_overrides(
        flocksim.load_preset("starlings-3d"),
        [
            f"agents.n={n}",
            "turning.enabled=true",
            "turning.mean_interval=1e6",
            "turning.propagation=copied",
            "rules.flight.speed_wander=0",
            "rules.flight.steer_wander=0",
            *overrides,
        ],
    )
    return flocksim.Simulation(params, seed=seed)


def component(sim: flocksim.Simulation):
    return next(c for c in sim.components if c.name == "turning")


def host_at(sim: flocksim.Simulation, t: float) -> SimpleNamespace:
    """The simulation seen by the component at time t [s]."""
    return SimpleNamespace(state=sim.state, model=sim.model, params=sim.params, dt=DT, time=t, rng=sim.rng)


def line_of_birds(sim: flocksim.Simulation, gaps: list[float]) -> None:
    """Birds on the x axis, all flying +z at 10 m/s (side vector h x up = +z x +y = -x): the wave's
    lateral side is +-x, so its edge bird is the first or the last of the line."""
    x = np.concatenate([[0.0], np.cumsum(gaps)])
    sim.state.position[:] = 0.0
    sim.state.position[:, 0] = x
    sim.state.velocity[:] = [0.0, 0.0, 10.0]
    sim.state.spin[:] = 0.0


def test_on_a_line_each_bird_starts_one_latency_after_the_bird_before_it():
    """Six birds 1 m apart, reach 1.5 m: each bird watches only the birds beside it, so from either end
    bird j starts |j - edge| hops later; latency 0.05 s = 3 steps of 1/60 s."""
    sim = turning_sim(6, "turning.initiators=1", "turning.reach=1.5", "turning.latency=0.05")
    line_of_birds(sim, [1.0] * 5)
    turn = component(sim)
    turn.start_wave(host_at(sim, 0.0))
    edge = int(turn.initiators[0])
    assert edge in (0, 5)
    for step in range(1, 17):
        turn.before_step(host_at(sim, step * DT))
    hops = np.abs(np.arange(6) - edge)
    np.testing.assert_allclose(turn.start, hops * 3 * DT, rtol=1e-12, atol=1e-15)
    assert turn.wave_end == pytest.approx(5 * 3 * DT + turn.duration)
    assert sim.state.turning.all()
    # axis: every turning bird rotates about the wave's axis at 90 deg/s (1.5 degrees a step)
    np.testing.assert_allclose(np.linalg.norm(sim.model.turn, axis=1), math.radians(1.5), rtol=1e-12)


def test_the_signal_speed_is_the_gap_over_the_latency():
    """Birds 1 m apart, latency 3 steps: the start spreads 1 m per 0.05 s, 20 m/s, and reaches all."""
    sim = turning_sim(8, "turning.initiators=1", "turning.reach=1.5", "turning.latency=0.05")
    line_of_birds(sim, [1.0] * 7)
    turn = component(sim)
    turn.start_wave(host_at(sim, 0.0))
    for step in range(1, 30):
        turn.before_step(host_at(sim, step * DT))
    fraction, speed = turn.wave_spread()
    assert fraction == 1.0
    assert speed == pytest.approx(20.0, rel=1e-9)


def test_no_copy_beyond_reach_or_from_a_bird_that_has_finished_its_turn():
    """x = 0, 1, 7: with reach 5 the third bird never starts. With a turn of 2 steps (3 deg at 90
    deg/s) and a latency of 3 steps, no neighbour is still turning when it could be copied."""
    sim = turning_sim(3, "turning.initiators=1", "turning.copy_from=2", "turning.reach=5")
    line_of_birds(sim, [1.0, 6.0])
    turn = component(sim)
    turn.start_wave(host_at(sim, 0.0))
    if turn.initiators[0] == 2:  # the lone bird started: nobody is within its reach
        assert np.isinf(turn.start[:2]).all()
        return
    for step in range(1, 20):
        turn.before_step(host_at(sim, step * DT))
    np.testing.assert_allclose(turn.start[:2], [0.0, 3 * DT])
    assert np.isinf(turn.start[2])
    short = turning_sim(2, "turning.initiators=1", "turning.angle_deg=3", "turning.latency=0.05")
    line_of_birds(short, [1.0])
    other = component(short)
    other.start_wave(host_at(short, 0.0))
    for step in range(1, 10):
        other.before_step(host_at(short, step * DT))
    assert np.isinf(other.start).sum() == 1


def test_bank_turns_ask_the_rate_times_the_cruise_speed_toward_the_inward_side_and_end_at_zero():
    """Flying +z the side vector is -x; the edge bird at x = 0 turns inward toward +x (urge -), the one
    at the far end toward -x (urge +). 90 deg/s x 10 m/s = 15.7 m/s^2 for 1 s, then 0."""
    sim = turning_sim(3, "turning.initiators=1", "turning.copy_from=2", "turning.turn_by=bank")
    line_of_birds(sim, [1.0, 1.5])
    turn = component(sim)
    turn.start_wave(host_at(sim, 0.0))
    urge = math.radians(90.0) * 10.0
    sign = -1.0 if turn.initiators[0] == 0 else 1.0
    turn.before_step(host_at(sim, DT))
    assert sim.state.spin[turn.initiators[0], 2] == pytest.approx(sign * urge, rel=1e-12)
    assert sim.model.turn.shape == (0, 3)  # no rotation about an axis
    for step in range(2, 80):
        turn.before_step(host_at(sim, step * DT))
    assert sim.state.spin[turn.initiators[0], 2] == 0.0  # its turn (1 s) is over
    np.testing.assert_allclose(sim.state.spin[:, 2], [0.0 if s <= 19 * DT else sign * urge for s in turn.start])


def test_a_copied_turn_crosses_a_small_flock_where_an_emergent_one_stays_with_its_initiators():
    """60 banked birds after 1 s of flight, a forced turn, 1.5 s: the copied turn reaches nearly every
    bird, the emergent one only its 10 initiators (the copy is what spreads it)."""
    reached = {}
    for propagation in ("copied", "emergent"):
        sim = turning_sim(60, f"turning.propagation={propagation}", "turning.turn_by=bank")
        sim.step(60)
        turn = component(sim)
        turn.start_wave(sim)
        sim.step(90)
        reached[propagation] = int(np.isfinite(turn.start).sum())
    assert reached["emergent"] == 10
    assert reached["copied"] >= 54


def test_copied_bank_turns_are_deterministic_and_a_checkpointed_twin_continues_bit_for_bit():
    from flocksim.experiments.common import twin

    runs = []
    for _ in range(2):
        sim = turning_sim(60, "turning.turn_by=bank", "turning.mean_interval=0.5", seed=3)
        sim.step(90)
        runs.append(sim)
    a, b = runs
    assert component(a).waves >= 1
    np.testing.assert_array_equal(a.state.position, b.state.position)
    np.testing.assert_array_equal(component(a).start, component(b).start)
    copy = twin(a)
    a.step(60)
    copy.step(60)
    np.testing.assert_array_equal(a.state.position, copy.state.position)
    np.testing.assert_array_equal(a.state.spin, copy.state.spin)
    for key, value in component(a).state_dict().items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(component(copy).state_dict()[key]), key)


def test_a_checkpoint_from_before_copied_turns_still_loads():
    sim = turning_sim(5)
    turn = component(sim)
    old = {
        k: v for k, v in turn.state_dict().items() if k not in ("began", "distance", "inward", "bank_side", "spread")
    }
    turn.load_state_dict(old)
    assert turn.spread.shape == (0, 3) and len(turn.distance) == 5 and np.isinf(turn.distance).all()


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("turning.propagation=spread", "turning.propagation"),
        ("turning.latency=-0.1", "turning.latency"),
        ("turning.copy_from=0", "turning.copy_from"),
        ("turning.reach=0", "turning.reach"),
        ("turning.turn_by=wings", "turning.turn_by"),
    ],
)
def test_a_bad_copied_turn_value_is_refused_by_name(override, field):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(flocksim.load_preset("starlings-3d"), [override])
    assert field in str(exc.value)


def test_bank_turns_need_banked_flight():
    with pytest.raises(ConfigError) as exc:
        apply_overrides(flocksim.load_preset("boids-2d"), ["turning.enabled=true", "turning.turn_by=bank"])
    assert "turning.turn_by" in str(exc.value) and "banked" in str(exc.value)


def test_mutual_copies_reach_a_bird_that_watches_only_unturned_birds():
    """One neighbour watched: x = 0 (turning), 2 and 2.5. The bird at 2 watches the one at 2.5 (0.5 m)
    and never the turning bird; with mutual it copies the turning bird, whose nearest it is, after one
    latency (3 steps), and the bird at 2.5 copies it three steps later."""
    for mutual, expected in ((False, [0.0, np.inf, np.inf]), (True, [0.0, 3 * DT, 6 * DT])):
        sim = turning_sim(3, "turning.copy_from=1", f"turning.mutual={str(mutual).lower()}")
        line_of_birds(sim, [2.0, 0.5])
        turn = component(sim)
        turn.start_wave(host_at(sim, 0.0))
        turn.start[:] = np.inf  # the wave as started by the bird at x = 0 alone
        turn.start[0] = 0.0
        turn.initiators = np.array([0])
        for step in range(1, 10):
            turn.before_step(host_at(sim, step * DT))
        np.testing.assert_allclose(turn.start, expected, rtol=1e-12)
