"""Metrics: polarization, milling, neighbour counts, nearest-neighbour distances, speeds,
the per-step summary row and Simulation.metrics()."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.metrics import (
    METRIC_NAMES,
    flock_summary,
    mean_neighbor_count,
    milling,
    nearest_neighbor_distances,
    nearest_neighbor_stats,
    polarization,
    speed_stats,
    unit_headings,
)
from flocksim.metrics.neighbors import MISALIGNMENT_NEIGHBORS, local_misalignment, misalignment_angles
from flocksim.neighbors import find_neighbors
from flocksim.space import make_space


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def ring(n: int, radius: float, centre, speeds, e1=(1.0, 0.0), e2=(0.0, 1.0), sense: float = 1.0):
    """Agents evenly on a circle, each moving along the tangent (counter-clockwise for sense = +1)."""
    a = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    e1, e2 = np.asarray(e1, dtype=float), np.asarray(e2, dtype=float)
    pos = np.asarray(centre, dtype=float) + radius * (np.cos(a)[:, None] * e1 + np.sin(a)[:, None] * e2)
    vel = sense * np.asarray(speeds, dtype=float).reshape(-1, 1) * (-np.sin(a)[:, None] * e1 + np.cos(a)[:, None] * e2)
    return pos, vel


# --------------------------------------------------------------------------------------------------
# polarization
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 3])
def test_polarization_is_one_when_aligned_at_any_speeds(dim):
    rng = np.random.default_rng(1)
    heading = random_unit(rng, 1, dim)[0]
    speeds = rng.uniform(0.01, 1000.0, 200)
    vel = speeds[:, None] * heading
    assert polarization(vel) == pytest.approx(1.0, abs=1e-12)
    assert polarization(vel[:1]) == pytest.approx(1.0, abs=1e-12)  # a lone agent is perfectly ordered


@pytest.mark.parametrize("dim", [2, 3])
def test_polarization_is_zero_for_opposite_agents(dim):
    rng = np.random.default_rng(2)
    h = random_unit(rng, 1, dim)[0]
    assert polarization(np.array([3.0 * h, -0.5 * h])) == pytest.approx(0.0, abs=1e-15)
    # a symmetric star of headings also cancels
    if dim == 2:
        a = np.linspace(0, 2 * np.pi, 7, endpoint=False)
        assert polarization(np.stack([np.cos(a), np.sin(a)], axis=1) * 5.0) == pytest.approx(0.0, abs=1e-12)


def test_polarization_zero_velocity_agents_count_as_zero_vectors():
    vel = np.array([[2.0, 0.0], [5.0, 0.0], [0.1, 0.0], [0.0, 0.0]])
    with np.errstate(all="raise"):
        assert polarization(vel) == pytest.approx(0.75)
        h = unit_headings(vel)
    assert np.array_equal(h[3], [0.0, 0.0])
    assert np.allclose(h[:3], [1.0, 0.0])
    assert polarization(np.zeros((5, 3))) == 0.0
    assert math.isnan(polarization(np.zeros((0, 2))))


def test_polarization_stays_in_unit_interval():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 20))
        vel = rng.standard_normal((n, 2)) * (rng.random((n, 1)) < 0.8)
        p = polarization(vel)
        assert 0.0 <= p <= 1.0 + 1e-12


def test_polarization_of_random_2d_headings():
    """For N uniform random 2D headings, R = |sum of headings| has E[R^2] = N exactly and, to O(1/N),
    E[R] = sqrt(pi N) / 2 (Rayleigh limit; the finite-N excess is about 1/(16 N), 0.1 % at N = 64).
    Var(P) = (1 - pi/4) / N and Var(P^2) = (N^2 - N) / N^4, so over M draws the means have standard
    errors sqrt((1 - pi/4) / (N M)) and sqrt(N^2 - N) / (N^2 sqrt(M)); allow 4.5 of them."""
    rng = np.random.default_rng(2024)
    n, draws = 64, 3000
    angles = rng.uniform(0.0, 2 * np.pi, (draws, n))
    speeds = rng.uniform(0.5, 2.0, (draws, n))  # speeds must not matter
    p = np.array(
        [polarization(np.stack([s * np.cos(a), s * np.sin(a)], axis=1)) for a, s in zip(angles, speeds, strict=True)]
    )
    expected = math.sqrt(math.pi) / 2 / math.sqrt(n)
    assert abs(expected - 0.886 / math.sqrt(n)) < 1e-4
    se = math.sqrt((1 - math.pi / 4) / (n * draws))
    assert abs(p.mean() - expected) < 4.5 * se + expected / (16 * n)
    se2 = math.sqrt(n * n - n) / (n * n * math.sqrt(draws))
    assert abs((p**2).mean() - 1.0 / n) < 4.5 * se2
    # and clearly not the ordered value, nor the value 1/N of an unnormalised mean
    assert p.mean() < 0.2


def test_polarization_of_random_3d_headings_second_moment():
    """E[P^2] = 1/N for uniform random headings in any dimension; Var(R^2) = 2 N (N - 1) / dim."""
    rng = np.random.default_rng(77)
    n, draws = 40, 2000
    p2 = np.array([polarization(random_unit(rng, n, 3) * rng.uniform(0.1, 3.0, (n, 1))) ** 2 for _ in range(draws)])
    se = math.sqrt(2 * n * (n - 1) / 3) / (n * n * math.sqrt(draws))
    assert abs(p2.mean() - 1.0 / n) < 4.5 * se


# --------------------------------------------------------------------------------------------------
# milling
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sense", [1.0, -1.0])
def test_milling_is_one_for_a_rotating_ring_2d(sense):
    rng = np.random.default_rng(4)
    pos, vel = ring(100, 7.0, (3.0, -2.0), rng.uniform(0.5, 4.0, 100), sense=sense)
    assert milling(pos, vel) == pytest.approx(1.0, abs=1e-12)
    assert polarization(vel) == pytest.approx(0.0, abs=1e-12)


def test_milling_is_one_for_a_rotating_ring_3d():
    rng = np.random.default_rng(5)
    e1 = random_unit(rng, 1, 3)[0]
    e2 = np.cross(e1, random_unit(rng, 1, 3)[0])
    e2 /= np.linalg.norm(e2)
    pos, vel = ring(90, 12.0, (100.0, -5.0, 3.0), rng.uniform(0.5, 4.0, 90), e1=e1, e2=e2)
    assert milling(pos, vel) == pytest.approx(1.0, abs=1e-12)
    # two counter-rotating rings cancel
    pos2, vel2 = ring(90, 5.0, (100.0, -5.0, 3.0), np.ones(90), e1=e1, e2=e2, sense=-1.0)
    both = milling(np.concatenate([pos, pos2]), np.concatenate([vel, vel2]))
    assert both < 1e-12


def test_milling_counter_rotating_halves_cancel_2d():
    pos, vel = ring(60, 3.0, (0.0, 0.0), np.ones(60))
    vel[1::2] *= -1
    assert milling(pos, vel) < 1e-12


@pytest.mark.parametrize("dim", [2, 3])
def test_milling_is_about_zero_for_a_polarized_flock(dim):
    rng = np.random.default_rng(6)
    heading = random_unit(rng, 1, dim)[0]
    # a point-symmetric cloud: the unit offsets from the centroid sum to zero, so milling is zero
    half = rng.standard_normal((100, dim))
    pos = np.concatenate([half, -half]) + 50.0
    vel = rng.uniform(1.0, 2.0, (200, 1)) * heading
    assert milling(pos, vel) < 1e-12
    assert polarization(vel) == pytest.approx(1.0)
    # a random cloud: |sum of N random terms of variance <= 1/2| / N, about 1/sqrt(2N) = 0.016 at N = 2000
    cloud = rng.uniform(-10.0, 10.0, (2000, dim))
    assert milling(cloud, np.tile(heading, (2000, 1))) < 0.08


@pytest.mark.parametrize("dim", [2, 3])
def test_milling_is_translation_invariant(dim):
    rng = np.random.default_rng(7)
    pos = rng.standard_normal((300, dim)) * 5.0
    vel = rng.standard_normal((300, dim))
    m = milling(pos, vel)
    assert 0.0 <= m <= 1.0
    for shift in (np.full(dim, 1000.0), rng.standard_normal(dim) * 1e4, -np.arange(1.0, dim + 1)):
        assert milling(pos + shift, vel) == pytest.approx(m, rel=1e-9, abs=1e-12)
    ring_pos, ring_vel = ring(50, 2.0, (0.0, 0.0), np.ones(50))
    assert milling(ring_pos + np.array([1e4, -3e4]), ring_vel) == pytest.approx(1.0, abs=1e-9)


def test_milling_defined_cases_without_nan():
    # an agent at the centroid and an agent standing still count as zero vectors
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    vel = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    with np.errstate(all="raise"):
        assert milling(pos, vel) == pytest.approx(1.0 / 3.0)
    assert milling(np.zeros((1, 3)), np.ones((1, 3))) == 0.0
    assert math.isnan(milling(np.zeros((0, 2)), np.zeros((0, 2))))


# --------------------------------------------------------------------------------------------------
# neighbour counts and nearest-neighbour distances
# --------------------------------------------------------------------------------------------------


def test_mean_neighbor_count():
    assert mean_neighbor_count(np.array([0, 7, 7, 2])) == 4.0
    assert mean_neighbor_count(np.array([3])) == 3.0
    assert math.isnan(mean_neighbor_count(np.zeros(0, dtype=np.int64)))
    rng = np.random.default_rng(8)
    pos = rng.uniform(0, 10, (200, 2))
    space = make_space("box", [10.0, 10.0])
    nl = find_neighbors(pos, np.ones(200, dtype=bool), space, "metric", radius=1.0)
    assert mean_neighbor_count(nl.counts) == pytest.approx(len(nl.index) / 200)
    knn = find_neighbors(pos, np.ones(200, dtype=bool), space, "topological", k=7)
    assert mean_neighbor_count(knn.counts) == 7.0


def brute_nnd(pos: np.ndarray, sizes=None) -> np.ndarray:
    d = pos[None, :, :] - pos[:, None, :]
    if sizes is not None:
        sizes = np.asarray(sizes, dtype=float)
        d = d - sizes * np.floor(d / sizes + 0.5)
    dist = np.sqrt((d * d).sum(axis=-1))
    np.fill_diagonal(dist, np.inf)
    return dist.min(axis=1)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("n", [2, 3, 30, 400])  # below and above the brute-force threshold of find_neighbors
def test_nearest_neighbor_distances_open(dim, n):
    rng = np.random.default_rng(n + dim)
    pos = rng.uniform(-20.0, 20.0, (n, dim))
    if n > 3:
        pos[5] = pos[4]  # a coincident pair: distance 0
    got = nearest_neighbor_distances(pos)
    assert got.shape == (n,)
    assert np.allclose(got, brute_nnd(pos), rtol=1e-12, atol=0.0)
    assert np.allclose(nearest_neighbor_distances(pos, make_space("box", [40.0] * dim)), got, rtol=1e-12)
    if n > 3:
        assert got[4] == got[5] == 0.0


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("n", [2, 30, 400])
def test_nearest_neighbor_distances_periodic_minimum_image(dim, n):
    rng = np.random.default_rng(100 + n + dim)
    sizes = [30.0, 20.0, 25.0][:dim]
    space = make_space("periodic", sizes)
    # agents hugging the edges, so many nearest neighbours are across them; 0 and 1 face each other across x = 0
    side = rng.random((n, dim)) < 0.5
    off = rng.random((n, dim)) * 3.0
    pos = np.where(side, off, np.asarray(sizes) - off)
    pos[0, 0], pos[1, 0], pos[1, 1:] = 0.2, sizes[0] - 0.1, pos[0, 1:]
    got = nearest_neighbor_distances(pos, space)
    want = brute_nnd(pos, sizes)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
    # ignoring the periodic images gives something else
    assert not np.allclose(brute_nnd(pos), want)
    assert (got <= np.linalg.norm(sizes) / 2 + 1e-12).all()


@pytest.mark.parametrize("kind", ["open", "periodic"])
@pytest.mark.parametrize("dim", [2, 3])
def test_nearest_neighbor_distances_same_bits_from_tree_and_grid(monkeypatch, kind, dim):
    """The k-d tree (small flocks) and the grid search (large flocks) pick the same neighbour by the
    kernels' squared distance, the lower index on a tie: a lattice (every agent has several nearest
    at one distance) and a cloud."""
    import flocksim.metrics.neighbors as nbm

    sizes = [12.0, 10.0, 8.0][:dim]
    space = make_space(kind, sizes)
    lattice = np.stack(np.meshgrid(*[np.arange(0.0, s, 1.0) for s in sizes], indexing="ij"), -1).reshape(-1, dim)
    cloud = np.random.default_rng(dim).uniform(0.0, 8.0, (700, dim))
    for pos in (lattice + 0.25, cloud):
        tree = nearest_neighbor_distances(pos, space)
        monkeypatch.setattr(nbm, "KD_TREE_MOST", 0)
        grid = nearest_neighbor_distances(pos, space)
        monkeypatch.setattr(nbm, "KD_TREE_MOST", 10**9)
        assert tree.tobytes() == grid.tobytes()
        assert np.allclose(tree, brute_nnd(pos, sizes if kind == "periodic" else None), rtol=1e-12)


def test_nearest_neighbor_distances_hand_made():
    space = make_space("periodic", [10.0, 10.0])
    pos = np.array([[0.5, 5.0], [9.0, 5.0], [5.0, 5.0]])
    assert np.allclose(nearest_neighbor_distances(pos, space), [1.5, 1.5, 4.0])
    assert np.allclose(nearest_neighbor_distances(pos), [4.5, 4.0, 4.0])
    assert nearest_neighbor_distances(np.zeros((1, 2))).shape == (0,)
    assert nearest_neighbor_distances(np.zeros((0, 3))).shape == (0,)


def test_nearest_neighbor_stats():
    rng = np.random.default_rng(9)
    pos = rng.uniform(0, 50, (300, 2))
    d = brute_nnd(pos)
    stats = nearest_neighbor_stats(pos)
    assert set(stats) == {"mean", "std", "min", "median", "max"}
    assert stats["mean"] == pytest.approx(d.mean(), rel=1e-12)
    assert stats["std"] == pytest.approx(d.std(), rel=1e-9)
    assert stats["min"] == pytest.approx(d.min(), rel=1e-12)
    assert stats["median"] == pytest.approx(np.median(d), rel=1e-12)
    assert stats["max"] == pytest.approx(d.max(), rel=1e-12)
    assert all(math.isnan(v) for v in nearest_neighbor_stats(np.zeros((1, 2))).values())


# --------------------------------------------------------------------------------------------------
# local misalignment
# --------------------------------------------------------------------------------------------------


def test_misalignment_by_hand_uses_unit_headings_of_the_k_nearest():
    """Three birds, k = 2 (each sees the other two): A flies east at speed 2, B and C north at 0.5
    and 3. A's neighbours' mean unit heading is north: pi/2. B's is north-east (unit headings, not
    velocities, whose mean would point 56.3 degrees up): pi/4, and C's too. Mean: pi/3."""
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    vel = np.array([[2.0, 0.0], [0.0, 0.5], [0.0, 3.0]])
    angles = misalignment_angles(pos, vel, k=2)
    assert angles == pytest.approx([math.pi / 2, math.pi / 4, math.pi / 4], abs=1e-12)
    assert local_misalignment(pos, vel, k=2) == pytest.approx(math.pi / 3, abs=1e-12)


