"""Level of detail (params ``detail``, src/flocksim/components/detail.py): which agents refresh on which
step, that the masked neighbour searches give exactly the full rows, that a far agent keeps its
acceleration between refreshes and still moves, and that parity, determinism across thread counts and
checkpoints hold with detail on."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.components.detail import select_refresh
from flocksim.config import ConfigError
from flocksim.engines import make_engine
from flocksim.models import make_model
from flocksim.neighbors import find_neighbors
from flocksim.space import Space

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads on this machine"
)


@pytest.fixture(autouse=True)
def restore_threads():
    """Tests here change numba's thread count; leave it as found for the tests that follow."""
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


def assert_bitwise(a: np.ndarray, b: np.ndarray, what: str) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert a.tobytes() == b.tobytes(), f"{what}: differs in {int(np.sum(a != b))} entries"


def params(name: str, *overrides: str):
    small = ["agents.n=300"] if name == "starlings-3d" else []
    return apply_overrides(load_preset(name), small + list(overrides))


def refreshing(position, alive, ids, kept, step, focus, near, far_every, axis=None, fov_deg=360.0) -> list[int]:
    """Rows that :func:`select_refresh` marks."""
    position = np.asarray(position, dtype=np.float64)
    dim = position.shape[1]
    active = np.zeros(len(ids), dtype=bool)
    cone = axis is not None
    axis = np.zeros(dim) if axis is None else np.asarray(axis, dtype=np.float64)
    cos_half = math.cos(math.radians(fov_deg) / 2.0)
    select_refresh(position, np.asarray(alive), np.asarray(ids, dtype=np.int64),
                   np.asarray(kept), np.int64(step), np.asarray(focus, dtype=np.float64), float(near) ** 2, cone,
                   axis, cos_half, np.int64(far_every), active)  # fmt: skip
    return np.flatnonzero(active).tolist()


# rows 0..5 at distance 0, 5, 12, 20 (behind), 30, 20 from the focus (0, 0); ids differ from rows
POSITIONS = [[0.0, 0.0], [5.0, 0.0], [12.0, 0.0], [-20.0, 0.0], [30.0, 0.0], [0.0, 20.0]]
IDS = [10, 11, 12, 13, 14, 15]


def test_selection_by_distance_and_stagger():
    """near 10, far_every 3: rows 0, 1 every step; each far row on the steps where (step + id) % 3 == 0,
    i.e. id 12 and 15 on steps 0, 3; id 11, 14 on steps 1, 4; id 10, 13 on steps 2, 5 (by hand)."""
    alive = np.ones(6, dtype=bool)
    kept = np.ones(6, dtype=bool)
    expected = {0: [0, 1, 2, 5], 1: [0, 1, 4], 2: [0, 1, 3], 3: [0, 1, 2, 5], 4: [0, 1, 4]}
    for step, rows in expected.items():
        assert refreshing(POSITIONS, alive, IDS, kept, step, [0.0, 0.0], 10.0, 3) == rows, step
    # far_every 1: every alive row every step; near beyond all: every row
    assert refreshing(POSITIONS, alive, IDS, kept, 7, [0.0, 0.0], 10.0, 1) == [0, 1, 2, 3, 4, 5]
    assert refreshing(POSITIONS, alive, IDS, kept, 7, [0.0, 0.0], 1e12, 5) == [0, 1, 2, 3, 4, 5]
    # near is inclusive: row 2 lies at 12
    assert refreshing(POSITIONS, alive, IDS, kept, 1, [0.0, 0.0], 12.0, 3) == [0, 1, 2, 4]


def test_selection_dead_and_unkept_rows():
    """A dead row never refreshes (not even near); a row without a kept acceleration always does."""
    alive = np.array([False, True, True, True, True, True])
    kept = np.array([True, True, True, False, True, True])
    # step 1: near rows 0 (dead), 1; id 11, 14 due; row 3 (id 13) has nothing kept
    assert refreshing(POSITIONS, alive, IDS, kept, 1, [0.0, 0.0], 10.0, 3) == [1, 3, 4]


