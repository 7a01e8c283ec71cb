"""The independent NumPy references of ``flocksim validate``: hand-computed steps and no flocksim code
inside them (tests/test_results.py re-makes a slice of every committed reference curve bitwise)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from flocksim.validate.reference import vicsek_numpy
from flocksim.validate.reference.couzin_numpy import CouzinReference
from flocksim.validate.reference.vicsek_numpy import V0, VicsekReference

REFERENCE_DIR = Path(vicsek_numpy.__file__).parent


def test_the_references_import_nothing_from_flocksim():
    for path in REFERENCE_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else ["(relative)"]
            else:
                continue
            allowed = {"__future__", "dataclasses", "math", "numpy"}
            assert all(n.split(".")[0] in allowed for n in names), f"{path.name} imports {names}"


# ---- Vicsek --------------------------------------------------------------------------------


def vicsek_of(positions, angles, eta: float = 0.0) -> VicsekReference:
    """A reference run in a 20 x 20 box (rho = n / 400) with hand-placed particles."""
    n = len(angles)
    run = VicsekReference(n, eta, seed=0, rho=n / 400.0)
    run.x = np.asarray(positions, dtype=float)
    run.theta = np.asarray(angles, dtype=float)
    return run


def test_vicsek_reference_includes_itself_and_moves_with_the_old_velocity():
    """Two particles 0.5 apart heading 0 and 90 degrees: both take 45 degrees (each averages itself and
    the other), but each moves v0 along its OLD heading (x(t+1) = x(t) + v(t))."""
    run = vicsek_of([[5.0, 5.0], [5.5, 5.0]], [0.0, math.pi / 2])
    run.step()
    np.testing.assert_allclose(run.theta, [math.pi / 4, math.pi / 4], atol=1e-15)
    np.testing.assert_allclose(run.x, [[5.0 + V0, 5.0], [5.5, 5.0 + V0]], atol=1e-15)
    run.step()  # now both move along 45 degrees
    step = V0 / math.sqrt(2)
    np.testing.assert_allclose(run.x, [[5.0 + V0 + step, 5.0 + step], [5.5 + step, 5.0 + V0 + step]], atol=1e-15)


def test_vicsek_reference_three_particles_radius_and_wrap():
    """Particle 0 sees 1 (0.9 away) and 2 (across the periodic edge, 0.8 away); 1 and 2 are 1.7 apart
    and see only 0 and themselves."""
    angles = [0.0, math.pi / 2, math.radians(225.0)]
    run = vicsek_of([[0.3, 10.0], [1.2, 10.0], [19.5, 10.0]], angles)
    run.step()
    u = np.array([[math.cos(a), math.sin(a)] for a in angles])
    expected0 = math.atan2(u[:, 1].sum(), u[:, 0].sum())
    expected1 = math.atan2(u[0, 1] + u[1, 1], u[0, 0] + u[1, 0])
    expected2 = math.atan2(u[0, 1] + u[2, 1], u[0, 0] + u[2, 0])
    np.testing.assert_allclose(run.theta, [expected0, expected1, expected2], atol=1e-15)
    assert run.x[2, 0] == pytest.approx(19.5 + V0 * math.cos(angles[2]))
    run.x[2, 0] = 19.99  # heading +x at the edge: the move wraps it to the other side
    run.theta[:] = 0.0
    run.step()
    assert run.x[2, 0] == pytest.approx(19.99 + V0 - 20.0)


def test_vicsek_reference_noise_is_uniform_of_width_eta():
    """One isolated particle per 20 x 20 box cell: the change of angle is uniform in [-eta/2, eta/2)."""
    eta = 1.0
    run = VicsekReference(400, eta, seed=1, rho=0.01)  # side 200, particles far apart on a grid
    g = np.arange(400)
    run.x = np.stack([(g % 20) * 10.0 + 1.0, (g // 20) * 10.0 + 1.0], axis=1)
    before = run.theta.copy()
    run.step()
    change = run.theta - before
    assert change.min() >= -eta / 2 - 1e-12 and change.max() < eta / 2 + 1e-12
    assert change.var() == pytest.approx(eta**2 / 12, rel=0.15)


def test_vicsek_reference_limits():
    """No noise: order grows to 1; full noise: v_a of random headings, sqrt(pi / 4N) on average."""
    quiet = VicsekReference(100, 0.0, seed=2)
    for _ in range(400):
        quiet.step()
    assert quiet.order() > 0.99
    loud = [vicsek_numpy.time_averaged_order(100, 2 * math.pi, seed, 10, 200) for seed in range(3)]
    assert np.mean(loud) == pytest.approx(math.sqrt(math.pi / 400), rel=0.25)


def test_vicsek_reference_rejects_a_box_too_small_for_the_minimum_image():
    with pytest.raises(ValueError, match="box side"):
        VicsekReference(16, 1.0, seed=0)


# ---- Couzin --------------------------------------------------------------------------------

FAR = [100.0, 100.0, 100.0]


def couzin_of(positions, headings, **coefficients) -> CouzinReference:
    """Zones r_r = 1, delta_r_o = 2, delta_r_a = 4 (orientation 1 <= d < 3, attraction 3 <= d < 7); no noise,
    unlimited turning unless given."""
    c = {"delta_r_a": 4.0, "sigma": 0.0, "theta_deg": 36000.0, **coefficients}
    run = CouzinReference(len(positions), seed=0, delta_r_o=2.0, **c)
    run.c = np.asarray(positions, dtype=float)
    h = np.asarray(headings, dtype=float)
    run.v = h / np.linalg.norm(h, axis=1, keepdims=True)
    return run


def test_couzin_reference_repulsion_has_priority():
    run = couzin_of([[0, 0, 0], [0.5, 0.5, 0], [2.0, 0, 0], [0, 0, 5.0]], [[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(run.desired()[0], [-math.sqrt(0.5), -math.sqrt(0.5), 0.0], atol=1e-15)


def test_couzin_reference_orientation_attraction_and_both():
    run = couzin_of([[0, 0, 0], [2.0, 0, 0]], [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(run.desired()[0], [0, 1, 0], atol=1e-15)
    run = couzin_of([[0, 0, 0], [0, 5.0, 0]], [[1, 0, 0], [1, 0, 0]])
    np.testing.assert_allclose(run.desired()[0], [0, 1, 0], atol=1e-15)
    # two orientation neighbours (headings +y, +y) and one attraction neighbour straight up (+z):
    # (d_o / |d_o| + d_a / |d_a|) / 2 = ((0, 1, 0) + (0, 0, 1)) / 2, normalised
    run = couzin_of([[0, 0, 0], [2.0, 0, 0], [0, 2.0, 0], [0, 0, 5.0]], [[1, 0, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(run.desired()[0], [0, math.sqrt(0.5), math.sqrt(0.5)], atol=1e-15)


def test_couzin_reference_blind_volume_hides_every_zone():
    """alpha = 270 degrees: a neighbour more than 135 degrees from the heading is undetected, in the zone of
    repulsion too; the focal individual then keeps its direction."""
    for behind_deg, seen in ((134.0, True), (136.0, False)):
        a = math.radians(behind_deg)
        run = couzin_of([[0, 0, 0], [0.5 * math.cos(a), 0.5 * math.sin(a), 0]], [[1, 0, 0], [0, 0, 1]])
        expected = [-math.cos(a), -math.sin(a), 0.0] if seen else [1.0, 0.0, 0.0]
        np.testing.assert_allclose(run.desired()[0], expected, atol=1e-12)


def test_couzin_reference_turning_rate_and_move():
    """theta tau = 4 degrees per step: a heading 90 degrees from the desired direction turns 4 degrees,
    then the individual moves s tau = 0.3 along the new heading."""
    run = couzin_of([[0, 0, 0], [2.0, 0, 0]], [[1, 0, 0], [0, 1, 0]], theta_deg=40.0)
    run.step()
    a = math.radians(4.0)
    np.testing.assert_allclose(run.v[0], [math.cos(a), math.sin(a), 0.0], atol=1e-12)
    np.testing.assert_allclose(run.c[0], 0.3 * run.v[0], atol=1e-15)


def test_couzin_reference_noise_deviation():
    """Isolated individuals: the heading deviates by |sigma g|, g standard normal (mean sigma sqrt(2 / pi))."""
    n, sigma = 400, 0.2
    positions = [[20.0 * k, 0.0, 0.0] for k in range(n)]
    run = couzin_of(positions, [[0.0, 0.0, 1.0]] * n, sigma=sigma, delta_r_a=1.0)
    before = run.v.copy()
    run.step()
    angle = np.arccos(np.clip(np.sum(before * run.v, axis=1), -1, 1))
    assert angle.mean() == pytest.approx(sigma * math.sqrt(2 / math.pi), rel=0.12)
    np.testing.assert_allclose(np.linalg.norm(run.v, axis=1), 1.0, atol=1e-12)


def test_couzin_reference_order_parameters():
    ring = np.array([[math.cos(a), math.sin(a), 0.0] for a in np.linspace(0, 2 * math.pi, 12, endpoint=False)])
    run = couzin_of(10 * ring, np.stack([-ring[:, 1], ring[:, 0], np.zeros(12)], axis=1))
    p, m = run.order()
    assert p == pytest.approx(0.0, abs=1e-12) and m == pytest.approx(1.0, abs=1e-12)
