"""Neighbour search parity: every fast path equals the brute-force
reference as identical CSR arrays, and the reference equals a plain numpy O(N^2) computation.

Conventions checked: inclusive radius (d^2 <= r^2, squared distances compared), minimum image in
periodic space, an agent is never its own neighbour, dead agents have empty rows and appear in no
row, metric rows sorted by index, topological rows sorted by (distance, index) so ties go to the
lower index.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flocksim.neighbors import (
    NeighborList,
    find_neighbors,
    knn_neighbors_brute,
    knn_neighbors_grid,
    metric_neighbors_brute,
    metric_neighbors_grid,
)
from flocksim.neighbors.grid import CELL_SLACK, geometry_from_bounds, grid_geometry
from flocksim.neighbors.knn import knn_cell_width
from flocksim.space import PERIODIC, Space, make_space

KINDS = ("open", "box", "ellipsoid", "periodic")
DIMS = (2, 3)
SIZES = {2: (10.0, 6.0), 3: (10.0, 6.0, 8.0)}
RADIUS = 1.0


# --------------------------------------------------------------------------------------------------
# plain numpy reference
# --------------------------------------------------------------------------------------------------


def numpy_d2(position: np.ndarray, space: Space) -> np.ndarray:
    """(N, N) squared distances from row i to column j, minimum image in periodic space.

    Same operation order as the kernels (q - p, then d as it is if |d| < L/2, else d - L floor(d/L + 0.5),
    then dx^2 + dy^2 + dz^2),
    so exact ties and exact radius hits compare the same way.
    """
    p = np.asarray(position, dtype=np.float64)
    dim = p.shape[1]
    sizes = (space.lx, space.ly, space.lz)
    d2 = np.zeros((len(p), len(p)))
    for a in range(dim):
        d = p[None, :, a] - p[:, None, a]
        if space.kind == PERIODIC:
            d = np.where(np.abs(d) < 0.5 * sizes[a], d, d - sizes[a] * np.floor(d / sizes[a] + 0.5))
        d2 = d2 + d * d
    return d2


def numpy_metric(position: np.ndarray, alive: np.ndarray, space: Space, radius: float) -> NeighborList:
    n = len(position)
    d2 = numpy_d2(position, space) if n else np.zeros((0, 0))
    rows = []
    for i in range(n):
        if not alive[i]:
            rows.append(np.zeros(0, dtype=np.int64))
            continue
        ok = alive & (d2[i] <= radius * radius)
        ok[i] = False
        rows.append(np.flatnonzero(ok).astype(np.int64))
    return to_csr(rows)


def numpy_knn(position: np.ndarray, alive: np.ndarray, space: Space, k: int) -> NeighborList:
    n = len(position)
    d2 = numpy_d2(position, space) if n else np.zeros((0, 0))
    rows = []
    for i in range(n):
        if not alive[i]:
            rows.append(np.zeros(0, dtype=np.int64))
            continue
        cand = np.flatnonzero(alive)
        cand = cand[cand != i]
        order = np.lexsort((cand, d2[i, cand]))  # by distance, then by index
        rows.append(cand[order][:k].astype(np.int64))
    return to_csr(rows)


def to_csr(rows: list[np.ndarray]) -> NeighborList:
    start = np.zeros(len(rows) + 1, dtype=np.int64)
    start[1:] = np.cumsum([len(r) for r in rows]) if rows else []
    index = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    return NeighborList(start, index)


def assert_same(got: NeighborList, want: NeighborList, what: str = "") -> None:
    assert got.start.dtype == np.int64 and got.index.dtype == np.int64, what
    assert np.array_equal(got.start, want.start), f"{what}: start differs\n{got.start}\n{want.start}"
    assert np.array_equal(got.index, want.index), f"{what}: index differs\n{got.index}\n{want.index}"


def check_invariants(nl: NeighborList, alive: np.ndarray) -> None:
    n = len(alive)
    assert nl.start.shape == (n + 1,)
    assert nl.start[0] == 0 and nl.start[-1] == len(nl.index)
    assert np.all(np.diff(nl.start) >= 0)
    for i in range(n):
        row = nl.row(i)
        assert i not in row, "an agent is its own neighbour"
        if not alive[i]:
            assert len(row) == 0, "a dead agent has neighbours"
        assert len(set(row.tolist())) == len(row), "duplicate neighbour"
    if len(nl.index):
        assert alive[nl.index].all(), "a dead agent is someone's neighbour"


def check_metric(position, alive, space, radius, what=""):
    position = np.ascontiguousarray(position, dtype=np.float64)
    alive = np.ascontiguousarray(alive, dtype=bool)
    brute = metric_neighbors_brute(position, alive, space, radius)
    assert_same(metric_neighbors_grid(position, alive, space, radius), brute, f"metric grid vs brute {what}")
    assert_same(brute, numpy_metric(position, alive, space, radius), f"metric brute vs numpy {what}")
    check_invariants(brute, alive)
    return brute


def check_knn(position, alive, space, k, what=""):
    position = np.ascontiguousarray(position, dtype=np.float64)
    alive = np.ascontiguousarray(alive, dtype=bool)
    brute = knn_neighbors_brute(position, alive, space, k)
    assert_same(knn_neighbors_grid(position, alive, space, k), brute, f"knn grid vs brute k={k} {what}")
    assert_same(brute, numpy_knn(position, alive, space, k), f"knn brute vs numpy k={k} {what}")
    check_invariants(brute, alive)
    n_alive = int(alive.sum())
    want = np.where(alive, min(k, max(n_alive - 1, 0)), 0)
    assert np.array_equal(brute.counts, want), "a knn row does not hold min(k, alive - 1) agents"
    return brute


def check_both(position, alive, space, radius=RADIUS, ks=(1, 2, 7), what=""):
    check_metric(position, alive, space, radius, what)
    n_alive = int(np.sum(alive))
    for k in (*ks, n_alive, n_alive + 3):
        if k >= 1:
            check_knn(position, alive, space, k, what)


# --------------------------------------------------------------------------------------------------
# state generators
# --------------------------------------------------------------------------------------------------


def space_for(kind: str, dim: int, sizes=None) -> Space:
    return make_space(kind, list(sizes or SIZES[dim]))


def inside(rng: np.random.Generator, n: int, kind: str, dim: int, sizes=None) -> np.ndarray:
    """n uniform points in the region (ellipsoid / open: a box centred on the origin)."""
    size = np.asarray(sizes or SIZES[dim])
    u = rng.random((n, dim))
    if kind in ("box", "periodic"):
        return u * size
    return (u - 0.5) * size


def ones(n: int) -> np.ndarray:
    return np.ones(n, dtype=bool)


def wrapped(position: np.ndarray, space: Space) -> np.ndarray:
    """Positions mapped into [0, L) per axis (as the engine keeps them)."""
    sizes = np.array([space.lx, space.ly, space.lz])[: position.shape[1]]
    out = position - sizes * np.floor(position / sizes)
    out[out >= sizes] = 0.0
    return out


case = pytest.mark.parametrize("kind", KINDS)
dims = pytest.mark.parametrize("dim", DIMS)


# --------------------------------------------------------------------------------------------------
# the reference itself
# --------------------------------------------------------------------------------------------------


def test_reference_hand_made_metric_inclusive_radius():
    space = space_for("open", 2)
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0 + 1e-12], [-0.6, -0.8], [3.0, 3.0]])
    nl = metric_neighbors_brute(pos, ones(5), space, 1.0)
    assert nl.row(0).tolist() == [1, 3]  # d = 1 exactly counts, d = 1 + 1e-12 does not
    assert nl.row(1).tolist() == [0]
    assert nl.row(4).tolist() == []
    assert nl.counts.tolist() == [2, 1, 0, 1, 0]


def test_reference_hand_made_knn_ties_to_lower_index():
    space = space_for("open", 2)
    # agent 0 at the centre, four agents at distance 1, agent 5 nearer than all of them
    pos = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.5, 0.0]])
    nl = knn_neighbors_brute(pos, ones(6), space, 3)
    assert nl.row(0).tolist() == [5, 1, 2]  # nearest first, then the tie at d = 1 by index
    assert knn_neighbors_grid(pos, ones(6), space, 3).row(0).tolist() == [5, 1, 2]
    assert knn_neighbors_brute(pos, ones(6), space, 1).row(3).tolist() == [0]
    # k nearest are asymmetric: 2's nearest is 1, but 1's nearest is 0
    line = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    assert knn_neighbors_brute(line, ones(3), space, 1).index.tolist() == [1, 0, 1]


def test_reference_periodic_minimum_image():
    space = make_space("periodic", [10.0, 10.0])
    pos = np.array([[0.2, 0.3], [9.9, 0.3], [5.0, 5.0], [0.2, 9.8]])
    nl = metric_neighbors_brute(pos, ones(4), space, 1.0)
    assert nl.row(0).tolist() == [1, 3]  # 0.3 across x = 0, 0.5 across y = 0
    assert nl.row(2).tolist() == []
    knn = knn_neighbors_brute(pos, ones(4), space, 2)
    assert knn.row(0).tolist() == [1, 3]
    assert knn.row(1).tolist() == [0, 3]


@dims
@case
def test_reference_matches_numpy_random(kind, dim):
    rng = np.random.default_rng(10 + dim)
    space = space_for(kind, dim)
    pos = inside(rng, 150, kind, dim)
    alive = rng.random(150) < 0.85
    for r in (0.0, 0.7, 2.5, 100.0):
        assert_same(metric_neighbors_brute(pos, alive, space, r), numpy_metric(pos, alive, space, r), f"r={r}")
    for k in (1, 5, 7, 200):
        assert_same(knn_neighbors_brute(pos, alive, space, k), numpy_knn(pos, alive, space, k), f"k={k}")


# --------------------------------------------------------------------------------------------------
# grid == brute == numpy on fixed families of states
# --------------------------------------------------------------------------------------------------


@dims
@case
def test_uniform_random(kind, dim):
    rng = np.random.default_rng(dim * 7 + KINDS.index(kind))
    space = space_for(kind, dim)
    for n in (50, 400):
        pos = inside(rng, n, kind, dim)
        check_both(pos, ones(n), space, what=f"n={n}")
        check_metric(pos, ones(n), space, 0.25, "small radius")
        check_metric(pos, ones(n), space, 4.0, "large radius")


@dims
@case
def test_clustered_in_one_cell_with_duplicates(kind, dim):
    rng = np.random.default_rng(3)
    space = space_for(kind, dim)
    centre = np.asarray(SIZES[dim]) / 2 if kind in ("box", "periodic") else np.zeros(dim)
    blob = centre + rng.random((40, dim)) * RADIUS / 4
    pos = np.concatenate([blob, blob[:15], blob[:5], np.repeat(blob[:1], 6, axis=0)])  # many coincident points
    pos = pos[rng.permutation(len(pos))]
    check_both(pos, ones(len(pos)), space, what="cluster")
    # every agent of the blob sees every other one
    nl = check_metric(pos, ones(len(pos)), space, RADIUS)
    assert np.all(nl.counts == len(pos) - 1)
    # all agents on one point: distances all 0, knn rows are the lowest indices
    same = np.repeat(centre[None, :], 12, axis=0)
    knn = check_knn(same, ones(12), space, 3)
    assert knn.row(0).tolist() == [1, 2, 3]
    assert knn.row(5).tolist() == [0, 1, 2]
    check_both(same, ones(12), space, what="all coincident")


@dims
@case
def test_agents_on_multiples_of_the_radius(kind, dim):
    """Integer lattice with spacing r: distances exactly r (inclusive), many exact ties."""
    rng = np.random.default_rng(5)
    space = space_for(kind, dim)
    for r in (1.0, 0.5, 2.0):
        m = np.floor(np.asarray(SIZES[dim]) / r).astype(int)
        pos = rng.integers(0, m, size=(250, dim)) * r
        if kind in ("open", "ellipsoid"):
            pos = pos - np.asarray(SIZES[dim]) / 2
        check_both(pos, ones(250), space, radius=r, ks=(1, 4, 6, 9), what=f"r={r}")
        check_metric(pos, ones(250), space, r * np.sqrt(2.0), "diagonal radius")


@dims
@case
def test_full_lattice_exact_ties(kind, dim):
    """Every lattice site once: each agent has 2*dim neighbours at exactly r, ties to the lower index."""
    space = space_for(kind, dim, sizes=[6.0] * dim)
    axes = [np.arange(6.0)] * dim
    pos = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, dim)
    n = len(pos)
    nl = check_metric(pos, ones(n), space, 1.0)
    if kind == "periodic":
        assert np.all(nl.counts == 2 * dim)
    check_both(pos, ones(n), space, radius=1.0, ks=(1, 2, 2 * dim, 2 * dim + 1, 3 * dim), what="lattice")
    knn = check_knn(pos, ones(n), space, 2 * dim + 1)
    # the first 2*dim entries of an interior agent are its axis neighbours in index order
    centre = int(np.flatnonzero(np.all(pos == 2.0, axis=1))[0])
    first = knn.row(centre)[: 2 * dim]
    assert first.tolist() == sorted(first.tolist())
    assert np.allclose(np.linalg.norm(pos[first] - pos[centre], axis=1), 1.0)


def geometry_arrays(g, dim):
    return (
        np.array([g.ox, g.oy, g.oz])[:dim],
        np.array([g.cx, g.cy, g.cz])[:dim],
        np.array([g.nx, g.ny, g.nz])[:dim],
    )


@dims
@case
def test_agents_exactly_on_metric_grid_cell_borders(kind, dim):
    """Positions on the actual borders of the metric grid's cells (origin + multiples of the cell width)."""
    rng = np.random.default_rng(8)
    space = space_for(kind, dim)
    pos = inside(rng, 300, kind, dim)
    origin, width, count = geometry_arrays(grid_geometry(pos, ones(300), space, RADIUS), dim)
    if kind != "periodic":
        assert np.allclose(width, RADIUS * CELL_SLACK)
    snapped = origin + rng.integers(0, count, size=(300, dim)) * width
    snapped[0] = origin  # keep the bounding box's corner
    # the premise: the grid built for the snapped state has the same borders
    o2, w2, _ = geometry_arrays(grid_geometry(snapped, ones(300), space, RADIUS), dim)
    assert np.array_equal(o2, origin) and np.array_equal(w2, width)
    check_both(snapped, ones(300), space, what="cell borders")
    check_metric(snapped, ones(300), space, float(width.min()), "radius = cell width")
    # borders and half-borders mixed
    half = origin + rng.integers(0, 2 * count, size=(300, dim)) * width / 2
    if kind == "periodic":
        half = wrapped(half, space)
    check_both(half, ones(300), space, what="half borders")


