"""Flappy Boids (issue 19): the rock field (walls and the seabed, issue 28), marching-cubes chunks,
the chunk cache, the rock-mesh message, the game rules (collision, falling behind, score, game
over, restart) and the pilots."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import flocksim
from flocksim.budgets import BudgetError
from flocksim.config import ConfigError
from flocksim.game import Course, game_of
from flocksim.game.chunks import ChunkCache
from flocksim.game.course import NO_ROCK
from flocksim.game.flappy import POINTS_PER_UNIT
from flocksim.game.mesh import mesh_chunk
from flocksim.game.noise import value_noise
from flocksim.game.wire import decode_rocks, encode_rocks

SMALL = [
    "agents.n=40",
    "game.gap_radius=10",
    "game.gap_min_radius=8",
    "game.gap_shrink=1",
    "game.speed=15",
    "game.speed_max=15",
]


def params(*changes: str):
    return flocksim.apply_overrides(flocksim.load_preset("flappy-boids"), [*SMALL, *changes])


def flat_course(**game) -> Course:
    """A course without noise (the field is exactly the slab-minus-hole formula)."""
    g = params("game.noise_amplitude=0").game.model_copy(update=game)
    return Course(g, 60.0, 60.0, seed=3)


def edges_of(triangles: np.ndarray) -> np.ndarray:
    """Each undirected edge of a triangle list, once per triangle that has it (sorted vertex pairs)."""
    e = np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]])
    return np.sort(e, axis=1)


def closed_but_at_the_chunk_ends(m, course: Course) -> bool:
    """Whether every edge of chunk mesh ``m`` is shared by exactly two triangles, but those lying
    on the chunk's two x ends (where the seabed goes on into the neighbouring chunk), once each."""
    edges, counts = np.unique(edges_of(m.triangles), axis=0, return_counts=True)
    x0 = float(course.wall_x(m.index)) - course.game.wall_spacing / 2.0
    x = m.vertices[:, 0].astype(np.float64)
    on_end = np.zeros(len(m.vertices), bool)
    for end in (x0, x0 + course.game.wall_spacing):
        on_end |= np.abs(x - end) < 1e-3
    border = on_end[edges[:, 0]] & on_end[edges[:, 1]]
    return bool(np.all(counts[~border] == 2) and np.all(counts[border] == 1))


# ---- the field ----------------------------------------------------------------------------------


def test_field_hand_computed_without_noise():
    c = flat_course()
    x0 = float(c.wall_x(0))
    assert x0 == 80.0 and float(c.wall_x(2)) == 200.0  # first_wall + k spacing
    cy, cz, r = c.gap(0)
    assert r == pytest.approx(max(8.0, 10.0 - 1.0 * 80.0 / 1000.0))  # gap_radius - gap_shrink x / 1000
    fh = c.game.floor_height
    assert cy - r >= fh + 3.0  # the gap's rim stays 3 units above the (flat) seabed
    f = c.field(
        np.array(
            [
                [x0, cy, cz],  # gap centre: air, r from the rim
                [x0, cy + r + 2.0, cz],  # in the wall, 2 units past the rim: rock, 2 deep
                [x0 + 5.0, cy + r + 2.0, cz],  # 5 in front of the wall's middle: 5 - 3 = 2 in air
                [x0 + 30.0 - 1e-6, cy, cz],  # the chunk's far edge: 27 from the wall, cy - fh above the seabed
                [10.0, 30.0, 30.0],  # before the first wall: only the seabed, 30 - fh below
                [x0 + 20.0, fh - 1.5, 12.0],  # between walls, 1.5 under the seabed's surface: rock
            ]
        )
    )
    assert f == pytest.approx([r, -2.0, 2.0, min(27.0 - 1e-6, cy - fh), 30.0 - fh, -1.5])
    assert c.walls(np.array([[10.0, 30.0, 30.0]]))[0] == NO_ROCK  # no wall before the first one


def test_gap_radius_narrows_with_distance_down_to_its_minimum():
    c = flat_course(gap_radius=12.0, gap_min_radius=9.0, gap_shrink=2.0)
    radii = [c.gap(k)[2] for k in (0, 10, 20, 1000)]
    assert radii[0] == pytest.approx(12.0 - 2.0 * 0.08)
    assert radii[1] == pytest.approx(12.0 - 2.0 * 0.68)
    assert radii[0] > radii[1] > radii[2] >= 9.0 and radii[3] == 9.0


