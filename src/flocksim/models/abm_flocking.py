"""The cross-framework Flocking benchmark model (Agents.jl, Mesa, NetLogo, MASON).

Every bird, reading step t: neighbours within ``vision``; cohere = sum(p_j - p_i);
separate = -sum(p_j - p_i) over neighbours closer than ``separation``;
match = sum(h_j) of unit headings; each divided by max(count, 1) and multiplied
by 0.03, 0.015, 0.05 (defaults); h <- normalize(h + cohere + separate + match);
p <- wrap(p + speed * h). Displacements use the minimum image. Updates are
synchronous (every bird reads step t), unlike the original's random sequential
activation. A zero sum keeps the old heading.
"""

from __future__ import annotations

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


ABM_EMPTY = (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
"""Accumulator of one bird: (count, cohere xyz, separate xyz, match xyz)."""


@device
def abm_accumulate(acc, dx, dy, dz, d2, ux, uy, uz, c):
    """Add neighbour j (displacement d from bird i, squared length d2, unit heading u) to acc.

    Every neighbour search path calls this in increasing neighbour id (metric) or
    (distance, id) order (topological), so all paths give bitwise-equal sums.
    Written with selects rather than branches: candidates outside the vision are
    common in the grid scan and their branch would be unpredictable.
    """
    count, cx, cy, cz, sx, sy, sz, mx, my, mz = acc
    inside = c.topological | (d2 <= c.vision2)  # | and &, not or/and: selects, not branches
    close = inside & (d2 < c.separation2)
    return (
        count + 1 if inside else count,
        cx + dx if inside else cx,
        cy + dy if inside else cy,
        cz + dz if inside else cz,
        sx - dx if close else sx,
        sy - dy if close else sy,
        sz - dz if close else sz,
        mx + ux if inside else mx,
        my + uy if inside else my,
        mz + uz if inside else mz,
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
def abm_heading(i, position, velocity, start, index, dim, space, c):
    """New unit heading of bird i from the snapshot, over its neighbour-list row."""
    px, py, pz = load(position, i, dim)
    hx, hy, hz = load(velocity, i, dim)
    hx, hy, hz = normalize_or_zero(hx, hy, hz)
    acc = ABM_EMPTY
    for t in range(start[i], start[i + 1]):
        j = index[t]
        qx, qy, qz = load(position, j, dim)
        dx, dy, dz = displacement(px, py, pz, qx, qy, qz, space)
        ux, uy, uz = load(velocity, j, dim)
        ux, uy, uz = normalize_or_zero(ux, uy, uz)
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
        return NeighborQuery(p.neighbors.mode, p.flocking.vision, p.neighbors.k, p.neighbors.method)

    def initial_state(self, rng: np.random.Generator) -> FlockState:
        p = self.params
        speed = p.flocking.speed / p.world.dt
        init = p.agents.init.model_copy(update={"speed_min": 1.0, "speed_max": 1.0})
        return initial_state(p.world, p.agents.n, init, speed, rng)
