"""The Flappy Boids course: walls of rock with round gaps over a rocky seabed, as one 3D scalar field.

Axes: x is the flight direction, y up, z across; the course fills the world box's y and z
([0, H] x [0, W]) and goes on along x. Wall k (k >= 0) stands at x_k = first_wall + k spacing;
chunk k is the slab [x_k - spacing/2, x_k + spacing/2) and holds only wall k. The field is

    f(p) = min(max(|x - x_k| - thickness/2, r_k - |(y, z) - c_k|), y - b(x, z)) + amplitude * noise(p)

with k the chunk of p: negative inside rock, positive in air, about the distance to the rock's
surface near it [units]. Before the first wall's chunk there is no wall (its term is ``NO_ROCK``),
only the seabed. The seabed b(x, z) = floor_height + amplitude * noise((x, 0, z) at
``FLOOR_RELIEF`` x noise_scale) rolls slowly; with the shared noise on top its surface lies
within ``floor_top`` = floor_height + 2 amplitude [units]. Gap centre c_k is drawn from a
generator seeded by (seed, k), so every chunk can be built alone, in any order, and lies between
the seabed's top and the box's ceiling with ``GAP_EDGE`` of rock around it; gap radius
r_k = max(gap_min_radius, gap_radius - gap_shrink x_k / 1000) narrows with distance. The rock of
wall k lies within |x - x_k| <= thickness/2 + amplitude, so at chunk borders only the seabed is
rock, the same field on both sides (its meshes join there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from flocksim.game.noise import value_noise

# the course's sizes and its check live with the game's schema (params), below the game; named here as before
from flocksim.params.game import GAP_EDGE as GAP_EDGE
from flocksim.params.game import MAX_CHUNK_CELLS as MAX_CHUNK_CELLS
from flocksim.params.game import check_game as check_game
from flocksim.params.game import chunk_grid_shape as chunk_grid_shape
from flocksim.params.game import floor_top as floor_top
from flocksim.params.game import grid_points as grid_points

if TYPE_CHECKING:
    from flocksim.params import Game

NO_ROCK = 1e9
"""Wall term of the field where there is no wall (before the first one) [units]."""
FLOOR_RELIEF = 4.0
"""The seabed's slow relief has features this many times noise_scale across [1]."""


class Course:
    """The rock field of one game: ``game`` parameters, the world box's ``height`` (y) and
    ``width`` (z) [units] and the run's ``seed``."""

    def __init__(self, game: Game, height: float, width: float, seed: int):
        self.game = game
        self.height = float(height)
        self.width = float(width)
        self.seed = int(seed)
        self.noise_seed = (self.seed * 0x9E3779B1 + 0x5EED) & 0xFFFFFFFFFFFFFFFF
        self.floor_seed = (self.seed * 0x85EBCA77 + 0xF100) & 0xFFFFFFFFFFFFFFFF

    @property
    def first_chunk(self) -> int:
        """Index of the chunk at the box's start (x = 0): the first one with rock (the seabed) [1]."""
        return int(self.chunk_of(0.0))

    def wall_x(self, k: int | np.ndarray) -> np.ndarray | float:
        """x of wall k [units]."""
        return self.game.first_wall + np.asarray(k, dtype=np.float64) * self.game.wall_spacing

    def chunk_of(self, x: np.ndarray | float) -> np.ndarray:
        """Chunk index of x (int64; negative before the first wall's chunk)."""
        g = self.game
        return np.floor((np.asarray(x, dtype=np.float64) - g.first_wall) / g.wall_spacing + 0.5).astype(np.int64)

    def gap_radius(self, k: int) -> float:
        """Gap radius of wall k [units]."""
        g = self.game
        return max(g.gap_min_radius, g.gap_radius - g.gap_shrink * float(self.wall_x(k)) / 1000.0)

    def gap(self, k: int) -> tuple[float, float, float]:
        """(y, z, radius) of wall k's gap [units]."""
        r = self.gap_radius(k)
        u = np.random.default_rng([self.seed, 0xF1A9, int(k)]).random(2)
        edge = r + GAP_EDGE
        low = floor_top(self.game) + edge  # the gap's rim stays GAP_EDGE above the seabed's top
        return low + u[0] * (self.height - edge - low), edge + u[1] * (self.width - 2 * edge), r

    def floor(self, points: np.ndarray) -> np.ndarray:
        """y - b(x, z) at ``points`` (..., 3): height above the seabed before the shared noise [units]."""
        p = np.asarray(points, dtype=np.float64)
        g = self.game
        flat = p * np.array([1.0, 0.0, 1.0])
        relief = g.noise_amplitude * value_noise(flat, self.floor_seed, FLOOR_RELIEF * g.noise_scale)
        return p[..., 1] - g.floor_height - relief

    def walls(self, points: np.ndarray) -> np.ndarray:
        """The walls' term at ``points`` (..., 3): slab minus gap of each point's chunk, ``NO_ROCK``
        before the first wall [units]."""
        p = np.asarray(points, dtype=np.float64)
        k = self.chunk_of(p[..., 0])
        out = np.full(p.shape[:-1], NO_ROCK)
        g = self.game
        for chunk in np.unique(k):
            if chunk < 0:
                continue
            sel = k == chunk
            q = p[sel]
            cy, cz, r = self.gap(int(chunk))
            slab = np.abs(q[:, 0] - float(self.wall_x(chunk))) - g.wall_thickness / 2.0
            hole = r - np.hypot(q[:, 1] - cy, q[:, 2] - cz)
            out[sel] = np.maximum(slab, hole)
        return out

    def field_lower_bound(self, points: np.ndarray) -> np.ndarray:
        """A lower bound of :meth:`field` at ``points`` (..., 3) without sampling the noise (both
        noises lie in [-1, 1]): min(walls, y - floor_height - amplitude) - amplitude [units]."""
        p = np.asarray(points, dtype=np.float64)
        g = self.game
        floor = p[..., 1] - g.floor_height - g.noise_amplitude
        return np.minimum(self.walls(p), floor) - g.noise_amplitude

    def field(self, points: np.ndarray) -> np.ndarray:
        """f at ``points`` (..., 3) [units]: < 0 inside rock (walls or seabed), > 0 in air (module docstring)."""
        p = np.asarray(points, dtype=np.float64)
        g = self.game
        core = np.minimum(self.walls(p), self.floor(p))
        return core + g.noise_amplitude * value_noise(p, self.noise_seed, g.noise_scale)
