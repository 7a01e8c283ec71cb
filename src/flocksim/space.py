"""Space: where agents live (docs/design.md §3.8).

Like jax-md's (displacement, shift) pair, code past this module never looks at
the box: it calls :func:`displacement` for the vector from one point to another
(minimum image in periodic space) and :func:`wrap` after moving. ``box`` and
``periodic`` span [0, L_k) per axis; ``ellipsoid`` is centred on the origin
with semi-axes (a, b, c); ``open`` is unbounded.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from flocksim.jit import device

OPEN = 0
BOX = 1
ELLIPSOID = 2
PERIODIC = 3
KIND_CODES = {"open": OPEN, "box": BOX, "ellipsoid": ELLIPSOID, "periodic": PERIODIC}


class Space(NamedTuple):
    """Region as kernels see it: kind code and three sizes (z = 1 in 2D)."""

    kind: int
    lx: float
    ly: float
    lz: float


def make_space(kind: str, size: list[float] | tuple[float, ...]) -> Space:
    sizes = [float(s) for s in size] + [1.0] * (3 - len(size))
    return Space(KIND_CODES[kind], sizes[0], sizes[1], sizes[2])


@device
def min_image(d, length):
    """Shortest periodic image of a coordinate difference ``d`` on an axis of ``length``;
    exactly half a length maps to -length/2.

    Differences shorter than half a length are returned as they are, without the
    division: neighbour searches call this for every candidate pair, and most are
    short (this also keeps d just under length/2, which floor(d/length + 0.5) can
    round to the other image)."""
    if abs(d) < 0.5 * length:
        return d
    return d - length * math.floor(d / length + 0.5)


@device
def displacement(px, py, pz, qx, qy, qz, space):
    """Vector from p to q (q - p), minimum image in periodic space."""
    dx = qx - px
    dy = qy - py
    dz = qz - pz
    if space.kind == PERIODIC:
        dx = min_image(dx, space.lx)
        dy = min_image(dy, space.ly)
        dz = min_image(dz, space.lz)
    return dx, dy, dz


@device
def wrap_coordinate(x, length):
    """Map x into [0, length)."""
    y = x - length * math.floor(x / length)
    if y < 0.0:  # x a hair below a multiple of length: x / length rounded up to an integer
        y += length
    if y >= length:  # x a hair below 0 rounds up to length
        y = 0.0
    return y


@device
def wrap(x, y, z, space):
    """Position after a move: wrapped into the box in periodic space, unchanged otherwise."""
    if space.kind == PERIODIC:
        return wrap_coordinate(x, space.lx), wrap_coordinate(y, space.ly), wrap_coordinate(z, space.lz)
    return x, y, z


def wrap_array(position: np.ndarray, space: Space) -> np.ndarray:
    """Vectorised :func:`wrap` for an (N, dim) array (returns a new array)."""
    if space.kind != PERIODIC:
        return position.copy()
    sizes = np.array([space.lx, space.ly, space.lz])[: position.shape[1]]
    out = position - sizes * np.floor(position / sizes)
    out += np.where(out < 0.0, sizes, 0.0)
    out[out >= sizes] = 0.0
    return out


def tree_points(position: np.ndarray, space: Space) -> tuple[np.ndarray, np.ndarray | None]:
    """Points (N, dim) and ``boxsize`` as SciPy's ``cKDTree(points, boxsize=...)`` takes them: in
    periodic space wrapped into [0, L) with the box's sizes (distances across the edges, the minimum
    image); elsewhere the positions as they are and None."""
    position = np.asarray(position, dtype=np.float64)
    if space.kind != PERIODIC:
        return position, None
    sizes = np.array([space.lx, space.ly, space.lz])[: position.shape[1]]
    return wrap_array(position, space), sizes


def displacement_array(p: np.ndarray, q: np.ndarray, space: Space) -> np.ndarray:
    """Vectorised :func:`displacement` (q - p) for broadcastable arrays of shape (..., dim)."""
    d = np.asarray(q, dtype=float) - np.asarray(p, dtype=float)
    if space.kind == PERIODIC:
        sizes = np.array([space.lx, space.ly, space.lz])[: d.shape[-1]]
        d = np.where(np.abs(d) < 0.5 * sizes, d, d - sizes * np.floor(d / sizes + 0.5))
    return d


PLAIN_LENGTHS = (1e-150, 1e150)
"""Lengths whose squared components stay normal doubles: :func:`unit_rows` and :func:`unit_vector`
divide such vectors by their length as they always were (the same bits); others they scale first."""


def unit_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``vectors`` (N, dim) scaled to length 1, without overflow or underflow: a row
    whose length is outside :data:`PLAIN_LENGTHS` is divided by its largest absolute component
    before its length is taken, so [1e308, 1e308, 1e308] (whose length overflows to inf, which
    made it [0, 0, 0]) and [1e-320, 1e-320, 1e-320] (whose squares underflow to 0) both give
    (1, 1, 1) / sqrt(3). A row of plain length is divided by sqrt(sum of squares) (``einsum``).
    Returns (unit rows, ok); a row that is all zeros or not finite stays zeros with ok False."""
    v = np.asarray(vectors, dtype=np.float64)
    out = np.zeros_like(v)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        length = np.sqrt(np.einsum("ij,ij->i", v, v))
        plain = (length > PLAIN_LENGTHS[0]) & (length < PLAIN_LENGTHS[1]) & np.isfinite(v).all(axis=1)
        out[plain] = v[plain] / length[plain, None]
        scale = np.max(np.abs(v), axis=1) if v.shape[1] else np.zeros(len(v))
        rest = ~plain & np.isfinite(scale) & (scale > 0.0)
        if rest.any():
            w = v[rest] / scale[rest, None]  # largest component +-1: its length is in [1, sqrt(dim)]
            out[rest] = w / np.sqrt(np.einsum("ij,ij->i", w, w))[:, None]
    return out, plain | rest


def unit_vector(vector) -> np.ndarray | None:
    """``vector`` (finite numbers) scaled to length 1 as :func:`unit_rows` does, a plain length being
    ``numpy.linalg.norm``'s; None when it is all zeros or not finite."""
    v = np.asarray(vector, dtype=np.float64).ravel()
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        length = float(np.linalg.norm(v))
    if PLAIN_LENGTHS[0] < length < PLAIN_LENGTHS[1] and np.isfinite(v).all():
        return v / length
    out, ok = unit_rows(v[None, :])
    return out[0] if ok[0] else None
