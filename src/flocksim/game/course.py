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

import math
from typing import TYPE_CHECKING

import numpy as np

from flocksim.budgets import BudgetError
from flocksim.game.noise import value_noise

if TYPE_CHECKING:
    from flocksim.params import Game, ReynoldsParams

MAX_CHUNK_CELLS = 1_048_576
"""Most grid points of one chunk's marching-cubes grid (and of its avoidance grid): 8 MB of float64."""
GAP_EDGE = 3.0
"""Smallest distance between a gap's rim and the box's side [units]."""
NO_ROCK = 1e9
"""Wall term of the field where there is no wall (before the first one) [units]."""
FLOOR_RELIEF = 4.0
"""The seabed's slow relief has features this many times noise_scale across [1]."""


def grid_points(length: float, step: float) -> int:
    """Grid points spanning ``length`` at ``step`` (both ends included)."""
    return math.floor(length / step + 1e-9) + 1


def chunk_grid_shape(game: Game, height: float, width: float, step: float) -> tuple[int, int, int]:
    """Grid points (x, y, z) of one chunk sampled every ``step`` units on y and z, padded 2 steps
    beyond the box, and at most ``step`` apart on x from the chunk's start to its end (both ends
    included, so that neighbouring chunks share their border's samples)."""
    pad = 4.0 * step
    return (
        math.ceil(game.wall_spacing / step - 1e-9) + 1,
        grid_points(height + pad, step),
        grid_points(width + pad, step),
    )


def floor_top(game: Game) -> float:
    """Highest point of the seabed's surface [units]: floor_height + 2 noise_amplitude."""
    return game.floor_height + 2.0 * game.noise_amplitude


def check_game(params: ReynoldsParams) -> None:
    """ValueError (BudgetError for sizes) naming the field when ``params.game`` cannot be played."""
    g = params.game
    world = params.world
    if world.dim != 3 or world.bounds.kind != "box":
        raise ValueError("game: needs world.dim = 3 and world.bounds.kind = 'box'")
    if params.rules.seek.weight <= 0.0:
        raise ValueError("game: needs rules.seek.weight > 0 (the flock follows the target by seeking)")
    if params.obstacles.count():
        raise ValueError("game: obstacles must be empty (the rock is the game's obstacle set)")
    if g.gap_min_radius > g.gap_radius:
        raise ValueError(f"game.gap_min_radius ({g.gap_min_radius:g}) must be <= game.gap_radius ({g.gap_radius:g})")
    if g.speed > g.speed_max:
        raise ValueError(f"game.speed ({g.speed:g}) must be <= game.speed_max ({g.speed_max:g})")
    _, height, width = world.bounds.size
    if 2.0 * (g.gap_radius + GAP_EDGE) > min(height, width):
        raise ValueError(
            f"game.gap_radius: a gap of radius {g.gap_radius:g} plus {GAP_EDGE:g} units of rim must fit the box's "
            f"height and width ({height:g} x {width:g}); allowed: <= {min(height, width) / 2 - GAP_EDGE:g}"
        )
    reach = g.wall_thickness / 2.0 + g.noise_amplitude + 2.0 * max(g.cell_size, g.avoid_cell)
    if reach >= g.wall_spacing / 2.0:
        raise ValueError(
            f"game.wall_spacing: {g.wall_spacing:g} leaves no air between walls; allowed: > 2 x (wall_thickness/2 + "
            f"noise_amplitude + 2 x max(cell_size, avoid_cell)) = {2.0 * reach:g}"
        )
    room = height - floor_top(g)
    if 2.0 * (g.gap_radius + GAP_EDGE) > room:
        raise ValueError(
            f"game.floor_height: the seabed's top (floor_height + 2 x noise_amplitude = {floor_top(g):g}) leaves "
            f"{room:g} units below the box's top ({height:g}); a gap of radius {g.gap_radius:g} plus "
            f"{GAP_EDGE:g} units of rim around it needs {2.0 * (g.gap_radius + GAP_EDGE):g}; allowed: floor_height <= "
            f"{height - 2.0 * (g.gap_radius + GAP_EDGE) - 2.0 * g.noise_amplitude:g}"
        )
    for name, step in (("cell_size", g.cell_size), ("avoid_cell", g.avoid_cell)):
        cells = math.prod(chunk_grid_shape(g, height, width, step))
        if cells > MAX_CHUNK_CELLS:
            raise BudgetError(
                f"game.{name}: {step:g} gives {cells} grid points per chunk ({g.wall_spacing:g} x {height:g} x "
                f"{width:g} units); allowed: at most {MAX_CHUNK_CELLS} (a larger {name})"
            )


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

    def field(self, points: np.ndarray) -> np.ndarray:
        """f at ``points`` (..., 3) [units]: < 0 inside rock (walls or seabed), > 0 in air (module docstring)."""
        p = np.asarray(points, dtype=np.float64)
        g = self.game
        core = np.minimum(self.walls(p), self.floor(p))
        return core + g.noise_amplitude * value_noise(p, self.noise_seed, g.noise_scale)
