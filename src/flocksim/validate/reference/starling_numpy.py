"""The banked starling model in plain NumPy, written apart from flocksim's kernels.

Hildenbrandt, Carere & Hemelrijk 2010 (Behav. Ecol. 21:1349; StarDisplay) and Hemelrijk &
Hildenbrandt 2011 (PLoS ONE 6:e22479): a bird on wings turns by banking, its lift grows with
the square of its speed, it is held to a cruise speed by thrust minus drag, it follows its
topological neighbours except those in a blind angle behind it, and it is turned back toward a
roosting area. The rule forms and values are flocksim's documented ones (docs/parameters.md,
docs/starlings.md, the ``rules.flight`` and ``rules.roost`` tables), which differ from
StarDisplay's in the ways docs/starlings.md tables; :data:`PRESET` holds the ``starlings-3d``
values with the birds' own urges off (they draw random numbers).

One step (:func:`step`), per bird i of position p, velocity v, unit heading h, bank angle b:

1. neighbours: the k nearest other birds, ties to the lower index, at any distance;
2. seen: a neighbour j is hidden from alignment and cohesion when the angle between p_j - p_i
   and -h is below half the blind angle (a cone about the tail); separation sees it;
3. steering a = clamp(w_s sum_{d_ij < r_s} (p_i - p_j)/max(d_ij^2, eps)
   + w_a (mean_seen v_j - v_i)/T + w_c (mean_seen p_j - p_i), max_force) + roost pull;
4. banked flight: side s = h x up (up = +y), body up u = s x h; the bank b follows
   atan(a.s / g), clipped to +-max_bank, at roll_in while it grows in size on its side and
   roll_out otherwise, never overshooting; dv = (thrust + a.h) h + (a.u) u
   + g (|v|/cruise)^2 (u cos b + s sin b) - g up, thrust = (cruise - |v|)/speed_time
   (times ((cruise - |v|)/band)^2 with a speed band; at most |cruise - |v||/dt in size);
5. v += dv dt, |v| clamped to [min_speed, max_speed], p += v dt.

Every bird is updated from the same snapshot. Written for clarity (all pairs), not speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

UP = np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class StarlingParams:
    """The model's parameters in SI units (m, s, rad where noted)."""

    dt: float = 1.0 / 60.0
    k: int = 7  # topological neighbours (Ballerini et al. 2008a; flocksim neighbors.k)
    blind_angle_deg: float = 90.0  # full angle of the cone behind (2 x 45 degrees in StarDisplay)
    w_sep: float = 1.0
    sep_radius: float = 1.5
    sep_eps: float = 1e-4
    w_ali: float = 3.0
    response_time: float = 1.0
    w_coh: float = 1.0
    max_force: float = 30.0
    min_speed: float = 5.0
    max_speed: float = 18.0
    cruise: float = 10.0
    speed_time: float = 1.0
    speed_band: float = 0.0
    gravity: float = 9.81
    max_bank_deg: float = 60.0
    roll_in: float = 10.0
    roll_out: float = 3.0
    roost_weight: float = 1.0
    roost_center: tuple[float, float, float] = (0.0, 0.0, 0.0)
    roost_radius: float = 100.0
    roost_pull: float = 3.0
    altitude_stiffness: float = 0.1
    max_climb: float = 2.0


PRESET = StarlingParams(speed_band=1.5)
"""``starlings-3d`` (500 birds, 7 neighbours, 90 degree blind angle, 100 m roost), urges off."""

LINEAR = replace(PRESET, speed_band=0.0)
"""The same with StarDisplay's linear speed control (relaxation in 1 s)."""


def neighbours(position: np.ndarray, k: int) -> np.ndarray:
    """(N, min(k, N-1)) indices of each bird's k nearest others, nearest first, ties to the lower index."""
    n = position.shape[0]
    diff = position[None, :, :] - position[:, None, :]
    d2 = (diff * diff).sum(axis=2)
    d2[np.arange(n), np.arange(n)] = np.inf
    order = np.argsort(d2, axis=1, kind="stable")
    return order[:, : min(k, n - 1)]


