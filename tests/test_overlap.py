"""Overlap resolution: hand-computed cases and grid vs brute-force parity."""

import numpy as np
import pytest

from flocksim.engines.cpu_overlap import overlap_corrections, resolve_overlaps
from flocksim.obstacles import build_obstacle_set
from flocksim.params import Obstacles
from flocksim.space import make_space

BOX = make_space("box", [20.0, 20.0])
NO_OBSTACLES = build_obstacle_set(Obstacles(), 2)


def corrections(pos, radius, mass, obstacles=NO_OBSTACLES, space=BOX, method="grid", planar=False):
    pos = np.asarray(pos, dtype=float)
    alive = np.ones(len(pos), dtype=bool)
    r = np.broadcast_to(np.asarray(radius, dtype=float), (len(pos),)).copy()
    m = np.broadcast_to(np.asarray(mass, dtype=float), (len(pos),)).copy()
    return overlap_corrections(pos, alive, r, m, space, obstacles, planar, method)


@pytest.mark.parametrize("method", ["grid", "brute"])
def test_seed_004_worked_example(method):
    """Radii 0.3 and 0.3, masses 1 and 3, 0.4 apart: they move 0.15 and 0.05 and end 0.6 apart."""
    pos = np.array([[5.0, 5.0], [5.4, 5.0]])
    out = corrections(pos, [0.3, 0.3], [1.0, 3.0], method=method)
    assert out[0] == pytest.approx([-0.15, 0.0, 0.0], abs=1e-15)
    assert out[1] == pytest.approx([0.05, 0.0, 0.0], abs=1e-15)
    moved = pos.copy()
    resolve_overlaps(moved, np.ones(2, bool), np.array([0.3, 0.3]), np.array([1.0, 3.0]), BOX, NO_OBSTACLES)
    assert moved[1, 0] - moved[0, 0] == pytest.approx(0.6, abs=1e-15)
    assert moved[:, 1] == pytest.approx([5.0, 5.0])


def test_corrections_from_agents_are_averaged():
    """Agent 0 overlaps 1 (penetration 0.1 along +x) and 2 (0.4 along +y): equal masses, shares 1/2;
    the mean of (-0.05, 0) and (0, -0.2) is (-0.025, -0.1), not their sum. 1 and 2 are 1.08 apart."""
    pos = [[5.0, 5.0], [5.9, 5.0], [5.0, 5.6]]
    out = corrections(pos, 0.5, 1.0)
    assert out[0] == pytest.approx([-0.025, -0.1, 0.0], abs=1e-12)
    assert out[1] == pytest.approx([0.05, 0.0, 0.0], abs=1e-12)
    assert out[2] == pytest.approx([0.0, 0.2, 0.0], abs=1e-12)


def test_obstacle_corrections_are_averaged_apart_and_added():
    """Ten agents around agent 0 (each 0.1 deep) and one rock 0.2 deep: the rock's push-out arrives
    whole (averaged over the one rock), not 1/11 of it."""
    rock = build_obstacle_set(Obstacles(circles=[{"center": [5.0, 4.0], "body_radius": 0.5}]), 2, max_agent_radius=0.7)
    angles = np.linspace(0.0, np.pi, 10)
    ring = np.column_stack([5.0 + 0.9 * np.cos(angles), 5.0 + 0.9 * np.sin(angles)])
    pos = np.vstack([[5.0, 5.0], ring])
    radius = np.full(11, 0.5)
    radius[0] = 0.7  # 0.7 + 0.5 - 1.0 = 0.2 into the rock; 0.7 + 0.5 - 0.9 = 0.3 into each ring agent
    out_agents_only = corrections(pos, radius, 1.0)
    out = corrections(pos, radius, 1.0, obstacles=rock)
    assert out[0, :2] - out_agents_only[0, :2] == pytest.approx([0.0, 0.2], abs=1e-12)