def test_gaps_lie_inside_the_box_and_are_seeded_per_chunk():
    c = flat_course()
    for k in range(50):
        cy, cz, r = c.gap(k)
        assert r + 3.0 <= cy <= 60.0 - r - 3.0 and r + 3.0 <= cz <= 60.0 - r - 3.0
    assert c.gap(7) == Course(c.game, 60.0, 60.0, seed=3).gap(7)  # any chunk alone, same answer
    assert c.gap(7) != Course(c.game, 60.0, 60.0, seed=4).gap(7)


def test_noise_is_bounded_smooth_and_deterministic():
    rng = np.random.default_rng(0)
    p = rng.uniform(-100, 100, (2000, 3))
    a = value_noise(p, 11, 8.0)
    assert np.all(np.abs(a) <= 1.0) and a.std() > 0.1
    assert np.array_equal(a, value_noise(p, 11, 8.0))
    assert not np.allclose(a, value_noise(p, 12, 8.0))
    step = value_noise(p + 1e-3, 11, 8.0) - a  # continuous: a tiny move, a tiny change
    assert np.abs(step).max() < 1e-3
    assert value_noise(np.array([[8.0, 16.0, -24.0]]), 11, 8.0)[0] == pytest.approx(
        value_noise(np.array([[8.0, 16.0, -24.0]]), 11, 8.0)[0]
    )


# ---- meshing and chunks ---------------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, 5])
def test_chunk_mesh_is_closed_and_on_the_surface(k):
    c = Course(params().game, 60.0, 60.0, seed=0)
    m = mesh_chunk(c, k)
    assert len(m.triangles) > 1000 and m.step == 1
    assert closed_but_at_the_chunk_ends(m, c)  # watertight but where the seabed goes on
    assert np.all(m.triangles < len(m.vertices))
    h = c.game.cell_size
    v = m.vertices.astype(np.float64)
    inner = np.all((v[:, 1:] > -h) & (v[:, 1:] < 60.0 + h), axis=1)  # away from the caps that close the grid
    assert inner.mean() > 0.6
    assert np.abs(c.field(v[inner])).max() < h  # on the zero level, within a cell
    assert np.all(np.abs(v[~inner, 1:] - 30.0).max(axis=1) <= 30.0 + 2 * h)  # caps: at most 2 cells out
    x0 = float(c.wall_x(k))
    assert m.vertices[:, 0].min() >= x0 - 30.0 - 1e-3 and m.vertices[:, 0].max() <= x0 + 30.0 + 1e-3
    assert len(m.spheres) > 100 and np.all(c.field(m.spheres) <= 0.0)  # avoidance spheres sit in rock


def seabed_vertices(course: Course, m) -> np.ndarray:
    """The vertices of chunk mesh ``m`` at the seabed's height and away from its wall (and from the
    caps that close the grid on z) [units]."""
    g = course.game
    h = g.cell_size
    v = m.vertices.astype(np.float64)
    low = (v[:, 1] > g.floor_height - 2 * g.noise_amplitude - h) & (v[:, 1] < g.floor_height + 2 * g.noise_amplitude)
    clear = np.abs(v[:, 0] - float(course.wall_x(m.index))) > g.wall_thickness / 2 + g.noise_amplitude + h
    return v[low & clear & (v[:, 2] > 0.0) & (v[:, 2] < course.width)]


