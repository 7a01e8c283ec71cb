"""The CUDA engine against the CPU engine, under numba-cuda's simulator (see tests/cuda_sim.py).

Every model runs a few steps at small N on both engines. abm-flocking in metric mode sums in
fixed point, so both engines must agree bitwise; for the others the tests allow a relative
difference of TOLERANCE (a real GPU fuses multiply-adds and has its own sin/cos, so its last bits
differ; the simulator runs the same Python arithmetic as the CPU and in practice agrees bitwise).
Neighbour rows must equal the CPU brute-force reference exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import cuda_sim
from flocksim import Simulation, apply_overrides, load_preset
from flocksim.config import validate
from flocksim.engines.cpu import CpuEngine
from flocksim.models import make_model
from flocksim.neighbors import find_neighbors
from flocksim.state import new_state

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]

TOLERANCE = 1e-9
"""Largest relative difference allowed between the engines where the CPU path sums in floating point."""


def cuda_engine(model):
    from flocksim.engines.cuda import CudaEngine

    return CudaEngine(model)


def assert_states_match(a, b, exact: bool, what: str = "") -> None:
    for name in ("position", "velocity", "spin"):
        x = getattr(a, name)
        y = getattr(b, name)
        assert x.shape == y.shape, f"{what} {name}: shapes differ"
        assert np.isfinite(y).all(), f"{what} {name}: NaN or inf on the GPU"
        if exact:
            assert np.array_equal(x, y), f"{what} {name}: engines differ (max {np.abs(x - y).max():.3g})"
        else:
            scale = max(1.0, float(np.abs(x).max(initial=0.0)))
            diff = float(np.abs(x - y).max(initial=0.0))
            assert diff <= TOLERANCE * scale, f"{what} {name}: engines differ by {diff:.3g}"


def abm_params(dim, mode, side, method, k=7, kind="periodic"):
    return validate(
        {
            "model": "abm-flocking",
            "world": {"dim": dim, "dt": 1.0, "bounds": {"kind": kind, "size": [side] * dim}},
            "agents": {"n": 0},
            "neighbors": {"mode": mode, "k": k, "method": method},
            "flocking": {"vision": 1.5, "separation": 0.4, "speed": 0.3},
        }
    )


def headings(rng, n, dim):
    h = rng.standard_normal((n, dim))
    return h / np.linalg.norm(h, axis=1, keepdims=True)


def step_both(params, position, velocity, steps=2, alive=None):
    states = []
    for engine in (CpuEngine(make_model(params)), cuda_engine(make_model(params))):
        state = new_state(position, velocity)
        if alive is not None:
            state.alive[:] = alive
        for _ in range(steps):
            engine.step(state, params.world.dt)
        states.append(state)
    return states


@pytest.mark.parametrize(
    ("dim", "mode", "side", "method"),
    [
        (2, "metric", 12.0, "grid"),  # fused metric kernel, 2D masked sums
        (3, "metric", 12.0, "grid"),  # fused metric kernel, 3D
        (2, "metric", 3.5, "grid"),  # fewer than 3 cells per axis: the reference over grid rows
        (3, "topological", 12.0, "grid"),  # ring search per bird
        (2, "topological", 12.0, "brute"),  # tiled brute force, k nearest
        (3, "metric", 12.0, "brute"),  # tiled brute force, metric
    ],
)
def test_abm_flocking_matches_cpu(dim, mode, side, method):
    rng = np.random.default_rng(dim + len(mode))
    n = 120
    position = rng.random((n, dim)) * side
    alive = np.ones(n, dtype=bool)
    alive[rng.choice(n, 15, replace=False)] = False
    cpu, gpu = step_both(abm_params(dim, mode, side, method), position, headings(rng, n, dim) * 0.3, alive=alive)
    assert_states_match(cpu, gpu, exact=mode == "metric", what=f"abm {dim}D {mode} {method}")


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("boids-2d", ["neighbors.method=grid"]),
        ("starlings-3d", ["neighbors.method=grid", "predator.enabled=true", "turning.enabled=true"]),
        ("starlings-2d", ["neighbors.mode=metric", "neighbors.method=brute", "rules.cohesion.centrality=2"]),
        ("crowd", ["overlap.enabled=true", "neighbors.method=grid"]),
        ("reef", []),  # obstacles
        ("minions", []),  # per-group seek targets, attack slots
        ("vicsek", ["neighbors.method=grid"]),  # vicsek.update = "paper"
        ("vicsek", ["neighbors.method=brute", "vicsek.update=forward"]),
        ("couzin", []),
    ],
)
def test_every_model_matches_cpu(preset, overrides):
    params = apply_overrides(load_preset(preset), ["agents.n=60", *overrides])
    cpu = Simulation(params, seed=4, engine="cpu")
    gpu = Simulation(params, seed=4, engine="cuda")
    for _ in range(3):
        cpu.step()
        gpu.step()
    assert cpu.steps == gpu.steps == 3
    assert_states_match(cpu.state, gpu.state, exact=False, what=preset)
    assert np.array_equal(cpu.state.alive, gpu.state.alive)


def neighbor_states(dim, side, rng, n):
    out = {"random": rng.random((n, dim)) * side}
    out["clustered"] = side / 2 + rng.random((n, dim)) * 0.3
    lattice = np.stack(np.meshgrid(*[np.arange(0.0, side, 1.5)] * dim, indexing="ij"), axis=-1).reshape(-1, dim)
    out["cell-border lattice"] = lattice[:n]  # spacing = radius: exact ties on the radius and the cell borders
    edge = rng.random((n, dim)) * side
    edge[: n // 2, 0] = rng.random(n // 2) * 0.5
    edge[n // 2 :, 0] = side - rng.random(n - n // 2) * 0.5
    out["periodic edge"] = edge
    return out


def device_rows(position, alive, params):
    from flocksim.engines.cuda import CudaEngine

    state = new_state(position, np.zeros_like(position))
    state.alive[:] = alive
    return CudaEngine(make_model(params)).neighbors(state)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("mode", ["metric", "topological"])
@pytest.mark.parametrize("method", ["grid", "brute"])
def test_neighbor_rows_equal_brute_force(dim, mode, method):
    rng = np.random.default_rng(11 * dim + len(mode) + len(method))
    side = 9.0
    params = abm_params(dim, mode, side, method)
    q = make_model(params).neighbor_query()
    for name, position in neighbor_states(dim, side, rng, 90).items():
        alive = rng.random(len(position)) > 0.1
        expected = find_neighbors(position, alive, make_model(params).space, mode, q.radius, q.k, "brute")
        got = device_rows(position, alive, params)
        assert np.array_equal(got.start, expected.start), f"{name}: row lengths differ"
        assert np.array_equal(got.index, expected.index), f"{name}: rows differ"


@pytest.mark.parametrize("n", [1, 255, 256, 257])
@pytest.mark.parametrize("mode", ["metric", "topological"])
def test_tiled_brute_force_at_tile_edges(n, mode):
    """Tiles of 256 agents: one agent, one short of a tile, exactly a tile, one over."""
    rng = np.random.default_rng(n)
    side = 12.0
    params = abm_params(2, mode, side, "brute", k=5)
    q = make_model(params).neighbor_query()
    position = rng.random((n, 2)) * side
    alive = np.ones(n, dtype=bool)
    alive[n // 3] = n == 1  # one dead row somewhere (except when alone)
    expected = find_neighbors(position, alive, make_model(params).space, mode, q.radius, q.k, "brute")
    got = device_rows(position, alive, params)
    assert np.array_equal(got.start, expected.start)
    assert np.array_equal(got.index, expected.index)


def test_agents_added_and_removed_mid_run():
    params = apply_overrides(load_preset("abm-flocking-small"), ["agents.n=80", "neighbors.method=grid"])
    sims = [Simulation(params, seed=2, engine=engine) for engine in ("cpu", "cuda")]
    rng = np.random.default_rng(0)
    new = rng.random((12, 2)) * 20.0
    for sim in sims:
        sim.step(2)
        sim.remove_agents([3, 40, 79])
        sim.add_agents(new, velocities=np.ones((12, 2)))
        sim.step(2)
        sim.remove_agents([81])
        sim.step(1)
    cpu, gpu = sims
    assert gpu.state.n == 92 and gpu.state.n_alive == 88
    assert np.array_equal(cpu.state.ids, gpu.state.ids)
    assert_states_match(cpu.state, gpu.state, exact=True, what="after add/remove")


@pytest.mark.parametrize(("first", "second"), [("cpu", "cuda"), ("cuda", "cpu")])
def test_checkpoint_resumes_on_the_other_engine(first, second):
    params = apply_overrides(load_preset("starlings-2d"), ["agents.n=50", "predator.enabled=true"])
    a = Simulation(params, seed=9, engine=first)
    a.step(2)
    checkpoint = a.checkpoint()
    b = Simulation(params, seed=9, engine=second)
    b.restore(checkpoint)
    a.step(2)
    b.step(2)
    assert b.steps == 4
    assert_states_match(a.state, b.state, exact=False, what=f"{first} -> {second}")


def test_state_is_copied_only_when_read():
    from flocksim.engines.cuda_state import DeviceFlockState

    params = apply_overrides(load_preset("vicsek"), ["agents.n=40"])
    sim = Simulation(params, seed=1, engine="cuda")
    assert isinstance(sim.state, DeviceFlockState)
    sim.step(2)
    mirror = sim.state.mirror
    assert mirror.downloads == 0  # nobody looked
    assert sim.state.n == 40 and sim.state.n_alive == 40 and mirror.downloads == 0
    position = sim.state.position  # one array copied back, nothing else
    assert mirror.downloads == position.nbytes
    # an edit on the host reaches the GPU before the next step
    cpu = Simulation(params, seed=1, engine="cpu")
    cpu.step(2)
    for s in (sim, cpu):
        s.state.position[0] = [0.25, 0.5]
        s.step(1)
    assert_states_match(cpu.state, sim.state, exact=False, what="after a host edit")
