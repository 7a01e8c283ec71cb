"""Symmetries and robustness of whole steps: permutation, translation, degenerate
configurations, reproducibility and dead agents."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from flocksim import Simulation, parse_params
from flocksim.engines.cpu import CpuEngine
from flocksim.models import make_model
from flocksim.space import displacement_array, make_space, wrap_array
from flocksim.state import new_state

SIZE = 20.0


def merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def reynolds(mode="metric", steering="reynolds", bounds="box", dim=2, form="raw", extra=None):
    """Every rule on (seek too, toward the middle of the box), radii a few agent spacings."""
    data = {
        "model": "reynolds",
        "world": {"dim": dim, "dt": 0.05, "bounds": {"kind": bounds, "size": [SIZE] * dim, "margin": 3.0}},
        "agents": {"n": 0, "max_speed": 5.0, "max_force": 8.0},
        "neighbors": {"mode": mode, "k": 5},
        "rules": {
            "steering": steering,
            "separation": {"weight": 2.0, "radius": 1.5, "form": form},
            "alignment": {"weight": 1.0, "radius": 3.0},
            "cohesion": {"weight": 0.8, "radius": 4.0},
            "seek": {"weight": 0.3, "target": [SIZE / 2] * 3, "arrival_radius": 5.0, "stop_radius": 1.0},
        },
    }
    return parse_params(merge(data, extra or {}))


def abm(mode="metric", dim=2, extra=None):
    data = {
        "model": "abm-flocking",
        "world": {"dim": dim, "dt": 1.0, "bounds": {"kind": "periodic", "size": [SIZE] * dim}},
        "agents": {"n": 0},
        "neighbors": {"mode": mode, "k": 5},
        "flocking": {"vision": 4.0, "separation": 1.0, "speed": 0.3},
    }
    return parse_params(merge(data, extra or {}))


def random_state(n, dim=2, seed=0, low=0.0, high=SIZE):
    rng = np.random.default_rng(seed)
    return new_state(rng.uniform(low, high, (n, dim)), rng.normal(0.0, 2.0, (n, dim)))


def run(params, state, steps):
    engine = CpuEngine(make_model(params))
    for _ in range(steps):
        engine.step(state, params.world.dt)
    return state


CASES = {
    "reynolds-metric": lambda: reynolds("metric"),
    "reynolds-topological": lambda: reynolds("topological"),
    "clamped-metric-3d": lambda: reynolds("metric", steering="clamped-sum", dim=3),
    "clamped-topological-minion": lambda: reynolds("topological", steering="clamped-sum", form="minion"),
    "abm-metric": lambda: abm("metric"),
    "abm-topological-3d": lambda: abm("topological", dim=3),
}


# ================================================================= permutation


@pytest.mark.parametrize("steps", [1, 50])
@pytest.mark.parametrize("case", sorted(CASES))
def test_permuting_agents_permutes_the_result(case, steps):
    params = CASES[case]()
    dim = params.world.dim
    base = random_state(40, dim=dim, seed=7)
    perm = np.random.default_rng(3).permutation(40)
    permuted = new_state(base.position[perm], base.velocity[perm])
    a = run(params, base.copy(), steps)
    b = run(params, permuted, steps)
    # Only the order of floating-point sums over neighbours differs.
    tol = 1e-12 if steps == 1 else 1e-9
    assert_allclose(b.position, a.position[perm], rtol=tol, atol=tol)
    assert_allclose(b.velocity, a.velocity[perm], rtol=tol, atol=tol)
    # the step did something
    assert not np.allclose(a.position, base.position)


# ================================================================= translation


@pytest.mark.parametrize("case", ["reynolds-metric", "reynolds-topological", "clamped-metric-3d"])
def test_translation_invariance_open_space(case):
    params = CASES[case]()
    # no walls, no fixed target: nothing in space is special
    params = params.model_validate(
        merge(params.model_dump(), {"world": {"bounds": {"kind": "open"}}, "rules": {"seek": {"weight": 0.0}}})
    )
    dim = params.world.dim
    base = random_state(40, dim=dim, seed=11)
    shift = np.array([123.25, -77.5, 40.125])[:dim]
    moved = new_state(base.position + shift, base.velocity)
    a = run(params, base.copy(), 20)
    b = run(params, moved, 20)
    assert_allclose(b.position - shift, a.position, rtol=0, atol=1e-9)
    assert_allclose(b.velocity, a.velocity, rtol=1e-9, atol=1e-9)
    assert not np.allclose(a.velocity, base.velocity)


@pytest.mark.parametrize(
    "params",
    [
        lambda: reynolds("metric", bounds="periodic", extra={"rules": {"seek": {"weight": 0.0}}}),
        lambda: reynolds("topological", bounds="periodic", dim=3, extra={"rules": {"seek": {"weight": 0.0}}}),
        lambda: abm("metric"),
        lambda: abm("topological", dim=3),
    ],
)
def test_translation_invariance_periodic(params):
    params = params()
    dim = params.world.dim
    space = make_space("periodic", [SIZE] * dim)
    base = random_state(40, dim=dim, seed=5)
    shift = np.array([7.3, -13.1, 19.9])[:dim]
    moved = new_state(wrap_array(base.position + shift, space), base.velocity)
    a = run(params, base.copy(), 20)
    b = run(params, moved, 20)
    # compare positions as periodic images: the minimum-image difference must vanish
    diff = displacement_array(a.position + shift, b.position, space)
    assert_allclose(diff, 0.0, atol=1e-9)
    assert_allclose(b.velocity, a.velocity, rtol=1e-9, atol=1e-9)
    assert (b.position >= 0).all() and (b.position < SIZE).all()


# ================================================================= degenerate configurations


@pytest.mark.parametrize("steering", ["reynolds", "clamped-sum"])
@pytest.mark.parametrize("form", ["raw", "minion"])
@pytest.mark.parametrize("dim", [2, 3])
def test_coincident_agents_stay_finite(steering, form, dim):
    params = reynolds("metric", steering=steering, dim=dim, form=form)
    # five agents on one point (two with the same velocity), two more close by
    pos = np.full((7, dim), 10.0)
    pos[5, 0] = 10.4
    pos[6, 1] = 9.7
    vel = np.zeros((7, dim))
    vel[0, 0] = 1.0
    vel[1, 0] = 1.0
    vel[2, 1] = -2.0
    state = run(params, new_state(pos, vel), 30)
    state.check()  # raises on NaN / inf
    # the two non-coincident agents were pushed apart from the pile (both forms act on them)
    assert np.linalg.norm(state.position[5] - state.position[2]) > 0.4


@pytest.mark.parametrize("case", sorted(CASES))
def test_all_agents_coincident_and_still(case):
    params = CASES[case]()
    dim = params.world.dim
    state = new_state(np.full((6, dim), 10.0), np.zeros((6, dim)))
    run(params, state, 5)
    state.check()


@pytest.mark.parametrize("case", sorted(CASES))
def test_zero_velocities_stay_finite(case):
    params = CASES[case]()
    dim = params.world.dim
    state = random_state(30, dim=dim, seed=2)
    state.velocity[:] = 0.0
    run(params, state, 10)
    state.check()


def test_zero_velocities_with_min_speed():
    params = reynolds(extra={"agents": {"min_speed": 1.0}})
    state = random_state(30, seed=4)
    state.velocity[:] = 0.0
    run(params, state, 10)
    state.check()
    speed = np.linalg.norm(state.velocity, axis=1)
    # every agent got some acceleration from the rules and is now within [min, max]
    assert (speed >= 1.0 - 1e-12).all() and (speed <= 5.0 + 1e-12).all()


@pytest.mark.parametrize("case", sorted(CASES))
def test_lone_agent(case):
    params = CASES[case]()
    dim = params.world.dim
    state = new_state(np.full((1, dim), 6.0), np.ones((1, dim)))
    run(params, state, 20)
    state.check()
    assert not np.allclose(state.position, 6.0)


@pytest.mark.parametrize(
    "data",
    [
        {"agents": {"n": 0}},
        {"agents": {"n": 1}},
        {"agents": {"n": 0}, "world": {"dim": 3, "bounds": {"kind": "ellipsoid", "size": [5.0, 4.0, 3.0]}}},
        {"agents": {"n": 1}, "neighbors": {"mode": "topological"}},
        {"model": "abm-flocking", "agents": {"n": 0}, "world": {"bounds": {"kind": "periodic"}}},
        {"model": "abm-flocking", "agents": {"n": 1}, "world": {"bounds": {"kind": "periodic"}}},
    ],
)
def test_simulation_with_zero_or_one_agent(data):
    sim = Simulation(data, seed=1)
    before = sim.state.position.copy()
    sim.step(5)
    assert sim.steps == 5
    assert sim.state.n == data["agents"]["n"]
    sim.state.check()
    assert sim.neighbors().counts.tolist() == [0] * sim.state.n
    if sim.state.n == 1:
        assert not np.array_equal(sim.state.position, before)


@pytest.mark.parametrize("steering", ["reynolds", "clamped-sum"])
@pytest.mark.parametrize("mode", ["metric", "topological"])
def test_agents_on_a_line_stay_on_it(steering, mode):
    # Open 3D space, everyone on the x axis moving along it: every force is along x, so y and z stay 0.
    params = reynolds(mode, steering=steering, dim=3, bounds="open", extra={"rules": {"seek": {"weight": 0.0}}})
    n = 12
    pos = np.zeros((n, 3))
    pos[:, 0] = np.linspace(0.0, 6.0, n)
    pos[3, 0] = pos[4, 0]  # one coincident pair on the line
    vel = np.zeros((n, 3))
    vel[:, 0] = np.random.default_rng(0).normal(0.0, 2.0, n)
    state = run(params, new_state(pos.copy(), vel), 30)  # new_state may keep the position array itself
    state.check()
    assert (state.position[:, 1:] == 0.0).all()
    assert (state.velocity[:, 1:] == 0.0).all()
    assert not np.allclose(state.position[:, 0], pos[:, 0])


def test_abm_birds_on_a_line_stay_on_it():
    params = abm("metric", dim=3)
    n = 10
    pos = np.full((n, 3), 10.0)
    pos[:, 0] = np.linspace(2.0, 8.0, n)
    vel = np.zeros((n, 3))
    vel[:, 0] = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    state = run(params, new_state(pos.copy(), vel), 30)
    state.check()
    assert (state.position[:, 1:] == 10.0).all()
    assert not np.allclose(state.position[:, 0], pos[:, 0])
    assert_allclose(np.abs(state.velocity[:, 0]), 0.3, rtol=1e-15)  # speed / dt, heading +-x


# ================================================================= reproducibility


@pytest.mark.parametrize(
    "data",
    [
        {"agents": {"n": 150}, "world": {"bounds": {"size": [30.0, 30.0]}}},
        {
            "agents": {"n": 150},
            "neighbors": {"mode": "topological"},
            "world": {"dim": 3, "bounds": {"size": [30.0] * 3}},
        },
        {"model": "abm-flocking", "agents": {"n": 150}, "world": {"bounds": {"kind": "periodic", "size": [40.0] * 2}}},
    ],
)
def test_same_seed_gives_bitwise_identical_trajectories(data):
    a = Simulation(data, seed=42)
    b = Simulation(data, seed=42)
    assert np.array_equal(a.state.position, b.state.position)
    for _ in range(10):
        a.step(3)
        b.step(3)
        assert np.array_equal(a.state.position, b.state.position)
        assert np.array_equal(a.state.velocity, b.state.velocity)
    c = Simulation(data, seed=43)
    assert not np.array_equal(a.state.position[:5], c.state.position[:5])


def test_initial_speeds_vary():
    # identical starts look mechanical; speeds are drawn in [0.5, 1] x max_speed by default.
    sim = Simulation({"agents": {"n": 100}}, seed=0)
    speed = np.linalg.norm(sim.state.velocity, axis=1)
    assert speed.std() > 0.05
    assert (speed >= 0.5 * 5.0 - 1e-12).all() and (speed <= 5.0 + 1e-12).all()


# ================================================================= dead agents


@pytest.mark.parametrize("case", sorted(CASES))
def test_dead_agents_do_not_move_and_are_nobodys_neighbour(case):
    params = CASES[case]()
    dim = params.world.dim
    state = random_state(40, dim=dim, seed=9, low=6.0, high=14.0)  # dense: everyone has neighbours
    dead = [3, 17, 39]
    state.alive[dead] = False
    before = state.copy()
    engine = CpuEngine(make_model(params))
    nbrs = engine.neighbors(state)
    engine.step(state, params.world.dt)
    # dead rows untouched
    assert np.array_equal(state.position[dead], before.position[dead])
    assert np.array_equal(state.velocity[dead], before.velocity[dead])
    # nobody lists a dead agent, and dead agents list nobody
    assert not np.isin(nbrs.index, dead).any()
    assert all(nbrs.counts[k] == 0 for k in dead)
    assert nbrs.counts.sum() > 40
    # the living move exactly as if the dead rows did not exist
    keep = np.setdiff1d(np.arange(40), dead)
    alone = new_state(before.position[keep], before.velocity[keep])
    engine.step(alone, params.world.dt)
    assert_allclose(state.position[keep], alone.position, rtol=1e-13, atol=1e-13)
    assert_allclose(state.velocity[keep], alone.velocity, rtol=1e-13, atol=1e-13)


def test_dead_agents_stay_put_over_a_simulation():
    sim = Simulation({"agents": {"n": 80}, "world": {"bounds": {"size": [25.0, 25.0]}}}, seed=3)
    sim.state.alive[[0, 50]] = False
    frozen = sim.state.position[[0, 50]].copy()
    sim.step(20)
    assert np.array_equal(sim.state.position[[0, 50]], frozen)
    assert not np.isin(sim.neighbors().index, [0, 50]).any()
    sim.state.check()
