"""Adding and removing agents while running: stable ids, consistent arrays, clear errors."""

from dataclasses import fields

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flocksim import Simulation
from flocksim.io.store import TrajectoryStore

PARAMS = {
    "world": {"dim": 2, "bounds": {"kind": "box", "size": [20.0, 20.0]}},
    "agents": {"n": 30, "max_speed": 3.0, "kinds": [{"fraction": 0.5, "mass": 1.0, "radius": 0.3},
                                                   {"fraction": 0.5, "mass": 3.0, "radius": 0.5}]},
    "rules": {"separation": {"weight": 1.0, "radius": 1.0}, "alignment": {"weight": 0.5, "radius": 2.0},
              "cohesion": {"weight": 0.2, "radius": 2.0}},
    "obstacles": {"circles": [{"center": [10.0, 10.0], "body_radius": 1.0, "influence_radius": 3.0}]},
    "overlap": {"enabled": True},
}  # fmt: skip


def assert_consistent(sim: Simulation) -> None:
    s = sim.state
    s.check()
    n = s.n
    for f in fields(s):
        value = getattr(s, f.name)
        if isinstance(value, np.ndarray):
            assert value.shape[0] == n, f.name
    assert len(np.unique(s.ids)) == n
    assert np.all(np.diff(s.ids) > 0)  # rows in id order, ids never reused
    assert s.next_id > s.ids.max(initial=-1)


def test_add_returns_new_ids_with_kind_defaults():
    sim = Simulation(PARAMS, seed=0)
    ids = sim.add_agents([[2.0, 2.0], [3.0, 3.0]], kind=[0, 1])
    assert ids.tolist() == [30, 31]
    s = sim.state
    assert s.mass[-2:].tolist() == [1.0, 3.0] and s.radius[-2:].tolist() == [0.3, 0.5]
    assert s.velocity[-2:].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    sim.step(3)
    assert_consistent(sim)


def test_remove_marks_dead_and_unknown_ids_are_errors():
    sim = Simulation(PARAMS, seed=0)
    sim.remove_agents([3, 7])
    assert not sim.state.alive[[3, 7]].any() and sim.state.n_alive == 28
    with pytest.raises(ValueError, match=r"unknown agent id\(s\) \[99\]"):
        sim.remove_agents([99])
    with pytest.raises(ValueError, match="already removed"):
        sim.remove_agents(3)
    with pytest.raises(ValueError, match="positions must have shape"):
        sim.add_agents([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="mass must be > 0"):
        sim.add_agents([[1.0, 2.0]], mass=0.0)


class Remover:
    """A component that removes one agent and adds one during every step (from before_step)."""

    name = "remover"

    def __init__(self):
        self.seen_n = []

    def before_step(self, sim):
        live = sim.state.ids[sim.state.alive]
        sim.remove_agents(live[:1])
        sim.add_agents([[5.0, 5.0]], velocities=[[1.0, 0.0]])
        self.seen_n.append(sim.state.n)

    def after_step(self, sim):
        pass

    def state_dict(self):
        return {}

    def load_state_dict(self, data):
        pass


def test_requests_during_a_step_wait_for_its_end():
    sim = Simulation(PARAMS, seed=0)
    remover = Remover()
    sim.components.append(remover)
    sim.step()
    assert remover.seen_n == [30]  # the step in flight kept its 30 rows
    assert sim.state.n == 31 and sim.state.n_alive == 30 and not sim.state.alive[0]
    sim.step()
    assert sim.state.n == 32 and sim.state.ids[-1] == 31


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "step"]), st.integers(1, 5)), min_size=1, max_size=12))
def test_add_remove_keeps_arrays_consistent(ops):
    sim = Simulation(PARAMS, seed=1)
    rng = np.random.default_rng(0)
    alive_ids = set(range(30))
    for op, count in ops:
        if op == "add":
            ids = sim.add_agents(rng.uniform(1, 19, (count, 2)), rng.normal(size=(count, 2)), kind=count % 2)
            assert set(ids.tolist()).isdisjoint(alive_ids)
            alive_ids |= set(ids.tolist())
        elif op == "remove" and alive_ids:
            chosen = sorted(alive_ids)[: min(count, len(alive_ids))]
            sim.remove_agents(chosen)
            alive_ids -= set(chosen)
        else:
            sim.step(count)
        assert_consistent(sim)
        assert set(sim.state.ids[sim.state.alive].tolist()) == alive_ids
        assert sorted(sim.query_radius([10.0, 10.0], 100.0).tolist()) == sorted(alive_ids)


def test_recording_and_checkpoints_follow_a_changing_flock(tmp_path):
    """The recorder grows its agent axis for new ids and marks removed ones not alive; a checkpoint
    taken after the changes restores bitwise."""
    from flocksim.io import Recorder

    rec = Recorder(tmp_path / "run.zarr", every=2, checkpoint_every=4)
    sim = Simulation(PARAMS, seed=2, recorder=rec)
    sim.step(2)
    new = sim.add_agents([[4.0, 4.0], [6.0, 6.0]], [[1.0, 0.0], [0.0, 1.0]])
    sim.remove_agents([0])
    sim.step(2)
    checkpoint = sim.checkpoint()
    sim.step(2)
    rec.close()
    store = TrajectoryStore.open(tmp_path / "run.zarr")
    ids = np.asarray(store.read("agent"))
    assert new.tolist() == [30, 31] and set(new.tolist()) <= set(ids.tolist())
    alive = np.asarray(store.read("alive"))
    col0 = int(np.flatnonzero(ids == 0)[0])
    col_new = int(np.flatnonzero(ids == 30)[0])
    assert alive[0, col0] and not alive[-1, col0]
    assert not alive[0, col_new] and alive[-1, col_new]
    again = Simulation(PARAMS, seed=2)
    again.restore(checkpoint)
    again.step(2)
    np.testing.assert_array_equal(again.state.position, sim.state.position)
