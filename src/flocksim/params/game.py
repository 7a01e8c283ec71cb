"""The Flappy Boids game's parameters (``params.game``, docs/parameters.md) and their check: the
course's sizes the check needs (the gap's rim, the seabed's top, the grid of a chunk) live here
with the schema, below the game (:mod:`flocksim.game.course` builds the rock from them)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from flocksim.budgets import BudgetError
from flocksim.params.fields import Strict, choice, quantity

MAX_CHUNK_CELLS = 1_048_576
"""Most grid points of one chunk's marching-cubes grid (and of its avoidance grid): 8 MB of float64."""
GAP_EDGE = 3.0
"""Smallest distance between a gap's rim and the box's side [units]."""


class Game(Strict):
    """Flappy Boids (docs/viewer.md, "Flappy Boids"): the flock follows a target flying along +x
    through walls of rock with gaps over a rocky seabed (src/flocksim/game/).

    Wall k stands at x = first_wall + k wall_spacing across the whole box (y, z); its gap is a
    round hole of radius gap_radius - gap_shrink x (x / 1000), at least gap_min_radius. The rock
    is a 3D field (slab minus hole, and the seabed at floor_height rolling by noise_amplitude, plus
    smooth noise of noise_amplitude) that is meshed by marching cubes for the viewer and sampled
    for obstacle avoidance and collisions; each gap lies above the seabed's top. The target
    moves at speed + speed_gain x (x / 1000), at most speed_max; a bird is lost when it touches
    rock or falls more than max_lag behind the target; the game is over when none is left.
    """

    enabled: bool = Field(False, description="Play Flappy Boids; allowed: true | false (needs world.dim = 3).")
    pilot: Literal["gaps", "straight", "player"] = choice(
        "gaps", "Who moves the target: gaps (scripted, through each gap) | straight (never turns) | player."
    )
    speed: float = quantity(10.0, "units/s", "Target speed along +x at the start", gt=0.0, le=1e4)
    speed_gain: float = quantity(2.0, "units/s", "Target speed added per 1000 units flown", ge=0.0, le=1e4)
    speed_max: float = quantity(20.0, "units/s", "Largest target speed", gt=0.0, le=1e4)
    lateral_speed: float = quantity(24.0, "units/s", "Target speed across the course (y, z)", gt=0.0, le=1e4)
    lead: float = quantity(8.0, "units", "Start distance of the target ahead of the flock's centre", ge=0.0, le=1e4)
    max_lag: float = quantity(60.0, "units", "A bird farther than this behind the target is lost", gt=0.0, le=1e6)
    leash: float = quantity(
        30.0,
        "units",
        "The target waits (slows to a stop over its last 10 units) when it is this far ahead of the flock's median",
        gt=0.0,
        le=1e6,
    )
    first_wall: float = quantity(80.0, "units", "x of the first wall", ge=0.0, le=1e6)
    wall_spacing: float = quantity(60.0, "units", "Distance between walls (= chunk length)", gt=0.0, le=1e4)
    wall_thickness: float = quantity(6.0, "units", "Thickness of a wall before noise", gt=0.0, le=1e4)
    gap_radius: float = quantity(15.0, "units", "Gap radius at x = 0", gt=0.0, le=1e4)
    gap_min_radius: float = quantity(9.0, "units", "Smallest gap radius", gt=0.0, le=1e4)
    gap_shrink: float = quantity(1.0, "units", "Gap radius lost per 1000 units flown", ge=0.0, le=1e4)
    noise_amplitude: float = quantity(2.0, "units", "Amplitude of the rock's smooth noise", ge=0.0, le=1e4)
    noise_scale: float = quantity(8.0, "units", "Feature size of the rock's noise", gt=0.0, le=1e4)
    floor_height: float = quantity(
        4.0, "units", "Mean height of the rocky seabed above the box's bottom (y = 0)", ge=0.0, le=1e4
    )
    cell_size: float = quantity(3.0, "units", "Voxel size of the marching-cubes grid", gt=0.0, le=1e4)
    avoid_cell: float = quantity(3.0, "units", "Spacing of the rock's avoidance spheres", gt=0.0, le=1e4)
    avoid_range: float = quantity(6.0, "units", "Steering range of the rock (rules.avoid)", gt=0.0, le=1e4)
    chunks_ahead: int = quantity(3, "chunks", "Chunks kept ahead of the flock", ge=1, le=16)
    chunks_behind: int = quantity(1, "chunks", "Chunks kept behind the flock", ge=0, le=16)
    max_triangles: int = quantity(
        60_000, "triangles", "Most triangles of one chunk's mesh (coarser steps above)", ge=12, le=1_000_000
    )


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


def check_game(params: Any) -> None:
    """ValueError (BudgetError for sizes) naming the field when ``params.game`` cannot be played
    (``params``: the :class:`~flocksim.params.ReynoldsParams` being validated)."""
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
