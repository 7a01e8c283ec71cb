"""Moving an agent at constant speed along its new heading (Vicsek, Couzin)."""

from __future__ import annotations

from flocksim.kernels.compile import device
from flocksim.kernels.vector import load, store
from flocksim.space import wrap


@device
def advance(i, position, velocity, hx, hy, hz, dim, space, speed, dt):
    """p <- wrap(p + speed dt h); v <- speed h [units/s], for a unit heading h."""
    px, py, pz = load(position, i, dim)
    step = speed * dt
    px, py, pz = wrap(px + step * hx, py + step * hy, pz + step * hz, space)
    store(position, i, dim, px, py, pz)
    store(velocity, i, dim, speed * hx, speed * hy, speed * hz)
