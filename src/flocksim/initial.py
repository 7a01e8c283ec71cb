"""Initial conditions (docs/design.md §1.4): positions uniform in the region, headings
random or aligned with a spread, speeds with small random variation."""

from __future__ import annotations

import math

import numpy as np

from flocksim.params import Agents, InitialConditions, World
from flocksim.state import FlockState, new_state


def initial_positions(world: World, n: int, fill: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform positions in the central ``fill`` fraction of the region.

    box/periodic: [0, L) per axis; ellipsoid: inside the ellipsoid (centred on
    the origin); open: a box of side ``size`` centred on the origin.
    """
    dim = world.dim
    size = np.asarray(world.bounds.size, dtype=np.float64)
    kind = world.bounds.kind
    if kind == "ellipsoid":
        direction = rng.standard_normal((n, dim))
        direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-300)
        radius = rng.random(n) ** (1.0 / dim)
        return direction * radius[:, None] * size * fill
    u = rng.random((n, dim)) - 0.5
    centre = size / 2 if kind in ("box", "periodic") else np.zeros(dim)
    return centre + u * size * fill


def initial_headings(init: InitialConditions, dim: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit headings: uniform on the circle/sphere, or around ``init.direction``.

    Aligned 2D: angle offset ~ N(0, spread). Aligned 3D: tilt away from the
    direction ~ |N(0, spread)| about a uniformly random perpendicular axis.
    """
    spread = math.radians(init.spread_deg)
    if init.kind == "random":
        h = rng.standard_normal((n, dim))
        norms = np.linalg.norm(h, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        h /= norms
        h[np.linalg.norm(h, axis=1) == 0] = np.eye(dim)[0]
        return h
    d = np.asarray(init.direction[:dim], dtype=np.float64)
    if not np.any(d):
        d = np.eye(dim)[0]
    d = d / np.linalg.norm(d)
    if dim == 2:
        angle = math.atan2(d[1], d[0]) + spread * rng.standard_normal(n)
        return np.stack([np.cos(angle), np.sin(angle)], axis=1)
    tilt = np.abs(spread * rng.standard_normal(n))
    azimuth = rng.random(n) * 2.0 * math.pi
    helper = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = np.cross(d, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(d, e1)
    perp = np.cos(azimuth)[:, None] * e1 + np.sin(azimuth)[:, None] * e2
    return np.cos(tilt)[:, None] * d + np.sin(tilt)[:, None] * perp


def initial_state(
    world: World,
    n: int,
    init: InitialConditions,
    max_speed: float,
    rng: np.random.Generator,
    mass: float | list[float] = 1.0,
    radius: float | list[float] = 0.5,
) -> FlockState:
    position = initial_positions(world, n, init.fill, rng)
    heading = initial_headings(init, world.dim, n, rng)
    speed = max_speed * rng.uniform(init.speed_min, init.speed_max, n)
    return new_state(position, heading * speed[:, None], mass=np.asarray(mass), radius=np.asarray(radius))


def kind_counts(fractions: list[float], n: int) -> np.ndarray:
    """Agents per kind: the fractions of n, rounded by largest remainder (ties to the earlier kind)."""
    exact = np.asarray(fractions, dtype=np.float64) * n
    counts = np.floor(exact).astype(np.int64)
    short = n - int(counts.sum())
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[:short]] += 1
    return counts


def crowd_initial_state(state: FlockState, agents: Agents, world: World, rng: np.random.Generator) -> FlockState:
    """Apply ``agents.kinds`` (kind labels shuffled over the agents, each with its kind's mass and
    radius) and ``agents.planar`` (every agent starts on the ground plane y = centre of the region,
    its velocity's y removed, a vertical one replaced by +x at the same speed). Draws from ``rng``
    only when kinds are given, so other runs keep their random streams."""
    if agents.kinds:
        labels = np.repeat(
            np.arange(len(agents.kinds), dtype=np.int32), kind_counts([k.fraction for k in agents.kinds], state.n)
        )
        rng.shuffle(labels)
        state.kind[:] = labels
        state.mass[:] = np.array([k.mass for k in agents.kinds])[labels]
        state.radius[:] = np.array([k.radius for k in agents.kinds])[labels]
    if agents.planar and world.dim == 3:
        ground = world.bounds.size[1] / 2 if world.bounds.kind in ("box", "periodic") else 0.0
        state.position[:, 1] = ground
        speed = np.linalg.norm(state.velocity, axis=1)
        state.velocity[:, 1] = 0.0
        flat = np.linalg.norm(state.velocity, axis=1)
        vertical = flat == 0.0
        state.velocity[vertical] = 0.0
        state.velocity[vertical, 0] = speed[vertical]
        scale = np.where(vertical, 1.0, speed / np.where(vertical, 1.0, flat))
        state.velocity *= scale[:, None]
    return state
