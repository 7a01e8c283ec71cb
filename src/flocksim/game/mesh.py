"""One chunk of the course: its marching-cubes mesh and its avoidance spheres.

The chunk's field is sampled on a grid of ``cell_size`` steps spanning the box plus two steps on
each side along y and z, and from the chunk's start to its end along x (steps of at most
``cell_size``); the grid's outermost layer on y and z is set to air. Along x nothing is closed:
a wall is air at the chunk's borders, so its mesh is closed, while the seabed goes on into the
next chunk, whose grid samples the same field on the shared border, so the two seabed meshes
meet there vertex for vertex (each edge is shared by exactly two triangles but those on the
chunk's two x ends). The mesh is :func:`skimage.measure.marching_cubes` at level 0; when it has
more than ``max_triangles`` triangles it is remade on a grid of 2, 3, ... x ``cell_size``
(closed the same way) until it fits (or, on a grid of a few points, left empty).

Avoidance: the field sampled every ``avoid_cell`` units; each rock sample (f <= 0) with an air
sample among its six neighbours becomes a sphere obstacle (no body, influence radius
``avoid_range`` + avoid_cell / 2) that the engine's obstacle avoidance (rules.avoid) steers
around: the walls and the seabed alike. The samples on the chunk's far x end are left to the
next chunk, which samples them too, so that no sphere is counted twice.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from skimage.measure import marching_cubes

from flocksim.game.course import MAX_CHUNK_CELLS, Course, chunk_grid_shape

MIN_GRID_POINTS = 4
"""A chunk's grid is never made coarser than this many points on its shortest axis."""


class ChunkMesh(NamedTuple):
    """Chunk ``index``: ``vertices`` (V, 3) float32 world coordinates [units], ``triangles`` (F, 3)
    uint32 vertex rows, ``step`` the marching-cubes step size used, ``spheres`` (S, 3) float64
    centres of its avoidance spheres [units]."""

    index: int
    vertices: np.ndarray
    triangles: np.ndarray
    step: int
    spheres: np.ndarray


def sample_grid(course: Course, k: int, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(origin (3,), spacing (3,), values (nx, ny, nz)) of chunk k's field sampled every ``step``
    units on y and z and every spacing[0] <= ``step`` units on x [units]."""
    g = course.game
    shape = chunk_grid_shape(g, course.height, course.width, step)
    if math.prod(shape) > MAX_CHUNK_CELLS:  # the schema checks this; never allocate past it
        raise ValueError(f"game: {shape} grid points per chunk is over {MAX_CHUNK_CELLS}")
    origin = np.array([float(course.wall_x(k)) - g.wall_spacing / 2.0, -2.0 * step, -2.0 * step])
    spacing = np.array([g.wall_spacing / (shape[0] - 1), step, step])
    axes = [origin[a] + spacing[a] * np.arange(shape[a]) for a in range(3)]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    values = course.field(np.stack([x, y, z], axis=-1))
    return origin, spacing, values


def close_grid(values: np.ndarray, air: float) -> np.ndarray:
    """``values`` with the outermost layer on the y and z sides raised to at least ``air`` (> 0)."""
    out = values.copy()
    for axis in (1, 2):
        for end in (0, -1):
            index = [slice(None)] * 3
            index[axis] = end
            out[tuple(index)] = np.maximum(out[tuple(index)], air)
    return out


def surface_spheres(values: np.ndarray, origin: np.ndarray, spacing: np.ndarray) -> np.ndarray:
    """Centres (S, 3) [units] of the rock samples (<= 0) that have an air sample among their six
    neighbours, on a grid from ``origin`` with ``spacing`` (3,) [units] between samples."""
    rock = values <= 0.0
    air = ~rock
    touching = np.zeros_like(rock)
    for axis in range(3):
        for shift in (1, -1):
            touching |= np.roll(air, shift, axis=axis) & _inside(rock.shape, axis, shift)
    idx = np.argwhere(rock & touching)
    return origin + spacing * idx.astype(np.float64)


def _inside(shape: tuple[int, ...], axis: int, shift: int) -> np.ndarray:
    """Mask of the samples whose neighbour ``shift`` steps back along ``axis`` exists (no wrap-around)."""
    mask = np.ones(shape, dtype=bool)
    index = [slice(None)] * 3
    index[axis] = 0 if shift == 1 else -1
    mask[tuple(index)] = False
    return mask


def mesh_chunk(course: Course, k: int) -> ChunkMesh:
    """Mesh and avoidance spheres of chunk k (before the box's first chunk: empty arrays)."""
    g = course.game
    if k < course.first_chunk:
        return ChunkMesh(k, np.zeros((0, 3), np.float32), np.zeros((0, 3), np.uint32), 1, np.zeros((0, 3)))
    vertices = np.zeros((0, 3), np.float32)
    triangles = np.zeros((0, 3), np.uint32)
    step = 1
    while True:  # a coarser grid (cell_size x step, closed again) until the mesh fits max_triangles
        h = g.cell_size * step
        origin, spacing, values = sample_grid(course, k, h)
        if values.min() >= 0.0:
            break
        verts, faces, _, _ = marching_cubes(close_grid(values, h), level=0.0, spacing=tuple(spacing))
        if len(faces) <= g.max_triangles:
            vertices = (verts + origin).astype(np.float32)
            triangles = faces.astype(np.uint32)
            break
        if min(values.shape) <= MIN_GRID_POINTS:  # cannot be coarser: no mesh
            break
        step += 1
    avoid_origin, avoid_spacing, avoid_values = sample_grid(course, k, g.avoid_cell)
    spheres = surface_spheres(avoid_values, avoid_origin, avoid_spacing)
    last = avoid_origin[0] + avoid_spacing[0] * (avoid_values.shape[0] - 1)
    spheres = spheres[spheres[:, 0] < last - avoid_spacing[0] / 2]  # the far border's are the next chunk's
    return ChunkMesh(k, vertices, triangles, step, spheres)