def seen(offset: np.ndarray, heading: np.ndarray, blind_angle_deg: float) -> np.ndarray:
    """Whether neighbours at ``offset`` (p_j - p_i, shape (..., 3)) are outside the blind cone behind
    a bird of unit ``heading`` (shape (..., 3)): the angle between the offset and -heading is at
    least half the blind angle. Nothing is hidden with no blind angle, no heading, or no offset."""
    if blind_angle_deg <= 0.0:
        return np.ones(offset.shape[:-1], dtype=bool)
    cos_half = math.cos(math.radians(blind_angle_deg) / 2.0)
    length = np.sqrt((offset * offset).sum(axis=-1))
    behind = -(offset * heading).sum(axis=-1)
    hidden = (behind > cos_half * length) & (length > 0.0) & ((heading != 0.0).any(axis=-1))
    return ~hidden


def unit(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` scaled to length 1 (zero rows stay zero)."""
    length = np.sqrt((v * v).sum(axis=-1, keepdims=True))
    return np.where(length > 0.0, v / np.where(length > 0.0, length, 1.0), 0.0)


def clamp_length(v: np.ndarray, most: float) -> np.ndarray:
    length = np.sqrt((v * v).sum(axis=-1, keepdims=True))
    return np.where(length > most, v * (most / np.where(length > 0.0, length, 1.0)), v)


def roost_pull(position: np.ndarray, velocity: np.ndarray, p: StarlingParams) -> np.ndarray:
    """Acceleration toward the roost (docs/starlings.md, "Banked flight above a roost"): beyond the
    radius R, at horizontal distance d from the centre, a sideways pull of size
    pull x min((d - R)/R, 1) x sin(angle from the horizontal heading to the centre), along the
    horizontal side h x up toward the centre; the full pull when the centre is behind, to the
    side h x up unless the centre lies more than 30 degrees off the tail the other way. Vertically
    a damped spring toward the centre's altitude, clipped to +-max_climb. Times the weight."""
    centre = np.asarray(p.roost_center, dtype=float)
    out = np.zeros_like(position)
    to_centre = (centre - position)[:, [0, 2]]
    d = np.sqrt((to_centre * to_centre).sum(axis=1))
    flat = velocity[:, [0, 2]]
    flat_speed = np.sqrt((flat * flat).sum(axis=1))
    for i in np.nonzero((d > p.roost_radius) & (flat_speed > 0.0))[0]:
        hx, hz = flat[i] / flat_speed[i]
        cx, cz = to_centre[i] / d[i]
        side = np.array([-hz, hx])  # (h x up) in the horizontal plane (x, z)
        sine = side[0] * cx + side[1] * cz
        if hx * cx + hz * cz < 0.0:  # centre behind
            sine = -1.0 if sine < -0.5 else 1.0
        strength = p.roost_pull * min((d[i] - p.roost_radius) / p.roost_radius, 1.0)
        out[i, 0] = strength * sine * side[0]
        out[i, 2] = strength * sine * side[1]
    k = p.altitude_stiffness
    climb = k * (centre[1] - position[:, 1]) - 2.0 * math.sqrt(k) * velocity[:, 1]
    out[:, 1] = np.clip(climb, -p.max_climb, p.max_climb)
    return p.roost_weight * out


def steering(position: np.ndarray, velocity: np.ndarray, p: StarlingParams) -> np.ndarray:
    """Each bird's steering acceleration [m/s^2] (step 3 above), roost included."""
    near = neighbours(position, p.k)
    offset = position[near] - position[:, None, :]  # (N, k, 3): p_j - p_i
    d2 = (offset * offset).sum(axis=2)
    close = d2 < p.sep_radius**2
    sep = -(offset / np.maximum(d2, p.sep_eps)[:, :, None] * close[:, :, None]).sum(axis=1)
    visible = seen(offset, unit(velocity)[:, None, :], p.blind_angle_deg)
    count = visible.sum(axis=1)[:, None]
    some = count > 0
    safe = np.maximum(count, 1)
    mean_v = (velocity[near] * visible[:, :, None]).sum(axis=1) / safe
    alignment = np.where(some, (mean_v - velocity) / p.response_time, 0.0)
    cohesion = np.where(some, (offset * visible[:, :, None]).sum(axis=1) / safe, 0.0)
    total = clamp_length(p.w_sep * sep + p.w_ali * alignment + p.w_coh * cohesion, p.max_force)
    if p.roost_weight != 0.0:
        total = total + roost_pull(position, velocity, p)
    return total


def flight_frame(heading: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(side, body up) of unit headings: side = h x up normalised (+z for a vertical heading),
    body up = side x h."""
    side = np.cross(heading, UP)
    length = np.sqrt((side * side).sum(axis=1, keepdims=True))
    side = np.where(length > 1e-9, side / np.where(length > 1e-9, length, 1.0), np.array([0.0, 0.0, 1.0]))
    return side, np.cross(side, heading)


def rolled(bank: np.ndarray, lateral: np.ndarray, p: StarlingParams) -> np.ndarray:
    """The bank after one step: toward atan(lateral/g) within +-max_bank, at roll_in while it grows
    on the same side, roll_out while it shrinks or changes side; at most the whole way."""
    most = math.radians(p.max_bank_deg)
    target = np.clip(np.arctan2(lateral, p.gravity), -most, most)
    growing = (np.abs(target) > np.abs(bank)) & (target * bank >= 0.0)
    rate = np.where(growing, p.roll_in, p.roll_out)
    return bank + (target - bank) * np.minimum(rate * p.dt, 1.0)


def thrust(speed: np.ndarray, p: StarlingParams) -> np.ndarray:
    """Thrust minus drag along the heading [m/s^2], at most |cruise - speed| / dt in size (on its own
    it never carries the speed past cruise in one step)."""
    delta = p.cruise - speed
    out = delta / p.speed_time
    if p.speed_band > 0.0:
        out = out * (delta / p.speed_band) ** 2
    return np.clip(out, -np.abs(delta) / p.dt, np.abs(delta) / p.dt)


def fly(velocity: np.ndarray, bank: np.ndarray, accel: np.ndarray, p: StarlingParams):
    """(velocity, bank) after one step of banked flight under steering ``accel`` (step 4 and the
    velocity part of step 5). A bird at rest stays at rest."""
    speed = np.sqrt((velocity * velocity).sum(axis=1))
    moving = speed > 0.0
    heading = unit(velocity)
    side, body_up = flight_frame(heading)
    forward = (accel * heading).sum(axis=1)
    lateral = (accel * side).sum(axis=1)
    vertical = (accel * body_up).sum(axis=1)
    new_bank = rolled(bank, lateral, p)
    lift = p.gravity * (speed / p.cruise) ** 2
    axis = body_up * np.cos(new_bank)[:, None] + side * np.sin(new_bank)[:, None]
    dv = (
        (thrust(speed, p) + forward)[:, None] * heading
        + vertical[:, None] * body_up
        + lift[:, None] * axis
        - p.gravity * UP
    )
    v = velocity + dv * p.dt
    s = np.sqrt((v * v).sum(axis=1, keepdims=True))
    factor = np.where(s > p.max_speed, p.max_speed / np.where(s > 0.0, s, 1.0), 1.0)
    factor = np.where((s < p.min_speed) & (s > 0.0), p.min_speed / np.where(s > 0.0, s, 1.0), factor)
    v = v * factor
    return np.where(moving[:, None], v, velocity), np.where(moving, new_bank, bank)


def step(position: np.ndarray, velocity: np.ndarray, bank: np.ndarray, p: StarlingParams = PRESET):
    """One step of the whole flock: (position, velocity, bank) after dt."""
    accel = steering(position, velocity, p)
    v, b = fly(velocity, bank, accel, p)
    return position + v * p.dt, v, b


def run(position, velocity, bank, steps: int, p: StarlingParams = PRESET, every: int = 1):
    """Positions, velocities and banks every ``every`` steps of ``steps`` (the start included)."""
    pos, vel, b = (np.array(position, dtype=float), np.array(velocity, dtype=float), np.array(bank, dtype=float))
    out = [(pos, vel, b)]
    for t in range(1, steps + 1):
        pos, vel, b = step(pos, vel, b, p)
        if t % every == 0:
            out.append((pos, vel, b))
    return out
