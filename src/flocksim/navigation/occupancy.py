"""2D occupancy grids for path-finding (SPEC 3.7).

Convention: ``walls[iy, ix]`` is True for a blocked cell; row 0 is the lowest
coordinate (y in 2D worlds, z in 3D), column 0 the lowest x. Cell (iy, ix) covers
[origin + (ix, iy) * cell_size, origin + (ix + 1, iy + 1) * cell_size). Text maps and
images are drawn the way they are seen: their first row is the top (highest) row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

WALL_CHAR = "#"


@dataclass(frozen=True)
class OccupancyGrid:
    """Blocked cells, cell size [units] and the world position of the lower-left corner [units]."""

    walls: np.ndarray  # (ny, nx) bool
    cell_size: float
    origin: tuple[float, float]

    def __post_init__(self) -> None:
        if self.walls.ndim != 2 or self.walls.size == 0:
            raise ValueError(f"occupancy: walls must be a non-empty 2D array, got shape {self.walls.shape}")
        if not self.cell_size > 0:
            raise ValueError(f"occupancy: cell_size must be > 0, got {self.cell_size}")

    @property
    def shape(self) -> tuple[int, int]:
        return self.walls.shape

    def cell_coordinates(self, points: np.ndarray) -> np.ndarray:
        """(n, 2) plane points -> continuous grid coordinates (column, row) where cell centres are integers."""
        return (np.asarray(points, dtype=np.float64) - np.asarray(self.origin)) / self.cell_size - 0.5

    def cell_of(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, columns, inside) of the cells holding (n, 2) plane points; outside points get -1."""
        u = np.floor(self.cell_coordinates(points) + 0.5).astype(np.int64)
        ny, nx = self.shape
        inside = (u[:, 0] >= 0) & (u[:, 0] < nx) & (u[:, 1] >= 0) & (u[:, 1] < ny)
        return np.where(inside, u[:, 1], -1), np.where(inside, u[:, 0], -1), inside

    def centre(self, row: int, column: int) -> np.ndarray:
        """World position (2,) of a cell's centre [units]."""
        return np.asarray(self.origin) + (np.array([column, row], dtype=np.float64) + 0.5) * self.cell_size


def walls_from_map(rows: list[str]) -> np.ndarray:
    """Text rows (first row on top, ``#`` a wall) -> (ny, nx) walls with row 0 at the bottom."""
    if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise ValueError("navigation.map: needs equal-length, non-empty rows")
    return np.array([[c == WALL_CHAR for c in row] for row in rows[::-1]], dtype=bool)


def walls_from_image(path: str | Path) -> np.ndarray:
    """A PNG (top row on top) -> walls where the pixel is darker than 50 % grey; row 0 at the bottom."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            grey = np.asarray(image.convert("L"), dtype=np.float64)
    except (OSError, ValueError) as error:
        raise ValueError(f"navigation.image: cannot read {str(path)!r} as an image ({error})") from error
    return (grey < 128.0)[::-1].copy()


def _segment_distance(px: np.ndarray, py: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance [units] from points (px, py) to the segment a-b (2,)."""
    ab = b - a
    length2 = float(ab @ ab)
    t = 0.0 if length2 == 0.0 else np.clip(((px - a[0]) * ab[0] + (py - a[1]) * ab[1]) / length2, 0.0, 1.0)
    return np.hypot(px - (a[0] + t * ab[0]), py - (a[1] + t * ab[1]))


def walls_from_obstacles(
    obstacles: Any,
    size: tuple[float, float],
    cell_size: float,
    origin: tuple[float, float],
    clearance: float,
    plane: tuple[int, int],
) -> np.ndarray:
    """Rasterise ``params.obstacles`` (circles, segments, boxes) over a ``size`` area from ``origin``.

    A cell is a wall when its centre is closer than cell_size/2 + body radius + ``clearance`` to
    the obstacle's core (centre, segment, box); coordinates are taken on the ``plane`` axes.
    """
    nx = max(1, math.ceil(size[0] / cell_size - 1e-9))
    ny = max(1, math.ceil(size[1] / cell_size - 1e-9))
    cx = origin[0] + (np.arange(nx) + 0.5) * cell_size
    cy = origin[1] + (np.arange(ny) + 0.5) * cell_size
    px, py = np.meshgrid(cx, cy)
    walls = np.zeros((ny, nx), dtype=bool)
    i, j = plane

    def on_plane(v: list[float]) -> np.ndarray:
        return np.array([v[i], v[j] if j < len(v) else 0.0], dtype=np.float64)

    for c in obstacles.circles:
        centre = on_plane(c.center)
        walls |= np.hypot(px - centre[0], py - centre[1]) < cell_size / 2 + c.body_radius + clearance
    for s in obstacles.segments:
        walls |= _segment_distance(px, py, on_plane(s.a), on_plane(s.b)) < cell_size / 2 + s.body_radius + clearance
    for b in obstacles.boxes:
        low, high = on_plane(b.min_corner), on_plane(b.max_corner)
        dx = np.maximum(np.maximum(low[0] - px, px - high[0]), 0.0)
        dy = np.maximum(np.maximum(low[1] - py, py - high[1]), 0.0)
        walls |= np.hypot(dx, dy) < cell_size / 2 + b.body_radius + clearance
    return walls