@pytest.mark.parametrize("k", [-1, 0, 4])
def test_the_seabed_is_meshed_in_every_chunk_and_joins_the_next(k):
    """Issue 28: the chunks' marching-cubes meshes hold a rock seabed at game.floor_height, across
    the whole chunk, on the field's zero level, with avoidance spheres; it meets the next chunk's."""
    c = Course(params().game, 60.0, 60.0, seed=0)
    g = c.game
    m = mesh_chunk(c, k)
    floor = seabed_vertices(c, m)
    assert len(floor) > 300, len(floor)
    assert np.abs(c.field(floor)).max() < g.cell_size  # on the rock's surface
    assert abs(float(np.mean(floor[:, 1])) - g.floor_height) < 1.5  # around floor_height on average
    x0 = float(c.wall_x(k)) - g.wall_spacing / 2.0
    assert floor[:, 0].min() < x0 + 1e-3 and floor[:, 0].max() > x0 + g.wall_spacing - 1e-3  # end to end
    assert floor[:, 2].min() <= g.cell_size and floor[:, 2].max() >= c.width - g.cell_size  # side to side
    low = m.spheres[m.spheres[:, 1] < g.floor_height + 2 * g.noise_amplitude]
    assert len(low) > 200 and np.all(c.field(low) <= 0.0)  # the seabed is avoided like the walls
    both = np.concatenate([m.spheres, mesh_chunk(c, k + 1).spheres])
    assert len(np.unique(np.round(both, 6), axis=0)) == len(both)  # none twice at the shared border
    # the seabed's vertices on the chunk's far end are the next chunk's on its near end
    ends = [np.round(mesh.vertices[np.abs(mesh.vertices[:, 0] - x) < 1e-3], 3) for mesh, x in
            ((m, x0 + g.wall_spacing), (mesh_chunk(c, k + 1), x0 + g.wall_spacing))]  # fmt: skip
    assert len(ends[0]) > 20
    assert np.array_equal(np.unique(ends[0], axis=0), np.unique(ends[1], axis=0))


def outward_share(course: Course, vertices: np.ndarray, triangles: np.ndarray) -> float:
    """Share of the triangles wound counter-clockwise seen from the air (their normal, by the
    right-hand rule, points up the field's gradient): the faces the page draws (front faces only)."""
    a, b, c = (vertices.astype(np.float64)[triangles[:, i]] for i in range(3))
    normal = np.cross(b - a, c - a)
    centre = (a + b + c) / 3.0
    eps = 0.05
    gradient = np.stack([course.field(centre + eps * e) - course.field(centre - eps * e) for e in np.eye(3)], axis=-1)
    return float(np.mean(np.einsum("ij,ij->i", normal, gradient) > 0.0))


@pytest.mark.parametrize("k", [-1, 0, 3])
def test_chunk_triangles_face_out_of_the_rock(k):
    c = Course(params().game, 60.0, 60.0, seed=0)
    m = mesh_chunk(c, k)
    inner = np.all((m.vertices[:, 1:] > 0.0) & (m.vertices[:, 1:] < 60.0), axis=1)  # not the caps closing the grid
    tri = m.triangles[inner[m.triangles].all(axis=1)]
    assert len(tri) > 500
    assert outward_share(c, m.vertices, tri) > 0.99
    # the same mesh wound the other way (what two-sided drawing would hide) fails the check
    assert outward_share(c, m.vertices, tri[:, ::-1]) < 0.01


def test_watertight_check_fails_on_a_chunk_with_a_triangle_removed():
    c = Course(params().game, 60.0, 60.0, seed=0)
    m = mesh_chunk(c, 0)
    assert not closed_but_at_the_chunk_ends(m._replace(triangles=m.triangles[1:]), c)


def test_triangle_cap_coarsens_the_mesh():
    c = Course(params("game.max_triangles=2000", "game.noise_amplitude=2.5").game, 60.0, 60.0, seed=0)
    m = mesh_chunk(c, 0)
    assert 0 < len(m.triangles) <= 2000 and m.step > 1
    assert closed_but_at_the_chunk_ends(m, c)


def test_grid_sizes_are_checked_before_allocation():
    with pytest.raises(ConfigError, match=r"game\.cell_size"):
        params("game.cell_size=0.1")
    with pytest.raises(ConfigError, match=r"game\.wall_spacing"):
        params("game.wall_spacing=10")
    with pytest.raises(ConfigError, match=r"game\.gap_radius"):
        params("game.gap_radius=28", "game.gap_min_radius=8")
    with pytest.raises(ConfigError, match=r"game\.floor_height: .* allowed: floor_height <= 30"):
        params("game.floor_height=31")  # 60 - 2 x (10 + 3) - 2 x 2: the gap fits above the seabed's top
    with pytest.raises(ConfigError, match=r"game\.floor_height"):
        params("game.floor_height=-1")
    assert params("game.floor_height=30").game.floor_height == 30.0
    with pytest.raises(ConfigError, match=r"world\.dim = 3"):
        params("world.dim=2", "world.bounds.size=[1000, 60]", "rules.seek.target=[0, 0]")
    assert issubclass(BudgetError, ValueError)


