"""The crowd fast paths equal their references bitwise: metric rows filled in increasing
neighbour index (no per-row sort) against the brute-force search, reynolds steering summed straight
from the grid against the sums over the brute-force list, the compiled flow-field waypoints
against ``Navigator.waypoints`` (numpy), and whole crowd-maze steps against a run on those
references."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.budgets import BudgetError
from flocksim.config import validate
from flocksim.engines.cpu_reynolds import reynolds_accelerations
from flocksim.engines.cpu_reynolds_grid import (
    PLANE_COLUMNS,
    SUM_COLUMNS,
    GridSteering,
    neighbor_sums,
    steering_from_sums,
)
from flocksim.models.reynolds import ALIGNMENT_INERTIAL_SPIN
from flocksim.navigation.waypoints import field_waypoints
from flocksim.neighbors.brute import metric_neighbors_brute
from flocksim.neighbors.coherent import (
    FILL_HITS,
    block_runs_scratch,
    build_coherent_grid,
    fill_stripes,
    metric_fill_ascending,
)
from flocksim.neighbors.csr import starts_from_counts
from flocksim.neighbors.search import metric_counts_grid, metric_neighbors_grid
from flocksim.scenarios import targets as targets_module
from flocksim.space import make_space


def crowd_states(dim: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Uniform, a packed crowd with duplicates, and a lattice with exact ties at the radius."""
    uniform = rng.random((600, dim)) * 10.0
    packed = 5.0 + rng.random((400, dim)) * 0.8
    packed[1::7] = packed[::7][: len(packed[1::7])]  # coincident agents
    lattice = np.stack(np.meshgrid(*[np.arange(0.0, 10.0, 1.0)] * dim, indexing="ij"), axis=-1).reshape(-1, dim)
    return {"uniform": uniform, "packed": packed, "lattice": lattice}


def rows_ascending(position, alive, space, radius, hits_width):
    """metric rows with a given hits scratch width (small: the branching fallback runs)."""
    n, dim = position.shape
    grid = build_coherent_grid(position, alive, space, radius)
    counts, runs, shifts = metric_counts_grid(grid, n, dim, space, radius)
    start = starts_from_counts(counts)
    index = np.full(start[-1], -1, dtype=np.int64)
    fill = start[:-1].copy()
    threads = numba.get_num_threads()
    hits = np.empty((threads, hits_width + 1), dtype=np.int64)
    stripes = fill_stripes(grid, threads)
    metric_fill_ascending(grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, grid.geometry, dim,
                          space, radius * radius, runs, shifts, hits, stripes, fill, index)  # fmt: skip
    assert np.array_equal(fill, start[1:])  # every row filled to its counted length
    return start, index


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind", ["box", "periodic"])
@pytest.mark.parametrize("threads", [1, 2])
def test_rows_in_increasing_index_equal_brute_force(dim, kind, threads):
    space = make_space(kind, [10.0] * dim)
    rng = np.random.default_rng(7)
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        for name, position in crowd_states(dim, rng).items():
            alive = rng.random(len(position)) > 0.1
            for radius in (0.45, 1.0, 3.0):  # 3.0: fewer than 3 cells per periodic axis
                ref = metric_neighbors_brute(position, alive, space, radius)
                for width in (256, 1):  # 1: most agents overflow the scratch
                    start, index = rows_ascending(position, alive, space, radius, width)
                    assert np.array_equal(start, ref.start), (name, radius, width)
                    assert np.array_equal(index, ref.index), (name, radius, width)
                got = metric_neighbors_grid(position, alive, space, radius)
                assert np.array_equal(got.index, ref.index), (name, radius)
    finally:
        numba.set_num_threads(before)


def test_fill_stripes_cut_at_layers_by_agent_count():
    """2D: layers are rows of cells along y. Agents in rows 0, 0, 1, 3, 3, 3 of a grid of 1 x 4 cells."""
    position = np.array([[0.5, 0.0], [0.5, 0.5], [0.5, 1.5], [0.5, 3.2], [0.5, 3.5], [0.5, 3.9]])
    alive = np.ones(len(position), dtype=bool)
    grid = build_coherent_grid(position, alive, make_space("box", [1.0, 4.0]), 1.0)
    assert grid.geometry.ny == 4 and grid.geometry.nx == 1
    assert fill_stripes(grid, 1).tolist() == [0, 6]
    assert fill_stripes(grid, 2).tolist() == [0, 3, 6]  # half the agents: cut where row 1 ends
    assert fill_stripes(grid, 4).tolist() == [0, 2, 3, 6]  # row 3 cannot be split
    assert fill_stripes(grid, 64).tolist() == [0, 2, 3, 6]