def test_misalignment_by_hand_takes_the_nearest_image_in_a_periodic_box():
    """k = 1 in a 10 x 10 box: birds at x = 0.5 (east), 9.5 (north) and 4 (west), y = 5. Across the
    border 0.5 and 9.5 are 1 apart and each other's nearest: pi/2 each; 4's nearest is 0.5 (3.5
    away): pi. Mean 2 pi/3. In open space 0.5 and 9.5 are 9 apart: both take 4 as nearest (pi and
    pi/2), and 4 still takes 0.5 (pi): mean 5 pi/6."""
    pos = np.array([[0.5, 5.0], [9.5, 5.0], [4.0, 5.0]])
    vel = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    box = make_space("periodic", [10.0, 10.0])
    assert local_misalignment(pos, vel, k=1, space=box) == pytest.approx(2 * math.pi / 3, abs=1e-12)
    assert local_misalignment(pos, vel, k=1) == pytest.approx(5 * math.pi / 6, abs=1e-12)


def test_misalignment_is_zero_when_aligned_and_undefined_for_too_few_birds():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0.0, 10.0, size=(20, 3))
    vel = np.tile([0.3, -0.2, 0.5], (20, 1)) * rng.uniform(0.5, 2.0, size=(20, 1))
    assert local_misalignment(pos, vel) == pytest.approx(0.0, abs=1e-7)
    assert math.isnan(local_misalignment(pos[:MISALIGNMENT_NEIGHBORS], vel[:MISALIGNMENT_NEIGHBORS]))
    still = vel.copy()
    still[0] = 0.0  # a bird standing still has no heading: left out, not counted as aligned
    assert np.isnan(misalignment_angles(pos, still)[0])