def test_chunk_cache_is_bounded_and_drops_chunks_behind():
    g = params("game.chunks_ahead=2", "game.chunks_behind=1", "game.max_triangles=3000").game
    cache = ChunkCache(Course(g, 60.0, 60.0, seed=1))
    assert cache.capacity == 4
    assert cache.update(0.0) and list(cache.chunks) == [-1, 0, 1]  # x = 0 lies in chunk -1 (only the seabed)
    assert not cache.update(1.0)
    for x in np.arange(0.0, 1500.0, 25.0):
        cache.update(float(x))
        k = int(cache.course.chunk_of(x))
        assert len(cache.chunks) <= cache.capacity
        assert cache.triangles() <= cache.capacity * g.max_triangles
        assert min(cache.chunks) >= k - 1 and max(cache.chunks) == k + 2
    assert min(cache.chunks) > 20  # the early chunks were dropped


def test_the_next_chunk_is_meshed_ahead_and_equals_one_meshed_in_place():
    g = params("game.chunks_ahead=2", "game.chunks_behind=1", "game.max_triangles=3000").game
    course = Course(g, 60.0, 60.0, seed=1)
    cache = ChunkCache(course)
    cache.update(0.0)  # chunks -1, 0 and 1 held, chunk 2 started ahead
    assert list(cache._ahead) == [2]
    x = float(course.wall_x(1))  # the flock reaches chunk 1: chunk 3 is wanted, 2 comes from ahead
    cache.update(x)
    assert sorted(cache.chunks) == [0, 1, 2, 3] and list(cache._ahead) == [4]
    for k in (2, 3):
        direct = mesh_chunk(course, k)
        assert np.array_equal(cache.chunks[k].vertices, direct.vertices)
        assert np.array_equal(cache.chunks[k].triangles, direct.triangles)
        assert np.array_equal(cache.chunks[k].spheres, direct.spheres)


def test_rock_message_round_trip_and_errors():
    m = mesh_chunk(Course(params().game, 60.0, 60.0, seed=0), 2)
    data = encode_rocks(m)
    assert data[:4] == b"FLKR"
    assert len(data) == 32 + math.ceil(12 * len(m.vertices) / 8) * 8 + 12 * len(m.triangles)
    chunk, v, t = decode_rocks(data)
    assert chunk == 2 and np.array_equal(v, m.vertices) and np.array_equal(t, m.triangles)
    with pytest.raises(ValueError, match="length"):
        decode_rocks(data[:-4])
    with pytest.raises(ValueError, match="FLKR"):
        decode_rocks(b"FLKF" + data[4:])


# ---- the rules -----------------------------------------------------------------------------------------


def test_bird_in_rock_is_removed_and_counted_with_stable_ids():
    sim = flocksim.Simulation(params(), seed=0, threads=1)
    game = game_of(sim)
    c = game.course
    cy, cz, r = c.gap(0)
    s = sim.state
    s.position[5] = [c.wall_x(0), cy + r + 2.5, cz]  # inside wall 0, outside its gap
    assert c.field(s.position[5:6])[0] < 0
    ids_before = s.ids.copy()
    sim.step(1)
    assert not sim.state.alive[5] and sim.state.alive.sum() == 39
    assert np.array_equal(sim.state.ids, ids_before)  # rows and ids stay; the bird is marked dead
    st = game.status(sim)
    assert (st["lost_rock"], st["lost_behind"], st["lost"], st["alive"]) == (1, 0, 1, 39)


def test_a_fish_flying_straight_down_into_the_seabed_is_lost_on_rock():
    """Issue 28: the seabed is rock. A fish flying straight down at full speed from 1 unit over the
    seabed's highest top, between the flock and the first wall, hits it and counts in lost_rock."""
    sim = flocksim.Simulation(params(), seed=0, threads=1)
    game = game_of(sim)
    s = sim.state
    top = sim.params.game.floor_height + 2.0 * sim.params.game.noise_amplitude
    s.position[5] = [game.target[0] - 6.0, top + 1.0, 30.0]
    s.velocity[5] = [0.0, -sim.params.agents.max_speed, 0.0]
    assert game.course.field(s.position[5:6])[0] > s.radius[5]  # in the water at the start
    sim.step(40)
    st = game.status(sim)
    assert not sim.state.alive[5], sim.state.position[5]
    assert (st["lost_rock"], st["lost_behind"]) == (1, 0), st