def test_selection_view_cone():
    """Cone along +x of full angle 90 deg (half angle 45) from the focus (-10, 0), near 35: inside are
    row 0 (10 away, on the axis), row 1 (15), row 2 (22); row 3 (10 away, behind) and row 5 (at
    atan(20/10) = 63 deg) are outside; row 4 (40 away) is beyond near. Step 2: id 10 and 13 are due."""
    alive = np.ones(6, dtype=bool)
    kept = np.ones(6, dtype=bool)
    rows = refreshing(POSITIONS, alive, IDS, kept, 2, [-10.0, 0.0], 35.0, 3, axis=[1.0, 0.0], fov_deg=90.0)
    assert rows == [0, 1, 2, 3]  # row 3 by its turn (id 13, step 2), not by the cone
    rows = refreshing(POSITIONS, alive, IDS, kept, 1, [-10.0, 0.0], 35.0, 3, axis=[1.0, 0.0], fov_deg=90.0)
    assert rows == [0, 1, 2, 4]  # row 4 by its turn (id 14)
    # a wider cone (140 deg: half angle 70 > 63) takes row 5 in
    rows = refreshing(POSITIONS, alive, IDS, kept, 1, [-10.0, 0.0], 35.0, 3, axis=[1.0, 0.0], fov_deg=140.0)
    assert rows == [0, 1, 2, 4, 5]


def test_selection_through_the_simulation():
    """The component picks the same rows, from the simulation's step count and stable ids."""
    p = params("boids-2d", "detail.enabled=true", "detail.near=60", "detail.far_every=3", "detail.focus=[200, 125]")
    sim = Simulation(p)
    sim.step(2)
    lod = next(c for c in sim.components if c.name == "detail")
    s = sim.state
    lod.select(s, sim.steps)
    d2 = ((s.position - np.array([200.0, 125.0])) ** 2).sum(axis=1)
    expected = (d2 <= 60.0**2) | ((sim.steps + s.ids) % 3 == 0)
    assert_bitwise(lod.active, expected, "active")
    assert 0 < lod.refreshed < s.n


CASES = [
    ("metric", 2, "box", "grid"),
    ("metric", 3, "periodic", "grid"),
    ("metric", 2, "periodic", "brute"),
    ("topological", 2, "box", "grid"),
    ("topological", 3, "periodic", "grid"),
    ("topological", 3, "box", "brute"),
]


@pytest.mark.parametrize("mode,dim,kind,method", CASES)
def test_query_mask_rows_are_the_full_rows(mode, dim, kind, method):
    """Rows of queried alive agents: bitwise those of the full search; every other row empty."""
    rng = np.random.default_rng(5)
    n = 700
    size = 30.0
    position = rng.random((n, dim)) * size
    position[:40] = size / 2 + rng.random((40, dim))  # a dense clump: long metric rows
    alive = rng.random(n) > 0.1
    query = rng.random(n) > 0.6
    space = Space(kind, size, size, size if dim == 3 else 1.0)
    full = find_neighbors(position, alive, space, mode, 2.5, 7, method)
    part = find_neighbors(position, alive, space, mode, 2.5, 7, method, query=query)
    for i in range(n):
        expected = full.row(i) if (alive[i] and query[i]) else full.row(i)[:0]
        assert_bitwise(part.row(i), expected, f"row {i}")
    assert part.counts.sum() < full.counts.sum()


@pytest.mark.parametrize("name", ["boids-2d", "starlings-3d"])
@pytest.mark.parametrize("setting", ["detail.near=1e12", "detail.far_every=1"])
def test_every_agent_near_is_the_full_step(name, setting):
    """near beyond every agent, or far_every 1: bitwise the run with detail off."""
    off = Simulation(params(name))
    on = Simulation(params(name, "detail.enabled=true", setting))
    off.step(25)
    on.step(25)
    assert_bitwise(on.state.position, off.state.position, "position")
    assert_bitwise(on.state.velocity, off.state.velocity, "velocity")


@pytest.mark.parametrize("name", ["boids-2d", "starlings-3d"])
def test_refreshed_agents_are_steered_as_in_the_full_step(name):
    """With most agents far, the agents that refresh get bitwise the accelerations of a full step from
    the same state (through the masked search), and the others their kept ones."""
    p = params(name, "detail.enabled=true", "detail.near=8", "detail.far_every=4")
    sim = Simulation(p)
    sim.step(9)
    lod = next(c for c in sim.components if c.name == "detail")
    before_acc = lod.acc.copy()
    state = sim.state.copy()
    sim.step(1)
    full = make_engine("cpu", make_model(p))
    full.model.predators = sim.model.predators.copy()  # where the step's components put them
    full.step(state, sim.dt)  # a plain step: its buffer holds every agent's acceleration (no overlap)
    active = lod.active & sim.state.alive
    assert 0 < active.sum() < sim.state.n_alive
    assert_bitwise(lod.acc[active], full._buffer[active], "refreshed accelerations")
    assert_bitwise(lod.acc[~active], before_acc[~active], "kept accelerations")