def test_obstacles_have_infinite_mass():
    """An agent of any mass takes the whole penetration; the rock does not move."""
    rock = build_obstacle_set(Obstacles(circles=[{"center": [5.0, 5.0], "body_radius": 1.0}]), 2, max_agent_radius=0.5)
    for mass in (0.1, 1.0, 1e6):
        out = corrections([[5.0, 6.2]], 0.5, mass, obstacles=rock)
        assert out[0] == pytest.approx([0.0, 0.3, 0.0], abs=1e-12)


def test_box_and_segment_push_out():
    obs = Obstacles(
        boxes=[{"min_corner": [2.0, 2.0], "max_corner": [4.0, 3.0]}],
        segments=[{"a": [10.0, 2.0], "b": [10.0, 8.0], "body_radius": 0.2}],
    )
    sset = build_obstacle_set(obs, 2, max_agent_radius=0.5)
    # inside the box, 0.1 under its top face: out through the top by 0.1 + 0.5
    # left of the wall by 0.5 from its axis: 0.5 + 0.2 - 0.5 = 0.2 further left
    out = corrections([[3.0, 2.9], [9.5, 5.0]], 0.5, 1.0, obstacles=sset)
    assert out[0] == pytest.approx([0.0, 0.6, 0.0], abs=1e-12)
    assert out[1] == pytest.approx([-0.2, 0.0, 0.0], abs=1e-12)


def test_coincident_centres_are_skipped_without_nan():
    rock = build_obstacle_set(Obstacles(circles=[{"center": [5.0, 5.0], "body_radius": 1.0}]), 2, max_agent_radius=0.5)
    out = corrections([[5.0, 5.0], [5.0, 5.0], [5.00005, 5.0]], 0.5, 1.0, obstacles=rock)
    assert np.isfinite(out).all()
    assert np.all(out == 0.0)


def test_planar_ignores_height():
    """Planar agents (3D) overlap by their x-z distance and are never pushed along y."""
    space = make_space("box", [20.0, 20.0, 20.0])
    obs = build_obstacle_set(Obstacles(), 3, planar=True)
    pos = np.array([[5.0, 5.0, 5.0], [5.4, 9.0, 5.0]])
    out = corrections(pos, 0.3, [1.0, 3.0], obstacles=obs, space=space, planar=True)
    assert out[0] == pytest.approx([-0.15, 0.0, 0.0], abs=1e-15)
    assert out[1] == pytest.approx([0.05, 0.0, 0.0], abs=1e-15)


@pytest.mark.parametrize(
    ("dim", "kind", "planar"),
    [(2, "box", False), (3, "box", False), (2, "periodic", False), (3, "periodic", False), (3, "box", True)],
)
def test_grid_matches_brute_force(dim, kind, planar):
    rng = np.random.default_rng(dim * 10 + planar)
    size = [12.0] * dim
    space = make_space(kind, size)
    n = 400
    pos = rng.random((n, dim)) * 12.0
    pos[:20] = pos[20:40] + 1e-6  # near-coincident pairs
    pos[40:60, 0] = 0.05  # by a periodic edge
    alive = rng.random(n) > 0.1
    radius = rng.choice([0.3, 0.5], n)
    mass = rng.choice([1.0, 3.0], n)
    obstacles = Obstacles()
    if kind == "box":
        obstacles = Obstacles(
            circles=[{"center": [6.0] * dim, "body_radius": 1.5, "influence_radius": 3.0}],
            boxes=[{"min_corner": [1.0] * dim, "max_corner": [2.0, 4.0, 3.0][:dim]}],
        )
    obs = build_obstacle_set(obstacles, dim, planar, 0.5)
    grid = overlap_corrections(pos, alive, radius, mass, space, obs, planar, "grid")
    brute = overlap_corrections(pos, alive, radius, mass, space, obs, planar, "brute")
    assert np.count_nonzero(np.abs(brute).sum(axis=1)) > 50
    np.testing.assert_allclose(grid, brute, rtol=1e-12, atol=1e-15)
    assert np.all(grid[~alive] == 0.0)