@dims
@case
def test_agents_exactly_on_knn_grid_cell_borders(kind, dim):
    """Same for the k-nearest grid, whose cells are sized by density (exact in periodic space, where the
    geometry does not depend on the positions; a few snapping rounds elsewhere)."""
    rng = np.random.default_rng(9)
    space = space_for(kind, dim)
    pos = inside(rng, 250, kind, dim)
    for _ in range(3):
        g = grid_geometry(pos, ones(250), space, knn_cell_width(pos, ones(250), space, 7))
        origin, width, count = geometry_arrays(g, dim)
        pos = origin + np.clip(np.round((pos - origin) / width), 0, count - 1) * width
    if kind == "periodic":
        g2 = grid_geometry(pos, ones(250), space, knn_cell_width(pos, ones(250), space, 7))
        assert g2 == g
    for k in (1, 3, 7, 20):
        check_knn(pos, ones(250), space, k, "knn cell borders")
    check_both(pos, ones(250), space, radius=float(width.min()), what="knn cell borders")


@dims
@pytest.mark.parametrize("cells", [1, 2, 3, 4])
def test_periodic_few_cells_per_axis(dim, cells):
    """Boxes only 1, 2, 3 (or 4) cells wide: the 3-cell block must not visit a cell twice."""
    rng = np.random.default_rng(cells)
    for scale in (1.0, 1.0 + 1e-9, 1.5, 0.999):
        sizes = [cells * RADIUS * scale * CELL_SLACK] * dim
        space = make_space("periodic", sizes)
        pos = inside(rng, 60, "periodic", dim, sizes)
        check_both(pos, ones(60), space, what=f"cells={cells} scale={scale}")
        check_metric(pos, ones(60), space, sizes[0] / 2, "radius L/2")
        check_metric(pos, ones(60), space, 3 * sizes[0], "radius beyond the box")