def test_bird_left_behind_is_lost():
    sim = flocksim.Simulation(params("game.max_lag=20"), seed=0, threads=1)
    game = game_of(sim)
    sim.state.position[0, 0] = game.target[0] - 25.0
    sim.step(1)
    assert not sim.state.alive[0] and game.lost_behind == 1 and game.lost_rock == 0


def test_score_is_earned_per_unit_flown_by_the_flock_kept_and_speed_grows():
    sim = flocksim.Simulation(params("game.speed=10", "game.speed_max=30", "game.speed_gain=0"), seed=0, threads=1)
    game = game_of(sim)
    sim.step(60)
    st = game.status(sim)
    assert st["distance"] == pytest.approx(60 * 10.0 / 60.0)  # 10 units/s for 1 s
    assert abs(st["score"] - POINTS_PER_UNIT * 10.0) <= 1  # the whole flock: POINTS_PER_UNIT a unit
    # half the flock lost: the next unit earns half as much, and the score does not fall
    sim.remove_agents(sim.state.ids[:20])
    sim.step(60)
    after = game.status(sim)
    assert after["score"] == pytest.approx(st["score"] + POINTS_PER_UNIT * 10.0 * 20 / 40, abs=1.0)
    assert after["score"] >= st["score"]
    fast = game_of(flocksim.Simulation(params("game.speed=10", "game.speed_max=30", "game.speed_gain=5"), threads=1))
    fast.target[0] += 2000.0  # 2000 units flown: 10 + 5 x 2 = 20 units/s
    assert fast.speed() == pytest.approx(20.0)
    fast.target[0] += 1e6
    assert fast.speed() == 30.0  # capped at speed_max


def test_steering_into_a_wall_loses_the_flock_on_rock_and_the_score_never_falls():
    """Issue 28: the player holds the target in a corner, in rock: the birds are lost on rock
    (not "left behind", as when avoidance piled them against the wall), and the score only rises."""
    sim = flocksim.Simulation(params(), seed=0, threads=1)
    game = game_of(sim)
    game.steer(-1.0, -1.0)
    scores = []
    for _ in range(120):
        sim.step(10)
        scores.append(game.status(sim)["score"])
        if game.over:
            break
    st = game.status(sim)
    assert st["game_over"] and st["alive"] == 0, st
    assert st["lost_rock"] >= 0.9 * 40 and st["lost_rock"] + st["lost_behind"] == 40, st
    assert all(b >= a for a, b in itertools.pairwise(scores)), scores


def test_difficulty_rises_with_distance():
    """The shipped course narrows its gaps and speeds up as it goes (preset flappy-boids)."""
    shipped = flocksim.apply_overrides(flocksim.load_preset("flappy-boids"), ["agents.n=20"])
    game = game_of(flocksim.Simulation(shipped, threads=1))
    course = game.course
    near = course.gap_radius(0)
    far = int((1000.0 - course.game.first_wall) / course.game.wall_spacing)
    assert course.gap_radius(far) <= near - 4.0, (near, course.gap_radius(far))
    v0 = game.speed()
    game.target[0] += 1000.0
    assert game.speed() >= v0 + 6.0


def test_game_over_when_the_flock_is_gone_then_the_target_stops():
    sim = flocksim.Simulation(params(), seed=0, threads=1)
    game = game_of(sim)
    sim.remove_agents(sim.state.ids[1:])
    sim.state.position[0, 0] = game.target[0] - 100.0  # the last bird is far behind
    sim.step(1)
    assert game.status(sim)["game_over"] and game.status(sim)["alive"] == 0
    x = game.target[0]
    sim.step(5)
    assert game.target[0] == x


