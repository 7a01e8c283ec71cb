"""Targets, attack slots, random offsets, attack range and the minions preset."""

import json
import math
import re

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.scenarios.slots import assign_slots, random_offsets, ring_offsets
from flocksim.scenarios.targets import point_on_route


def small(**seek):
    """Four agents, no flocking rules: seek only (the rule under test)."""
    rules = {
        "separation": {"weight": 0.0},
        "alignment": {"weight": 0.0},
        "cohesion": {"weight": 0.0},
        "bounds": {"weight": 0.0},
        "seek": {"weight": 1.0, **seek},
    }
    return {
        "world": {"dim": 2, "dt": 0.05, "bounds": {"kind": "open", "size": [20.0, 20.0]}},
        "agents": {"n": 4, "max_speed": 2.0, "max_force": 4.0},
        "rules": rules,
    }


def test_ring_offsets_by_hand():
    # ring 1: r = 1, 2 pi / 1.5 -> 4 slots; ring 2: r = 2.5 holds the 2 left, opposite each other
    out = ring_offsets(6, 1.0, 1.5)
    assert out[:4] == pytest.approx(np.array([[1, 0], [0, 1], [-1, 0], [0, -1]]), abs=1e-12)
    assert out[4:] == pytest.approx(np.array([[2.5, 0], [-2.5, 0]]), abs=1e-12)
    assert ring_offsets(1, 0.0, 1.0).tolist() == [[0.0, 0.0]]
    many = ring_offsets(200, 1.5, 1.2)
    assert pdist(many).min() >= 1.2 - 1e-9


def test_random_offsets_inside_the_disc():
    out = random_offsets(1000, 3.0, np.random.default_rng(0))
    r = np.linalg.norm(out, axis=1)
    assert r.max() <= 3.0 and r.mean() == pytest.approx(2.0, abs=0.1)  # uniform disc: mean r = 2R/3


def test_assign_slots_distinct_and_nearest():
    slots = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    agents = np.array([[9.0, 1.0], [1.0, 9.0]])
    assert assign_slots(agents, slots).tolist() == [1, 2]
    with pytest.raises(ValueError, match="at least as many slots"):
        assign_slots(agents, slots[:1])


def test_point_on_route():
    route = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [4.0, 3.0, 0.0]])  # closing leg 5: total 12
    assert point_on_route(route, 2.0).tolist() == [2.0, 0.0, 0.0]
    assert point_on_route(route, 5.5).tolist() == [4.0, 1.5, 0.0]
    assert point_on_route(route, 9.5 + 12.0) == pytest.approx([2.0, 1.5, 0.0])


def test_set_target_moves_the_group_and_agents_stop_on_it():
    sim = Simulation(small(arrival_radius=2.0, stop_radius=0.05), seed=1)
    sim.set_target(None, [3.0, -2.0])
    sim.step(400)
    assert np.linalg.norm(sim.state.position - [3.0, -2.0], axis=1).max() < 0.1
    assert np.linalg.norm(sim.state.velocity, axis=1).max() < 1e-3
    with pytest.raises(ValueError, match="needs 2 finite numbers"):
        sim.set_target(0, [1.0])
    with pytest.raises(ValueError, match=r"rules.seek.weight"):
        Simulation(small(weight=0.0)).set_target(None, [0.0, 0.0])


def test_group_and_per_agent_targets():
    sim = Simulation(small(group_targets=[[5.0, 5.0], [-5.0, 5.0]], arrival_radius=2.0), seed=2)
    sim.state.kind[:] = [0, 0, 1, 1]
    sim.set_agent_targets([3], [[0.0, -6.0]])
    sim.step(1)
    assert sim.model.targets[:, :2].tolist() == [[5.0, 5.0], [5.0, 5.0], [-5.0, 5.0], [0.0, -6.0]]
    sim.set_target(1, [-7.0, 0.0])
    sim.set_agent_targets([3], None)
    sim.step(1)
    assert sim.model.targets[2:, :2].tolist() == [[-7.0, 0.0], [-7.0, 0.0]]


def test_attack_range_changes_the_seek_weight_by_hand():
    # one agent at rest 1 unit from its target, no arrival: force = w * limit(2 * (1, 0), 4) = w * (2, 0)
    params = small(target=[1.0, 0.0, 0.0], attack_range=1.5, attack_weight=0.25)
    params["agents"]["n"] = 1
    sim = Simulation(params)
    sim.state.position[:] = 0.0
    sim.state.velocity[:] = 0.0
    sim.step(1)
    assert sim.state.velocity[0] == pytest.approx([0.25 * 2.0 * 0.05, 0.0])
    params["rules"]["seek"]["attack_range"] = 0.5
    sim = Simulation(params)
    sim.state.position[:] = 0.0
    sim.state.velocity[:] = 0.0
    sim.step(1)
    assert sim.state.velocity[0] == pytest.approx([2.0 * 0.05, 0.0])


def test_slots_reassigned_when_agents_are_removed():
    params = small(slots={"mode": "ring", "radius": 1.0, "spacing": 1.5, "reassign_interval": 0.0})
    sim = Simulation(params, seed=3)
    sim.step(1)
    first = sim.components[-1].offsets.copy()
    assert len(first) == 4
    sim.state.alive[0] = False
    sim.step(1)
    targets = sim.components[-1]
    assert len(targets.offsets) == 3 and 0 not in targets.offset_ids
    assert pdist(targets.offsets).min() > 1.0  # 3 slots on the first ring


