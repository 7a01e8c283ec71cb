"""Reproducibility of the stochastic research models: their noise is pre-drawn
from the run's one Generator outside the parallel loops, so a run is bitwise the same at any thread count,
continues bitwise from a checkpoint, and changes with the seed."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset

SMALL = {"vicsek": ["agents.n=300"], "couzin": []}
STEPS = 30

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads on this machine"
)


@pytest.fixture(autouse=True)
def restore_threads():
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


def run(name: str, threads: int, seed: int | None = None, steps: int = STEPS) -> Simulation:
    sim = Simulation(apply_overrides(load_preset(name), SMALL[name]), seed=seed, threads=threads)
    sim.step(steps)
    return sim


@needs_two_threads
@pytest.mark.parametrize("name", ["vicsek", "couzin"])
def test_thread_count_does_not_change_the_run(name):
    one, two = run(name, threads=1), run(name, threads=2)
    assert one.state.position.tobytes() == two.state.position.tobytes()
    assert one.state.velocity.tobytes() == two.state.velocity.tobytes()
    assert np.isfinite(one.state.position).all()


@pytest.mark.parametrize("name", ["vicsek", "couzin"])
def test_seed_changes_the_noise_and_the_same_seed_repeats(name):
    a, b, c = run(name, 1, seed=5), run(name, 1, seed=5), run(name, 1, seed=6)
    assert a.state.velocity.tobytes() == b.state.velocity.tobytes()
    assert not np.array_equal(a.state.velocity, c.state.velocity)


@pytest.mark.parametrize("name", ["vicsek", "couzin"])
def test_noise_is_drawn_every_step_and_a_checkpoint_resumes_bitwise(name):
    whole = run(name, 1, steps=20)
    half = run(name, 1, steps=10)
    saved = half.checkpoint()
    other = Simulation(half.params, threads=1)
    other.restore(saved)
    other.step(10)
    assert other.state.velocity.tobytes() == whole.state.velocity.tobytes()
    # the noise buffer holds this step's draw, one row per agent
    assert whole.model.noise.values.shape == (whole.state.n, 2)
    assert [c.name for c in whole.components] == ["noise"]


def test_warm_up_does_not_touch_the_random_stream():
    sim = Simulation(load_preset("couzin"), threads=1)
    before = sim.rng.bit_generator.state
    sim.warm_up()
    assert sim.rng.bit_generator.state == before
    sim.step(5)
    ref = run("couzin", 1, steps=5)
    assert sim.state.velocity.tobytes() == ref.state.velocity.tobytes()
