"""The starling rules (docs/starlings.md), against numbers computed by hand.

Inertial spin: torque = mean of h_i x h_j (2D: mean sin(theta_j - theta_i)), per frame
s <- s + J tau - (eta/chi) s with J = coupling x w_ali, omega = s/chi clamped to max_turn rad
per frame; a step of dt advances f = dt / (1/60 s) frames. Predators: catch at distance <= 10,
retarget after 30 s, no catch at 20 remaining, panic multipliers only inside the detection
distance. Spontaneous turns: delays = distance / (2.5 x max_speed). Perturbation: exactly the
chosen birds turn by exactly the chosen angle.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from numpy.testing import assert_allclose

from flocksim import Simulation, parse_params
from flocksim.components import Predators, SpontaneousTurning
from flocksim.config import ConfigError, validate
from flocksim.engines.cpu import reynolds_accelerations
from flocksim.kernels.rotation import turn_heading_toward
from flocksim.models.reynolds import ReynoldsModel
from flocksim.neighbors import find_neighbors
from flocksim.state import new_state

OFF = {"weight": 0.0}


def params(dim=2, alignment=None, rules=None, agents=None, n=0, dt=1 / 60, **sections):
    """Open space, every rule off, max_speed 5, max_force 100, plus overrides."""
    data = {
        "world": {"dim": dim, "dt": dt, "bounds": {"kind": "open", "size": [200.0] * dim}},
        "agents": {"n": n, "max_speed": 5.0, "max_force": 100.0, **(agents or {})},
        "neighbors": {"mode": "metric", "method": "brute"},
        "rules": {
            "separation": OFF,
            "cohesion": OFF,
            "seek": OFF,
            "bounds": OFF,
            "alignment": {"weight": 0.0, "radius": 10.0, **(alignment or {})},
            **(rules or {}),
        },
        **sections,
    }
    return parse_params(data)


def phase_one(p, position, velocity, predators=None):
    """Accelerations and the aux rows (J tau, speed limit) as the engine's phase one computes them."""
    model = ReynoldsModel(p)
    state = new_state(np.array(position, dtype=float), np.array(velocity, dtype=float))
    if predators is not None:
        model.predators = np.array(predators, dtype=float)
    q = model.neighbor_query()
    nbrs = find_neighbors(state.position, state.alive, model.space, q.mode, q.radius, q.k, q.method)
    out = np.zeros((state.n, 3))
    aux = model.aux(state.n)
    reynolds_accelerations(
        state.position,
        state.velocity,
        state.alive,
        nbrs.start,
        nbrs.index,
        state.dim,
        model.space,
        model.coefficients,
        model.inputs(state),
        out,
        aux,
    )
    return out[:, : state.dim], aux.copy()


def sim_with(p, position, velocity, spin=None, seed=0):
    """A Simulation whose state is replaced by the given agents (all alive)."""
    sim = Simulation(p, seed=seed)
    sim.state = new_state(np.array(position, dtype=float), np.array(velocity, dtype=float))
    if spin is not None:
        sim.state.spin[:] = spin
    return sim


def angle_of(v):
    return math.atan2(v[1], v[0])


