"""Banked flight and roost attraction (Hildenbrandt, Carere & Hemelrijk 2010, StarDisplay).

A banked bird cannot push itself sideways: to turn it rolls, and the horizontal part of its tilted
lift bends its path. :func:`banked_velocity` is one time step of that flight for one bird (see
``rules.flight`` in docs/parameters.md), with its own wandering urges (:func:`wander_step`) and
a speed control that is soft near cruise (:func:`speed_control`); :func:`roost_pull` is the
attraction to the roosting area that replaces walls. Units are the world's (m, m/s, s in the
starling presets); up is +y.
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import block_device


@block_device
def flight_frame(hx, hy, hz, dim):
    """(side, up) unit vectors of a bird with unit heading h: side = h x up (up = +y), up' = side x h;
    in 2D side = h turned by -90 degrees and up' = 0. A vertical heading takes side = +z."""
    if dim == 2:
        return hy, -hx, 0.0, 0.0, 0.0, 0.0
    sx = -hz
    sz = hx
    n = math.sqrt(sx * sx + sz * sz)
    if n > 1e-9:
        sx /= n
        sz /= n
    else:
        sx = 0.0
        sz = 1.0
    # up' = side x h with side = (sx, 0, sz)
    ux = -sz * hy
    uy = sz * hx - sx * hz
    uz = sx * hy
    return sx, 0.0, sz, ux, uy, uz


@block_device
def rolled_bank(bank, lateral, gravity, max_bank, roll_in, roll_out, dt):
    """The bank angle [rad] after dt: it follows the target atan(lateral / gravity) (clipped to
    +-max_bank) at roll_in [1/s] while its size grows toward the target, roll_out while it shrinks
    (including a change of side), never overshooting."""
    target = math.atan2(lateral, gravity)
    if target > max_bank:
        target = max_bank
    elif target < -max_bank:
        target = -max_bank
    growing = abs(target) > abs(bank) and target * bank >= 0.0
    rate = roll_in if growing else roll_out
    return bank + (target - bank) * min(rate * dt, 1.0)


@block_device
def speed_control(speed, dt, c):
    """Thrust minus drag [units/s^2] of a bird flying at ``speed``: (cruise - speed) / speed_time,
    times ((cruise - speed) / speed_band)^2 when speed_band > 0, so that within about speed_band
    of cruise the speed is held only weakly (marginal speed control, Cavagna et al. 2022, Nat.
    Commun. 13:2315) and farther off more strongly than the linear law. Its rate is capped at
    1/dt, so that on its own it never carries the speed past cruise in one step of dt [s] (the
    explicit step of a stiff law would oscillate and grow); at the presets' dt the cap binds only
    tens of m/s off cruise."""
    delta = c.flight_cruise - speed
    thrust = delta / c.flight_speed_time
    band = c.flight_speed_band
    if band > 0.0:
        ratio = delta / band
        thrust *= ratio * ratio
    limit = abs(delta) / dt
    return min(max(thrust, -limit), limit)


@block_device
def wander_step(urge, normal, sd, dt, wander_time):
    """An Ornstein-Uhlenbeck urge [units/s^2] after dt, updated exactly: urge e^(-dt/wander_time)
    + sd sqrt(1 - e^(-2 dt/wander_time)) normal, with ``normal`` a standard normal number; its
    stationary standard deviation is sd and its correlation time wander_time [s]."""
    decay = math.exp(-dt / wander_time)
    return urge * decay + sd * math.sqrt(1.0 - decay * decay) * normal


