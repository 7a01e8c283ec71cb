"""Crowds crossing a maze by flow field: a scaled-down crowd-maze and the preset's own settings."""

import numpy as np

from flocksim import Simulation, load_preset


def box(a, b):
    return {"min_corner": list(a), "max_corner": list(b), "body_radius": 0.0, "influence_radius": 1.0}


def small_maze() -> dict:
    """The crowd-maze preset's rules in a 40 x 30 world: one walled room (door on the left, the
    exit on the right side is reached around it), a dead-end stub in the corridor, 120 agents."""
    p = load_preset("crowd-maze").model_dump(mode="json")
    p["world"]["bounds"]["size"] = [40.0, 30.0]
    p["agents"]["n"] = 120
    p["agents"]["init"]["fill"] = 0.25  # x 15..25, y 11.25..18.75: inside the room
    p["rules"]["seek"]["target"] = [36.0, 15.0]
    p["rules"]["seek"]["slots"]["radius"] = 2.5
    p["obstacles"]["boxes"] = [
        box((10, 8), (30, 9)),  # room: bottom
        box((10, 21), (30, 22)),  # top
        box((29, 8), (30, 22)),  # right (no door)
        box((10, 8), (11, 12)),  # left, door at y 12..18
        box((10, 18), (11, 22)),
        box((4, 22), (10, 23)),  # a dead-end stub above the door, in the way
    ]
    return p


def outside_room(position: np.ndarray) -> np.ndarray:
    return position[:, 0] > 31.0


def test_small_maze_gets_the_crowd_out_with_nobody_stuck():
    """Measured: >= 95 % past the room's far side (x > 31) within 60 s simulated, no centre inside a
    wall, and every agent still inside made progress along the field over the last 10 s."""
    sim = Simulation(small_maze(), seed=0)
    boxes = sim.params.obstacles.boxes
    cost_then = None
    for second in range(60):
        sim.step(20)  # 1 s
        if second == 49:
            field = next(iter(sim.components[-1].navigator.fields.values()))
            _, cost_then = field.sample(sim.state.position, bilinear=False)
    pos = sim.state.position
    assert np.isfinite(pos).all()
    out = outside_room(pos)
    assert out.mean() >= 0.95, out.mean()
    for b in boxes:
        lo, hi = np.array(b.min_corner), np.array(b.max_corner)
        assert not ((pos > lo) & (pos < hi)).all(axis=1).any(), "an agent's centre is inside a wall"
    field = next(iter(sim.components[-1].navigator.fields.values()))
    _, cost_now = field.sample(pos, bilinear=False)
    inside = ~out
    assert (cost_now[inside] < cost_then[inside] - 1.0).all(), "an agent is stuck"


def test_crowd_maze_preset_settings():
    p = load_preset("crowd-maze")
    assert p.agents.n == 2000 and p.navigation.enabled and p.navigation.source == "obstacles"
    assert p.overlap.enabled and len(p.obstacles.boxes) > 0
    sim = Simulation(p, seed=0)
    sim.step(1)
    grid = sim.components[-1].navigator.grid
    field = next(iter(sim.components[-1].navigator.fields.values()))
    assert np.isfinite(field.cost[~grid.walls]).mean() > 0.99  # the maze is connected
    start = field.sample(sim.state.position, bilinear=False)[1]
    assert np.isfinite(start).all()  # every agent starts where the exit can be reached
    # the field is recomputed only when the target moves to another cell
    assert field.recomputes == 1
    sim.set_target(None, [108.3, 40.4])  # same 1 m cell as (108, 40)
    sim.step(1)
    assert field.recomputes == 1
    sim.set_target(None, [100.5, 20.5])
    sim.step(1)
    assert field.recomputes == 2 and field.target_cell == (20, 100)