def rotation_matrix(axis, angle):
    """Independent reference: R = I + sin(a) K + (1 - cos(a)) K^2."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


SPIN = {"weight": 1.0, "mode": "inertial-spin", "chi": 1.0, "eta": 0.2}

# ================================================================= inertial spin: torque


def test_torque_2d_sign_and_magnitude():
    # Agent 0 heads 0 deg; neighbours head +30 deg (speed 2) and -90 deg (speed 0.5): unit headings only.
    # tau_z = (sin 30 + sin(-90)) / 2 = (0.5 - 1) / 2 = -0.25; J = 0.06 x w_ali 1 -> J tau = -0.015.
    pos = [[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    vel = [[5.0, 0.0], [2 * c30, 2 * s30], [0.0, -0.5]]
    p = params(alignment=SPIN | {"radius": 4.5})  # 1-2 are 5 apart: each sees only agent 0
    _, aux = phase_one(p, pos, vel)
    assert_allclose(aux[0, :3], [0.0, 0.0, -0.015], rtol=1e-14, atol=1e-17)
    # agent 1 (30 deg) sees agent 0 (0 deg): sin(-30) = -0.5 -> -0.03; agent 2 (-90) sees 0: sin(90) = 1 -> 0.06
    assert_allclose(aux[1, :3], [0.0, 0.0, -0.03], rtol=1e-14, atol=1e-17)
    assert_allclose(aux[2, :3], [0.0, 0.0, 0.06], rtol=1e-14, atol=1e-17)


def test_torque_2d_turns_the_agent_toward_its_neighbour():
    # One neighbour 30 deg counterclockwise: tau = +0.5, J tau = 0.03 (w_ali 1); one step at dt = 1/60:
    # s = 0 + 1 x (0.03 - 0.2 x 0) = 0.03; omega = s / chi(2) = 0.015 rad; v rotated +0.015 rad.
    p = params(alignment=SPIN | {"chi": 2.0, "eta": 0.4, "radius": 5.0})
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    sim = sim_with(p, [[0.0, 0.0], [0.0, 3.0]], [[5.0, 0.0], [5 * c30, 5 * s30]])
    sim.step()
    assert_allclose(sim.state.spin[0], [0.0, 0.0, 0.03], rtol=1e-14)
    assert angle_of(sim.state.velocity[0]) == pytest.approx(0.015, rel=1e-12)
    assert np.linalg.norm(sim.state.velocity[0]) == pytest.approx(5.0, rel=1e-14)  # speed kept
    # and the neighbour turns clockwise toward agent 0 by the same amount
    assert angle_of(sim.state.velocity[1]) == pytest.approx(math.radians(30) - 0.015, rel=1e-12)


def test_torque_3d_mean_cross_product():
    # h0 = x; neighbours y (speed 3) and z (speed 1): x cross y = z, x cross z = -y; mean (0, -0.5, 0.5);
    # J = 0.06 x w_ali 2 = 0.12 -> J tau = (0, -0.06, 0.06).
    p = params(dim=3, alignment=SPIN | {"weight": 2.0, "chi": 2.0, "radius": 5.0})
    pos = [[0.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]]
    vel = [[5.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0]]
    _, aux = phase_one(p, pos, vel)
    assert_allclose(aux[0, :3], [0.0, -0.06, 0.06], rtol=1e-14, atol=1e-17)
    # one step: s = J tau, omega = s / chi = (0, -0.03, 0.03) rad (|.| 0.042 < 0.35): v rotated about it
    sim = sim_with(p, pos, vel)
    sim.step()
    assert_allclose(sim.state.spin[0], [0.0, -0.06, 0.06], rtol=1e-14, atol=1e-17)
    omega = np.array([0.0, -0.03, 0.03])
    expected = rotation_matrix(omega, np.linalg.norm(omega)) @ np.array([5.0, 0.0, 0.0])
    assert_allclose(sim.state.velocity[0], expected, rtol=1e-13, atol=1e-15)
    assert expected[1] > 0 and expected[2] > 0  # toward both neighbours' headings


def test_basic_alignment_leaves_spin_alone():
    p = params(alignment={"weight": 1.0, "mode": "basic", "radius": 5.0})
    sim = sim_with(p, [[0.0, 0.0], [0.0, 3.0]], [[5.0, 0.0], [0.0, 5.0]], spin=[[0.0, 0.0, 0.5]] * 2)
    sim.step()
    assert_allclose(sim.state.spin, [[0.0, 0.0, 0.5]] * 2, atol=0)


# ================================================================= inertial spin: decay, frames, clamp


@pytest.mark.parametrize("dt, frames", [(1 / 60, 1.0), (1 / 120, 0.5), (1 / 30, 2.0)])
def test_spin_decay_without_neighbours(dt, frames):
    # eta / chi = 0.3 / 1.5 = 0.2 per frame; a step of f frames: s_t = s_0 (1 - 0.2 f)^t, and the heading
    # turns by s_t / chi x f in step t (|omega| = s/chi < 0.35 stays unclamped).
    p = params(alignment=SPIN | {"chi": 1.5, "eta": 0.3}, dt=dt)
    sim = sim_with(p, [[0.0, 0.0]], [[5.0, 0.0]], spin=[[0.0, 0.0, 0.3]])
    turned = 0.0
    for t in range(1, 13):
        sim.step()
        s_t = 0.3 * (1 - 0.2 * frames) ** t
        assert sim.state.spin[0, 2] == pytest.approx(s_t, rel=1e-12)
        turned += s_t / 1.5 * frames
        assert angle_of(sim.state.velocity[0]) == pytest.approx(turned, rel=1e-12)
    assert_allclose(sim.state.spin[0, :2], 0.0, atol=0)


def test_spin_decay_is_the_frame_rule_at_dt_one_frame():
    # the statement: with no neighbours s follows (1 - eta/chi)^t, t in frames
    p = params(alignment=SPIN | {"chi": 1.0, "eta": 0.05})
    sim = sim_with(p, [[0.0, 0.0]], [[5.0, 0.0]], spin=[[0.0, 0.0, 0.1]])
    sim.step(60)
    assert sim.state.spin[0, 2] == pytest.approx(0.1 * 0.95**60, rel=1e-12)


def test_omega_clamp_2d():
    # s = 5, chi 1 -> omega 5 rad/frame, clamped to 0.35; eta 0 keeps s; each step turns 0.35 x f rad.
    for dt, per_step in ((1 / 60, 0.35), (1 / 120, 0.175)):
        p = params(alignment=SPIN | {"eta": 0.0}, dt=dt)
        sim = sim_with(p, [[0.0, 0.0]], [[5.0, 0.0]], spin=[[0.0, 0.0, 5.0]])
        sim.step()
        assert angle_of(sim.state.velocity[0]) == pytest.approx(per_step, rel=1e-12)
        sim.step()
        assert angle_of(sim.state.velocity[0]) == pytest.approx(2 * per_step, rel=1e-12)
        assert sim.state.spin[0, 2] == 5.0
    # a smaller max_turn clamps lower; a small spin is not clamped
    p = params(alignment=SPIN | {"eta": 0.0, "max_turn": 0.1})
    sim = sim_with(p, [[0.0, 0.0], [50.0, 50.0]], [[5.0, 0.0], [5.0, 0.0]], spin=[[0.0, 0.0, -5.0], [0.0, 0.0, 0.05]])
    sim.step()
    assert angle_of(sim.state.velocity[0]) == pytest.approx(-0.1, rel=1e-12)
    assert angle_of(sim.state.velocity[1]) == pytest.approx(0.05, rel=1e-12)


def test_omega_clamp_3d_keeps_the_axis():
    # heading z, spin (3, 4, 0) perpendicular to it: omega (3, 4, 0)/chi 1 has length 5 -> clamped to
    # 0.35 along (0.6, 0.8, 0); v rotated by 0.35 rad about that axis.
    p = params(dim=3, alignment=SPIN | {"eta": 0.0})
    sim = sim_with(p, [[0.0, 0.0, 0.0]], [[0.0, 0.0, 5.0]], spin=[[3.0, 4.0, 0.0]])
    sim.step()
    expected = rotation_matrix([0.6, 0.8, 0.0], 0.35) @ np.array([0.0, 0.0, 5.0])
    assert_allclose(sim.state.velocity[0], expected, rtol=1e-13, atol=1e-15)


def test_spin_stays_perpendicular_to_heading_in_3d():
    # a spin component along the heading would only roll the bird: it is removed
    p = params(dim=3, alignment=SPIN | {"eta": 0.0})
    sim = sim_with(p, [[0.0, 0.0, 0.0]], [[5.0, 0.0, 0.0]], spin=[[0.2, 0.1, 0.0]])
    sim.step()
    assert_allclose(sim.state.spin[0], [0.0, 0.1, 0.0], atol=1e-15)


@pytest.mark.parametrize("mode", ["inertial-spin", "basic"])
def test_speed_relaxes_toward_the_cruise_speed(mode):
    # speed 2 below the cruise speed 0.8 x 5 = 4, restore 6/s, dt 1/60: fraction 0.1 -> 2 + 0.1 x 2 = 2.2 per step;
    # in both alignment modes (no neighbour: no rule acts)
    p = params(alignment={"mode": mode}, rules={"cruise": {"speed": 0.8, "restore": 6.0}})
    sim = sim_with(p, [[0.0, 0.0]], [[0.0, 2.0]])
    sim.step()
    assert_allclose(sim.state.velocity[0], [0.0, 2.2], rtol=1e-14, atol=1e-15)
    sim.step(400)
    assert np.linalg.norm(sim.state.velocity[0]) == pytest.approx(4.0, rel=1e-9)
    sim.state.velocity[0] = [0.0, 4.5]  # above the cruise speed: left alone (max_speed clamps)
    sim.step()
    assert_allclose(sim.state.velocity[0], [0.0, 4.5], rtol=0, atol=0)


def test_no_cruise_control_by_default():
    sim = sim_with(params(alignment=SPIN), [[0.0, 0.0]], [[0.0, 2.0]])
    sim.step(10)
    assert_allclose(sim.state.velocity[0], [0.0, 2.0], rtol=0, atol=0)


def test_inertial_spin_damping_per_step_is_validated():
    base = params().model_dump(mode="json")
    base["rules"]["alignment"] |= {"mode": "inertial-spin", "chi": 0.1, "eta": 0.2}  # 2 per frame
    with pytest.raises(ConfigError, match="inertial-spin damping"):
        validate(base)
    base["world"]["dt"] = 1 / 120  # 1 per step: allowed
    validate(base)


# ================================================================= predator


def predator_sim(n=30, positions=None, **predator):
    p = params(n=n, predator={"enabled": True, **predator})
    sim = Simulation(p, seed=1)
    if positions is not None:
        sim.state.position[:] = positions
    sim.state.velocity[:] = 0.0
    return sim, next(c for c in sim.components if isinstance(c, Predators))


def line_of_birds(n):
    """Birds on a line y = 500, 30 apart, far from the predator except bird 0."""
    pos = np.zeros((n, 2))
    pos[:, 0] = 1000.0 + 30.0 * np.arange(n)
    pos[:, 1] = 500.0
    return pos


@pytest.mark.parametrize("gap, caught", [(10.0, True), (10.01, False), (9.0, True)])
def test_predator_catches_within_catch_radius(gap, caught):
    pos = line_of_birds(30)
    pos[0] = [100.0 + gap, 50.0]
    sim, pred = predator_sim(positions=pos)
    pred.position[0] = [100.0, 50.0]
    pred.target[0] = sim.state.ids[0]
    pred.after_step(sim)
    assert bool(not sim.state.alive[0]) is caught
    assert sim.caught == int(caught) and sim.remaining == 30 - int(caught)
    if caught:  # the next target is the nearest living bird: bird 1 at (1030, 500)
        assert pred.target[0] == sim.state.ids[1] and pred.chase_steps[0] == 0


def test_predator_catch_is_applied_after_the_step():
    # predator at the bird: during the step the bird is still integrated (it moves), then it is removed
    pos = line_of_birds(30)
    sim, pred = predator_sim(positions=pos, flee_weight=0.0)  # no flee: the bird keeps its velocity
    sim.state.velocity[0] = [3.0, 0.0]
    pred.position[0] = pos[0] - [1.0, 0.0]
    pred.velocity[0] = [1e-3, 0.0]
    pred.target[0] = sim.state.ids[0]
    before = sim.state.position[0].copy()
    sim.step()
    assert not sim.state.alive[0]
    assert sim.state.position[0, 0] == pytest.approx(before[0] + 3.0 / 60, rel=1e-12)
    assert sim.caught == 1 and sim.remaining == 29


def test_no_catch_at_min_remaining():
    pos = line_of_birds(21)
    pos[0] = [105.0, 50.0]
    sim, pred = predator_sim(n=21, positions=pos)
    pred.position[0] = [100.0, 50.0]
    pred.target[0] = sim.state.ids[0]
    sim.state.alive[20] = False  # 20 remain: no catch
    pred.after_step(sim)
    assert sim.state.alive[0] and sim.caught == 0 and sim.remaining == 20
    sim.state.alive[20] = True  # 21 remain: caught, 20 left
    pred.after_step(sim)
    assert not sim.state.alive[0] and sim.caught == 1 and sim.remaining == 20
    pred.target[0] = sim.state.ids[1]
    sim.state.position[1] = [101.0, 50.0]
    pred.after_step(sim)
    assert sim.state.alive[1] and sim.caught == 1


def test_predator_retargets_after_30_s_without_a_catch():
    # dt 0.5 s: 30 s = 60 steps. Birds stand still (no rule acts on a zero velocity); the predator is
    # slow (0.01 x max_speed = 0.05 units/s), so it catches nothing. Bird 0 is nearest to it.
    pos = line_of_birds(30)
    pos[0] = [150.0, 50.0]
    p = params(n=30, dt=0.5, predator={"enabled": True, "speed": 0.01})
    sim = Simulation(p, seed=1)
    sim.state.position[:] = pos
    sim.state.velocity[:] = 0.0
    pred = sim.components[0]
    pred.position[0] = [100.0, 50.0]
    sim.step()
    assert pred.target[0] == 0  # the nearest
    far = 29
    pred.target[0] = sim.state.ids[far]  # chase a far bird from now on
    pred.chase_steps[0] = 0
    sim.step(60)  # 30 s: still the far one
    assert pred.target[0] == far
    sim.step()  # the next step starts 30 s after the chase began: back to the nearest
    assert pred.target[0] == 0
    assert sim.caught == 0


def test_predator_turn_is_limited_and_speed_constant():
    p = params(n=30, predator={"enabled": True, "max_turn_deg": 90.0, "speed": 2.0})
    sim = Simulation(p, seed=2)
    pred = sim.components[0]
    pred.position[0] = [0.0, 0.0]
    pred.velocity[0] = [10.0, 0.0]  # 2 x max_speed 5
    sim.state.position[:] = line_of_birds(30)
    sim.state.position[0] = [0.0, -500.0]  # nearest, straight to the right (-90 deg)
    sim.state.velocity[:] = 0.0
    sim.step()
    # at most 90 deg/s x 1/60 s = 1.5 deg per step, toward the target (clockwise)
    assert angle_of(pred.velocity[0]) == pytest.approx(-math.radians(1.5), rel=1e-12)
    assert np.linalg.norm(pred.velocity[0]) == pytest.approx(10.0, rel=1e-14)
    assert_allclose(sim.model.predators[0, :2], pred.velocity[0] / 60, rtol=1e-12)


def turn(h, u, angle, dim=3):
    return turn_heading_toward(*h, *u, math.cos(angle), math.sin(angle), dim)


def test_turn_heading_toward():
    c1, s1 = math.cos(0.1), math.sin(0.1)
    assert_allclose(turn((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), 0.1, 2), [c1, s1, 0.0], rtol=1e-15, atol=1e-17)
    half = math.sqrt(0.5)
    assert turn((1.0, 0.0, 0.0), (half, half, 0.0), 1.0, 2) == (half, half, 0.0)  # within the limit: u itself
    assert_allclose(turn((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), 0.1, 2), [c1, s1, 0.0], rtol=1e-15, atol=1e-17)
    # 3D: from +z toward +y by 0.2 rad; exactly opposite: in the plane of h and +z
    out = turn((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), 0.2)
    assert_allclose(out, [0.0, math.sin(0.2), math.cos(0.2)], rtol=1e-15, atol=1e-17)
    assert_allclose(turn((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), 0.1), [c1, 0.0, s1], rtol=1e-15, atol=1e-17)
    assert_allclose(turn((0.0, 0.0, 1.0), (0.0, 0.0, -1.0), 0.1), [s1, 0.0, c1], rtol=1e-15, atol=1e-17)


@pytest.mark.parametrize(
    "rule, weight_key, factor",
    [("separation", "separation", 1.5), ("cohesion", "cohesion", 0.5), ("alignment", "alignment", 1.5)],
)
def test_panic_multipliers_only_inside_detection(rule, weight_key, factor):
    # bird 0 at (0,0) moving (1,0), bird 1 at (3,0) moving (0,1); one rule on (clamped-sum, radius 5).
    # Flee weight 0 isolates the multipliers. Predator at distance 20 -/+ 0.01 from bird 0, detection 20.
    rules = {"steering": "clamped-sum", rule: {"weight": 1.0, "radius": 5.0}}
    p = params(rules=rules, predator={"enabled": True, "detection": 20.0, "flee_weight": 0.0})
    pos, vel = [[0.0, 0.0], [3.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]
    plain, _ = phase_one(p, pos, vel)
    assert np.abs(plain[0]).max() > 0.1
    outside, aux_out = phase_one(p, pos, vel, predators=[[0.0, -20.01, 0.0]])
    inside, aux_in = phase_one(p, pos, vel, predators=[[0.0, -19.99, 0.0]])
    assert_allclose(outside, plain, rtol=0, atol=0)
    assert_allclose(inside[0], factor * plain[0], rtol=1e-14)
    assert aux_out[0, 3] == 5.0 and aux_in[0, 3] > 5.0  # faster only inside
    # configurable: a multiplier of 3
    panic = {"detection": 20.0, "flee_weight": 0.0, "panic": {weight_key: 3.0}}
    p3 = params(rules=rules, predator={"enabled": True, **panic})
    inside3, _ = phase_one(p3, pos, vel, predators=[[0.0, -19.99, 0.0]])
    assert_allclose(inside3[0], 3.0 * plain[0], rtol=1e-14)


def test_flee_force_and_speed_limit():
    # bird at (0,0) at rest; predator at (4,0), detection 10: closeness c = 0.6; speed limit
    # 5 x (1 + 0.3 x 0.6) = 5.9; flee = limit(5.9 x (-1, 0) - 0, 100) x flee_weight 2 x c = (-7.08, 0)
    p = params(n=0, predator={"enabled": True, "detection": 10.0, "flee_weight": 2.0})
    acc, aux = phase_one(p, [[0.0, 0.0]], [[0.0, 0.0]], predators=[[4.0, 0.0, 0.0]])
    assert_allclose(acc[0], [-7.08, 0.0], rtol=1e-14)
    assert aux[0, 3] == pytest.approx(5.9, rel=1e-14)
    # a bird at the predator's position gets no direction (no NaN), just the speed limit 6.5
    acc, aux = phase_one(p, [[4.0, 0.0]], [[1.0, 0.0]], predators=[[4.0, 0.0, 0.0]])
    assert np.isfinite(acc).all() and aux[0, 3] == pytest.approx(6.5)
    # rules.response_time 0.5 s: the velocity difference is asked for within 0.5 s, twice the force
    p = params(n=0, rules={"response_time": 0.5}, predator={"enabled": True, "detection": 10.0, "flee_weight": 2.0})
    acc, _ = phase_one(p, [[0.0, 0.0]], [[0.0, 0.0]], predators=[[4.0, 0.0, 0.0]])
    assert_allclose(acc[0], [-14.16, 0.0], rtol=1e-14)


def test_fleeing_bird_may_exceed_max_speed_up_to_the_limit():
    # flee 1000 x 0.6 x 5.9 = 3540 units/s^2: after 1/60 s the speed would be 59, clamped to 5.9
    p = params(n=0, agents={"max_force": 1e6}, predator={"enabled": True, "detection": 10.0, "flee_weight": 1000.0})
    sim = sim_with(p, [[0.0, 0.0]], [[0.0, 0.0]])
    sim.components = []
    sim.model.predators = np.array([[4.0, 0.0, 0.0]])
    sim.step()
    assert np.linalg.norm(sim.state.velocity[0]) == pytest.approx(5.9, rel=1e-12)
    assert sim.state.velocity[0, 0] < 0


def test_predator_state_round_trip():
    p = params(
        n=40,
        alignment=SPIN,
        rules={"cohesion": {"weight": 1.0, "radius": 50.0}},
        predator={"enabled": True, "count": 2},
        turning={"enabled": True, "mean_interval": 0.5},
    )
    a = Simulation(p, seed=3)
    a.step(50)
    saved = (a.state.copy(), a.steps, dict(a.rng.bit_generator.state), [c.state_dict() for c in a.components])
    a.step(80)
    b = Simulation(p, seed=99)  # different seed: everything comes from the saved data
    b.state, b.steps, rng_state, dicts = saved[0].copy(), saved[1], saved[2], saved[3]
    b.rng.bit_generator.state = rng_state
    for component, data in zip(b.components, dicts, strict=True):
        component.load_state_dict(data)
    b.step(80)
    assert a.state.position.tobytes() == b.state.position.tobytes()
    assert a.state.velocity.tobytes() == b.state.velocity.tobytes()
    assert a.state.alive.tobytes() == b.state.alive.tobytes()
    for ca, cb in zip(a.components, b.components, strict=True):
        da, db = ca.state_dict(), cb.state_dict()
        assert da.keys() == db.keys()
        for key in da:
            assert np.array_equal(np.asarray(da[key]), np.asarray(db[key])), key


# ================================================================= spontaneous turning


def turning_sim(n=40, **turning):
    p = params(n=n, turning={"enabled": True, "mean_interval": 1e6, **turning})
    sim = Simulation(p, seed=4)
    rng = np.random.default_rng(0)
    sim.state.position[:] = rng.uniform(0, 100, (n, 2))
    sim.state.velocity[:] = [5.0, 0.0]  # all heading +x
    return sim, next(c for c in sim.components if isinstance(c, SpontaneousTurning))


def test_turning_delays_proportional_to_distance():
    sim, turn = turning_sim()
    sim.step(3)
    t0 = sim.time
    turn.start_wave(sim)
    pos = sim.state.position
    edge = turn.initiators[0]
    assert_allclose(turn.origin[:2], pos[edge], atol=0)
    # the edge bird is the most lateral one (|y - mean y| largest on the chosen side)
    lateral = pos[:, 1] - pos[:, 1].mean()
    assert lateral[edge] in (lateral.max(), lateral.min())
    # initiators: the edge bird and its 9 nearest, starting at once
    d = np.linalg.norm(pos - pos[edge], axis=1)
    assert sorted(turn.initiators.tolist()) == sorted(np.argsort(d, kind="stable")[:10].tolist())
    assert_allclose(turn.start[turn.initiators], t0, atol=0)
    others = np.setdiff1d(np.arange(40), turn.initiators)
    assert_allclose(turn.start[others] - t0, d[others] / (2.5 * 5.0), rtol=1e-12)
    # inward: an edge bird above the centre turns clockwise (axis -z), below it counterclockwise
    assert turn.axis[2] == -math.copysign(1.0, lateral[edge]) and turn.axis[0] == turn.axis[1] == 0.0


def test_every_bird_turns_the_same_angle_at_the_same_rate():
    # rules off: each bird turns exactly angle_deg (60) at 120 deg/s, after its own delay
    sim, turn = turning_sim(angle_deg=60.0, turn_rate_deg=120.0)
    turn.next_event = 0.0
    sim.step()
    assert turn.waves == 1 and sim.state.turning[turn.initiators].all()
    # initiators: 1/60 s at 120 deg/s = 2 deg in the first step
    for i in turn.initiators:
        assert math.degrees(abs(angle_of(sim.state.velocity[i]))) == pytest.approx(2.0, rel=1e-9)
    sim.step(round((turn.wave_end - sim.time) * 60) + 2)
    angles = np.degrees(np.arctan2(sim.state.velocity[:, 1], sim.state.velocity[:, 0]))
    assert_allclose(np.abs(angles), 60.0, rtol=1e-9)
    assert len(set(np.sign(angles))) == 1  # all the same way
    assert_allclose(np.linalg.norm(sim.state.velocity, axis=1), 5.0, rtol=1e-12)
    assert not sim.state.turning.any()


def test_step_angles_add_up_exactly():
    _, turn = turning_sim(angle_deg=90.0, turn_rate_deg=50.0)
    turn.start[:] = np.inf
    turn.start[:3] = [0.013, 0.5, 1.0 / 60]
    total = sum(turn.step_angles(k / 60, 1 / 60) for k in range(400))
    assert_allclose(total[:3], math.radians(90.0), rtol=1e-12)
    assert_allclose(total[3:], 0.0, atol=0)


def test_turning_waves_start_at_random_times_with_the_mean_interval():
    sim, turn = turning_sim(n=30, mean_interval=0.5, angle_deg=10.0, turn_rate_deg=1000.0, signal_speed=100.0)
    sim.step(60 * 30)  # 30 s: about 60 waves if each is short
    assert 40 <= turn.waves <= 80


def test_turning_side_roost_turns_the_flock_toward_the_roost():
    # heading +x, centroid near (50, 50): a roost far in +y asks a counterclockwise turn (axis +z), one far
    # in -y a clockwise one, whatever the side drawn; the generator is drawn as with side = random
    for centre, sign in (([50.0, 900.0], 1.0), ([50.0, -900.0], -1.0)):
        roost = {"roost": {"weight": 1.0, "center": centre, "radius": 1000.0}}
        axes = set()
        for seed in range(6):
            p = params(n=40, rules=roost, turning={"enabled": True, "mean_interval": 1e6, "side": "roost"})
            sim = Simulation(p, seed=seed)
            sim.state.position[:] = np.random.default_rng(0).uniform(0, 100, (40, 2))
            sim.state.velocity[:] = [5.0, 0.0]
            turn = sim.components[0]
            turn.start_wave(sim)
            axes.add(turn.axis[2])
            drawn = Simulation(
                p.model_copy(update={"turning": p.turning.model_copy(update={"side": "random"})}), seed=seed
            )
            drawn.components[0].start_wave(drawn)
            assert sim.rng.random() == drawn.rng.random()  # as many draws
        assert axes == {sign}
    # without a roost, side = roost is the random side: both ways occur over the seeds
    axes = set()
    for seed in range(6):
        p = params(n=40, turning={"enabled": True, "mean_interval": 1e6, "side": "roost"})
        sim = Simulation(p, seed=seed)
        sim.state.velocity[:] = [5.0, 0.0]
        sim.components[0].start_wave(sim)
        axes.add(sim.components[0].axis[2])
    assert axes == {1.0, -1.0}


def test_turning_in_3d_is_about_a_horizontal_side():
    p = params(dim=3, n=30, turning={"enabled": True, "mean_interval": 1e6})
    sim = Simulation(p, seed=5)
    sim.state.velocity[:] = [5.0, 0.0, 0.0]
    turn = sim.components[0]
    turn.start_wave(sim)
    # heading x, up y: the side is +-z, the axis +-y (vertical); inward toward the centroid
    assert_allclose(np.abs(turn.axis), [0.0, 1.0, 0.0], atol=1e-15)
    edge = turn.initiators[0]
    dz = sim.state.position[edge, 2] - sim.state.position[:, 2].mean()
    rotated = rotation_matrix(turn.axis, 0.1) @ np.array([1.0, 0.0, 0.0])
    assert np.sign(rotated[2]) == -np.sign(dz)


# ================================================================= perturbation


def grid_sim(dim=2):
    p = params(dim=dim, n=25)
    sim = Simulation(p, seed=6)
    g = np.arange(5) * 10.0
    xy = np.array([(x, y) for y in g for x in g])
    sim.state.position[:, :2] = xy
    if dim == 3:
        sim.state.position[:, 2] = 7.0
        sim.state.velocity[:] = [3.0, 1.0, 4.0]
    else:
        sim.state.velocity[:] = [3.0, 4.0]
    return sim


def test_perturb_turn_count_rotates_exactly_the_chosen_birds():
    sim = grid_sim()
    before = sim.state.velocity.copy()
    rows = sim.perturb_turn(center_id=12, count=5, angle_deg=120.0)  # centre of the grid + 4 at distance 10
    assert sorted(rows.tolist()) == [7, 11, 12, 13, 17]
    a = math.radians(120.0)
    for r in range(25):
        if r in rows:
            turned = (angle_of(sim.state.velocity[r]) - angle_of(before[r])) % (2 * math.pi)
            assert turned == pytest.approx(a, rel=1e-13)
            assert np.linalg.norm(sim.state.velocity[r]) == pytest.approx(5.0, rel=1e-14)
        else:
            assert sim.state.velocity[r].tobytes() == before[r].tobytes()


def test_perturb_turn_radius_and_right_turn():
    sim = grid_sim()
    before = sim.state.velocity.copy()
    rows = sim.perturb_turn(center_id=0, radius=14.2, angle_deg=-120.0)  # (0,0): (10,0) (0,10) (10,10)
    assert sorted(rows.tolist()) == [0, 1, 5, 6]
    expected = angle_of(before[0]) - math.radians(120.0)
    for r in rows:
        assert angle_of(sim.state.velocity[r]) == pytest.approx(expected, rel=1e-13)
    untouched = np.setdiff1d(np.arange(25), rows)
    assert sim.state.velocity[untouched].tobytes() == before[untouched].tobytes()


def test_perturb_turn_default_is_the_bird_and_its_7_nearest():
    sim = grid_sim()
    assert len(sim.perturb_turn()) == 8


def test_perturb_turn_3d_is_about_the_vertical_axis():
    sim = grid_sim(dim=3)
    rows = sim.perturb_turn(center_id=12, count=3, angle_deg=90.0)
    for r in rows:
        # (3, 1, 4) turned 90 deg left about +y: (x, z) -> (z, -x) = (4, 1, -3); the vertical 1 kept
        assert_allclose(sim.state.velocity[r], [4.0, 1.0, -3.0], rtol=1e-14, atol=1e-14)
    # a bird heading +x turning left (positive) ends heading -z, as seen from above
    sim.state.velocity[12] = [1.0, 0.0, 0.0]
    sim.perturb_turn(center_id=12, count=1, angle_deg=90.0)
    assert_allclose(sim.state.velocity[12], [0.0, 0.0, -1.0], atol=1e-15)


def test_perturb_turn_bad_input():
    sim = grid_sim()
    with pytest.raises(ValueError, match="exactly one"):
        sim.perturb_turn(center_id=0, radius=5.0, count=3)
    with pytest.raises(ValueError, match="no agent"):
        sim.perturb_turn(center_id=999)
    sim.state.alive[3] = False
    with pytest.raises(ValueError, match="not alive"):
        sim.perturb_turn(center_id=3)
    # dead birds are never turned
    before = sim.state.velocity[3].copy()
    sim.perturb_turn(center_id=2, radius=100.0)
    assert sim.state.velocity[3].tobytes() == before.tobytes()


# ================================================================= reproducibility


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads on this machine")
def test_predator_spin_and_turns_are_bitwise_independent_of_threads():
    p = params(
        dim=3,
        n=200,
        alignment=SPIN,
        rules={"separation": {"weight": 1.5, "radius": 3.0}, "cohesion": {"weight": 1.0, "radius": 10.0}},
        predator={"enabled": True, "count": 2, "detection": 30.0},
        turning={"enabled": True, "mean_interval": 0.3},
    )
    before = numba.get_num_threads()
    try:
        runs = []
        for threads in (1, 2):
            sim = Simulation(p, seed=8, threads=threads)
            sim.step(90)
            runs.append(sim)
    finally:
        numba.set_num_threads(before)
    a, b = runs
    assert a.components[1].waves >= 1 and np.abs(a.state.spin).max() > 0
    for name in ("position", "velocity", "spin", "alive", "turning"):
        assert getattr(a.state, name).tobytes() == getattr(b.state, name).tobytes(), name
