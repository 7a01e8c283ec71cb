"""Reproducibility: a run is fully determined by its parameters and
seed, and is bitwise the same whatever numba's thread count (set in process with ``threads=`` or for a
whole process with NUMBA_NUM_THREADS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset

PRESETS = ("boids-2d", "starlings-2d", "abm-flocking-small", "starlings-3d")
STEPS = 40
SMALL = {"starlings-3d": ["agents.n=300"]}

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads on this machine"
)


def params_of(name: str):
    return apply_overrides(load_preset(name), SMALL.get(name, []))


def run(name: str, steps: int = STEPS, seed: int | None = None, threads: int | None = None, kill=None):
    sim = Simulation(params_of(name), seed=seed, threads=threads)
    if kill is not None:
        sim.state.alive[kill] = False
    sim.step(steps)
    return sim


def assert_bitwise(a: np.ndarray, b: np.ndarray, what: str) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert a.tobytes() == b.tobytes(), f"{what}: differs in {int(np.sum(a != b))} entries"


@pytest.fixture(autouse=True)
def restore_threads():
    """Tests here change numba's thread count; leave it as found for the tests that follow."""
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


@needs_two_threads
@pytest.mark.parametrize("name", PRESETS)
def test_thread_count_does_not_change_the_run(name):
    one = run(name, threads=1)
    assert numba.get_num_threads() == 1
    two = run(name, threads=2)
    assert numba.get_num_threads() == 2
    assert one.state.n_alive > 0
    assert_bitwise(one.state.position, two.state.position, f"{name} position")
    assert_bitwise(one.state.velocity, two.state.velocity, f"{name} velocity")
    assert_bitwise(one.state.alive, two.state.alive, f"{name} alive")
    assert np.isfinite(one.state.position).all() and np.isfinite(one.state.velocity).all()
    # something actually happened: the flock moved
    start = Simulation(params_of(name)).state
    assert not np.array_equal(start.position, one.state.position)
    # metrics read from the same state agree too
    assert one.metrics() == two.metrics()


@needs_two_threads
@pytest.mark.parametrize("name", ["boids-2d", "starlings-2d", "abm-flocking-small"])
def test_thread_count_with_dead_agents(name):
    kill = np.arange(0, 200, 3)
    one = run(name, threads=1, kill=kill)
    two = run(name, threads=2, kill=kill)
    assert_bitwise(one.state.position, two.state.position, f"{name} position")
    assert_bitwise(one.state.velocity, two.state.velocity, f"{name} velocity")
    assert not one.state.alive[kill].any()


@needs_two_threads
def test_thread_count_alternating_within_one_run():
    """Changing the thread count between steps of one run changes nothing either."""
    ref = run("starlings-2d", steps=40, threads=1)
    sim = Simulation(params_of("starlings-2d"))
    for t in range(40):
        sim.engine.threads = 1 + t % 2
        sim.step()
    assert_bitwise(ref.state.position, sim.state.position, "position")
    assert_bitwise(ref.state.velocity, sim.state.velocity, "velocity")


SCRIPT = """
import json, sys
import numba
import numpy as np
from flocksim import Simulation, apply_overrides, load_preset

out, steps, small = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
arrays = {}
for name in json.loads(sys.argv[4]):
    sim = Simulation(apply_overrides(load_preset(name), small.get(name, [])))
    sim.step(steps)
    arrays[name + ":position"] = sim.state.position
    arrays[name + ":velocity"] = sim.state.velocity
arrays["threads"] = np.array([numba.config.NUMBA_NUM_THREADS, numba.get_num_threads()])
np.savez(out, **arrays)
"""


@needs_two_threads
def test_numba_num_threads_environment(tmp_path):
    """Separate processes with NUMBA_NUM_THREADS=1 and 2 save identical arrays."""
    saved = {}
    for threads in (1, 2):
        out = tmp_path / f"run{threads}.npz"
        env = {**os.environ, "NUMBA_NUM_THREADS": str(threads)}
        args = [sys.executable, "-c", SCRIPT, str(out), str(STEPS), json.dumps(SMALL), json.dumps(PRESETS)]
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        with np.load(out) as data:
            saved[threads] = {key: data[key] for key in data.files}
        assert saved[threads]["threads"].tolist() == [threads, threads]
    for key in saved[1]:
        if key != "threads":
            assert_bitwise(saved[1][key], saved[2][key], key)
    # and equal to this process's run
    here = run("boids-2d")
    assert_bitwise(here.state.position, saved[1]["boids-2d:position"], "in-process vs subprocess")


@pytest.mark.parametrize("name", PRESETS)
def test_same_seed_same_run_different_seed_different_run(name):
    a = run(name, seed=7, threads=1)  # one thread: fast on a busy machine; threads are tested above
    b = run(name, seed=7, threads=1)
    assert_bitwise(a.state.position, b.state.position, "same seed position")
    assert_bitwise(a.state.velocity, b.state.velocity, "same seed velocity")
    c = run(name, seed=8, threads=1)
    assert not np.array_equal(a.state.position, c.state.position)
    assert not np.array_equal(a.state.velocity, c.state.velocity)
    # different seeds already differ at the start (positions and velocities)
    s7, s8 = Simulation(params_of(name), seed=7).state, Simulation(params_of(name), seed=8).state
    assert not np.any(np.all(s7.position == s8.position, axis=1))


def test_seed_argument_equals_seed_parameter():
    via_arg = run("boids-2d", seed=11, threads=1)
    params = apply_overrides(load_preset("boids-2d"), ["seed=11"])
    sim = Simulation(params, threads=1)
    sim.step(STEPS)
    assert sim.seed == via_arg.seed == 11
    assert_bitwise(via_arg.state.position, sim.state.position, "position")
    # the preset's own seed is the default
    default = run("boids-2d", threads=1)
    explicit = run("boids-2d", seed=load_preset("boids-2d").seed, threads=1)
    assert_bitwise(default.state.position, explicit.state.position, "default seed")


def test_stepping_in_chunks_equals_stepping_at_once():
    at_once = run("starlings-2d", steps=30, threads=1)
    chunks = Simulation(params_of("starlings-2d"), threads=1)
    for n in (1, 0, 9, 20):
        chunks.step(n)
    assert chunks.steps == 30
    assert_bitwise(at_once.state.position, chunks.state.position, "position")
    assert_bitwise(at_once.state.velocity, chunks.state.velocity, "velocity")


def test_bad_thread_count_is_rejected():
    with pytest.raises(ValueError, match="threads"):
        Simulation(params_of("boids-2d"), threads=0)
    with pytest.raises(ValueError, match="threads"):
        Simulation(params_of("boids-2d"), threads=numba.config.NUMBA_NUM_THREADS + 1)
