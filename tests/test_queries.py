"""Spatial queries for game code: equal to a brute-force answer on random states."""

import numpy as np
import pytest

from flocksim import Simulation
from flocksim.neighbors.query import SpatialIndex
from flocksim.space import displacement_array, make_space


def brute_radius(pos, alive, ids, space, point, r):
    d = displacement_array(point, pos, space)
    d2 = np.einsum("ij,ij->i", d, d)
    return np.sort(ids[alive & (d2 <= r * r)])


def brute_nearest(pos, alive, ids, space, point, k):
    d = displacement_array(point, pos, space)
    d2 = np.einsum("ij,ij->i", d, d)
    rows = np.flatnonzero(alive)
    order = np.lexsort((ids[rows], d2[rows]))
    return ids[rows[order[:k]]]


@pytest.mark.parametrize(("dim", "kind"), [(2, "box"), (3, "box"), (2, "periodic"), (3, "periodic"), (2, "open")])
def test_queries_equal_brute_force(dim, kind):
    rng = np.random.default_rng(dim + len(kind))
    space = make_space(kind, [30.0] * dim)
    n = 700
    pos = rng.random((n, dim)) * 30.0
    pos[:50] = rng.normal(15.0, 0.3, (50, dim))  # a cluster
    pos[50:60] = np.round(pos[50:60])  # on cell borders
    pos[60:70] = pos[70:80]  # coincident pairs: ties broken by id
    alive = rng.random(n) > 0.1
    ids = np.arange(n, dtype=np.int64) * 3 + 5  # ids differ from rows
    index = SpatialIndex(pos, alive, ids, space)
    out = np.empty(4, dtype=np.int64)
    points = np.vstack([rng.uniform(-5.0, 35.0, (60, dim)), pos[:5], pos[60:62]])
    for point in points:
        for r in (0.0, 0.7, 3.0, 12.0, 60.0):
            want = brute_radius(pos, alive, ids, space, point, r)
            np.testing.assert_array_equal(index.radius(point, r), want)
            np.testing.assert_array_equal(index.radius(point, r, out), want)
        for k in (1, 7, 40, 1000):
            want = brute_nearest(pos, alive, ids, space, point, k)
            np.testing.assert_array_equal(index.nearest(point, k), want)


def test_output_buffer_is_reused():
    space = make_space("box", [10.0, 10.0])
    pos = np.array([[1.0, 1.0], [2.0, 1.0], [9.0, 9.0]])
    index = SpatialIndex(pos, np.ones(3, bool), np.arange(3, dtype=np.int64), space)
    out = np.full(8, -1, dtype=np.int64)
    found = index.radius([1.5, 1.0], 1.0, out)
    assert found.tolist() == [0, 1] and np.shares_memory(found, out)
    near = index.nearest([8.0, 8.0], 2, out)
    assert near.tolist() == [2, 1] and np.shares_memory(near, out)
    with pytest.raises(ValueError, match="point: must be 2 finite numbers"):
        index.radius([1.0, 2.0, 3.0], 1.0)
    with pytest.raises(ValueError, match="k: must be an integer >= 1"):
        index.nearest([1.0, 1.0], 0)


def test_simulation_queries_follow_the_state():
    params = {"world": {"dim": 2, "bounds": {"kind": "box", "size": [20.0, 20.0]}}, "agents": {"n": 200}}
    sim = Simulation(params, seed=3)
    sim.step(2)
    s = sim.state
    want = brute_radius(s.position, s.alive, s.ids, sim.model.space, np.array([10.0, 10.0]), 4.0)
    np.testing.assert_array_equal(sim.query_radius([10.0, 10.0], 4.0), want)
    sim.remove_agents(want[:3])
    assert not set(want[:3].tolist()) & set(sim.query_radius([10.0, 10.0], 4.0).tolist())
    new = sim.add_agents([[10.0, 10.0]])
    assert sim.query_nearest([10.0, 10.0], 1).tolist() == new.tolist()