@pytest.mark.parametrize("overlap", [False, True])
def test_far_agent_keeps_its_acceleration_and_moves(overlap):
    """boids-2d, near 0 (every agent far), far_every 4: agent id 1 refreshes on steps 3, 7, 11 ((step +
    1) % 4 == 0), so its kept acceleration a changes only then, and on every step it moves by
    v' = clamp(v + a dt, min_speed, max_speed), p' = p + v' dt with the a it keeps (checked by hand).
    With overlap resolution (which uses the engine's acceleration buffer as scratch) the kept
    acceleration is still the one used (positions may then be pushed apart: velocities checked)."""
    p = params(
        "boids-2d",
        "detail.enabled=true",
        "detail.near=0",
        "detail.far_every=4",
        f"overlap.enabled={str(overlap).lower()}",
    )
    sim = Simulation(p)
    lod = next(c for c in sim.components if c.name == "detail")
    sim.step(1)  # step 0: every agent refreshes (nothing kept yet)
    dt = sim.dt
    row = int(np.flatnonzero(sim.state.ids == 1)[0])
    changed = []
    for step in range(1, 12):
        a = lod.acc[row, :2].copy()
        v = sim.state.velocity[row].copy()
        x = sim.state.position[row].copy()
        sim.step(1)
        if not np.array_equal(lod.acc[row, :2], a):
            changed.append(step)
            continue
        w = v + a * dt
        s = math.hypot(*w)
        w = w * (60.0 / s) if s > 60.0 else (w * (20.0 / s) if s < 20.0 else w)
        np.testing.assert_allclose(sim.state.velocity[row], w, rtol=1e-12, atol=1e-12)
        if not overlap:
            np.testing.assert_allclose(sim.state.position[row], x + w * dt, rtol=1e-12, atol=1e-12)
        assert not np.array_equal(sim.state.position[row], x)
    assert changed == [3, 7, 11]
    assert lod.refreshed == int(((11 + sim.state.ids) % 4 == 0).sum())


@needs_two_threads
@pytest.mark.parametrize("name", ["boids-2d", "starlings-3d"])
def test_detail_is_independent_of_the_thread_count(name):
    p = params(name, "detail.enabled=true", "detail.near=10", "detail.far_every=3")
    runs = []
    for threads in (1, 2):
        sim = Simulation(p, threads=threads)
        sim.set_view(sim.state.position[0], direction=[1.0] + [0.0] * (sim.state.dim - 1), fov_deg=100.0)
        sim.step(30)
        assert np.isfinite(sim.state.position).all() and np.isfinite(sim.state.velocity).all()
        runs.append(sim.state)
    assert_bitwise(runs[0].position, runs[1].position, "position")
    assert_bitwise(runs[0].velocity, runs[1].velocity, "velocity")


def test_detail_changes_the_run_and_stays_finite():
    """Detail on with far agents is a different (approximate) run, without NaN."""
    off = Simulation(params("starlings-3d"))
    on = Simulation(params("starlings-3d", "detail.enabled=true", "detail.near=5", "detail.far_every=4"))
    off.step(40)
    on.step(40)
    assert np.isfinite(on.state.position).all() and np.isfinite(on.state.velocity).all()
    assert not np.array_equal(on.state.position, off.state.position)


def test_checkpoint_resumes_bitwise():
    p = params("starlings-3d", "detail.enabled=true", "detail.near=6", "detail.far_every=4")
    sim = Simulation(p)
    sim.step(6)
    sim.set_view([0.0, 20.0, 0.0], direction=[0.0, -1.0, 0.0], fov_deg=70.0)
    sim.step(1)  # an odd step count: agents are mid-way between refreshes
    saved = sim.checkpoint()
    sim.step(10)
    again = Simulation(p)
    again.restore(saved)
    again.step(10)
    assert_bitwise(again.state.position, sim.state.position, "position")
    assert_bitwise(again.state.velocity, sim.state.velocity, "velocity")


