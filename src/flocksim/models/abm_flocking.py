"""The cross-framework Flocking benchmark model (Agents.jl, Mesa, NetLogo, MASON).

Every bird, reading step t: neighbours within ``vision``; cohere = sum(p_j - p_i);
separate = -sum(p_j - p_i) over neighbours closer than ``separation``;
match = sum(h_j) of unit headings; each divided by max(count, 1) and multiplied
by 0.03, 0.015, 0.05 (defaults); h <- normalize(h + cohere + separate + match);
p <- wrap(p + speed * h). Displacements use the minimum image. Updates are
synchronous (every bird reads step t), unlike the original's random sequential
activation. A zero sum keeps the old heading.

Metric sums are exact: every term is rounded toward zero to a multiple of a
fixed quantum (displacements: 2^(e - b) units with vision <= 2^e; unit headings:
2^-b; b <= 40 bits, fewer for huge N so no sum can overflow) and added as a
64-bit integer, the deterministic fixed-point accumulation of GPU molecular
dynamics codes. The sums then do not depend on the order neighbours are
visited, so every search path (brute force, coherent grid, any thread count)
gives bitwise the same step. The rounding is below 1e-11 of the vision per
term. Topological sums stay in floating point, added in (distance, id) order,
which every path produces.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from flocksim.initial import initial_state
from flocksim.kernels.compile import device
from flocksim.kernels.vector import load, normalize_or_zero, store
from flocksim.models.base import NeighborQuery, space_of
from flocksim.params import AbmFlockingParams
from flocksim.space import displacement, wrap
from flocksim.state import FlockState


class AbmCoefficients(NamedTuple):
    dim: int
    topological: bool
    vision2: float
    separation2: float
    speed: float
    cohere: float
    separate: float
    match: float


def coefficients(p: AbmFlockingParams) -> AbmCoefficients:
    f = p.flocking
    return AbmCoefficients(
        dim=p.world.dim,
        topological=p.neighbors.mode == "topological",
        vision2=f.vision**2,
        separation2=f.separation**2,
        speed=f.speed,
        cohere=f.cohere_factor,
        separate=f.separate_factor,
        match=f.match_factor,
    )


FIXED_BITS = 40
"""Bits below the unit of a fixed-point term (fewer when N is huge, see :func:`fixed_point_scales`)."""


class FixedPointScales(NamedTuple):
    """Multipliers that turn displacements [units] and unit headings into 64-bit integers, and back."""

    displacement: float
    heading: float
    inv_displacement: float
    inv_heading: float


def fixed_point_scales(vision: float, n: int) -> FixedPointScales:
    """Scales for metric sums over at most ``n`` neighbours, each displacement at most
    ``vision`` long: every term is below 2^b in magnitude and n * 2^b < 2^62."""
    bits = min(FIXED_BITS, 61 - max(n, 1).bit_length())
    exponent = math.ceil(math.log2(vision))
    d = math.ldexp(1.0, bits - exponent)
    h = math.ldexp(1.0, bits)
    return FixedPointScales(d, h, 1.0 / d, 1.0 / h)


ABM_EMPTY_FIXED = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
"""Metric accumulator of one bird in fixed point: (count, cohere xyz, separate xyz, match xyz)."""


@device
def to_fixed(x, scale):
    """x * scale rounded toward zero, as a 64-bit integer."""
    return np.int64(x * scale)


@device
def abm_accumulate_fixed(acc, ix, iy, iz, d2, qx, qy, qz, other, c):
    """Add candidate j to the fixed-point acc if it lies within the vision: i = its
    displacement from bird i in fixed point (:func:`to_fixed`), d2 the squared length
    of the float displacement, q its unit heading in fixed point, ``other``: j is not i.

    The reference path calls this per neighbour-list entry; the grid kernels
    (engines/cpu_abm.py) write the same rule out on scalar locals, branch-free with
    the same masks, and the parity tests hold them bitwise equal.
    """
    count, cx, cy, cz, sx, sy, sz, mx, my, mz = acc
    inside = other & (d2 <= c.vision2)
    near = -np.int64(inside)  # all ones or zero
    close = -np.int64(inside & (d2 < c.separation2))
    return (
        count + np.int64(inside),
        cx + (ix & near),
        cy + (iy & near),
        cz + (iz & near),
        sx - (ix & close),
        sy - (iy & close),
        sz - (iz & close),
        mx + (qx & near),
        my + (qy & near),
        mz + (qz & near),
    )


@device
def abm_finish_fixed(hx, hy, hz, acc, c, scales):
    """New unit heading from the old one and the fixed-point sums."""
    count, cx, cy, cz, sx, sy, sz, mx, my, mz = acc
    d = scales.inv_displacement
    h = scales.inv_heading
    sums = (count, cx * d, cy * d, cz * d, sx * d, sy * d, sz * d, mx * h, my * h, mz * h)
    return abm_finish(hx, hy, hz, sums, c)


ABM_EMPTY = (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
"""Topological accumulator of one bird: (count, cohere xyz, separate xyz, match xyz)."""


@device
def abm_accumulate(acc, dx, dy, dz, d2, ux, uy, uz, c):
    """Add topological neighbour j (displacement d from bird i, squared length d2,
    unit heading u) to acc. Every search path calls this in (distance, id) order,
    so all paths give bitwise-equal sums."""
    count, cx, cy, cz, sx, sy, sz, mx, my, mz = acc
    close = d2 < c.separation2
    return (
        count + 1,
        cx + dx,
        cy + dy,
        cz + dz,
        sx - dx if close else sx,
        sy - dy if close else sy,
        sz - dz if close else sz,
        mx + ux,
        my + uy,
        mz + uz,
    )


@device
def abm_finish(hx, hy, hz, acc, c):
    """New unit heading from the old unit heading h and the accumulated sums."""
    count, cx, cy, cz, sx, sy, sz, mx, my, mz = acc
    inv = 1.0 / max(count, 1)
    nx = hx + (cx * c.cohere + sx * c.separate + mx * c.match) * inv
    ny = hy + (cy * c.cohere + sy * c.separate + my * c.match) * inv
    nz = hz + (cz * c.cohere + sz * c.separate + mz * c.match) * inv
    nx, ny, nz = normalize_or_zero(nx, ny, nz)
    if nx == 0.0 and ny == 0.0 and nz == 0.0:
        return hx, hy, hz
    return nx, ny, nz


@device
def abm_neighbor(px, py, pz, j, position, velocity, dim, space):
    """Displacement from p to bird j (minimum image) and j's unit heading."""
    qx, qy, qz = load(position, j, dim)
    dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
    ux, uy, uz = load(velocity, j, dim)
    ux, uy, uz = normalize_or_zero(ux, uy, uz)
    return dx, dy, dz, ux, uy, uz