def test_analyze_summarises_misalignment_over_frames():
    """flocksim analyze's per-frame series and summary hold the statistic a fit compares."""
    from flocksim.metrics.series import analyze

    rng = np.random.default_rng(4)
    pos = rng.uniform(0.0, 10.0, size=(3, 30, 2))
    vel = random_unit(rng, 90, 2).reshape(3, 30, 2)
    present = np.ones((3, 30), dtype=bool)
    result = analyze(np.arange(3.0), pos, vel, present, correlation_frames=1)
    per_frame = [local_misalignment(pos[t], vel[t]) for t in range(3)]
    assert result.series["misalignment"] == pytest.approx(per_frame, rel=1e-12)
    assert result.summary["misalignment"] == pytest.approx(np.mean(per_frame), rel=1e-12)
    assert 1.0 < result.summary["misalignment"] < 2.2  # unrelated headings: about pi/2


# --------------------------------------------------------------------------------------------------
# speeds
# --------------------------------------------------------------------------------------------------


def test_speed_stats():
    assert speed_stats(np.array([[3.0, 4.0], [0.0, 6.0]])) == pytest.approx((5.5, 0.5))
    assert speed_stats(np.array([[1.0, 2.0, 2.0]])) == pytest.approx((3.0, 0.0))
    rng = np.random.default_rng(10)
    v = rng.standard_normal((500, 3)) * 4.0
    s = np.sqrt((v**2).sum(axis=1))
    mean, std = speed_stats(v)
    assert mean == pytest.approx(s.mean(), rel=1e-12)
    assert std == pytest.approx(s.std(), rel=1e-12)
    mean0, std0 = speed_stats(np.zeros((0, 2)))
    assert math.isnan(mean0) and math.isnan(std0)