def test_warm_up_does_not_change_the_run():
    p = params("boids-2d", "detail.enabled=true", "detail.near=20", "detail.far_every=4")
    plain = Simulation(p)
    warmed = Simulation(p)
    plain.step(3)
    warmed.step(3)
    warmed.warm_up()
    plain.step(5)
    warmed.step(5)
    assert_bitwise(warmed.state.position, plain.state.position, "position")


def test_spawned_agents_refresh_first():
    p = params("boids-2d", "detail.enabled=true", "detail.near=0", "detail.far_every=4")
    sim = Simulation(p)
    sim.step(2)
    ids = sim.add_agents([[100.0, 100.0], [300.0, 200.0]], [[30.0, 0.0], [0.0, 30.0]])
    sim.step(1)
    lod = next(c for c in sim.components if c.name == "detail")
    rows = np.searchsorted(sim.state.ids, ids)
    assert lod.active[rows].all() and lod.kept[rows].all()
    assert np.isfinite(sim.state.position).all()


def test_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"detail: unknown key; allowed keys here: .*vicsek"):  # reynolds only
        apply_overrides(load_preset("vicsek"), ["detail.enabled=true"])
    with pytest.raises(ConfigError, match=r"detail.far_every"):
        params("boids-2d", "detail.far_every=0")
    with pytest.raises(ConfigError, match=r"detail.focus: needs 2 numbers"):
        params("boids-2d", "detail.enabled=true", "detail.focus=[1, 2, 3]")
    with pytest.raises(ConfigError, match=r"detail.view_direction: must not be all zeros"):
        params("boids-2d", "detail.enabled=true", "detail.view_direction=[0, 0]")
    on = params("boids-2d", "detail.enabled=true")
    with pytest.raises(ValueError, match=r"detail.enabled: the level of detail runs on the cpu engine only"):
        make_engine("cuda", make_model(on))
    sim = Simulation(on)
    with pytest.raises(ValueError, match=r"set_view: position must be 2 finite numbers"):
        sim.set_view([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"set_view: direction must not be all zeros"):
        sim.set_view([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"set_view: fov_deg must be > 0 and <= 360"):
        sim.set_view([1.0, 2.0], [1.0, 0.0], fov_deg=0.0)
    with pytest.raises(ValueError, match=r"set_view: no level of detail"):
        Simulation(params("boids-2d")).set_view([1.0, 2.0])


@pytest.mark.parametrize(
    "direction",
    [[1e308, 1e308, 1e308], [-1e308, 1e308, 0.0], [1e-320, 1e-320, 1e-320], [3e200, 4e200, 0.0], [2.0, -2.0, 1.0]],
)
def test_a_huge_or_tiny_view_direction_keeps_its_axis(direction):
    """[1e308, 1e308, 1e308] has no finite length: it used to become the axis [0, 0, 0] (no agent inside the
    cone but at the focus). From the parameters (--set) and from set_view (the viewer's view message)."""
    expected = np.asarray(direction) / np.max(np.abs(direction))
    expected /= np.linalg.norm(expected)
    text = "[" + ", ".join(repr(c) for c in direction) + "]"
    sim = Simulation(params("starlings-3d", "detail.enabled=true", f"detail.view_direction={text}"))
    lod = next(c for c in sim.components if c.name == "detail")
    assert np.allclose(lod.direction, expected, rtol=0, atol=1e-15)
    assert np.linalg.norm(lod.direction) == pytest.approx(1.0, abs=1e-15)
    sim.set_view([0.0, 0.0, 0.0], direction=[0.0, 1.0, 0.0])
    sim.set_view([0.0, 0.0, 0.0], direction=direction, fov_deg=60.0)
    assert np.allclose(lod.direction, expected, rtol=0, atol=1e-15)
    sim.step(2)
    assert np.isfinite(sim.state.position).all()


def test_ordinary_vectors_normalise_to_the_same_bits_as_before():
    """Only vectors whose length over- or underflows take the scaled path: runs stay bitwise as they were."""
    from flocksim.space import unit_rows, unit_vector

    rng = np.random.default_rng(3)
    v = rng.standard_normal((1000, 3)) * 10.0 ** rng.uniform(-100, 100, (1000, 1))
    unit, ok = unit_rows(v)
    assert ok.all() and unit.tobytes() == (v / np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]).tobytes()
    for row in v:
        assert unit_vector(row).tobytes() == (row / np.linalg.norm(row)).tobytes()