def test_player_steering_moves_the_target_and_is_checked():
    sim = flocksim.Simulation(params(), seed=0, threads=1)
    game = game_of(sim)
    y, z = game.target[1:]
    game.steer(0.6, -0.5)
    sim.step(30)  # 0.5 s at 24 units/s lateral speed
    assert game.pilot == "player"
    assert game.target[1] - y == pytest.approx(0.5 * 24.0 * 0.6)
    assert game.target[2] - z == pytest.approx(0.5 * 24.0 * -0.5)
    game.steer(1.0, 1.0)  # a diagonal is no faster than a straight move
    sim.step(30)
    assert game.target[1] - y == pytest.approx(0.5 * 24.0 * (0.6 + math.sqrt(0.5)))
    with pytest.raises(ValueError, match=r"steer\.y"):
        game.steer(2.0, 0.0)
    with pytest.raises(ValueError, match=r"steer\.z"):
        game.steer(0.0, math.nan)


def test_restart_from_a_checkpoint_continues_bitwise():
    p = params()
    a = flocksim.Simulation(p, seed=2, threads=1)
    a.step(40)
    saved = a.checkpoint()
    a.step(40)
    b = flocksim.Simulation(p, seed=2, threads=1)
    b.restore(saved)
    b.step(40)
    assert np.array_equal(a.state.position, b.state.position)
    assert game_of(a).status(a) == game_of(b).status(b)


def test_rock_steers_the_birds_through_the_engine():
    """Avoidance reads the game's spheres: with rules.avoid off the same straight flight ends in rock."""
    seed = straight_into_rock_seed()
    hit = {}
    for weight in ("3", "0"):
        # no bird left behind (held back by rock counts as rock): only touching rock counts
        p = params(
            "game.pilot=straight", "game.max_lag=1000", "rules.avoid.strength=40", f"rules.avoid.weight={weight}"
        )
        sim = flocksim.Simulation(p, seed=seed, threads=1)
        sim.step(480)
        hit[weight] = game_of(sim).lost_rock
    assert hit["0"] > 20 and hit["3"] < hit["0"] / 2, hit


# ---- the pilots ------------------------------------------------------------------------------------


def straight_into_rock_seed() -> int:
    """The first seed whose first wall blocks the straight line through the box's centre (by >= 6 units)."""
    g = params().game
    return next(s for s in range(1000) if math.dist(Course(g, 60.0, 60.0, s).gap(0)[:2], (30, 30)) > g.gap_radius + 6)


@pytest.mark.slow
def test_scripted_pilot_keeps_the_flock_and_a_straight_one_loses_it():
    seed = straight_into_rock_seed()
    alive = {}
    for pilot in ("gaps", "straight"):
        sim = flocksim.Simulation(params(f"game.pilot={pilot}"), seed=seed, threads=1)
        sim.step(720)  # 12 s at 15 units/s: the first three walls (the game ends sooner if none is left)
        alive[pilot] = game_of(sim).status(sim)["alive"]
    assert alive["gaps"] >= 36, alive  # most of the 40 birds
    assert alive["straight"] <= 4, alive


# ---- issue 39: a fair game (the target waits, the camera stays in the water, the best is the player's) ----


def test_the_target_waits_for_a_slow_school_so_none_is_left_behind():
    """A school slower than the target (here at most 8 units/s against 15) was left behind as a
    whole: 60 units behind the target, every fish was lost at once (the course's cliff near
    distance 1000 was this: 86 of 150 left behind within 3 s). The target now waits for the
    school's median, ``game.leash`` ahead of it at most."""
    p = params("agents.max_speed=8", "agents.min_speed=2", "game.first_wall=5000", "game.pilot=straight")
    sim = flocksim.Simulation(p, seed=0, threads=1)
    game = game_of(sim)
    ahead, schools, statuses = [], [], []
    for _ in range(18):
        sim.step(30)
        s = sim.state
        xs = s.position[s.alive, 0]
        ahead.append(game.target[0] - float(np.median(xs)))
        schools.append(xs)
        statuses.append(game.status(sim))
    st = game.status(sim)
    assert st["lost_behind"] == 0 and st["alive"] == 40, st
    assert max(ahead) <= p.game.leash + 0.5, ahead
    # the chase camera stays behind the school that lags the target (out of view behind it before)
    behind_camera = [float(np.mean(xs < status["camera"][0])) for xs, status in zip(schools, statuses, strict=True)]
    assert max(behind_camera) <= 0.05, behind_camera
    assert st["distance"] > 8 * 9 * 0.6, st  # it still flies on, at the school's pace