# --------------------------------------------------------------------------------------------------
# summary row and Simulation.metrics()
# --------------------------------------------------------------------------------------------------


def test_flock_summary_keys_and_alive_only():
    rng = np.random.default_rng(11)
    n = 100
    pos = rng.uniform(0, 20, (n, 2))
    vel = np.tile([2.0, 0.0], (n, 1))
    alive = np.ones(n, dtype=bool)
    alive[::4] = False
    vel[~alive] = [-3.0, 1.0]  # the dead point elsewhere: they must not lower the order
    pos[~alive] = 1000.0  # and sit far away: they must not change the nearest-neighbour distances
    counts = np.where(alive, 5, 99)
    space = make_space("box", [20.0, 20.0])
    row = flock_summary(pos, vel, alive, counts, space)
    assert tuple(row) == METRIC_NAMES
    assert all(isinstance(v, float) for v in row.values())
    assert row["n_alive"] == 75.0
    assert row["polarization"] == pytest.approx(1.0)
    assert row["mean_neighbors"] == 5.0
    assert row["speed_mean"] == pytest.approx(2.0) and row["speed_std"] == pytest.approx(0.0, abs=1e-12)
    assert row["nnd_mean"] == pytest.approx(brute_nnd(pos[alive]).mean(), rel=1e-12)
    assert row["milling"] == pytest.approx(milling(pos[alive], vel[alive]))
    # nobody alive: defined, no exception
    empty = flock_summary(pos, vel, np.zeros(n, dtype=bool), counts, space)
    assert empty["n_alive"] == 0.0
    assert all(math.isnan(empty[k]) for k in METRIC_NAMES if k != "n_alive")


