"""The Flappy Boids course: walls of rock with round gaps, as one 3D scalar field.

Axes: x is the flight direction, y up, z across; the course fills the world box's y and z
([0, H] x [0, W]) and goes on along x. Wall k (k >= 0) stands at x_k = first_wall + k spacing;
chunk k is the slab [x_k - spacing/2, x_k + spacing/2) and holds only wall k. The field is

    f(p) = max(|x - x_k| - thickness/2, r_k - |(y, z) - c_k|) + amplitude * noise(p)

with k the chunk of p: negative inside rock, positive in air, about the distance to the rock's
surface near it [units]. Before the first chunk there is no rock. Gap centre c_k is drawn from
a generator seeded by (seed, k), so every chunk can be built alone, in any order; gap radius
r_k = max(gap_min_radius, gap_radius - gap_shrink x_k / 1000) narrows with distance. The rock of
wall k lies within |x - x_k| <= thickness/2 + amplitude, so chunk borders are air.
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
"""Field value where there is no wall (before the first one) [units]."""


def grid_points(length: float, step: float) -> int:
    """Grid points spanning ``length`` at ``step`` (both ends included)."""
    return math.floor(length / step + 1e-9) + 1


def chunk_grid_shape(game: Game, height: float, width: float, step: float) -> tuple[int, int, int]:
    """Grid points (x, y, z) of one chunk sampled every ``step`` units, padded 2 steps beyond the box on y and z."""
    pad = 4.0 * step
    return (
        grid_points(game.wall_spacing, step),
        grid_points(height + pad, step),
        grid_points(width + pad, step),
    )


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
        return edge + u[0] * (self.height - 2 * edge), edge + u[1] * (self.width - 2 * edge), r

    def field(self, points: np.ndarray) -> np.ndarray:
        """f at ``points`` (..., 3) [units]: < 0 inside rock, > 0 in air (module docstring)."""
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
            out[sel] = np.maximum(slab, hole) + g.noise_amplitude * value_noise(q, self.noise_seed, g.noise_scale)
        return out