@dims
def test_periodic_edges(dim):
    """Agents packed near 0 and near L on every axis: their neighbours are across the edge."""
    rng = np.random.default_rng(21)
    sizes = SIZES[dim]
    space = make_space("periodic", list(sizes))
    size = np.asarray(sizes)
    side = rng.random((200, dim)) < 0.5
    off = rng.random((200, dim)) * 0.8 * RADIUS
    pos = np.where(side, off, size - off)
    pos = wrapped(pos, space)
    nl = check_metric(pos, ones(200), space, RADIUS)
    # some neighbours really are across an edge
    i = np.repeat(np.arange(200), nl.counts)
    raw = np.abs(pos[nl.index] - pos[i])
    assert np.any(raw > size / 2)
    check_both(pos, ones(200), space, what="edges")
    # exactly on 0, exactly L/2 apart (the minimum-image tie), and a hair below L
    exact = np.zeros((6, dim))
    exact[1, 0] = size[0] / 2
    exact[2, 0] = np.nextafter(size[0], 0.0)
    exact[3, :] = np.nextafter(size, 0.0)
    exact[4, 0] = RADIUS
    exact[5, 0] = size[0] - RADIUS
    check_both(exact, ones(6), space, what="exact edges")
    nl = check_metric(exact, ones(6), space, RADIUS)
    assert set(nl.row(0).tolist()) >= {2, 3, 4, 5}


