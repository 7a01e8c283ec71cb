"""Reynolds boids (Reynolds 1987, 1999) with the rule forms of docs/parameters.md.

Per agent, from one read-only snapshot: separation, alignment and cohesion
over the neighbour list (each within its own radius in metric mode; in
topological mode alignment and cohesion use all k and separation those of
them within its radius), seek toward a target with arrival (per agent when
``model.targets`` is set; inside ``attack_range`` of its seek point an agent
seeks with w_target x attack_weight and ignores alignment and cohesion), and a
soft-wall push. The forces combine per ``rules.steering`` (docs/design.md §3.4). Integration (§1.3):
v += a dt, |v| clamped to [min_speed, max_speed], p += v dt.

The starling features of docs/starlings.md live here too:

- ``inertial-spin`` alignment replaces the alignment force by a torque on a
  per-agent spin (``kernels/inertial_spin.py``): phase one writes J tau per
  agent, phase two updates the spin, rotates the velocity by omega and relaxes
  the speed toward max_speed.
- predators (positions in :attr:`ReynoldsModel.predators`, set by the
  predator component before each step): an agent closer than the detection
  distance to its nearest predator has its rule weights multiplied by the
  panic multipliers, flees, and may fly up to flee_speed x max_speed.
- spontaneous turns (:attr:`ReynoldsModel.turn`, set by the turning component
  before each step): a per-agent rotation vector applied to the velocity in
  phase two, after the rules and the spin.

- banked flight (``rules.flight``, ``kernels/flight.py``): the steering sets a bank, lift
  turns the bird; its own speed and turning urges (:attr:`ReynoldsModel.wander`, drawn by the
  wander component) wander as Ornstein-Uhlenbeck processes kept in ``state.spin[:, 1:3]``.

Phase two, per agent: v += a dt (or a banked step); v rotated by the spin's omega x frames;
v rotated by the turn; speed relaxed toward the cruise speed (rules.cruise);
|v| clamped to [min_speed, speed limit]; p += v dt.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from flocksim.initial import crowd_initial_state, initial_state
from flocksim.kernels.alignment import alignment_direction, alignment_raw
from flocksim.kernels.bounds import wall_push
from flocksim.kernels.cohesion import cohesion_offset
from flocksim.kernels.compile import block_device, device
from flocksim.kernels.flight import banked_velocity, roost_pull, wander_step
from flocksim.kernels.inertial_spin import heading_torque, spin_update, turn_vector, without_component_along
from flocksim.kernels.obstacles import avoid_push
from flocksim.kernels.predator import closeness, flee_force, flee_speed_limit, nearest_predator
from flocksim.kernels.rotation import rotate
from flocksim.kernels.seek import seek_velocity
from flocksim.kernels.separation import separation_term
from flocksim.kernels.steering import STEERING_REYNOLDS, steer
from flocksim.kernels.vector import limit, load, norm, normalize_or_zero, store
from flocksim.models.base import NeighborQuery, space_of
from flocksim.models.reynolds_coefficients import (
    ALIGNMENT_INERTIAL_SPIN,
    coefficients,
)
from flocksim.obstacles import ObstacleSet, build_obstacle_set, max_body_radius
from flocksim.params import FRAME, ReynoldsParams
from flocksim.space import displacement, wrap
from flocksim.state import FlockState

AUX_COLUMNS = 4
"""Phase one -> phase two scratch per agent: J tau (x, y, z), speed limit."""


class ReynoldsInputs(NamedTuple):
    """Arrays the kernels read besides positions and velocities.

    spin (N, 3): the inertial-spin state (read in phase one, updated in phase
    two); predators (P, 3): predator positions, z = 0 in 2D, P may be 0;
    turn (N, 3) or (0, 3): rotation vector [rad] each agent turns in this step
    (spontaneous turns), (0, 3) for none; targets (N, 3) or (0, 3): each agent's
    seek point (z = 0 in 2D), (0, 3) for the shared ``rules.seek.target``; wander (N, 2) or
    (0, 2): this step's standard normal numbers of each bird's speed and turning urges (banked
    flight), (0, 2) for none.
    """

    spin: np.ndarray
    predators: np.ndarray
    turn: np.ndarray
    targets: np.ndarray
    wander: np.ndarray
    obstacle_shapes: np.ndarray  # obstacles: see flocksim.obstacles.ObstacleSet
    obstacle_grid: np.ndarray
    obstacle_cells: np.ndarray


# Both per-agent kernels below are inlined into their prange drivers: as calls, passing their ~100
# scalar arguments (every array is several) cost 40 % of the crowds benchmark's steering phase.
# numba 0.61 silently drops writes made through a tuple-held array by a function inlined at IR
# level into a prange loop (the spin update vanished), so reynolds_acceleration only reads the
# ``inputs`` tuple (it writes ``aux``, a plain argument) and integrate_agent takes the spin it
# writes as a plain array, unpacked by its driver before the loop.


REYNOLDS_EMPTY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)
"""Neighbour sums of one agent before any neighbour: separation, alignment (velocities), cohesion
(displacements) and inertial-spin torque, each (x, y, z), then the alignment and cohesion counts."""


@device
def reynolds_accumulate(acc, dx, dy, dz, d2, velocity, j, dim, hx, hy, hz, c, separation, others, spin=True):
    """Add neighbour j (displacement d from agent i, squared length d2; i's unit heading h, used by
    inertial-spin alignment) to agent i's sums ``acc`` (:data:`REYNOLDS_EMPTY`): to the separation
    sum if ``separation``, to the others if ``others`` (constants; a pass over a list adds both,
    the grid path each in a loop of its own). Every path adds an agent's neighbours to each sum in
    increasing index, so all give bitwise-equal sums. ``spin`` False: a constant saying that
    inertial spin is off (its code is left out; :class:`~flocksim.models.reynolds_coefficients.PhaseOneRules`)."""
    sep_x, sep_y, sep_z, ali_x, ali_y, ali_z, coh_x, coh_y, coh_z, tau_x, tau_y, tau_z, n_ali, n_coh = acc
    if separation and d2 < c.sep_radius2:
        tx, ty, tz = separation_term(dx, dy, dz, d2, c.sep_form, c.sep_eps, c.sep_min_distance)
        sep_x += tx
        sep_y += ty
        sep_z += tz
    if others and (c.topological or d2 <= c.ali_radius2):
        ux, uy, uz = load(velocity, j, dim)
        if spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN:
            ux, uy, uz = normalize_or_zero(ux, uy, uz)
            tx, ty, tz = heading_torque(hx, hy, hz, ux, uy, uz)
            tau_x += tx
            tau_y += ty
            tau_z += tz
        else:
            ali_x += ux
            ali_y += uy
            ali_z += uz
        n_ali += 1
    if others and (c.topological or d2 <= c.coh_radius2):
        coh_x += dx
        coh_y += dy
        coh_z += dz
        n_coh += 1
    return sep_x, sep_y, sep_z, ali_x, ali_y, ali_z, coh_x, coh_y, coh_z, tau_x, tau_y, tau_z, n_ali, n_coh


@device
def reynolds_acceleration(i, position, velocity, start, index, dim, space, c, inputs, aux, spin=True, blind=True,
                          centrality=True, seek=True, predators=True, walls=True, roost=True, avoid=True,
                          reynolds=True, clamped=True):  # fmt: skip
    """Steering acceleration of agent i [units/s^2] from the snapshot (position, velocity), over its
    neighbour row index[start[i]:start[i + 1]]; writes agent i's row of ``aux`` (see
    :func:`reynolds_steering`). ``spin`` ... ``clamped``: constants, the rules that may be on
    (:class:`~flocksim.models.reynolds_coefficients.PhaseOneRules`); a rule passed False is left out
    of the compiled code, one passed True is checked against ``c`` as it runs."""
    px, py, pz = load(position, i, dim)
    vx, vy, vz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(vx, vy, vz)
    acc = REYNOLDS_EMPTY
    ux = uy = uz = 0.0  # sum of the unit vectors toward the cohesion neighbours (centrality), and their count
    nu = 0
    for t in range(start[i], start[i + 1]):
        j = index[t]
        qx, qy, qz = load(position, j, dim)
        dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
        d2 = dx * dx + dy * dy + dz * dz
        seen = not (blind and c.blind and in_blind_cone(dx, dy, dz, d2, hx, hy, hz, c.blind_cos))
        acc = reynolds_accumulate(acc, dx, dy, dz, d2, velocity, j, dim, hx, hy, hz, c, True, seen, spin)
        if centrality and c.coh_centrality > 0.0 and seen and d2 > 0.0 and (c.topological or d2 <= c.coh_radius2):
            inv = 1.0 / math.sqrt(d2)
            ux += dx * inv
            uy += dy * inv
            uz += dz * inv
            nu += 1
    coh_scale = 1.0
    if centrality and c.coh_centrality > 0.0:
        coh_scale = centrality_factor(ux, uy, uz, nu, c.coh_centrality)
    return reynolds_steering(i, px, py, pz, vx, vy, vz, acc, dim, space, c, inputs, aux, coh_scale, spin, seek,
                             predators, walls, roost, avoid, reynolds, clamped)  # fmt: skip


@block_device
def in_blind_cone(dx, dy, dz, d2, hx, hy, hz, blind_cos):
    """Whether the neighbour at displacement d (squared length d2) lies in the blind cone behind a
    bird of unit heading h: the angle between d and -h is below half the blind angle, whose cosine
    is ``blind_cos``. A bird with no heading (h = 0) or a neighbour at its own position has none
    there."""
    if d2 <= 0.0 or (hx == 0.0 and hy == 0.0 and hz == 0.0):
        return False
    return -(dx * hx + dy * hy + dz * hz) > blind_cos * math.sqrt(d2)


@block_device
def centrality_factor(ux, uy, uz, count, power):
    """C^power with C = |u| / count, the centrality of a bird whose ``count`` neighbours' unit
    vectors sum to u (C = 1, the factor 1, without neighbours: a lone bird keeps its cohesion)."""
    if count <= 0:
        return 1.0
    centrality = min(norm(ux, uy, uz) / count, 1.0)
    return centrality**power


@block_device
def predator_response(px, py, pz, vx, vy, vz, predators, space, c):
    """(closeness, flee acceleration x, y, z) of an agent at p with velocity v to its nearest
    predator: closeness 0 and no flight outside the detection distance."""
    qx, qy, qz, q2 = nearest_predator(px, py, pz, predators, space)
    near = closeness(math.sqrt(q2), c.detection)
    if near <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    speed_limit = flee_speed_limit(c.max_speed, c.flee_speed, near)
    fx, fy, fz = flee_force(qx, qy, qz, vx, vy, vz, speed_limit, c.max_force, c.steer_gain)
    return near, c.flee_weight * near * fx, c.flee_weight * near * fy, c.flee_weight * near * fz


@device
def reynolds_steering(i, px, py, pz, vx, vy, vz, acc, dim, space, c, inputs, aux, coh_scale, spin=True, seek=True,
                      predators=True, walls=True, roost=True, avoid=True, reynolds=True, clamped=True):  # fmt: skip
    """Steering acceleration of agent i [units/s^2] at position p with velocity v from its
    neighbour sums ``acc`` (:func:`reynolds_accumulate`), its predators, seek point, walls and
    obstacles; ``coh_scale`` multiplies the cohesion weight (the centrality factor, else 1);
    ``spin`` ... ``clamped``: the rules that may be on (:func:`reynolds_acceleration`).

    Also writes agent i's row of ``aux``: J tau (inertial-spin, else 0) and its
    speed limit for this step (raised while fleeing a predator).
    """
    sep_x, sep_y, sep_z, ali_x, ali_y, ali_z, coh_x, coh_y, coh_z, tau_x, tau_y, tau_z, n_ali, n_coh = acc

    w_sep = c.w_sep
    w_ali = c.w_ali
    w_coh = c.w_coh * coh_scale
    speed_limit = c.max_speed
    flee_x = flee_y = flee_z = 0.0
    if predators and inputs.predators.shape[0] > 0:
        near, flee_x, flee_y, flee_z = predator_response(px, py, pz, vx, vy, vz, inputs.predators, space, c)
        if near > 0.0:
            w_sep *= c.panic_sep
            w_ali *= c.panic_ali
            w_coh *= c.panic_coh
            speed_limit = flee_speed_limit(c.max_speed, c.flee_speed, near)

    if spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN and n_ali > 0:
        jn = c.spin_coupling * w_ali / n_ali  # J * mean
        aux[i, 0] = tau_x * jn
        aux[i, 1] = tau_y * jn
        aux[i, 2] = tau_z * jn
    else:
        aux[i, 0] = 0.0
        aux[i, 1] = 0.0
        aux[i, 2] = 0.0
    aux[i, 3] = speed_limit

    coh_x, coh_y, coh_z = cohesion_offset(coh_x, coh_y, coh_z, n_coh)
    sx = sy = sz = w_seek = 0.0
    seeking = False
    if seek:  # a seek weight, or an attack range (off: neither, so no seeking and no attack)
        if inputs.targets.shape[0] > 0:
            gx, gy, gz = displacement(px, py, pz, inputs.targets[i, 0], inputs.targets[i, 1], inputs.targets[i, 2],
                                      space)  # fmt: skip
        else:
            gx, gy, gz = displacement(px, py, pz, c.target_x, c.target_y, c.target_z, space)
        sx, sy, sz, seeking = seek_velocity(gx, gy, gz, c.max_speed, c.arrival_radius, c.stop_radius)
        w_seek = c.w_seek
        if gx * gx + gy * gy + gz * gz < c.attack_range2:
            # in attack range: seek differently weighted, alignment and cohesion off (the agent holds its point)
            w_seek *= c.attack_weight
            w_ali = 0.0
            w_coh = 0.0
        if c.w_seek == 0.0:
            seeking = False

    if reynolds and (not clamped or c.steering == STEERING_REYNOLDS):
        ms = c.max_speed
        mf = c.max_force
        g = c.steer_gain
        fx, fy, fz = steer(sep_x, sep_y, sep_z, vx, vy, vz, ms, mf, g)
        ax = w_sep * fx
        ay = w_sep * fy
        az = w_sep * fz
        if not (spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN):
            dxa, dya, dza = alignment_direction(ali_x, ali_y, ali_z, n_ali)
            fx, fy, fz = steer(dxa, dya, dza, vx, vy, vz, ms, mf, g)
            ax += w_ali * fx
            ay += w_ali * fy
            az += w_ali * fz
        fx, fy, fz = steer(coh_x, coh_y, coh_z, vx, vy, vz, ms, mf, g)
        ax += w_coh * fx
        ay += w_coh * fy
        az += w_coh * fz
        if seeking:
            fx, fy, fz = limit((sx - vx) * g, (sy - vy) * g, (sz - vz) * g, mf)
            ax += w_seek * fx
            ay += w_seek * fy
            az += w_seek * fz
    else:
        fx = fy = fz = 0.0
        if not (spin and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN):
            fx, fy, fz = alignment_raw(ali_x, ali_y, ali_z, n_ali, vx, vy, vz, c.steer_gain)
        ax = w_sep * sep_x + w_ali * fx + w_coh * coh_x
        ay = w_sep * sep_y + w_ali * fy + w_coh * coh_y
        az = w_sep * sep_z + w_ali * fz + w_coh * coh_z
        if seeking:
            ax += w_seek * (sx - vx) * c.steer_gain
            ay += w_seek * (sy - vy) * c.steer_gain
            az += w_seek * (sz - vz) * c.steer_gain
        ax, ay, az = limit(ax, ay, az, c.max_force)

    ax += flee_x
    ay += flee_y
    az += flee_z
    if walls and c.w_bounds != 0.0:
        bx, by, bz = wall_push(px, py, pz, dim, space, c.margin, c.turn_strength)
        ax += c.w_bounds * bx
        ay += c.w_bounds * by
        az += c.w_bounds * bz
    if roost and c.w_roost != 0.0:
        bx, by, bz = roost_pull(px, py, pz, vx, vy, vz, dim, c)
        ax += bx
        ay += by
        az += bz
    if avoid and c.w_avoid != 0.0:  # obstacles
        bx, by, bz = avoid_push(px, py, pz, vx, vy, vz, inputs.obstacle_shapes, inputs.obstacle_grid,
                                inputs.obstacle_cells, c.avoid_look_ahead, c.avoid_cap, c.planar)  # fmt: skip
        ax += c.w_avoid * bx
        ay += c.w_avoid * by
        az += c.w_avoid * bz
    return ax, ay, az


@device
def clamp_speed(vx, vy, vz, min_speed, max_speed):
    """Clamp |v| into [min_speed, max_speed]; a zero velocity stays zero."""
    s = norm(vx, vy, vz)
    if s > max_speed:
        f = max_speed / s
        return vx * f, vy * f, vz * f
    if s < min_speed and s > 0.0:
        f = min_speed / s
        return vx * f, vy * f, vz * f
    return vx, vy, vz


@device
def restore_speed(vx, vy, vz, target, fraction):
    """Move a speed below ``target`` the given fraction of the way up to it (direction kept)."""
    s = norm(vx, vy, vz)
    if s >= target or s == 0.0:
        return vx, vy, vz
    f = (s + (target - s) * fraction) / s
    return vx * f, vy * f, vz * f


@device
def integrate_agent(i, position, velocity, ax, ay, az, aux, spin, turn, wander, dim, space, dt, c, banked=True,
                    spinning=True, turning=True, restoring=True):  # fmt: skip
    """Phase two for agent i, in place.

    v += a dt (banked flight: its urges, spin[i, 1:3], step on with wander[i] when there are
    numbers, and :func:`banked_velocity` flies the step); (inertial-spin) s <- s + f (J tau - (eta/chi) s) with
    f = dt / (1/60 s), kept perpendicular to the old heading in 3D, and v
    rotated by f * limit(s/chi, max_turn); v rotated by this step's turn;
    speed relaxed toward the cruise speed (rules.cruise); |v| clamped to
    [min_speed, aux speed limit]; p += v dt (semi-implicit Euler). ``spin`` and ``turn``
    and ``wander`` are :class:`ReynoldsInputs`' arrays. ``banked`` ... ``restoring``: constants, the
    parts that may be on (:class:`~flocksim.models.reynolds_coefficients.PhaseTwoRules`, as for
    :func:`reynolds_acceleration`).
    """
    px, py, pz = load(position, i, dim)
    vx, vy, vz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(vx, vy, vz)
    if banked and c.banked:
        urge_forward = spin[i, 1]
        urge_lateral = spin[i, 2]
        if c.flight_wander and wander.shape[0] > 0:
            tau = c.flight_wander_time
            urge_forward = wander_step(urge_forward, wander[i, 0], c.flight_speed_wander, dt, tau)
            urge_lateral = wander_step(urge_lateral, wander[i, 1], c.flight_steer_wander, dt, tau)
            spin[i, 1] = urge_forward
            spin[i, 2] = urge_lateral
        vx, vy, vz, bank = banked_velocity(vx, vy, vz, ax, ay, az, spin[i, 0], urge_forward, urge_lateral, dim, dt, c)
        spin[i, 0] = bank
    else:
        vx += ax * dt
        vy += ay * dt
        vz += az * dt
    if spinning and c.alignment_mode == ALIGNMENT_INERTIAL_SPIN:
        frames = dt / FRAME
        sx, sy, sz = load(spin, i, 3)
        sx, sy, sz = spin_update(sx, sy, sz, aux[i, 0], aux[i, 1], aux[i, 2], c.spin_decay, frames)
        if dim == 3:
            sx, sy, sz = without_component_along(sx, sy, sz, hx, hy, hz)
        store(spin, i, 3, sx, sy, sz)
        rx, ry, rz = turn_vector(sx, sy, sz, c.chi, c.max_turn, frames)
        vx, vy, vz = rotate(vx, vy, vz, rx, ry, rz)
    if turning and turn.shape[0] > 0:
        vx, vy, vz = rotate(vx, vy, vz, turn[i, 0], turn[i, 1], turn[i, 2])
    if restoring and c.speed_restore > 0.0:
        vx, vy, vz = restore_speed(vx, vy, vz, c.cruise_speed, min(c.speed_restore * dt, 1.0))
    if dim == 2:
        vz = 0.0
    if c.planar:  # ground agents move in the x-z plane
        vy = 0.0
    vx, vy, vz = clamp_speed(vx, vy, vz, c.min_speed, aux[i, 3])
    px, py, pz = wrap(px + vx * dt, py + vy * dt, pz + vz * dt, space)
    store(velocity, i, dim, vx, vy, vz)
    store(position, i, dim, px, py, pz)


class ReynoldsModel:
    name = "reynolds"

    def __init__(self, params: ReynoldsParams):
        self.params = params
        self.space = space_of(params)
        self.coefficients = coefficients(params)
        self.predators = np.zeros((0, 3))
        """(P, 3) predator positions the next step's birds react to (set by the predator component)."""
        self.turn = np.zeros((0, 3))
        """(N, 3) rotation vectors [rad] of the next step's spontaneous turn, or (0, 3) for none."""
        self.detail = None
        """The next step's level of detail (a :class:`flocksim.components.detail.DetailPlan`, set by the
        detail component and consumed by the step), or None: every agent refreshes its steering."""
        self.targets = np.zeros((0, 3))
        """(N, 3) seek point of every agent in the next step (set by the targets component), or (0, 3):
        every agent seeks ``rules.seek.target``."""
        self.wander = np.zeros((0, 2))
        """(N, 2) standard normal numbers of the next step's flight urges (set by the wander component
        when ``rules.flight`` has urges), or (0, 2): the urges stay as they are."""
        self._aux = np.zeros((0, AUX_COLUMNS))
        self._obstacles: ObstacleSet | None = None
        self._obstacles_radius = 0.0
        self.game_obstacles: ObstacleSet | None = None
        """Obstacles set by a game (flocksim.game) in place of ``params.obstacles``, or None."""

    def inputs(self, state: FlockState) -> ReynoldsInputs:
        """The kernel inputs of the next step, checked against the state's size."""
        turn = self.turn
        if turn.shape[0] not in (0, state.n) or turn.shape[1:] != (3,):
            raise ValueError(f"model.turn must have shape (0, 3) or {(state.n, 3)}, got {turn.shape}")
        if self.predators.ndim != 2 or self.predators.shape[1] != 3:
            raise ValueError(f"model.predators must have shape (P, 3), got {self.predators.shape}")
        targets = self.targets
        if targets.shape[0] not in (0, state.n) or targets.shape[1:] != (3,):
            raise ValueError(f"model.targets must have shape (0, 3) or {(state.n, 3)}, got {targets.shape}")
        wander = self.wander
        if wander.shape[0] not in (0, state.n) or wander.shape[1:] != (2,):
            raise ValueError(f"model.wander must have shape (0, 2) or {(state.n, 2)}, got {wander.shape}")
        return ReynoldsInputs(
            state.spin,
            np.ascontiguousarray(self.predators, dtype=np.float64),
            np.ascontiguousarray(turn, dtype=np.float64),
            np.ascontiguousarray(targets, dtype=np.float64),
            np.ascontiguousarray(wander, dtype=np.float64),
            *self.obstacle_set(state),
        )

    def obstacle_set(self, state: FlockState) -> ObstacleSet:
        """The obstacles and their grid, rebuilt when an agent's body outgrows the grid's reach
        (those of :attr:`game_obstacles` when a game set them)."""
        if self.game_obstacles is not None:
            return self.game_obstacles
        r = max_body_radius(state.radius, state.alive)
        if self._obstacles is None or r > self._obstacles_radius:
            p = self.params
            self._obstacles = build_obstacle_set(p.obstacles, p.world.dim, p.agents.planar, r)
            self._obstacles_radius = r
        return self._obstacles

    def aux(self, n: int) -> np.ndarray:
        """Phase one -> phase two scratch buffer (N, AUX_COLUMNS), reused between steps."""
        if self._aux.shape[0] != n:
            self._aux = np.zeros((n, AUX_COLUMNS))
        return self._aux

    def neighbor_query(self) -> NeighborQuery:
        p = self.params
        r = p.rules
        radius = max(
            (rule.radius for rule in (r.separation, r.alignment, r.cohesion) if rule.weight > 0.0), default=0.0
        )
        return NeighborQuery(p.neighbors.mode, radius, p.neighbors.k, p.neighbors.method, "the largest rules.*.radius")

    def initial_state(self, rng: np.random.Generator) -> FlockState:
        a = self.params.agents
        state = initial_state(self.params.world, a.n, a.init, a.max_speed, rng, a.mass, a.radius)
        return crowd_initial_state(state, a, self.params.world, rng)
