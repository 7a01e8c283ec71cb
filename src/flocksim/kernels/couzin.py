"""The Couzin rule (Couzin et al. 2002) as scalar kernel functions.

For agent i with unit heading h and a neighbour j at offset r_ij = p_j - p_i
(minimum image), distance d:

- j is seen unless it lies in the blind rear cone: seen when
  h . r_ij >= cos(alpha/2) d (alpha = field of perception; 360 deg sees all);
  unseen neighbours take part in no zone, repulsion included;
- zone of repulsion d < r_r; orientation r_r <= d < r_r + delta_r_o; attraction
  r_r + delta_r_o <= d < r_r + delta_r_o + delta_r_a (the agent is in none of its zones);
- repulsion takes priority: with any neighbour in it, d_i = -sum r_ij/|r_ij|
  (a coincident neighbour counts but adds no direction); otherwise
  d_o = sum h_j, d_a = sum r_ij/|r_ij|, and d_i = d_o, d_a, or
  (d_o/|d_o| + d_a/|d_a|)/2 when both zones hold neighbours; with nobody seen
  (or a vanishing sum) d_i = h;
- noise (pre-drawn g ~ N(0, 1), w ~ U[0, 1)): 2D: d_i rotated by sigma g; 3D: d_i
  tilted by |sigma g| at azimuth 2 pi w (a Gaussian angular deviation, isotropic
  around d_i);
- turn: if the angle between h and d_i is at most theta tau the new heading is d_i,
  otherwise h turns by theta tau toward d_i (about h x d_i; exactly opposite: about
  a fixed perpendicular axis, +z in 2D).
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.rotation import rotate
from flocksim.kernels.sphere import perpendicular_basis, rotate_in_plane, tilt
from flocksim.kernels.vector import load, normalize_or_zero
from flocksim.space import displacement


@device
def seen(hx, hy, hz, dx, dy, dz, d, cos_half_fov, all_round):
    """True if the offset (dx, dy, dz) of length d is inside the field of perception of heading h."""
    return all_round or hx * dx + hy * dy + hz * dz >= cos_half_fov * d


@device
def couzin_desired(i, position, velocity, start, index, dim, space, c):
    """Unit desired direction d_i of agent i from the snapshot (repulsion first, then orientation
    and attraction); the agent's own heading when nothing is seen."""
    px, py, pz = load(position, i, dim)
    vx, vy, vz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(vx, vy, vz)
    if hx == 0.0 and hy == 0.0 and hz == 0.0:
        hx = 1.0
    n_r = 0
    n_o = 0
    n_a = 0
    rx = ry = rz = 0.0
    ox = oy = oz = 0.0
    ax = ay = az = 0.0
    for t in range(start[i], start[i + 1]):
        j = index[t]
        qx, qy, qz = load(position, j, dim)
        dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
        d = math.sqrt(dx * dx + dy * dy + dz * dz)
        if d >= c.r_a or not seen(hx, hy, hz, dx, dy, dz, d, c.cos_half_fov, c.all_round):
            continue
        ux, uy, uz = normalize_or_zero(dx, dy, dz)
        if d < c.r_r:
            n_r += 1
            rx -= ux
            ry -= uy
            rz -= uz
        elif d < c.r_o:
            n_o += 1
            wx, wy, wz = load(velocity, j, dim)
            wx, wy, wz = normalize_or_zero(wx, wy, wz)
            ox += wx
            oy += wy
            oz += wz
        else:
            n_a += 1
            ax += ux
            ay += uy
            az += uz
    if n_r > 0:
        gx, gy, gz = rx, ry, rz
    elif n_o > 0 and n_a > 0:
        ox, oy, oz = normalize_or_zero(ox, oy, oz)
        ax, ay, az = normalize_or_zero(ax, ay, az)
        gx, gy, gz = 0.5 * (ox + ax), 0.5 * (oy + ay), 0.5 * (oz + az)
    elif n_o > 0:
        gx, gy, gz = ox, oy, oz
    elif n_a > 0:
        gx, gy, gz = ax, ay, az
    else:
        gx, gy, gz = hx, hy, hz
    gx, gy, gz = normalize_or_zero(gx, gy, gz)
    if gx == 0.0 and gy == 0.0 and gz == 0.0:
        return hx, hy, hz
    return gx, gy, gz


@device
def angular_noise(gx, gy, gz, dim, sigma, g, w):
    """Unit direction g perturbed by a Gaussian angular deviation sigma * g (see the module text)."""
    if dim == 2:
        x, y = rotate_in_plane(gx, gy, sigma * g)
        return x, y, 0.0
    return tilt(gx, gy, gz, abs(sigma * g), 2.0 * math.pi * w)


@device
def turn_toward(hx, hy, hz, gx, gy, gz, dim, max_angle):
    """Unit heading h turned toward the unit direction g by at most ``max_angle`` [rad]."""
    cos_angle = min(1.0, max(-1.0, hx * gx + hy * gy + hz * gz))
    if math.acos(cos_angle) <= max_angle:
        return gx, gy, gz
    kx, ky, kz = hy * gz - hz * gy, hz * gx - hx * gz, hx * gy - hy * gx
    kx, ky, kz = normalize_or_zero(kx, ky, kz)
    if kx == 0.0 and ky == 0.0 and kz == 0.0:  # exactly opposite: any perpendicular axis turns toward g
        if dim == 2:
            kz = 1.0
        else:
            kx, ky, kz, _, _, _ = perpendicular_basis(hx, hy, hz)
    x, y, z = rotate(hx, hy, hz, kx * max_angle, ky * max_angle, kz * max_angle)
    return normalize_or_zero(x, y, z)


@device
def couzin_heading(i, position, velocity, start, index, dim, space, c, noise):
    """New unit heading of agent i: desired direction, noise from row i of ``noise`` (N, 2), capped turn."""
    vx, vy, vz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(vx, vy, vz)
    if hx == 0.0 and hy == 0.0 and hz == 0.0:
        hx = 1.0
    gx, gy, gz = couzin_desired(i, position, velocity, start, index, dim, space, c)
    gx, gy, gz = angular_noise(gx, gy, gz, dim, c.sigma, noise[i, 0], noise[i, 1])
    return turn_toward(hx, hy, hz, gx, gy, gz, dim, c.max_turn)