@dims
def test_periodic_unwrapped_positions(dim):
    """Positions outside [0, L) (not yet wrapped) still give the brute-force (minimum image) result."""
    rng = np.random.default_rng(4)
    size = np.asarray(SIZES[dim])
    space = make_space("periodic", list(size))
    pos = (rng.random((300, dim)) * 3 - 1) * size
    check_both(pos, ones(300), space, what="unwrapped")


@dims
@case
def test_tiny_flocks(kind, dim):
    space = space_for(kind, dim)
    for n in (0, 1):
        pos = np.zeros((n, dim))
        for r in (0.0, 1.0):
            nl = check_metric(pos, ones(n), space, r)
            assert nl.start.tolist() == [0] * (n + 1)
        for k in (1, 7):
            nl = check_knn(pos, ones(n), space, k)
            assert nl.start.tolist() == [0] * (n + 1)
    # two agents: inside, exactly at, and just beyond the radius
    for d, close in ((0.5, True), (1.0, True), (np.nextafter(1.0, 2.0), False), (0.0, True)):
        pos = np.zeros((2, dim))
        pos[1, 0] = d
        nl = check_metric(pos, ones(2), space, 1.0)
        assert nl.index.tolist() == ([1, 0] if close else [])
        for k in (1, 2, 7):
            assert check_knn(pos, ones(2), space, k).index.tolist() == [1, 0]
        # one of the two dead: no neighbours at all
        for dead in (0, 1):
            alive = ones(2)
            alive[dead] = False
            assert check_metric(pos, alive, space, 1.0).start.tolist() == [0, 0, 0]
            assert check_knn(pos, alive, space, 3).start.tolist() == [0, 0, 0]