@device
def abm_heading(i, position, velocity, start, index, dim, space, c, scales):
    """New unit heading of bird i from the snapshot, over its neighbour-list row
    (metric: fixed-point sums; topological: rows in (distance, id) order)."""
    px, py, pz = load(position, i, dim)
    hx, hy, hz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(hx, hy, hz)
    if not c.topological:
        fixed = ABM_EMPTY_FIXED
        for t in range(start[i], start[i + 1]):
            dx, dy, dz, ux, uy, uz = abm_neighbor(px, py, pz, index[t], position, velocity, dim, space)
            d, u = scales.displacement, scales.heading
            fixed = abm_accumulate_fixed(fixed, to_fixed(dx, d), to_fixed(dy, d), to_fixed(dz, d),
                dx * dx + dy * dy + dz * dz, to_fixed(ux, u), to_fixed(uy, u), to_fixed(uz, u), True, c)  # fmt: skip
        return abm_finish_fixed(hx, hy, hz, fixed, c, scales)
    acc = ABM_EMPTY
    for t in range(start[i], start[i + 1]):
        dx, dy, dz, ux, uy, uz = abm_neighbor(px, py, pz, index[t], position, velocity, dim, space)
        acc = abm_accumulate(acc, dx, dy, dz, dx * dx + dy * dy + dz * dz, ux, uy, uz, c)
    return abm_finish(hx, hy, hz, acc, c)


@device
def abm_move(i, position, velocity, hx, hy, hz, dim, space, speed, dt):
    """p <- wrap(p + speed * h); velocity reported as speed * h / dt [units/s]."""
    px, py, pz = load(position, i, dim)
    px, py, pz = wrap(px + speed * hx, py + speed * hy, pz + speed * hz, space)
    store(position, i, dim, px, py, pz)
    store(velocity, i, dim, hx * speed / dt, hy * speed / dt, hz * speed / dt)


class AbmFlockingModel:
    name = "abm-flocking"

    def __init__(self, params: AbmFlockingParams):
        self.params = params
        self.space = space_of(params)
        self.coefficients = coefficients(params)

    def neighbor_query(self) -> NeighborQuery:
        p = self.params
        return NeighborQuery(p.neighbors.mode, p.flocking.vision, p.neighbors.k, p.neighbors.method, "flocking.vision")

    def initial_state(self, rng: np.random.Generator) -> FlockState:
        p = self.params
        speed = p.flocking.speed / p.world.dt
        init = p.agents.init.model_copy(update={"speed_min": 1.0, "speed_max": 1.0})
        return initial_state(p.world, p.agents.n, init, speed, rng)
