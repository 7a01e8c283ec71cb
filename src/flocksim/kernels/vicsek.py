"""The Vicsek rule (Vicsek et al. 1995) as scalar kernel functions.

The particle is its own neighbour: the mean direction sums its own unit heading
and those of every neighbour within r (the neighbour list never holds the agent
itself, so the kernel adds it). Noise comes pre-drawn: two numbers u, w uniform in
[0, 1) per agent and step.

- 2D: theta_i(t+1) = atan2(mean) + eta (u - 1/2), uniform in [-eta/2, eta/2).
- 3D: the new heading is uniform on the spherical cap of half-angle eta/2 around the
  mean direction: cos(theta) = 1 - u (1 - cos(eta/2)), azimuth 2 pi w. eta = 2 pi
  gives the whole sphere, like 2D's whole circle (Chate et al. 2008 use the same
  solid-angle noise).

A sum of headings that vanishes (cancelling neighbours) keeps the agent's own
heading as the mean direction, and an agent without heading takes +x.

The move (phase two) follows ``vicsek.update``: "paper" advances the position along the
heading the particle had at step t, x(t+1) = x(t) + v0 dt h(t) (Vicsek et al. 1995:
x(t+1) = x(t) + v(t) dt), then stores the new heading; "forward" advances it along the
new heading h(t+1) (:func:`flocksim.kernels.constant_speed.advance`).
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.constant_speed import advance
from flocksim.kernels.sphere import tilt
from flocksim.kernels.vector import load, normalize_or_zero, store
from flocksim.space import wrap


@device
def vicsek_noisy_heading(mx, my, mz, dim, eta, u, w):
    """New unit heading from the unit mean direction m and the pre-drawn uniforms u, w."""
    if dim == 2:
        angle = math.atan2(my, mx) + eta * (u - 0.5)
        return math.cos(angle), math.sin(angle), 0.0
    cos_theta = 1.0 - u * (1.0 - math.cos(0.5 * eta))
    theta = math.acos(min(1.0, max(-1.0, cos_theta)))
    return tilt(mx, my, mz, theta, 2.0 * math.pi * w)


@device
def own_heading(i, velocity, dim):
    """Unit heading of agent i at step t: its velocity's direction, +x for an agent at rest."""
    vx, vy, vz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(vx, vy, vz)
    if hx == 0.0 and hy == 0.0 and hz == 0.0:
        hx = 1.0
    return hx, hy, hz


@device
def vicsek_mean_direction(i, velocity, start, index, dim):
    """Unit direction of the sum of unit headings of agent i and its neighbour-list row."""
    hx, hy, hz = own_heading(i, velocity, dim)
    sx, sy, sz = hx, hy, hz
    for t in range(start[i], start[i + 1]):
        vx, vy, vz = load(velocity, index[t], dim)
        ux, uy, uz = normalize_or_zero(vx, vy, vz)
        sx += ux
        sy += uy
        sz += uz
    mx, my, mz = normalize_or_zero(sx, sy, sz)
    if mx == 0.0 and my == 0.0 and mz == 0.0:
        return hx, hy, hz
    return mx, my, mz


@device
def vicsek_heading(i, velocity, start, index, dim, eta, noise):
    """New unit heading of agent i: its mean direction with the noise of row i of ``noise`` (N, 2)."""
    mx, my, mz = vicsek_mean_direction(i, velocity, start, index, dim)
    return vicsek_noisy_heading(mx, my, mz, dim, eta, noise[i, 0], noise[i, 1])


@device
def vicsek_move(i, position, velocity, hx, hy, hz, dim, space, speed, dt, paper):
    """Phase two for agent i with new unit heading h: p <- wrap(p + speed dt h_old) when ``paper``
    (h_old: its heading at step t), p <- wrap(p + speed dt h) otherwise; then v <- speed h [units/s]."""
    if not paper:
        advance(i, position, velocity, hx, hy, hz, dim, space, speed, dt)
        return
    ox, oy, oz = own_heading(i, velocity, dim)
    px, py, pz = load(position, i, dim)
    step = speed * dt
    px, py, pz = wrap(px + step * ox, py + step * oy, pz + step * oz, space)
    store(position, i, dim, px, py, pz)
    store(velocity, i, dim, speed * hx, speed * hy, speed * hz)