def test_compiled_waypoints_equal_the_numpy_reference():
    sim = Simulation(load_preset("crowd-maze"), seed=3)
    sim.step(40)
    nav = sim.components[-1].navigator
    field = next(iter(nav.fields.values()))
    rng = np.random.default_rng(0)
    extra = np.concatenate(
        [
            rng.uniform(-5.0, 125.0, (500, 2)),  # outside the grid too
            field.grid.centre(*np.argwhere(field.grid.walls)[0]) + rng.uniform(-0.5, 0.5, (50, 2)),  # in a wall
            np.repeat(field.grid.centre(*field.target_cell)[None], 5, axis=0),  # at the target
        ]
    )
    position = np.concatenate([sim.state.position, extra])
    rows = np.arange(0, len(position), 2, dtype=np.int64)
    for bilinear in (True, False):
        nav.bilinear = bilinear
        goal = rng.uniform(0.0, 80.0, (len(position), 2))
        expected = goal.copy()
        expected[rows] = nav.waypoints(field, position[rows], goal[rows])
        field_waypoints(field, position, (0, 1), rows, goal, bilinear, nav.direct_radius, nav.lead)
        assert np.array_equal(goal, expected)
        assert (np.abs(expected[rows] - position[rows]).sum(axis=1) > 0).mean() > 0.5  # most rows got a waypoint


def test_crowd_maze_steps_equal_the_reference_path(monkeypatch):
    """crowd-maze, whole steps: steering summed on the grid + compiled waypoints (1 and 2 threads)
    against steering over brute-force neighbour lists + numpy waypoints. Overlap resolution runs on
    its grid in both: its brute-force pass equals it only up to the order of summation
    (engines/cpu_overlap.py)."""

    def run(method, threads):
        params = apply_overrides(load_preset("crowd-maze"), ["agents.n=800", f"neighbors.method={method}"])
        sim = Simulation(params, seed=1, threads=threads)
        sim.step(50)
        return sim.state

    fast = [run("grid", t) for t in (1, min(2, numba.config.NUMBA_NUM_THREADS))]

    def numpy_waypoints(field, position, plane, rows, goal, bilinear, direct_radius, lead):
        nav = targets_module.Navigator.__new__(targets_module.Navigator)
        nav.bilinear, nav.direct_radius, nav.lead = bilinear, direct_radius, lead
        goal[rows] = nav.waypoints(field, position[rows][:, list(plane)], goal[rows])

    monkeypatch.setattr(targets_module, "field_waypoints", numpy_waypoints)
    ref = run("brute", 1)
    for state in fast:
        assert np.array_equal(state.position, ref.position)
        assert np.array_equal(state.velocity, ref.velocity)
    assert np.isfinite(ref.position).all()
    assert np.abs(ref.velocity).sum() > 0.0  # the crowd moved


def reynolds_case(dim, kind, side, alignment, form, cohesion_weight, position, rng):
    """A reynolds simulation whose state is ``position`` (some agents dead, random velocities):
    separation 0.4, alignment 1.0 (the lattice's spacing: ties), cohesion 1.3 (beyond the query
    radius when its weight is 0)."""
    p = load_preset("boids-2d").model_dump(mode="json")
    p["world"]["dim"] = dim
    p["world"]["bounds"] = {"kind": kind, "size": [side] * dim, "margin": 1.0, "turn_strength": 5.0}
    p["agents"]["n"] = len(position)
    p["agents"]["max_speed"], p["agents"]["min_speed"] = 2.0, 0.0
    p["rules"]["separation"].update(radius=0.4, form=form)
    p["rules"]["alignment"].update(radius=1.0, mode=alignment)
    p["rules"]["cohesion"].update(radius=1.3, weight=cohesion_weight)
    sim = Simulation(validate(p), seed=0)
    s = sim.state
    s.position[:] = position
    s.velocity[:] = rng.normal(size=s.velocity.shape)
    s.velocity[3] = 0.0  # a zero heading
    s.alive[:] = rng.random(s.n) > 0.1
    return sim.model, s