@dims
@pytest.mark.parametrize("kind", ["open", "ellipsoid", "box"])
def test_far_outlier(kind, dim):
    """One agent far away must neither blow up the grid nor hide anyone's neighbours."""
    rng = np.random.default_rng(6)
    space = space_for(kind, dim)
    pos = inside(rng, 300, kind, dim)
    for far in (1e6, -1e9, 1e12):
        out = pos.copy()
        out[17] = far
        check_both(out, ones(300), space, what=f"outlier {far}")
        knn = check_knn(out, ones(300), space, 7)
        others = np.delete(knn.index, np.arange(knn.start[17], knn.start[18]))
        assert 17 not in others  # nobody near the flock picks the outlier
        # two outliers far apart from each other and from the flock
        out[200] = -far
        check_both(out, ones(300), space, what=f"two outliers {far}")


@dims
@case
def test_dead_agents(kind, dim):
    rng = np.random.default_rng(12)
    space = space_for(kind, dim)
    pos = inside(rng, 300, kind, dim)
    alive = rng.random(300) < 0.6
    # dead agents sitting exactly on alive ones and in the middle of a cluster
    pos[np.flatnonzero(~alive)[:20]] = pos[np.flatnonzero(alive)[:20]]
    pos[1:10] = pos[0]
    alive[1:5] = False
    check_both(pos, alive, space, what="dead")
    for nl in (
        metric_neighbors_grid(pos, alive, space, 2.0),
        knn_neighbors_grid(pos, alive, space, 7),
        knn_neighbors_grid(pos, alive, space, 500),
    ):
        check_invariants(nl, alive)
        assert np.all(nl.counts[~alive] == 0)
        assert not np.isin(nl.index, np.flatnonzero(~alive)).any()
    # the dead do not change anyone else's neighbours
    keep = np.flatnonzero(alive)
    sub = metric_neighbors_grid(np.ascontiguousarray(pos[keep]), ones(len(keep)), space, 2.0)
    full = metric_neighbors_grid(pos, alive, space, 2.0)
    for a, i in enumerate(keep):
        assert np.array_equal(keep[sub.row(a)], full.row(i))
    # nobody alive
    dead = np.zeros(300, dtype=bool)
    assert check_metric(pos, dead, space, 2.0).start[-1] == 0
    assert check_knn(pos, dead, space, 7).start[-1] == 0
    # one alive agent among the dead
    one = dead.copy()
    one[150] = True
    assert check_knn(pos, one, space, 7).start[-1] == 0


