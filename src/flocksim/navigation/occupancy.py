"""2D occupancy grids for path-finding (SPEC 3.7).

Convention: ``walls[iy, ix]`` is True for a blocked cell; row 0 is the lowest
coordinate (y in 2D worlds, z in 3D), column 0 the lowest x. Cell (iy, ix) covers
[origin + (ix, iy) * cell_size, origin + (ix + 1, iy + 1) * cell_size). Text maps and
images are drawn the way they are seen: their first row is the top (highest) row.
"""

from __future__ import annotations

import io
import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from flocksim.budgets import MAX_IMAGE_FILE_BYTES, MAX_NAVIGATION_CELLS, BudgetError, check_navigation_cells, grid_side

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


def read_regular_file(path: str | Path, limit: int, key: str) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``); ValueError naming ``key``
    otherwise. Opened without blocking, so a FIFO or device at the path is refused, not waited on."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise ValueError(f"{key}: cannot read {str(path)!r} ({error.strerror or error})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{key}: {str(path)!r} is not a regular file; allowed: a PNG file")
        if info.st_size > limit:
            raise BudgetError(f"{key}: {str(path)!r} has {info.st_size:,} bytes, more than the budget of {limit:,}")
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise BudgetError(f"{key}: {str(path)!r} has more than the budget of {limit:,} bytes")
    return b"".join(chunks)


def walls_from_image(path: str | Path) -> np.ndarray:
    """A PNG (top row on top) -> walls where the pixel is darker than 50 % grey; row 0 at the bottom.

    The image's size is checked against :data:`flocksim.budgets.MAX_NAVIGATION_CELLS` (one cell
    per pixel) from its header, before any pixel is decoded."""
    from PIL import Image

    data = read_regular_file(path, MAX_IMAGE_FILE_BYTES, "navigation.image")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the budget below is far smaller
            with Image.open(io.BytesIO(data)) as image:
                check_navigation_cells(
                    image.height, image.width, "navigation.image", f"allowed: at most {MAX_NAVIGATION_CELLS:,} pixels"
                )
                grey = np.asarray(image.convert("L"), dtype=np.float64)
    except BudgetError:
        raise
    except (OSError, ValueError, Image.DecompressionBombError) as error:
        raise ValueError(f"navigation.image: cannot read {str(path)!r} as an image ({error})") from None
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
    nx, ny = grid_side(size[0], cell_size), grid_side(size[1], cell_size)
    check_navigation_cells(ny, nx, "navigation.cell_size", "allowed: a larger navigation.cell_size")
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
