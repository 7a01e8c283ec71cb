"""Fast paths equal the brute-force reference bitwise (float64), whole steps.

abm-flocking runs fused kernels on the coherent grid (per-cell tiles in metric
mode, ring searches in topological mode); reynolds runs on grid-built neighbour
lists. Each is compared with ``neighbors.method = "brute"`` on the same state.
"""

from __future__ import annotations

import numpy as np
import pytest

from flocksim.config import validate
from flocksim.engines.cpu import CpuEngine
from flocksim.models import make_model
from flocksim.state import new_state


def abm_params(dim: int, mode: str, side: float, method: str, k: int = 7, vision: float = 1.5, kind="periodic"):
    return validate(
        {
            "model": "abm-flocking",
            "world": {"dim": dim, "dt": 1.0, "bounds": {"kind": kind, "size": [side] * dim}},
            "agents": {"n": 0},
            "neighbors": {"mode": mode, "k": k, "method": method},
            "flocking": {"vision": vision, "separation": 0.4, "speed": 0.3},
        }
    )


def run_steps(params, position, velocity, steps=3, alive=None):
    state = new_state(position, velocity)
    if alive is not None:
        state.alive[:] = alive
    engine = CpuEngine(make_model(params))
    for _ in range(steps):
        engine.step(state, params.world.dt)
    return state


def assert_same(params_grid, params_brute, position, velocity, steps=3, alive=None):
    a = run_steps(params_grid, position, velocity, steps, alive)
    b = run_steps(params_brute, position, velocity, steps, alive)
    assert np.array_equal(a.position, b.position)
    assert np.array_equal(a.velocity, b.velocity)
    assert np.isfinite(a.position).all()


def headings(rng, n, dim):
    h = rng.standard_normal((n, dim))
    return h / np.linalg.norm(h, axis=1, keepdims=True)


def states(dim: int, side: float, rng: np.random.Generator):
    """Named (position, velocity) test states inside [0, side)^dim."""
    n = 300
    out = {"random": rng.random((n, dim)) * side}
    out["clustered"] = side / 2 + rng.random((n, dim)) * 0.3  # all inside one cell
    lattice = np.stack(np.meshgrid(*[np.arange(0.0, side, 1.5)] * dim, indexing="ij"), axis=-1).reshape(-1, dim)
    out["cell-border lattice"] = lattice  # spacing = vision: exact ties at the radius and on cell borders
    edge = rng.random((n, dim)) * side
    edge[: n // 2, 0] = rng.random(n // 2) * 0.5
    edge[n // 2 :, 0] = side - rng.random(n - n // 2) * 0.5
    out["periodic edge"] = edge
    out["single agent"] = rng.random((1, dim)) * side
    out["two agents"] = np.array([[0.1] * dim, [side - 0.2] * dim])
    return {name: (p, headings(rng, len(p), dim) * 0.3) for name, p in out.items()}


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("mode", ["metric", "topological"])
@pytest.mark.parametrize("side", [12.0, 3.5])  # 3.5: fewer than 3 cells per axis
def test_abm_grid_equals_brute(dim, mode, side):
    rng = np.random.default_rng(dim * 10 + len(mode))
    for name, (position, velocity) in states(dim, side, rng).items():
        grid = abm_params(dim, mode, side, "grid")
        brute = abm_params(dim, mode, side, "brute")
        try:
            assert_same(grid, brute, position, velocity)
        except AssertionError as exc:  # name the state in the failure
            raise AssertionError(f"{name}: grid and brute force differ") from exc


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("mode", ["metric", "topological"])
def test_abm_grid_equals_brute_with_agents_added_and_removed(dim, mode):
    rng = np.random.default_rng(7)
    side = 10.0
    position = rng.random((400, dim)) * side
    velocity = headings(rng, 400, dim) * 0.3
    alive = np.ones(400, dtype=bool)
    alive[rng.choice(400, 120, replace=False)] = False  # removed birds keep their rows
    grid = abm_params(dim, mode, side, "grid")
    brute = abm_params(dim, mode, side, "brute")
    assert_same(grid, brute, position, velocity, alive=alive)
    # birds added later: new rows appended to a state that already ran
    a = run_steps(grid, position, velocity, 2, alive)
    b = run_steps(brute, position, velocity, 2, alive)
    extra_p = rng.random((50, dim)) * side
    extra_v = headings(rng, 50, dim) * 0.3
    grown_a = np.vstack([a.position, extra_p]), np.vstack([a.velocity, extra_v])
    grown_b = np.vstack([b.position, extra_p]), np.vstack([b.velocity, extra_v])
    alive_grown = np.concatenate([alive, np.ones(50, dtype=bool)])
    x = run_steps(grid, *grown_a, steps=3, alive=alive_grown)
    y = run_steps(brute, *grown_b, steps=3, alive=alive_grown)
    assert np.array_equal(x.position, y.position)
    assert np.array_equal(x.velocity, y.velocity)


@pytest.mark.parametrize("kind", ["box", "open"])
def test_abm_grid_equals_brute_without_walls(kind):
    """The tile path also serves non-periodic spaces (grid extent from the bounding box)."""
    rng = np.random.default_rng(3)
    position = rng.random((300, 2)) * 12.0
    velocity = headings(rng, 300, 2) * 0.3
    assert_same(
        abm_params(2, "metric", 12.0, "grid", kind=kind), abm_params(2, "metric", 12.0, "brute", kind=kind),
        position, velocity,
    )  # fmt: skip


@pytest.mark.parametrize("preset", ["boids-2d", "starlings-3d", "crowd"])
def test_reynolds_grid_equals_brute(preset):
    from flocksim import Simulation, apply_overrides, load_preset

    runs = []
    for method in ("grid", "brute"):
        params = apply_overrides(load_preset(preset), ["agents.n=150", f"neighbors.method={method}"])
        sim = Simulation(params, seed=5)
        sim.step(20)
        runs.append(sim.state)
    assert np.array_equal(runs[0].position, runs[1].position)
    assert np.array_equal(runs[0].velocity, runs[1].velocity)