def test_the_course_near_distance_1000_thins_the_school_without_a_cliff():
    """A short slice of the difficulty curve (the 5-minute measurement is
    benchmarks/flappy_curve.py, docs/viewer.md): the shipped preset's 150 fish, moved with their
    target to distance 1000, where the curve before lost 147 of them within about 3 s (gaps at
    their minimum radius 9, the target at 18 units/s running away from the school). The scripted
    pilot now keeps at least 90 % of them through 12 s there."""
    shipped = flocksim.load_preset("flappy-boids")
    sim = flocksim.Simulation(shipped, seed=0, threads=1)
    game = game_of(sim)
    sim.state.position[:, 0] += 1000.0
    game.target[0] += 1000.0
    sim.invalidate_queries()
    sim.step(720)
    st = game.status(sim)
    assert st["distance"] > 1100, st  # it flew on through the narrow part
    assert st["alive"] >= 0.9 * 150, st


def naive_camera(game) -> np.ndarray:
    """The chase camera as the page placed it before: 32 behind the target, 9 above."""
    return game.target + np.array([-32.0, 9.0, 0.0])


def test_the_chase_camera_stays_in_the_water_above_the_seabed():
    """The page put its camera 32 behind the target and 9 above it: inside every wall the target
    had just flown through off its gap's centre, and in front of a school that lagged behind (the
    school hidden behind a wall face). The game now says where the camera goes: never within
    CAMERA_CLEAR of rock, never below the seabed's top, behind (nearly) all the school; steered
    down and left into the corner as well."""
    from flocksim.game.flappy import CAMERA_CLEAR

    sim = flocksim.Simulation(params(), seed=1, threads=1)
    game = game_of(sim)
    course = game.course
    top = course.game.floor_height + 2.0 * course.game.noise_amplitude
    naive_in_rock = 0
    samples = 0
    for k in range(120):
        if k == 80:
            game.steer(-1.0, -1.0)  # down and left, into the seabed's corner
        sim.step(5)
        if game.over:
            break
        camera = np.array(game.status(sim)["camera"])
        xs = sim.state.position[sim.state.alive, 0]
        field = float(course.field(camera[None])[0])
        assert field >= CAMERA_CLEAR - 1e-9, (k, camera, field)
        assert camera[1] >= top + CAMERA_CLEAR, (k, camera)
        assert np.mean(xs < camera[0]) <= 0.05, (k, camera, np.sort(xs)[:5])
        naive = naive_camera(game)
        naive_in_rock += float(course.field(naive[None])[0]) < CAMERA_CLEAR
        samples += 1
    assert samples >= 90, samples
    # the rule before fails the same checks in this run (the test can fail)
    assert naive_in_rock > 0, naive_in_rock


def test_the_cheap_lower_bound_of_the_field_holds():
    """The chase camera is placed with a bound of the rock field that samples no noise (a few
    times cheaper per frame); a point clear by the bound is clear by the field."""
    course = Course(params().game, 60.0, 60.0, seed=3)
    points = np.random.default_rng(1).uniform([0.0, -5.0, -5.0], [1500.0, 65.0, 65.0], (20000, 3))
    bound, field = course.field_lower_bound(points), course.field(points)
    assert np.all(bound <= field + 1e-12)
    assert np.mean(field - bound) < 4.0 * course.game.noise_amplitude  # and not uselessly loose


def test_only_a_game_the_player_flew_from_its_start_counts_for_the_best():
    """The page kept the autopilot's score as this browser's best before any key was pressed.
    The game message now says whether a scripted pilot flew any of the game (``autopilot``); a
    restart after the player took over is the player's from its first step."""
    from flocksim.viewer.carry import carry_pointer

    sim = flocksim.Simulation(params(), seed=0, threads=1)
    game = game_of(sim)
    sim.step(10)
    assert game.status(sim)["autopilot"] is True
    game.steer(0.5, 0.0)
    sim.step(10)
    assert game.status(sim)["autopilot"] is True  # the scripted pilot flew the start
    again = flocksim.Simulation(params(), seed=0, threads=1)
    carry_pointer(sim, again)  # the viewer's restart (R)
    again.step(10)
    assert game_of(again).pilot == "player" and game_of(again).status(again)["autopilot"] is False
    restored = flocksim.Simulation(params(), seed=0, threads=1)
    restored.restore(again.checkpoint())
    assert game_of(restored).status(restored)["autopilot"] is False