def test_checkpoint_round_trip_keeps_slots_and_targets():
    p = load_preset("minions")
    a = Simulation(p, seed=4)
    a.step(30)
    a.set_target(None, [20.0, 20.0])
    saved = a.checkpoint()
    a.step(30)
    b = Simulation(p, seed=4)
    b.restore(saved)
    b.step(30)
    assert np.array_equal(a.state.position, b.state.position)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_minions_stop_in_distinct_slots_without_orbiting(seed):
    """The minions chase the walking target, then it stops: after settling every minion is
    within the stop radius of its own slot, nearly still, and no two share a point."""
    p = load_preset("minions")
    sim = Simulation(p, seed=seed)
    sim.step(240)  # 4 s chasing the moving target
    target = sim.components[-1].target_of(0)
    sim.set_target(None, target[:2])
    sim.step(600)  # 10 s to settle
    s = sim.state
    seek = p.rules.seek
    speed = np.linalg.norm(s.velocity, axis=1)
    to_slot = np.linalg.norm(s.position - sim.model.targets[:, :2], axis=1)
    assert to_slot.max() < seek.arrival_radius
    assert speed.max() < 0.02 * p.agents.max_speed  # no orbiting: still inside the arrival radius
    assert pdist(s.position).min() > 0.9 * seek.slots.spacing  # distinct slots, no pile
    to_target = np.linalg.norm(s.position - target[:2], axis=1)
    assert to_target.min() > seek.slots.radius - 0.2  # nobody stands on the target itself
    assert math.isfinite(float(np.abs(s.position).sum()))


def test_slots_lie_in_the_ground_plane_in_3d():
    params = small(target=[1.0, 2.0, 3.0], slots={"mode": "ring", "radius": 1.0, "spacing": 1.5})
    params["world"] = {"dim": 3, "dt": 0.05, "bounds": {"kind": "open", "size": [20.0, 20.0, 20.0]}}
    sim = Simulation(params, seed=5)
    sim.step(1)
    points = sim.model.targets
    assert np.all(points[:, 1] == 2.0)  # y (up) untouched
    ring = np.hypot(points[:, 0] - 1.0, points[:, 2] - 3.0)
    assert ring == pytest.approx(np.ones(4))  # 4 slots on the first ring, in x-z


def test_bad_target_and_navigation_parameters_get_one_clear_error():
    from pydantic import ValidationError

    from flocksim.params import parse_params

    cases = [
        ({"rules": {"seek": {"weight": 1.0, "group_targets": [[1.0]]}}}, "group_targets[0] needs 2 or 3"),
        ({"rules": {"seek": {"slots": {"mode": "grid"}}}}, "'none', 'ring' or 'random'"),
        ({"navigation": {"enabled": True, "map": ["#.", "."]}, "rules": {"seek": {"weight": 1.0}}}, "same length"),
        ({"navigation": {"enabled": True, "map": ["."]}}, "needs rules.seek.weight > 0"),
        (
            {
                "navigation": {"enabled": True, "map": ["."]},
                "rules": {"seek": {"weight": 1.0}},
                "world": {"bounds": {"kind": "periodic"}},
            },
            "periodic bounds are not supported",
        ),
    ]
    for data, message in cases:
        with pytest.raises(ValidationError, match=re.escape(message)):
            parse_params(data)


def test_dead_agents_of_an_unseen_group_do_not_break_the_step():
    sim = Simulation(small(group_targets=[[5.0, 5.0]], slots={"mode": "random", "radius": 1.0}), seed=6)
    sim.state.kind[:] = [0, 0, 0, 7]
    sim.state.alive[3] = False
    sim.step(2)
    assert np.isfinite(sim.model.targets).all() and sim.model.targets.shape == (4, 3)
    offsets = sim.model.targets[:3, :2] - [5.0, 5.0]
    assert (np.linalg.norm(offsets, axis=1) <= 1.0).all() and len(sim.components[-1].offset_ids) == 3


@pytest.mark.parametrize("target", ["[1e308, 1e308]", "[-1e308, 1e300]"])
def test_a_target_too_far_for_a_finite_distance_still_draws_the_flock(target):
    """Its distance overflows to inf: the desired velocity used to be max_speed / inf = 0, so the seek
    rule braked the flock instead of drawing it toward the target."""
    from flocksim.kernels.seek import seek_velocity

    assert seek_velocity(1e308, 1e308, 0.0, 2.0, 50.0, 1.0) == pytest.approx((math.sqrt(2), math.sqrt(2), 0.0, True))
    overrides = ["agents.n=50", "rules.seek.weight=5", "world.bounds.kind=open", f"rules.seek.target={target}"]
    sim = Simulation(apply_overrides(load_preset("boids-2d"), overrides), seed=1)
    start = sim.state.position[sim.state.alive].mean(axis=0)
    sim.step(60)
    moved = sim.state.position[sim.state.alive].mean(axis=0) - start
    toward = np.array(json.loads(target)) / np.max(np.abs(json.loads(target)))
    toward /= np.linalg.norm(toward)
    assert moved @ toward > 0.9 * np.linalg.norm(moved) and np.linalg.norm(moved) > 20.0