@dims
@case
def test_find_neighbors_method_never_changes_the_result(kind, dim):
    rng = np.random.default_rng(30)
    space = space_for(kind, dim)
    for n in (20, 200):  # below and above the auto threshold
        pos = inside(rng, n, kind, dim)
        alive = rng.random(n) < 0.9
        for mode in ("metric", "topological"):
            lists = [
                find_neighbors(pos, alive, space, mode, radius=1.5, k=7, method=m) for m in ("auto", "grid", "brute")
            ]
            for other in lists[1:]:
                assert_same(other, lists[0], f"{mode} n={n}")


# --------------------------------------------------------------------------------------------------
# hypothesis: random small states, many with exact ties
# --------------------------------------------------------------------------------------------------


@st.composite
def states(draw):
    dim = draw(st.sampled_from(DIMS))
    kind = draw(st.sampled_from(KINDS))
    cells = draw(st.lists(st.integers(1, 6), min_size=dim, max_size=dim))
    spacing = draw(st.sampled_from([0.25, 0.5, 1.0 / 3.0, 1.0]))
    n = draw(st.integers(0, 60))
    lattice = draw(st.booleans())
    size = np.asarray(cells, dtype=float) * RADIUS * draw(st.sampled_from([1.0, 1.0000001, 1.3]))
    if lattice:
        steps = np.maximum((size / spacing).astype(int), 1)
        coords = draw(st.lists(st.lists(st.integers(0, 10_000), min_size=dim, max_size=dim), min_size=n, max_size=n))
        pos = (np.asarray(coords, dtype=float).reshape(n, dim) % steps) * spacing
    else:
        unit = st.floats(0.0, 1.0, allow_nan=False, exclude_max=True)
        coords = draw(st.lists(st.lists(unit, min_size=dim, max_size=dim), min_size=n, max_size=n))
        pos = np.asarray(coords, dtype=float).reshape(n, dim) * size
    space = make_space(kind, list(size))
    if kind == "periodic":
        pos = wrapped(pos, space)
    if kind != "periodic" and n and draw(st.booleans()):
        pos[draw(st.integers(0, n - 1))] = draw(st.sampled_from([-1e5, 1e7]))
    alive = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool).reshape(n)
    if n and draw(st.booleans()):
        alive[:] = True
    return np.ascontiguousarray(pos), alive, space


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(), st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0 / 3.0]), st.integers(1, 12))
def test_hypothesis_grid_equals_brute(state, radius, k):
    pos, alive, space = state
    check_metric(pos, alive, space, radius)
    check_knn(pos, alive, space, k)
    check_knn(pos, alive, space, int(alive.sum()) + 1)


@pytest.mark.parametrize("kind", ["open", "box", "periodic"])
def test_a_tiny_cell_over_a_huge_extent_gives_a_bounded_grid_without_warnings(kind):
    """1e-300 wide cells over 1e9 units would be 1e309 cells an axis (a float overflow): the grid
    widens its cells until the count fits, with no RuntimeWarning on the way."""
    space = make_space(kind, [1e9, 1e9])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        g = geometry_from_bounds(np.array([-5e8, -5e8]), np.array([5e8, 5e8]), 300, space, 1e-300)
    assert g.nx * g.ny <= 600 and g.nx >= 1 and g.ny >= 1


def test_a_non_finite_extent_is_refused_rather_than_searched_forever():
    with pytest.raises(ValueError, match="finite"):
        geometry_from_bounds(np.array([0.0, 0.0]), np.array([np.inf, 1.0]), 10, make_space("open", [1, 1]), 1.0)


def test_the_searches_old_module_paths_still_work_with_a_warning():
    """The grid searches moved up the neighbour chain to flocksim.neighbors.search; the names they had
    in grid and knn still give them (and say where they went)."""
    import flocksim.neighbors.grid as grid_module
    import flocksim.neighbors.knn as knn_module
    from flocksim.neighbors import search

    for module, name in ((grid_module, "metric_neighbors_grid"), (grid_module, "metric_rows"),
                         (grid_module, "metric_counts_grid"), (knn_module, "knn_neighbors_grid")):  # fmt: skip
        with pytest.warns(DeprecationWarning, match=f"{name} moved to flocksim.neighbors.search"):
            assert getattr(module, name) is getattr(search, name)
    with pytest.raises(AttributeError):
        grid_module.no_such_name  # noqa: B018