@block_device
def banked_velocity(vx, vy, vz, ax, ay, az, bank, wander_forward, wander_lateral, dim, dt, c):
    """One step of banked flight: (vx, vy, vz, bank) after dt from velocity v, steering
    acceleration a [units/s^2], bank angle [rad] (positive: lift tilted toward side) and the
    bird's own urges [units/s^2] to speed up (``wander_forward``) and to turn (``wander_lateral``).

    The steering's lateral part plus the turning urge only sets the target bank; its forward and
    vertical parts act directly; lift g (|v|/cruise)^2 along the banked body axis, gravity -g y
    and thrust minus drag (:func:`speed_control`) plus the speed urge along the heading are added
    (``rules.flight``). In 2D the lift's lateral part is g (|v|/cruise)^2 tan(bank) (a level turn
    seen from above). A bird at rest stays at rest."""
    speed = math.sqrt(vx * vx + vy * vy + vz * vz)
    if speed == 0.0:
        return vx, vy, vz, bank
    hx = vx / speed
    hy = vy / speed
    hz = vz / speed
    sx, sy, sz, ux, uy, uz = flight_frame(hx, hy, hz, dim)
    forward = ax * hx + ay * hy + az * hz
    lateral = ax * sx + ay * sy + az * sz + wander_lateral
    vertical = ax * ux + ay * uy + az * uz
    g = c.flight_gravity
    bank = rolled_bank(bank, lateral, g, c.flight_max_bank, c.flight_roll_in, c.flight_roll_out, dt)
    ratio = speed / c.flight_cruise
    lift = g * ratio * ratio
    thrust = speed_control(speed, dt, c) + forward + wander_forward
    if dim == 2:
        side = lift * math.tan(bank)
        return vx + (thrust * hx + side * sx) * dt, vy + (thrust * hy + side * sy) * dt, 0.0, bank
    cb = math.cos(bank)
    sb = math.sin(bank)
    bx = ux * cb + sx * sb
    by = uy * cb + sy * sb
    bz = uz * cb + sz * sb
    dvx = thrust * hx + vertical * ux + lift * bx
    dvy = thrust * hy + vertical * uy + lift * by - g
    dvz = thrust * hz + vertical * uz + lift * bz
    return vx + dvx * dt, vy + dvy * dt, vz + dvz * dt, bank


@block_device
def roost_pull(px, py, pz, vx, vy, vz, dim, c):
    """Acceleration [units/s^2] toward the roosting area of a bird at p with velocity v
    (``rules.roost``).

    Horizontal: beyond the roost radius the bird is asked to turn toward the centre, with a
    sideways acceleration of pull x min((d - radius) / radius, 1) times the sine of the angle
    between its horizontal heading and the centre (the full pull, on the nearer side, when the
    centre is behind it), so a roost never brakes a bird, it turns it. Vertical (3D): a damped
    spring toward the centre's altitude, altitude_stiffness x (center_y - y) - 2
    sqrt(altitude_stiffness) v_y, clipped to +-max_climb."""
    w = c.w_roost
    dx = c.roost_x - px
    if dim == 2:
        dz = c.roost_y - py  # the plane's second axis
        hx, hz = vx, vy
    else:
        dz = c.roost_z - pz
        hx, hz = vx, vz
    fx = fz = fy = 0.0
    horizontal = math.sqrt(dx * dx + dz * dz)
    flat = math.sqrt(hx * hx + hz * hz)
    r = c.roost_radius
    if horizontal > r and flat > 0.0:
        hx /= flat
        hz /= flat
        strength = c.roost_pull * min((horizontal - r) / r, 1.0)
        # sine of the angle from the horizontal heading (x, z) to the centre: the centre's direction
        # along the side (-z, x), the flight frame's h x up
        sine = (dz * hx - dx * hz) / horizontal
        if (dx * hx + dz * hz) < 0.0:
            # the centre is behind: turn at full pull, to the side (the positive one unless the centre
            # lies more than 30 degrees off the tail the other way), so birds that fly straight away
            # from it turn the same way rather than splitting the flock
            sine = -1.0 if sine < -0.5 else 1.0
        fx = -strength * sine * hz
        fz = strength * sine * hx
    if dim == 2:
        return w * fx, w * fz, 0.0
    k = c.roost_stiffness
    climb = k * (c.roost_y - py) - 2.0 * math.sqrt(k) * vy
    m = c.roost_max_climb
    fy = max(-m, min(m, climb))
    return w * fx, w * fy, w * fz
