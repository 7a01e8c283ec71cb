"""Reynolds boids (Reynolds 1987, 1999) with the rule forms of SPEC 3.

Per agent, from one read-only snapshot: separation, alignment and cohesion
over the neighbour list (each within its own radius in metric mode; in
topological mode alignment and cohesion use all k and separation those of
them within its radius), seek toward a target with arrival, and a soft-wall
push. The forces combine per ``rules.steering`` (SPEC 3.4). Integration
(SPEC 1.3): v += a dt, |v| clamped to [min_speed, max_speed], p += v dt.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flocksim.initial import initial_state
from flocksim.kernels.alignment import alignment_direction, alignment_raw
from flocksim.kernels.bounds import wall_push
from flocksim.kernels.cohesion import cohesion_offset
from flocksim.kernels.compile import device
from flocksim.kernels.seek import seek_velocity
from flocksim.kernels.separation import SEPARATION_MINION, SEPARATION_RAW, separation_term
from flocksim.kernels.steering import STEERING_CLAMPED_SUM, STEERING_REYNOLDS, steer
from flocksim.kernels.vector import limit, load, norm, store
from flocksim.models.base import NeighborQuery, space_of
from flocksim.params import ReynoldsParams
from flocksim.space import displacement, wrap
from flocksim.state import FlockState


class ReynoldsCoefficients(NamedTuple):
    """Everything the kernel needs, flat (radii squared)."""

    steering: int
    topological: bool
    max_speed: float
    min_speed: float
    max_force: float
    w_sep: float
    sep_radius2: float
    sep_form: int
    sep_eps: float
    sep_min_distance: float
    w_ali: float
    ali_radius2: float
    w_coh: float
    coh_radius2: float
    w_seek: float
    target_x: float
    target_y: float
    target_z: float
    arrival_radius: float
    stop_radius: float
    w_bounds: float
    margin: float
    turn_strength: float


def coefficients(p: ReynoldsParams) -> ReynoldsCoefficients:
    r = p.rules
    target = list(r.seek.target) + [0.0] * (3 - len(r.seek.target))
    if p.world.dim == 2:
        target[2] = 0.0
    return ReynoldsCoefficients(
        steering=STEERING_REYNOLDS if r.steering == "reynolds" else STEERING_CLAMPED_SUM,
        topological=p.neighbors.mode == "topological",
        max_speed=p.agents.max_speed,
        min_speed=p.agents.min_speed,
        max_force=p.agents.max_force,
        w_sep=r.separation.weight,
        sep_radius2=r.separation.radius**2,
        sep_form=SEPARATION_RAW if r.separation.form == "raw" else SEPARATION_MINION,
        sep_eps=r.separation.eps,
        sep_min_distance=r.separation.min_distance,
        w_ali=r.alignment.weight,
        ali_radius2=r.alignment.radius**2,
        w_coh=r.cohesion.weight,
        coh_radius2=r.cohesion.radius**2,
        w_seek=r.seek.weight,
        target_x=target[0],
        target_y=target[1],
        target_z=target[2],
        arrival_radius=r.seek.arrival_radius,
        stop_radius=r.seek.stop_radius,
        w_bounds=r.bounds.weight,
        margin=p.world.bounds.margin,
        turn_strength=p.world.bounds.turn_strength,
    )


@device
def reynolds_acceleration(i, position, velocity, start, index, dim, space, c):
    """Steering acceleration of agent i [units/s^2] from the snapshot (position, velocity)."""
    px, py, pz = load(position, i, dim)
    vx, vy, vz = load(velocity, i, dim)
    sep_x = sep_y = sep_z = 0.0
    ali_x = ali_y = ali_z = 0.0
    coh_x = coh_y = coh_z = 0.0
    n_ali = 0
    n_coh = 0
    for t in range(start[i], start[i + 1]):
        j = index[t]
        qx, qy, qz = load(position, j, dim)
        dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
        d2 = dx * dx + dy * dy + dz * dz
        if d2 < c.sep_radius2:
            tx, ty, tz = separation_term(dx, dy, dz, d2, c.sep_form, c.sep_eps, c.sep_min_distance)
            sep_x += tx
            sep_y += ty
            sep_z += tz
        if c.topological or d2 <= c.ali_radius2:
            ux, uy, uz = load(velocity, j, dim)
            ali_x += ux
            ali_y += uy
            ali_z += uz
            n_ali += 1
        if c.topological or d2 <= c.coh_radius2:
            coh_x += dx
            coh_y += dy
            coh_z += dz
            n_coh += 1

    coh_x, coh_y, coh_z = cohesion_offset(coh_x, coh_y, coh_z, n_coh)
    gx, gy, gz = displacement(px, py, pz, c.target_x, c.target_y, c.target_z, space)
    sx, sy, sz, seeking = seek_velocity(gx, gy, gz, c.max_speed, c.arrival_radius, c.stop_radius)
    if c.w_seek == 0.0:
        seeking = False

    if c.steering == STEERING_REYNOLDS:
        ms = c.max_speed
        mf = c.max_force
        fx, fy, fz = steer(sep_x, sep_y, sep_z, vx, vy, vz, ms, mf)
        ax = c.w_sep * fx
        ay = c.w_sep * fy
        az = c.w_sep * fz
        dxa, dya, dza = alignment_direction(ali_x, ali_y, ali_z, n_ali)
        fx, fy, fz = steer(dxa, dya, dza, vx, vy, vz, ms, mf)
        ax += c.w_ali * fx
        ay += c.w_ali * fy
        az += c.w_ali * fz
        fx, fy, fz = steer(coh_x, coh_y, coh_z, vx, vy, vz, ms, mf)
        ax += c.w_coh * fx
        ay += c.w_coh * fy
        az += c.w_coh * fz
        if seeking:
            fx, fy, fz = limit(sx - vx, sy - vy, sz - vz, mf)
            ax += c.w_seek * fx
            ay += c.w_seek * fy
            az += c.w_seek * fz
    else:
        fx, fy, fz = alignment_raw(ali_x, ali_y, ali_z, n_ali, vx, vy, vz)
        ax = c.w_sep * sep_x + c.w_ali * fx + c.w_coh * coh_x
        ay = c.w_sep * sep_y + c.w_ali * fy + c.w_coh * coh_y
        az = c.w_sep * sep_z + c.w_ali * fz + c.w_coh * coh_z
        if seeking:
            ax += c.w_seek * (sx - vx)
            ay += c.w_seek * (sy - vy)
            az += c.w_seek * (sz - vz)
        ax, ay, az = limit(ax, ay, az, c.max_force)

    if c.w_bounds != 0.0:
        bx, by, bz = wall_push(px, py, pz, dim, space, c.margin, c.turn_strength)
        ax += c.w_bounds * bx
        ay += c.w_bounds * by
        az += c.w_bounds * bz
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
def integrate_agent(i, position, velocity, ax, ay, az, dim, space, dt, min_speed, max_speed):
    """Semi-implicit Euler step of agent i (SPEC 1.3), in place."""
    px, py, pz = load(position, i, dim)
    vx, vy, vz = load(velocity, i, dim)
    vx, vy, vz = clamp_speed(vx + ax * dt, vy + ay * dt, vz + az * dt, min_speed, max_speed)
    px, py, pz = wrap(px + vx * dt, py + vy * dt, pz + vz * dt, space)
    store(velocity, i, dim, vx, vy, vz)
    store(position, i, dim, px, py, pz)


class ReynoldsModel:
    name = "reynolds"

    def __init__(self, params: ReynoldsParams):
        self.params = params
        self.space = space_of(params)
        self.coefficients = coefficients(params)

    def neighbor_query(self) -> NeighborQuery:
        p = self.params
        r = p.rules
        radius = max(
            (rule.radius for rule in (r.separation, r.alignment, r.cohesion) if rule.weight > 0.0), default=0.0
        )
        return NeighborQuery(p.neighbors.mode, radius, p.neighbors.k, p.neighbors.method)

    def initial_state(self, rng: np.random.Generator) -> FlockState:
        a = self.params.agents
        return initial_state(self.params.world, a.n, a.init, a.max_speed, rng, a.mass, a.radius)
