"""Initial conditions (docs/design.md §1.4): positions uniform in the region, or a formed
flock's sheet (``flock``); headings random or aligned with a spread, speeds with small random
variation."""

from __future__ import annotations

import math

import numpy as np

from flocksim.params import Agents, InitialConditions, World
from flocksim.params.common import (  # the flock's definition, which the roost's size also reads
    FLOCK_BEND,
    FLOCK_CORE,
    FLOCK_PROPORTIONS,
    NEAREST_PER_LATTICE,
    flock_scale,
)
from flocksim.space import unit_vector
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


LATTICE_JITTER = 0.25
"""Each bird's displacement from its lattice site, uniform per axis within +- this fraction of the
lattice constant: the start has no lattice look, and no two birds are closer than 1 - 2 x 0.25 =
half a lattice constant."""

MAX_CHUNK = 1 << 20
"""Lattice sites drawn at a time while the flock is built: memory stays bounded by the flock's own
size, whatever its shape."""


def flock_frame(direction: list[float], dim: int) -> np.ndarray:
    """Rows: the flock's length, (3D: its thickness,) its width, as world unit vectors. The length is
    ``direction`` (3D: its horizontal part; +x if it has none), the thickness vertical (+y)."""
    d = np.asarray(direction[:dim], dtype=np.float64).copy()
    if dim == 3:
        d[1] = 0.0
    d = unit_vector(d)  # scaled first: a huge direction has no finite length
    if d is None:
        d = np.eye(dim)[0]
    if dim == 2:
        return np.array([d, [-d[1], d[0]]])
    up = np.array([0.0, 1.0, 0.0])
    return np.array([d, up, np.cross(d, up)])


def flock_semi_axes(n: int, dim: int, lattice: float) -> np.ndarray:
    """Semi-axes (length, [thickness,] width) of the unbent sheet that holds ``n`` lattice cells of
    side ``lattice``: its volume (area in 2D) is n x lattice**dim."""
    thickness, width, length = FLOCK_PROPORTIONS
    scale = flock_scale(n, dim, lattice)
    if dim == 2:
        return np.array([length, width]) * scale / 2.0
    return np.array([length, FLOCK_CORE * thickness, width]) * scale / 2.0


def _lattice_sites(semi: np.ndarray, lattice: float, reach: float, rng: np.random.Generator) -> np.ndarray:
    """Jittered sites of a lattice (constant ``lattice``, turned by a random angle about the
    vertical, shifted by a random offset) inside the ellipsoid ``semi`` x ``reach``, in the flock's
    frame (length, [thickness,] width), with their elliptic radius as a last column."""
    dim = len(semi)
    angle = rng.random() * 2.0 * math.pi
    offset = rng.random(dim) * lattice
    c, s = math.cos(angle), math.sin(angle)
    half_u, half_w = semi[0], semi[-1]
    # the turned ellipse's extent along the lattice's two horizontal axes, with room for the jitter
    ext_p = reach * math.hypot(c * half_u, s * half_w) + lattice
    ext_q = reach * math.hypot(s * half_u, c * half_w) + lattice
    p_idx = np.arange(math.floor((-ext_p - offset[0]) / lattice), math.ceil((ext_p - offset[0]) / lattice) + 1)
    q_idx = np.arange(math.floor((-ext_q - offset[-1]) / lattice), math.ceil((ext_q - offset[-1]) / lattice) + 1)
    if dim == 3:
        ext_v = reach * semi[1] + lattice
        layers = np.arange(math.floor((-ext_v - offset[1]) / lattice), math.ceil((ext_v - offset[1]) / lattice) + 1)
    else:
        layers = np.zeros(1)
    rows = max(1, MAX_CHUNK // len(p_idx))
    kept = []
    for layer in layers:
        for start in range(0, len(q_idx), rows):
            q, p = np.meshgrid(q_idx[start : start + rows], p_idx, indexing="ij")
            m = q.size
            jitter = rng.uniform(-LATTICE_JITTER, LATTICE_JITTER, (m, dim)) * lattice
            lp = p.ravel() * lattice + offset[0] + jitter[:, 0]
            lq = q.ravel() * lattice + offset[-1] + jitter[:, -1]
            site = np.empty((m, dim + 1))
            site[:, 0] = c * lp - s * lq
            site[:, dim - 1] = s * lp + c * lq
            if dim == 3:
                site[:, 1] = layer * lattice + offset[1] + jitter[:, 1]
            site[:, dim] = np.sqrt(np.sum((site[:, :dim] / semi) ** 2, axis=1))
            kept.append(site[site[:, dim] <= reach])
    return np.concatenate(kept)


def flock_positions(n: int, dim: int, spacing: float, direction: list[float], rng: np.random.Generator) -> np.ndarray:
    """``n`` positions of a formed flock, centred on the origin (the ``flock`` start).

    A jittered lattice (turned about the vertical by a random angle) whose median nearest-neighbour
    distance is ``spacing``, no two birds closer than half a lattice constant (about 0.65 spacing);
    its ``n`` sites nearest the centre (in the ellipsoid's own metric) make an ellipsoid with the
    starlings' proportions (FLOCK_PROPORTIONS), length along ``direction``. In 3D the sheet is then
    bent along its length about a horizontal axis (the ends rise FLOCK_BEND thicknesses; the sheet
    keeps its spacing, since it is bent, not sheared). Draws from ``rng`` only.
    """
    if n == 0:
        return np.zeros((0, dim))
    lattice = spacing / NEAREST_PER_LATTICE[dim]
    semi = flock_semi_axes(n, dim, lattice)
    reach = 1.15 + 2.0 / n ** (1.0 / dim)  # a margin that holds n sites but for the smallest flocks
    sites = _lattice_sites(semi, lattice, reach, rng)
    while len(sites) < n:
        reach *= 1.25
        sites = _lattice_sites(semi, lattice, reach, rng)
    sites = sites[np.argsort(sites[:, dim], kind="stable")[:n], :dim]
    if dim == 3:
        sag = FLOCK_BEND * 2.0 * semi[1] / FLOCK_CORE  # semi[1] / FLOCK_CORE: half the flock's thickness
        radius = (semi[0] ** 2 + sag**2) / (2.0 * sag)  # the arc through the ends and the middle
        theta = sites[:, 0] / radius
        arm = radius - sites[:, 1]
        sites[:, 0] = arm * np.sin(theta)
        sites[:, 1] = radius - arm * np.cos(theta)
    sites -= sites.mean(axis=0)
    return sites @ flock_frame(direction, dim)


def region_centre(world: World) -> np.ndarray:
    """The start region's centre: size/2 for box and periodic, the origin for ellipsoid and open."""
    if world.bounds.kind in ("box", "periodic"):
        return np.asarray(world.bounds.size, dtype=np.float64)[: world.dim] / 2.0
    return np.zeros(world.dim)


def initial_headings(init: InitialConditions, dim: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit headings: uniform on the circle/sphere, or around ``init.direction`` (aligned, flock).

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
    d = unit_vector(init.direction[:dim])  # scaled first: a huge direction has no finite length
    if d is None:
        d = np.eye(dim)[0]
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
    if init.kind == "flock":
        position = region_centre(world) + flock_positions(n, world.dim, init.spacing, init.direction, rng)
        if world.bounds.kind == "periodic":
            position = np.mod(position, np.asarray(world.bounds.size, dtype=np.float64)[: world.dim])
    else:
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
