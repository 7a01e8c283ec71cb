"""Size budgets (flocksim.budgets): every size that follows from parameters is checked before it is
allocated: navigation grids, flow fields, images, obstacle grids, neighbour pairs. The viewer's
side of the same checks is in tests/test_viewer_limits.py."""

import os
import threading

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from flocksim import budgets, load_preset
from flocksim.budgets import MAX_NAVIGATION_CELLS, BudgetError, PairBudget, grid_side, smallest_cell_size
from flocksim.cli import app
from flocksim.config import ConfigError, apply_overrides
from flocksim.navigation.occupancy import walls_from_image
from flocksim.neighbors import count_metric_pairs, find_neighbors, metric_pairs_lower_bound
from flocksim.obstacles import build_obstacle_set
from flocksim.params import Obstacles
from flocksim.simulation import Simulation
from flocksim.space import make_space

REPRODUCER = [  # issue 14: ~22 GB on a 400 x 250 world (boids-2d) before the budget
    "navigation.enabled=true",
    "navigation.source=obstacles",
    "rules.seek.weight=1.0",
    "navigation.cell_size=0.05",
]


def run_cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------------------------ navigation


def test_navigation_grid_over_budget_is_refused_by_the_schema():
    with pytest.raises(ConfigError) as refused:
        apply_overrides(load_preset("boids-2d"), REPRODUCER)
    message = str(refused.value)
    assert "navigation.cell_size: a navigation grid of 8000 x 5000 = 40,000,000 cells" in message
    assert f"budget of {MAX_NAVIGATION_CELLS:,} cells" in message
    assert "allowed: navigation.cell_size >= 0.31" in message
    # the smallest size it names is accepted, a hair less is not
    ok = apply_overrides(load_preset("boids-2d"), [*REPRODUCER[:3], "navigation.cell_size=0.31"])
    assert grid_side(400.0, 0.31) * grid_side(250.0, 0.31) <= MAX_NAVIGATION_CELLS
    assert ok.navigation.cell_size == 0.31
    with pytest.raises(ConfigError, match=r"navigation\.cell_size"):
        apply_overrides(load_preset("boids-2d"), [*REPRODUCER[:3], "navigation.cell_size=0.309"])


def test_navigation_budget_counts_the_ground_plane_in_3d():
    # 3D grids lie in the x-z plane: y does not count
    base = ["world.dim=3", "world.bounds.size=[2048.0, 5000.0, 2048.0]", "rules.seek.target=[0.0, 0.0, 0.0]"]
    params = apply_overrides(load_preset("boids-2d"), [*base, *REPRODUCER[:3], "navigation.cell_size=2.0"])
    assert params.navigation.cell_size == 2.0  # 1024 x 1024
    with pytest.raises(ConfigError, match=r"1030 x 1030 = 1,060,900 cells"):
        apply_overrides(load_preset("boids-2d"), [*base, *REPRODUCER[:3], "navigation.cell_size=1.99"])


def test_navigation_map_over_budget():
    rows = ['"' + "." * 1100 + '"'] * 1000
    with pytest.raises(ConfigError, match=r"navigation\.map: a navigation grid of 1100 x 1000 = 1,100,000 cells"):
        apply_overrides(
            load_preset("boids-2d"),
            [
                "navigation.enabled=true",
                "navigation.source=map",
                "rules.seek.weight=1.0",
                f"navigation.map=[{', '.join(rows)}]",
            ],
        )


def test_flow_fields_of_many_groups_over_budget():
    kinds = "[" + ", ".join(["{fraction = 0.05}"] * 20) + "]"
    over = [*REPRODUCER[:3], "navigation.cell_size=0.4", f"agents.kinds={kinds}"]  # 1000 x 625 cells x 20 fields
    with pytest.raises(ConfigError, match=r"navigation: 20 groups .* allowed: at most 13 groups"):
        apply_overrides(load_preset("boids-2d"), over)


def test_smallest_cell_size_fits():
    for width, height in ((400.0, 250.0), (1.0, 1.0), (1e6, 3.0), (123.4, 5678.9)):
        size = smallest_cell_size(width, height)
        assert grid_side(width, size) * grid_side(height, size) <= MAX_NAVIGATION_CELLS
        assert grid_side(width, size * 0.99) * grid_side(height, size * 0.99) > MAX_NAVIGATION_CELLS


def test_cli_refuses_the_reproducer_in_one_line():
    args = ["run", "boids-2d", "--steps", "1", "-q"]
    for key in REPRODUCER:
        args += ["--set", key]
    result = run_cli(*args)
    assert result.exit_code == 2
    text = result.output.strip()
    assert len(text.splitlines()) == 1
    assert text.startswith("error: parameters: navigation.cell_size: a navigation grid of 8000 x 5000")


