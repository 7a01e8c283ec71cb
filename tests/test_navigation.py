"""Occupancy grids and flow fields: hand-made grids, walls, unreachable cells, recompute rule."""

import math

import numpy as np
import pytest
from PIL import Image

from flocksim.navigation import FlowField, OccupancyGrid, walls_from_image, walls_from_map
from flocksim.navigation.flowfield import MOVES
from flocksim.navigation.occupancy import walls_from_obstacles
from flocksim.params import Obstacles

S = math.sqrt(0.5)


def field_of(rows, target, cell=1.0):
    f = FlowField(OccupancyGrid(walls_from_map(rows), cell, (0.0, 0.0)))
    f.update(np.asarray(target, dtype=float))
    return f


def test_map_rows_top_first():
    walls = walls_from_map(["#..", "..."])
    assert walls.shape == (2, 3)
    assert walls[1, 0] and not walls[0, 0]  # the first text row is the top (row 1)


def test_image_dark_is_wall(tmp_path):
    pixels = np.full((2, 3), 255, dtype=np.uint8)
    pixels[0, 2] = 0  # top-right pixel black
    Image.fromarray(pixels).save(tmp_path / "grid.png")
    walls = walls_from_image(tmp_path / "grid.png")
    assert walls.tolist() == [[False, False, False], [False, False, True]]
    with pytest.raises(ValueError, match=r"navigation\.image"):
        walls_from_image(tmp_path / "missing.png")


def test_corridor_points_along_it_with_path_costs():
    f = field_of(["#####", "#...#", "#####"], target=[1.5, 1.5])
    assert f.cost[1, 1:4].tolist() == [0.0, 1.0, 2.0]
    assert f.direction[1, 1].tolist() == [0.0, 0.0]  # the target's cell
    assert f.direction[1, 2].tolist() == [-1.0, 0.0]
    assert f.direction[1, 3].tolist() == [-1.0, 0.0]
    assert np.isinf(f.cost[0]).all()  # walls


def test_u_shaped_wall_leads_around_it():
    rows = [
        ".......",
        ".#####.",
        ".#...#.",
        ".#...#.",
        ".......",
    ]
    # target inside the U (opening at the bottom), agent above the U
    f = field_of(rows, target=[3.5, 2.5])
    top = (4, 3)  # row 4 = the first text row
    # by hand: 3 steps along the top, 4 down the side (no diagonal past the U's corners), 2 along the
    # bottom, one diagonal into the opening and one step up: 10 + sqrt(2)
    assert f.cost[top] == pytest.approx(10 + math.sqrt(2))
    # from the top centre the path leaves sideways (the U's roof is a wall below it)
    assert abs(f.direction[top][0]) == 1.0 and f.direction[top][1] == 0.0
    # following the field from every free cell reaches the target without stepping on a wall
    walls = walls_from_map(rows)
    for r0, c0 in zip(*np.nonzero(~walls), strict=True):
        r, c = int(r0), int(c0)
        for _ in range(50):
            d = f.direction[r, c]
            if not d.any():
                break
            c, r = c + round(d[0] / abs(d[0])) if d[0] else c, r + round(d[1] / abs(d[1])) if d[1] else r
            assert not walls[r, c]
        assert (r, c) == f.target_cell


def test_no_direction_into_walls_or_across_corners():
    rng = np.random.default_rng(3)
    walls = rng.random((30, 40)) < 0.3
    walls[5, 5] = False
    f = FlowField(OccupancyGrid(walls, 0.5, (1.0, 2.0)))
    f.update(np.array([1.0 + 5.5 * 0.5, 2.0 + 5.5 * 0.5]))
    assert f.target_cell == (5, 5)
    free = ~walls
    for r, c in zip(*np.nonzero(free & np.isfinite(f.cost)), strict=True):
        d = f.direction[r, c]
        if (r, c) == (5, 5):
            assert not d.any()
            continue
        dc, dr = int(np.sign(round(d[0], 6))), int(np.sign(round(d[1], 6)))
        assert free[r + dr, c + dc], "a direction points into a wall"
        if dr and dc:
            assert free[r + dr, c] and free[r, c + dc], "a diagonal cuts a wall corner"
        assert f.cost[r + dr, c + dc] + 0.5 * math.hypot(dr, dc) == pytest.approx(f.cost[r, c])
    assert {(dr, dc) for dr, dc in MOVES} == {(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)} - {(0, 0)}


def test_unreachable_cells_have_no_direction_and_no_nan():
    f = field_of(["#####", "#.#.#", "#####"], target=[1.5, 1.5])
    assert np.isinf(f.cost[1, 3]) and not f.direction[1, 3].any()
    points = np.array([[3.5, 1.5], [3.2, 1.7], [-5.0, 0.0], [1.5, 1.5], [2.5, 1.5]])
    for bilinear in (True, False):
        d, cost = f.sample(points, bilinear)
        assert np.isfinite(d).all() and not np.isnan(cost).any()
        assert not d[0].any() and np.isinf(cost[0])  # unreachable
        assert not d[2].any()  # outside the grid
        assert d[4].tolist() == [-1.0, 0.0]  # inside the wall between: out toward the target side


def test_wall_cells_point_out_and_target_in_a_wall_uses_nearest_free_cell():
    f = field_of(["....", ".##.", "...."], target=[1.6, 1.5])  # the target stands in a wall
    assert not (f.grid.walls[f.target_cell])
    d = f.direction[1, 1]
    assert f.cost[1 + int(np.sign(d[1])), 1 + int(np.sign(d[0]))] < np.inf


def test_recompute_only_when_the_target_changes_cell():
    f = field_of(["....", "....", "...."], target=[0.5, 0.5])
    assert f.recomputes == 1
    assert not f.update(np.array([0.9, 0.2]))  # same cell
    assert f.recomputes == 1
    assert f.update(np.array([2.5, 1.5]))
    assert f.recomputes == 2 and f.target_cell == (1, 2)


def test_bilinear_blend_is_unit_and_nearest_is_the_cell():
    f = field_of(["......", "......"], target=[0.5, 0.5])
    d, cost = f.sample(np.array([[3.0, 1.0]]), bilinear=True)
    assert np.linalg.norm(d[0]) == pytest.approx(1.0)
    assert 2.0 < cost[0] < 3.5
    d, _ = f.sample(np.array([[3.0, 1.0]]), bilinear=False)
    assert d[0].tolist() == pytest.approx([-S, -S]) or d[0].tolist() == [-1.0, 0.0]


def test_obstacles_rasterise_to_walls():
    obstacles = Obstacles.model_validate(
        {
            "boxes": [{"min_corner": [2.0, 0.0], "max_corner": [3.0, 4.0]}],
            "circles": [{"center": [6.5, 2.5], "body_radius": 0.2}],
        }
    )
    walls = walls_from_obstacles(obstacles, (8.0, 4.0), 1.0, (0.0, 0.0), 0.0, (0, 1))
    assert walls[:, 2].all() and not walls[:, 1].any() and not walls[:, 3].any()
    assert walls[2, 6] and not walls[0, 6]
