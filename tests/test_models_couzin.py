"""The couzin model's rules on hand-made configurations (Couzin et al. 2002)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim import Simulation, load_preset
from flocksim.kernels.couzin import turn_toward


def sim_of(n: int, dim: int = 3, **couzin) -> Simulation:
    coeffs = {"delta_r_o": 2.0, "delta_r_a": 4.0, "noise_sd": 0.0, "max_turn_deg": 3600.0, **couzin}
    params = {
        "model": "couzin",
        "world": {"dim": dim, "dt": 0.1, "bounds": {"kind": "open", "size": [10.0] * dim}},
        "agents": {"n": n},
        "couzin": coeffs,
    }
    return Simulation(params, seed=1, threads=1)


def put(sim: Simulation, positions, headings) -> None:
    sim.state.position[:] = np.asarray(positions, dtype=float)
    h = np.asarray(headings, dtype=float)
    sim.state.velocity[:] = 3.0 * h / np.linalg.norm(h, axis=1, keepdims=True)


def heading(sim: Simulation, i: int = 0) -> np.ndarray:
    return sim.state.velocity[i] / 3.0


# zones with r_r = 1, delta_r_o = 2, delta_r_a = 4: repulsion d < 1, orientation 1 <= d < 3, attraction 3 <= d < 7
FAR = [100.0, 100.0, 100.0]


def test_repulsion_takes_priority():
    """A neighbour in the zone of repulsion: orientation and attraction neighbours are ignored."""
    sim = sim_of(4)
    put(
        sim,
        [[0, 0, 0], [0.5, 0.5, 0], [2.0, 0, 0], [0, 0, 5.0]],  # 1: repulsion, 2: orientation, 3: attraction
        [[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]],
    )
    sim.step()
    np.testing.assert_allclose(heading(sim), [-math.sqrt(0.5), -math.sqrt(0.5), 0.0], atol=1e-12)


def test_orientation_only_attraction_only_and_both():
    sim = sim_of(2)
    put(sim, [[0, 0, 0], [2.0, 0, 0]], [[1, 0, 0], [0, 1, 0]])  # orientation zone
    sim.step()
    np.testing.assert_allclose(heading(sim), [0, 1, 0], atol=1e-12)
    sim = sim_of(2)
    put(sim, [[0, 0, 0], [0, 5.0, 0]], [[1, 0, 0], [1, 0, 0]])  # attraction zone, 90 degrees to the left
    sim.step()
    np.testing.assert_allclose(heading(sim), [0, 1, 0], atol=1e-12)
    sim = sim_of(3)
    put(sim, [[0, 0, 0], [2.0, 0, 0], [0, 0, 5.0]], [[1, 0, 0], [0, 1, 0], [1, 0, 0]])
    sim.step()
    expected = np.array([0, 1, 0]) + np.array([0, 0, 1])  # (d_o/|d_o| + d_a/|d_a|) / 2, normalised
    np.testing.assert_allclose(heading(sim), expected / np.linalg.norm(expected), atol=1e-12)


def test_nothing_seen_keeps_the_heading_and_moves_s_tau():
    sim = sim_of(2)
    put(sim, [[0, 0, 0], FAR], [[0, 0, 1], [1, 0, 0]])
    sim.step()
    np.testing.assert_allclose(heading(sim), [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(sim.state.position[0], [0, 0, 0.3], atol=1e-15)


@pytest.mark.parametrize(("behind_deg", "seen"), [(134.0, True), (136.0, False), (180.0, False)])
def test_blind_rear_cone(behind_deg, seen):
    """alpha = 270: a repelling neighbour more than 135 degrees from the heading is unseen."""
    a = math.radians(behind_deg)
    sim = sim_of(2)
    put(sim, [[0, 0, 0], [0.5 * math.cos(a), 0.5 * math.sin(a), 0]], [[1, 0, 0], [0, 0, 1]])
    sim.step()
    if seen:
        np.testing.assert_allclose(heading(sim), [-math.cos(a), -math.sin(a), 0], atol=1e-12)
    else:
        np.testing.assert_allclose(heading(sim), [1, 0, 0], atol=1e-15)


def test_all_round_perception_sees_behind():
    sim = sim_of(2, field_of_perception_deg=360.0)
    put(sim, [[0, 0, 0], [-0.5, 0, 0]], [[1, 0, 0], [0, 0, 1]])
    sim.step()
    np.testing.assert_allclose(heading(sim), [1, 0, 0], atol=1e-15)  # repelled away from behind: keeps +x
    sim = sim_of(2, field_of_perception_deg=360.0)
    put(sim, [[0, 0, 0], [-0.5, 0.1, 0]], [[1, 0, 0], [0, 0, 1]])
    sim.step()
    away = np.array([0.5, -0.1, 0.0])
    np.testing.assert_allclose(heading(sim), away / np.linalg.norm(away), atol=1e-12)


def test_turning_rate_is_capped():
    """theta = 40 deg/s, tau = 0.1 s: a desired direction 90 degrees away is approached by 4 degrees."""
    sim = sim_of(2, max_turn_deg=40.0)
    put(sim, [[0, 0, 0], [2.0, 0, 0]], [[1, 0, 0], [0, 1, 0]])
    sim.step()
    np.testing.assert_allclose(heading(sim), [math.cos(math.radians(4)), math.sin(math.radians(4)), 0], atol=1e-12)
    # a small turn (under the cap) is taken whole
    sim = sim_of(2, max_turn_deg=40.0)
    b = math.radians(3.0)
    put(sim, [[0, 0, 0], [2.0, 0, 0]], [[1, 0, 0], [math.cos(b), math.sin(b), 0]])
    sim.step()
    np.testing.assert_allclose(heading(sim), [math.cos(b), math.sin(b), 0], atol=1e-12)


def test_turn_toward_exactly_opposite():
    cap = math.radians(4.0)
    h = turn_toward(1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 3, cap)
    assert math.acos(h[0]) == pytest.approx(cap, abs=1e-12)
    h2 = turn_toward(1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 2, cap)
    np.testing.assert_allclose(h2, [math.cos(cap), math.sin(cap), 0.0], atol=1e-15)


def test_two_dimensional_turn_and_repulsion():
    sim = sim_of(2, dim=2, max_turn_deg=40.0)
    put(sim, [[0, 0], [0.5, 0.0]], [[1, 0], [1, 0]])
    sim.step()  # repelled straight back: turns 4 degrees counterclockwise (about +z)
    np.testing.assert_allclose(heading(sim), [math.cos(math.radians(4)), math.sin(math.radians(4))], atol=1e-12)


def test_gaussian_angular_noise():
    """Isolated individuals: the heading deviates by |N(0, sigma)| (mean square sigma^2), unbounded turn."""
    n, sigma = 5000, 0.05
    sim = Simulation(
        {
            "model": "couzin",
            "world": {"dim": 3, "dt": 0.1, "bounds": {"kind": "open", "size": [1e6] * 3}},
            "agents": {"n": n},
            "couzin": {"noise_sd": sigma, "max_turn_deg": 1000.0},
        },
        seed=2,
        threads=1,
    )
    h0 = sim.state.velocity / 3.0
    sim.step()
    h1 = sim.state.velocity / 3.0
    change = np.arccos(np.clip(np.sum(h0 * h1, axis=1), -1, 1))
    assert np.mean(change**2) == pytest.approx(sigma**2, rel=0.06)
    assert np.mean(change) == pytest.approx(sigma * math.sqrt(2 / math.pi), rel=0.04)


@pytest.mark.parametrize("dim", [2, 3])
def test_grid_and_brute_force_give_the_same_run(dim):
    runs = {}
    for method in ("brute", "grid"):
        params = load_preset("couzin").model_dump(mode="json")
        params["neighbors"]["method"] = method
        params["agents"]["n"] = 150
        params["world"]["dim"] = dim
        params["world"]["bounds"]["size"] = [8.0] * dim
        sim = Simulation(params, threads=1)
        sim.step(30)
        runs[method] = sim.state
    assert runs["brute"].position.tobytes() == runs["grid"].position.tobytes()
    assert runs["brute"].velocity.tobytes() == runs["grid"].velocity.tobytes()


def test_coincident_neighbours_stay_finite():
    sim = sim_of(3, noise_sd=0.05, max_turn_deg=40.0)
    put(sim, [[0, 0, 0]] * 3, [[1, 0, 0], [-1, 0, 0], [0, 1, 0]])
    sim.step(10)
    sim.state.check()
    np.testing.assert_allclose(np.linalg.norm(sim.state.velocity, axis=1), 3.0)