def test_image_over_budget_is_refused_from_its_header(tmp_path):
    big = tmp_path / "big.png"
    Image.new("L", (2000, 1000), 255).save(big)
    with pytest.raises(BudgetError, match=r"navigation\.image: a navigation grid of 2000 x 1000 = 2,000,000 cells"):
        walls_from_image(big)
    small = tmp_path / "small.png"
    Image.new("L", (40, 20), 0).save(small)
    assert walls_from_image(small).shape == (20, 40)
    result = run_cli(
        "run", "boids-2d", "--steps", "1", "-q", "--set", "navigation.enabled=true", "--set", "navigation.source=image",
        "--set", "rules.seek.weight=1.0", "--set", f"navigation.image={big}",
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: navigation.image: a navigation grid of 2000 x 1000")


def test_image_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "level.png"
    os.mkfifo(fifo)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_error_of(walls_from_image, fifo)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # unblock the reader before failing
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a FIFO as navigation.image blocked")
    assert "is not a regular file" in outcome[0]
    assert "cannot read" in _error_of(walls_from_image, tmp_path / "missing.png")
    assert "is not a regular file" in _error_of(walls_from_image, tmp_path)


def _error_of(fn, *args):
    try:
        fn(*args)
    except ValueError as exc:
        return str(exc)
    return ""


# ------------------------------------------------------------------------------ obstacle grids


def test_obstacle_grid_lists_stay_within_their_budget():
    # one tiny circle sets fine cells; 300 large boxes then cover every cell of the grid
    boxes = [{"min_corner": [0.0, 0.1 * i], "max_corner": [100.0, 100.0]} for i in range(300)]
    tiny = [{"center": [0.0, 0.0], "body_radius": 0.0, "influence_radius": 0.01}]
    _, grid, cells = build_obstacle_set(Obstacles(circles=tiny, boxes=boxes), 2)
    ncell = int(np.prod(grid[6:9]))
    entries = len(cells) - (ncell + 1)
    assert 301 <= entries <= budgets.max_obstacle_entries(301)
    # few small obstacles keep their fine grid
    few = Obstacles(circles=[{"center": [float(10 * i), 0.0], "influence_radius": 1.0} for i in range(5)])
    _, fine, _ = build_obstacle_set(few, 2)
    assert fine[3] == pytest.approx(1.0 * (1 + 1e-7))


# ------------------------------------------------------------------------------ neighbour pairs


def _flock(n, seed=0, dim=2, box=10.0):
    rng = np.random.default_rng(seed)
    return rng.random((n, dim)) * box, np.ones(n, dtype=bool), make_space("box", [box] * dim)


@pytest.mark.parametrize("method", ["grid", "brute"])
def test_metric_pairs_are_counted_and_refused_before_allocation(method):
    position, alive, space = _flock(300)
    alive[::7] = False
    full = find_neighbors(position, alive, space, "metric", 2.0, method=method)
    pairs = len(full.index)
    assert count_metric_pairs(position, alive, space, 2.0, method) == pairs
    exact = find_neighbors(position, alive, space, "metric", 2.0, method=method, budget=PairBudget(pairs))
    np.testing.assert_array_equal(exact.index, full.index)
    with pytest.raises(BudgetError) as refused:
        find_neighbors(position, alive, space, "metric", 2.0, method=method, budget=PairBudget(pairs - 1, "vision"))
    message = str(refused.value)
    assert message.startswith(
        f"neighbors: {int(alive.sum())} agents within the metric radius 2 (vision) have {pairs:,}"
    )
    assert f"budget of {pairs - 1:,} pairs" in message


@pytest.mark.parametrize("method", ["grid", "brute"])
def test_topological_slots_are_refused_before_allocation(method):
    position, alive, space = _flock(100)
    find_neighbors(position, alive, space, "topological", k=7, method=method, budget=PairBudget(700))
    with pytest.raises(BudgetError, match=r"100 agents x neighbors.k = 7 need 700 neighbour slots.*budget of 699"):
        find_neighbors(position, alive, space, "topological", k=7, method=method, budget=PairBudget(699))


def test_simulation_checks_its_initial_neighbour_pairs():
    params = apply_overrides(load_preset("boids-2d"), ["agents.n=400", "rules.cohesion.radius=1000"])
    with pytest.raises(
        BudgetError, match=r"400 agents within the metric radius 1000 \(the largest rules\.\*\.radius\)"
    ):
        Simulation(params, max_pairs=100_000)
    Simulation(params, max_pairs=400 * 399)  # everyone sees everyone: exactly the budget
    star = apply_overrides(load_preset("starlings-2d"), ["agents.n=100", "neighbors.k=50"])
    with pytest.raises(BudgetError, match=r"neighbors\.k = 50"):
        Simulation(star, max_pairs=4999)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_pairs"):
            Simulation(params, max_pairs=bad)


def test_a_flock_that_tightens_is_stopped_at_the_step_that_exceeds_the_budget():
    params = apply_overrides(load_preset("boids-2d"), ["agents.n=200"])
    start = int(Simulation(params).neighbors().counts.sum())
    sim = Simulation(params, max_pairs=start + 100)
    with pytest.raises(BudgetError, match="neighbour pairs"):
        for _ in range(600):
            sim.step()
    assert 0 < sim.steps < 600


def test_cli_stops_a_run_over_the_pair_budget_with_exit_2(monkeypatch):
    monkeypatch.setattr(budgets, "DEFAULT_MAX_PAIRS", 50_000)
    result = run_cli("run", "boids-2d", "--set", "agents.n=1000", "--set", "rules.cohesion.radius=1000", "-q")
    assert result.exit_code == 2
    text = result.output.strip()
    assert len(text.splitlines()) == 1
    assert text.startswith("error: neighbors: 1,000 agents within the metric radius 1000")
    # mid-run: the flock tightens past the budget after it started (the CLI's generic handler)
    params = apply_overrides(load_preset("boids-2d"), ["agents.n=200"])
    monkeypatch.setattr(budgets, "DEFAULT_MAX_PAIRS", int(Simulation(params).neighbors().counts.sum()) + 100)
    result = run_cli("run", "boids-2d", "--set", "agents.n=200", "--steps", "600", "-q")
    assert result.exit_code == 2, result.output
    assert result.output.strip().startswith("error: neighbors: ")
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("kind", "dim", "clustered"), [("box", 2, False), ("box", 3, True), ("periodic", 2, True), ("periodic", 3, False)]
)
def test_the_lower_bound_never_exceeds_the_count(kind, dim, clustered):
    rng = np.random.default_rng(dim)
    position = rng.random((2000, dim)) * 50.0
    if clustered:
        position[:1500] = 25.0 + rng.normal(scale=0.5, size=(1500, dim))
        position %= 50.0
    alive = rng.random(2000) > 0.1
    space = make_space(kind, [50.0] * dim)
    for radius in (0.3, 2.0, 9.0, 100.0):
        exact = count_metric_pairs(position, alive, space, radius, "grid")
        bound = metric_pairs_lower_bound(position, alive, radius)
        assert 0 <= bound <= exact
        if clustered and radius >= 2.0:
            assert bound > exact / 50  # close enough to refuse hopeless lists early
    everyone = int(alive.sum())
    assert metric_pairs_lower_bound(position, alive, 1e9) == everyone * (everyone - 1)


