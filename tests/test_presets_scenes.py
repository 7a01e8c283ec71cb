"""The viewer's scenes: the coral reef keeps its fish out of the coral, and the large
murmurations are starlings-3d and starlings-3d-reference at the same density."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim import Simulation, load_preset


def test_reef_fish_stay_out_of_the_coral_and_school():
    params = load_preset("reef")
    circles = params.obstacles.circles
    centers = np.array([c.center for c in circles])
    bodies = np.array([c.body_radius for c in circles])
    sim = Simulation(params)
    for _ in range(4):
        sim.step(300)
        x = sim.state.position[sim.state.alive]
        assert np.isfinite(x).all()
        inside = np.linalg.norm(x[:, None, :] - centers[None], axis=2) < bodies[None]
        assert not inside.any(), f"{int(inside.sum())} fish inside a coral head at t = {sim.time:.1f} s"
    assert sim.metrics()["polarization"] > 0.05  # the fish move together in schools, not at random


def test_reef_coral_heads_do_not_touch():
    circles = load_preset("reef").obstacles.circles
    for i, a in enumerate(circles):
        for b in circles[i + 1 :]:
            gap = math.dist(a.center[::2], b.center[::2]) - a.body_radius - b.body_radius
            assert gap > 0


@pytest.mark.parametrize(
    ("small_name", "differ"),
    [
        ("starlings-3d", ("agents", "world", "description", "rules")),
        ("starlings-3d-reference", ("agents", "world", "description")),
    ],
)
def test_large_murmuration_keeps_the_density_of_starlings_3d(small_name, differ):
    """Each large murmuration is its small one with more birds in a larger region at the same
    density (the roost of the field-unit flock is wider for the wider flock, and it starts as a
    formed flock, agents.init.kind = "flock", whose spacing is the small flock's settled nearest-
    neighbour distance; the region is where agents.init.kind = "aligned" starts it, nothing else)."""
    small, large = load_preset(small_name), load_preset(small_name.replace("3d", "3d-large"))
    volume_small = math.prod(small.world.bounds.size)
    volume_large = math.prod(large.world.bounds.size)
    density_ratio = (large.agents.n / volume_large) / (small.agents.n / volume_small)
    assert abs(density_ratio - 1) < 0.01
    a, b = small.model_dump(), large.model_dump()
    if "rules" in differ:
        assert large.rules.roost.radius > small.rules.roost.radius
        a["rules"].pop("roost"), b["rules"].pop("roost")
        assert a["rules"] == b["rules"]
    if large.agents.init.kind == "flock":
        assert small.agents.init.kind == "aligned"
        assert 1.0 <= large.agents.init.spacing <= 1.2  # 1.1 to 1.2 m settled (docs/starlings.md)
        agents_a, agents_b = a["agents"], b["agents"]
        for agents in (agents_a, agents_b):
            agents.pop("n"), agents["init"].pop("kind"), agents["init"].pop("spacing")
        assert agents_a == agents_b
    for key in differ:
        a.pop(key), b.pop(key)
    assert a == b


def test_reef_coral_sits_on_the_seabed():
    """Issue 28: every coral head rests on the seabed (y = 0), its lower part buried; they floated
    at up to 31 units with the tank's floor showing below them."""
    for c in load_preset("reef").obstacles.circles:
        assert c.center[1] - c.body_radius < 0.0 < c.center[1], c