@pytest.mark.parametrize("name", ["boids-2d", "starlings-2d", "abm-flocking-small", "starlings-3d"])
def test_simulation_metrics(name):
    sim = Simulation(apply_overrides(load_preset(name), ["agents.n=300"]))
    sim.step(5)
    row = sim.metrics()
    assert set(row) == {"step", "time", *METRIC_NAMES}
    assert row["step"] == 5.0
    assert row["time"] == pytest.approx(5 * sim.dt)
    assert row["n_alive"] == float(sim.state.n_alive) == float(sim.params.agents.n)
    assert all(math.isfinite(v) for v in row.values())
    assert 0.0 <= row["polarization"] <= 1.0 and 0.0 <= row["milling"] <= 1.0
    s = sim.state
    assert row["polarization"] == polarization(s.velocity[s.alive])
    assert row["mean_neighbors"] == pytest.approx(sim.neighbors().counts[s.alive].mean())
    if sim.params.neighbors.mode == "topological":
        assert row["mean_neighbors"] == float(sim.params.neighbors.k)
    # kill some agents: the count follows, and metrics only see the living
    sim.state.alive[::3] = False
    sim.step(1)
    row = sim.metrics()
    assert row["n_alive"] == float(sim.state.n_alive) == float(sim.params.agents.n - len(range(0, sim.state.n, 3)))
    alive = sim.state.alive
    assert row["speed_mean"] == pytest.approx(np.linalg.norm(sim.state.velocity[alive], axis=1).mean())
    assert row["mean_neighbors"] == pytest.approx(sim.neighbors().counts[alive].mean())