def grid_accelerations(model, s, hits_width):
    """Phase one on the grid (engines/cpu_reynolds_grid.py) with a given hits scratch width."""
    q = model.neighbor_query()
    grid = build_coherent_grid(s.position, s.alive, model.space, q.radius)
    c = model.coefficients
    threads = numba.get_num_threads()
    runs, shifts = block_runs_scratch(threads)
    hits = np.empty((threads, hits_width + 1), dtype=np.int64)
    stripes = fill_stripes(grid, threads)
    columns = SUM_COLUMNS if s.dim == 3 or c.alignment_mode == ALIGNMENT_INERTIAL_SPIN else PLANE_COLUMNS
    sums = np.full((len(grid.order), columns), np.nan)
    pairs = np.zeros(len(stripes) - 1, dtype=np.int64)
    neighbor_sums(grid.xs, grid.ys, grid.zs, grid.order, grid.cell, grid.cell_start, grid.geometry, s.dim,
                  model.space, q.radius**2, s.velocity, c, runs, shifts, hits, stripes, sums, pairs)  # fmt: skip
    out, aux = np.full((s.n, 3), np.nan), np.full((s.n, 4), np.nan)
    steering_from_sums(s.position, s.velocity, grid.order, sums, s.dim, model.space, c, model.inputs(s), out, aux)
    return out, aux, int(pairs.sum())


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind, side", [("box", 10.0), ("periodic", 10.0), ("periodic", 2.5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_grid_steering_equals_the_list_path_bitwise(dim, kind, side, threads):
    """Reynolds phase one summed straight from the grid against reynolds_accelerations over the
    brute-force list: uniform, packed (coincident agents) and lattice crowds (ties at the radii),
    basic and inertial-spin alignment, both separation forms, a scratch of 1 hit (the branching
    fallback). Periodic 2.5: fewer than 3 cells per axis."""
    rng = np.random.default_rng(11)
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        for name, position in crowd_states(dim, rng).items():
            position = position * (side / 10.0)
            for alignment, form, cohesion in (("basic", "minion", 0.0), ("inertial-spin", "raw", 1.0)):
                model, s = reynolds_case(dim, kind, side, alignment, form, cohesion, position, rng)
                q = model.neighbor_query()
                nbrs = metric_neighbors_brute(s.position, s.alive, model.space, q.radius)
                ref, ref_aux = np.full((s.n, 3), np.nan), np.full((s.n, 4), np.nan)
                reynolds_accelerations(s.position, s.velocity, s.alive, nbrs.start, nbrs.index, s.dim, model.space,
                                       model.coefficients, model.inputs(s), ref, ref_aux)  # fmt: skip
                assert len(nbrs.index) > 0 and np.isfinite(ref[s.alive]).all()
                for width in (FILL_HITS, 1):
                    out, aux, pairs = grid_accelerations(model, s, width)
                    case = (name, alignment, width)
                    assert pairs == len(nbrs.index), case
                    assert np.array_equal(out, ref, equal_nan=True), case
                    assert np.array_equal(aux, ref_aux, equal_nan=True), case
    finally:
        numba.set_num_threads(before)


def test_reynolds_steps_take_the_grid_path_only_for_metric_grid_searches(monkeypatch):
    """The grid path runs for metric searches on the grid; brute-force and topological searches
    build the list."""
    original = GridSteering.__call__
    calls = []

    def counting(self, *args):
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(GridSteering, "__call__", counting)
    for overrides, taken in (([], True), (["neighbors.method=brute"], False), (["neighbors.mode=topological"], False)):
        calls.clear()
        Simulation(apply_overrides(load_preset("boids-2d"), overrides), seed=0).step(2)
        assert bool(calls) == taken, overrides


def test_grid_steering_refuses_a_step_over_the_pair_budget_before_moving_anyone():
    """The grid path counts the pairs it sums and checks them as the list would be checked: the
    refused step leaves the state as it was."""
    params = apply_overrides(load_preset("boids-2d"), ["agents.n=200"])
    start = int(Simulation(params).neighbors().counts.sum())
    sim = Simulation(params, max_pairs=start + 100)
    with pytest.raises(BudgetError, match="neighbour pairs"):
        for _ in range(600):
            before = sim.state.position.copy(), sim.state.velocity.copy()
            sim.step()
    assert 0 < sim.steps < 600
    assert np.array_equal(sim.state.position, before[0]) and np.array_equal(sim.state.velocity, before[1])