def test_a_hopeless_list_is_refused_from_its_lower_bound():
    params = apply_overrides(load_preset("boids-2d"), ["agents.n=200000", "rules.cohesion.radius=1000"])
    with pytest.raises(BudgetError, match=r"200,000 agents .* have at least 39,999,800,000 neighbour pairs"):
        Simulation(params, max_pairs=10_000_000)  # 4e10 pairs: refused without counting them


def test_render_trail_over_budget_is_refused_before_any_frame(tmp_path, monkeypatch):
    from flocksim.io import Recorder

    store = tmp_path / "run.zarr"
    recorder = Recorder(store, every=1)
    Simulation(apply_overrides(load_preset("boids-2d"), ["agents.n=50"]), recorder=recorder).step(6)
    recorder.close()
    monkeypatch.setattr(budgets, "MAX_TRAIL_BYTES", 5 * 50 * budgets.TRAIL_BYTES_PER_POINT)  # 4 frames + the newest
    video = tmp_path / "v.gif"
    assert run_cli("render", store, "-o", video, "--size", "64x48", "--trail", "4").exit_code == 0
    video.unlink()
    result = run_cli("render", store, "-o", video, "--size", "64x48", "--trail", "5")
    assert result.exit_code == 2
    text = result.output.strip()
    assert text.startswith("error: --trail: 5 frames of 50 agents need about")
    assert text.endswith("allowed: at most 4 frames for this run")
    assert not video.exists()


def test_group_ids_and_kinds_do_not_size_arrays():
    import tracemalloc

    params = apply_overrides(load_preset("minions"), ["agents.n=20"])
    runs = []
    for group in (3, 2**24):
        sim = Simulation(params, seed=2)
        sim.set_target(group, (5.0, 1.0))
        sim.add_agents([[0.0, 0.0], [1.0, 1.0]], kind=group)
        sim.step(1)
        tracemalloc.start()
        sim.step(5)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 20 * 2**20  # [bytes]; a table indexed by kind would take 400 MB for 2**24
        runs.append(sim.state.position.copy())
    np.testing.assert_array_equal(runs[0], runs[1])
