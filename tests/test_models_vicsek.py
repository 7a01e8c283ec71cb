"""The vicsek model's rules on hand-made configurations (Vicsek et al. 1995)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim import Simulation, load_preset
from flocksim.config import ConfigError, validate
from flocksim.kernels.vicsek import vicsek_noisy_heading


def sim_of(n: int, eta: float = 0.0, dim: int = 2, kind: str = "periodic", side: float = 10.0, **extra) -> Simulation:
    params = {
        "model": "vicsek",
        "world": {"dim": dim, "dt": 1.0, "bounds": {"kind": kind, "size": [side] * dim}},
        "agents": {"n": n},
        "vicsek": {"speed": 0.03, "radius": 1.0, "eta": eta},
        **extra,
    }
    return Simulation(params, seed=3, threads=1)


def put(sim: Simulation, positions, headings) -> None:
    sim.state.position[:] = np.asarray(positions, dtype=float)
    h = np.asarray(headings, dtype=float)
    sim.state.velocity[:] = 0.03 * h / np.linalg.norm(h, axis=1, keepdims=True)


def angle(v: np.ndarray) -> np.ndarray:
    return np.arctan2(v[:, 1], v[:, 0])


def test_the_particle_includes_itself():
    """Two particles within r, headings 0 and 90 degrees: both take 45 degrees (each averages
    itself and the other); without self inclusion particle 0 would take 90 degrees."""
    sim = sim_of(2)
    put(sim, [[5.0, 5.0], [5.5, 5.0]], [[1.0, 0.0], [0.0, 1.0]])
    sim.step()
    np.testing.assert_allclose(angle(sim.state.velocity), [math.pi / 4, math.pi / 4], atol=1e-12)


def test_outside_the_radius_nothing_changes():
    sim = sim_of(2)
    put(sim, [[2.0, 2.0], [3.01, 2.0]], [[0.0, 1.0], [1.0, 0.0]])
    before = sim.state.position.copy()
    sim.step()
    np.testing.assert_allclose(sim.state.velocity, [[0.0, 0.03], [0.03, 0.0]], atol=1e-15)
    np.testing.assert_allclose(sim.state.position, before + np.array([[0.0, 0.03], [0.03, 0.0]]), atol=1e-15)


def test_paper_update_moves_with_the_old_velocity_and_wraps():
    """vicsek.update = "paper" (the default; Vicsek et al. 1995, x(t+1) = x(t) + v(t)): two particles heading 0
    and 90 degrees, 0.49 apart at the box corner. Both turn to 45 degrees, but step 1 moves each v0 dt along its
    OLD heading (particle 0 wraps across x = 10); step 2 moves both along 45 degrees."""
    sim = sim_of(2)
    assert sim.params.vicsek.update == "paper"
    put(sim, [[9.99, 9.99], [9.99, 9.5]], [[1.0, 0.0], [0.0, 1.0]])
    sim.step()
    np.testing.assert_allclose(angle(sim.state.velocity), [math.pi / 4, math.pi / 4], atol=1e-12)
    np.testing.assert_allclose(sim.state.position, [[9.99 + 0.03 - 10.0, 9.99], [9.99, 9.5 + 0.03]], atol=1e-12)
    sim.step()
    step = 0.03 / math.sqrt(2.0)
    np.testing.assert_allclose(
        sim.state.position, [[0.02 + step, 9.99 + step - 10.0], [9.99 + step - 10.0, 9.53 + step]], atol=1e-12
    )
    assert np.all((sim.state.position >= 0) & (sim.state.position < 10))


def test_forward_update_moves_with_the_new_heading_and_wraps():
    """vicsek.update = "forward" (Gregoire and Chate 2004): the same two particles move v0 dt along the new
    45-degree heading already in step 1."""
    sim = sim_of(2, vicsek={"speed": 0.03, "radius": 1.0, "eta": 0.0, "update": "forward"})
    put(sim, [[9.99, 9.99], [9.99, 9.5]], [[1.0, 0.0], [0.0, 1.0]])
    sim.step()
    step = 0.03 / math.sqrt(2.0)
    np.testing.assert_allclose(angle(sim.state.velocity), [math.pi / 4, math.pi / 4], atol=1e-12)
    np.testing.assert_allclose(
        sim.state.position, [[9.99 + step - 10.0, 9.99 + step - 10.0], [9.99 + step - 10.0, 9.5 + step]], atol=1e-12
    )
    assert np.all((sim.state.position >= 0) & (sim.state.position < 10))


@pytest.mark.parametrize("update", ["paper", "forward"])
def test_three_particles_by_hand(update):
    """Particle 0 sees 1 and 2, which do not see each other. The new headings are the same for both updates
    (atan2 of the summed unit headings, itself included); the move uses the old (paper) or new (forward) one."""
    sim = sim_of(3, vicsek={"speed": 0.03, "radius": 1.0, "eta": 0.0, "update": update})
    heads = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    start = np.array([[5.0, 5.0], [5.9, 5.0], [5.0, 4.1]])
    put(sim, start, heads)
    sim.step()
    u = heads / np.linalg.norm(heads, axis=1, keepdims=True)
    new = np.array(
        [
            math.atan2(u[:, 1].sum(), u[:, 0].sum()),
            math.atan2(u[0, 1] + u[1, 1], u[0, 0] + u[1, 0]),
            math.atan2(u[0, 1] + u[2, 1], u[0, 0] + u[2, 0]),
        ]
    )
    np.testing.assert_allclose(angle(sim.state.velocity), new, atol=1e-12)
    moved = u if update == "paper" else np.stack([np.cos(new), np.sin(new)], axis=1)
    np.testing.assert_allclose(sim.state.position, start + 0.03 * moved, atol=1e-12)


@pytest.mark.parametrize("update", ["paper", "forward"])
def test_both_updates_are_bitwise_deterministic_at_any_thread_count(update):
    runs = []
    for threads in (1, 2, 1):
        params = {
            "model": "vicsek",
            "world": {"dim": 2, "dt": 1.0, "bounds": {"kind": "periodic", "size": [5.0, 5.0]}},
            "agents": {"n": 100},
            "vicsek": {"eta": 2.0, "update": update},
        }
        sim = Simulation(params, seed=4, threads=threads)
        sim.step(30)
        runs.append(sim.state.position.tobytes() + sim.state.velocity.tobytes())
    assert runs[0] == runs[1] == runs[2]


def test_the_two_updates_differ():
    runs = {}
    for update in ("paper", "forward"):
        sim = sim_of(50, eta=1.0, side=3.0, vicsek={"speed": 0.03, "radius": 1.0, "eta": 1.0, "update": update})
        sim.step(5)
        runs[update] = sim.state.position.copy()
    assert not np.array_equal(runs["paper"], runs["forward"])


def test_noise_kernel_range_2d():
    eta = 1.2
    lo = vicsek_noisy_heading(1.0, 0.0, 0.0, 2, eta, 0.0, 0.0)
    mid = vicsek_noisy_heading(1.0, 0.0, 0.0, 2, eta, 0.5, 0.0)
    hi = vicsek_noisy_heading(1.0, 0.0, 0.0, 2, eta, 1.0, 0.0)
    assert math.atan2(lo[1], lo[0]) == pytest.approx(-eta / 2, abs=1e-15)
    assert mid == (1.0, 0.0, 0.0)
    assert math.atan2(hi[1], hi[0]) == pytest.approx(eta / 2, abs=1e-15)


def test_noise_is_uniform_of_width_eta_2d():
    """Isolated particles (no neighbours): the heading change is uniform in [-eta/2, eta/2)."""
    n, eta = 4000, 1.0
    sim = sim_of(n, eta=eta, kind="open", side=1e6)
    before = angle(sim.state.velocity)
    sim.step()
    change = (angle(sim.state.velocity) - before + math.pi) % (2 * math.pi) - math.pi
    assert change.min() >= -eta / 2 - 1e-12 and change.max() <= eta / 2 + 1e-12
    assert change.min() < -0.49 and change.max() > 0.49
    assert change.mean() == pytest.approx(0.0, abs=0.02)
    assert change.var() == pytest.approx(eta**2 / 12, rel=0.08)


def test_noise_on_the_sphere_3d():
    """3D: the new heading is uniform on the cap of half-angle eta/2: the cosine of the change is uniform on
    [cos(eta/2), 1]."""
    n, eta = 4000, 2.0
    sim = sim_of(n, eta=eta, dim=3, kind="open", side=1e6)
    h0 = sim.state.velocity / 0.03
    sim.step()
    h1 = sim.state.velocity / 0.03
    np.testing.assert_allclose(np.linalg.norm(h1, axis=1), 1.0, atol=1e-12)
    cos = np.sum(h0 * h1, axis=1)
    assert cos.min() >= math.cos(eta / 2) - 1e-9
    assert cos.mean() == pytest.approx((1 + math.cos(eta / 2)) / 2, abs=0.01)
    assert cos.var() == pytest.approx((1 - math.cos(eta / 2)) ** 2 / 12, rel=0.1)
    # full noise covers the whole sphere: mean heading near zero
    full = sim_of(n, eta=2 * math.pi, dim=3, kind="open", side=1e6)
    full.step()
    assert np.linalg.norm(full.state.velocity.mean(axis=0)) / 0.03 < 0.05


@pytest.mark.parametrize("dim", [2, 3])
def test_grid_and_brute_force_give_the_same_run(dim):
    runs = {}
    for method in ("brute", "grid"):
        sim = sim_of(300, eta=1.0, dim=dim, side=4.0, neighbors={"method": method})
        sim.step(20)
        runs[method] = sim.state
    assert runs["brute"].position.tobytes() == runs["grid"].position.tobytes()
    assert runs["brute"].velocity.tobytes() == runs["grid"].velocity.tobytes()


def test_coincident_and_dead_particles_stay_finite():
    sim = sim_of(4, eta=0.5)
    put(sim, [[5.0, 5.0]] * 3 + [[1.0, 1.0]], [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    sim.state.alive[3] = False
    dead = sim.state.position[3].copy()
    sim.step(5)
    sim.state.check()
    np.testing.assert_array_equal(sim.state.position[3], dead)
    np.testing.assert_allclose(np.linalg.norm(sim.state.velocity[:3], axis=1), 0.03)


def test_walls_are_rejected_and_the_preset_loads():
    with pytest.raises(ConfigError, match=r"world\.bounds\.kind"):
        validate({"model": "vicsek", "world": {"bounds": {"kind": "box", "size": [10.0, 10.0]}}})
    with pytest.raises(ConfigError, match=r"vicsek\.eta"):
        validate({"model": "vicsek", "vicsek": {"eta": 7.0}})
    with pytest.raises(ConfigError, match=r"vicsek\.update"):
        validate({"model": "vicsek", "vicsek": {"update": "backward"}})
    p = load_preset("vicsek")
    assert p.agents.n / (p.world.bounds.size[0] * p.world.bounds.size[1]) == 4.0
    assert (p.vicsek.speed, p.vicsek.radius, p.vicsek.update) == (0.03, 1.0, "paper")
