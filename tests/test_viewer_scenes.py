"""Browser tests of issue 28: modes offered only where they work, keys and status, the undersea
worlds of the reef and Flappy Boids, Flappy Boids as a game, and how a murmuration is shown.

What the view shows is measured from screenshots of the canvas (Playwright), not from the page's
own pixel helper: agents are blobs that stand out from the local background (a median filter),
water is counted by its colour. Flocks are small: SwiftShader draws on the CPU.

``FLOCKSIM_TEST_STATIC=DIR`` serves another build of the page (e.g. the page before a change,
to see these tests fail on it). With ``FLOCKSIM_SCREENSHOTS=docs/img`` the screenshots of
docs/viewer.md (reef, Flappy Boids, starlings at 500 and 100 000) are written there:

    FLOCKSIM_SCREENSHOTS=docs/img .venv/bin/python -m pytest -q tests/test_viewer_scenes.py -k screenshot
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import free_port, full_detail, serve_in_thread
from flocksim.viewer import server as viewer_server
from test_viewer_browser import CHROMIUM, STATIC_INDEX, VIEWPORT, hook, query, wait

playwright_api = pytest.importorskip("playwright.sync_api")
ndimage = pytest.importorskip("scipy.ndimage")
Image = pytest.importorskip("PIL.Image")

STATIC = Path(os.environ.get("FLOCKSIM_TEST_STATIC") or viewer_server.STATIC_DIR)
FIRST_FRAME_TIMEOUT_MS = 900_000
"""The first frame of a kind of simulation may wait for numba to compile its kernels."""
SHOTS = os.environ.get("FLOCKSIM_SCREENSHOTS")
SHOT_VIEWPORT = {"width": 1280, "height": 800}
SHOT_LARGE_SECONDS = 20
"""Simulated time before the 100 000-starling screenshot: the flock starts as a flat square layer."""

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(not STATIC_INDEX.exists(), reason=f"viewer page not built ({STATIC_INDEX} missing)"),
]


# ---- pixels from screenshots ----------------------------------------------------------------


def canvas_pixels(page) -> np.ndarray:
    """The view's canvas as on screen: (height, width, 3) uint8 RGB from a screenshot."""
    png = page.locator("#view").screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def blobs(rgb: np.ndarray, contrast: float = 30.0) -> np.ndarray:
    """Areas [px] of the connected groups of pixels whose luminance differs by more than
    ``contrast`` from the median of the 15 x 15 pixels around them: the agents (and any other
    small shape) on a smooth background."""
    lum = rgb.astype(float) @ [0.299, 0.587, 0.114]
    fg = np.abs(lum - ndimage.median_filter(lum, size=15)) > contrast
    labels, n = ndimage.label(fg)
    return np.bincount(labels.ravel())[1:] if n else np.zeros(0, int)


def water_share(rgb: np.ndarray) -> float:
    """Share of the pixels that are water-coloured: blue-green, blue well above red and green
    near blue (the dusk sky's blues have green well below blue, its horizon is warm)."""
    r, g, b = (rgb[..., k].astype(float) for k in range(3))
    return float(np.mean((b > 1.6 * r + 10) & (g > 0.72 * b)))


def rock_share(rgb: np.ndarray) -> float:
    """Share of the pixels that are rock-coloured: a warm grey (red a little above blue, green
    between them), far less saturated than the sand seabed (red well above blue) and not the
    water (blue above red)."""
    r, g, b = (rgb[..., k].astype(float) for k in range(3))
    return float(np.mean((r >= b) & (g >= b) & (r >= g) & (r - b < 0.2 * r + 4) & (r > 40)))


# ---- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = free_port()
    app = viewer_server.create_app(preset="starlings-2d", sps=60, port=port, static_dir=STATIC, max_agents=200_000)
    with serve_in_thread(app, port):
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture
def open_page(browser, server_url) -> Iterator[Callable[..., object]]:
    """Open the viewer with a query string and wait for frames; page errors fail the test."""
    pages = []
    errors: list[str] = []

    def _open(q: str, frames: int = 3, viewport: dict[str, int] = VIEWPORT, context=None) -> object:
        page = (context or browser).new_page()
        page.set_viewport_size(viewport)
        page.on("pageerror", lambda e: errors.append(str(e)))
        pages.append(page)
        page.goto(server_url + full_detail(q))
        wait(page, f"window.flocksim && flocksim.framesDrawn >= {frames}", FIRST_FRAME_TIMEOUT_MS)
        return page

    yield _open
    for page in pages:
        page.close()
    assert not errors, f"errors in the page: {errors}"


def settle(page, frames: int = 8) -> None:
    """Let the view draw a few more frames (the camera eases toward the flock), with no line
    over the view (the compile notice would count as shapes in a screenshot)."""
    wait(page, "!flocksim.compiling && document.getElementById('overlay').hidden", FIRST_FRAME_TIMEOUT_MS)
    drawn = hook(page, "framesDrawn")
    wait(page, f"flocksim.framesDrawn >= {drawn + frames}", 120_000)


def save(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / name))


# ---- item 2: modes offered only where they work, agents at a readable size --------------------


@pytest.mark.parametrize(
    ("preset", "n", "modes"),
    [("couzin", 100, (3,)), ("crowd", 120, (2,)), ("crowd-maze", 300, (2,)), ("flappy-boids", 40, (3,))],
)
def test_each_offered_mode_shows_its_agents_at_a_readable_size(open_page, preset, n, modes):
    """Only the modes where the scene means something are offered, and in each the agents are
    shapes of several pixels (couzin in 2D drew nothing; in 3D its fish were 1-3 px specks)."""
    page = open_page(query(preset, f"agents.n={n}"))
    offered = tuple(d for d in (2, 3) if page.locator(f"#mode-{d}d").is_enabled())
    # the picture first: a mode that is offered must show its agents (the old page offered
    # couzin in 2D, where nothing was drawn)
    for dim in offered if preset != "flappy-boids" else ():  # (the game's view is checked below)
        if hook(page, "dim") != dim:
            page.click(f"#mode-{dim}d")
            wait(page, f"flocksim.frame?.dim === {dim} || flocksim.errors.length > 0")
            assert hook(page, "errors") == [], f"{preset}: {dim}D is offered and then refused"
        # a few seconds in the mode: the first frames after a switch can look right and then not
        # (couzin's two groups drifted apart out of the 2D view)
        wait(page, f"flocksim.frame.time > {hook(page, 'frame')['time'] + 4}", 120_000)
        settle(page)
        areas = blobs(canvas_pixels(page))
        # pixels of shapes of 6 px or more (agents side by side merge into one shape): at least
        # 2 per agent, and the typical shape 6 px or more
        covered = int(areas[areas >= 6].sum())
        median = float(np.median(areas)) if len(areas) else 0.0
        seen = f"{preset} {dim}D: {covered} px in shapes of >= 6 px for {n} agents, median shape {median} px"
        assert covered >= 2 * n and median >= 6, seen
    assert offered == modes, f"{preset}: offered {offered}, expected {modes}"


# ---- item 3: keys and status --------------------------------------------------------------------


def test_up_down_on_the_focused_scene_list_keep_the_scene_and_its_flock(open_page):
    page = open_page(query("starlings-2d", "agents.n=150"))
    step = hook(page, "frame")["step"]
    shown = page.locator("#preset").input_value()
    page.focus("#preset")
    for key in ("ArrowDown", "ArrowDown", "ArrowUp", "PageDown", "End"):
        page.keyboard.press(key)
    settle(page, 10)
    assert hook(page, "preset") == "starlings-2d"
    assert page.locator("#preset").input_value() == shown
    assert hook(page, "frame")["step"] > step  # the same flock flies on: not refilled


def test_the_legend_names_the_scenes_agents(open_page):
    page = open_page(query("crowd", "agents.n=60"))
    legend = page.locator("#legend").inner_text()
    assert "selected person" in legend and "bird" not in legend, legend
    page.select_option("#preset", "reef")
    wait(page, "flocksim.preset === 'reef'", 120_000)
    legend = page.locator("#legend").inner_text()
    assert "selected fish" in legend and "bird" not in legend, legend


def test_status_says_disconnected_then_reconnected(browser):
    """The server stops: the status bar shows no steps per second and says it is disconnected
    (it kept "Sim steps/s 46 ... live"); the server comes back: it says so."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/" + query("starlings-2d", "agents.n=100")
    make = lambda: viewer_server.create_app(preset="starlings-2d", sps=60, port=port, static_dir=STATIC)  # noqa: E731
    page = browser.new_page(viewport=VIEWPORT)
    try:
        with serve_in_thread(make(), port):
            page.goto(url)
            wait(page, "window.flocksim && flocksim.framesDrawn >= 3", FIRST_FRAME_TIMEOUT_MS)
            wait(page, "Number(document.getElementById('status-sps').textContent) > 0")
        wait(page, "flocksim.connected === false")
        page.wait_for_timeout(500)  # frames still in flight are drawn
        assert page.locator("#status-sps").inner_text() == "-"
        assert "disconnected" in page.locator("#status-mode").inner_text()
        with serve_in_thread(make(), port):
            wait(page, "flocksim.connected === true", 60_000)
            wait(page, "document.getElementById('status-mode').textContent.includes('reconnected')", 30_000)
            wait(page, "Number(document.getElementById('status-sps').textContent) > 0")
    finally:
        page.close()


@pytest.mark.parametrize("seconds", [6])
def test_a_recording_lasts_as_long_as_asked(open_page, seconds):
    """A 3 s recording gave 2.63 s of video (6 s gave 5.15 s): the recorder stopped on a
    wall-clock timer, and its video starts some 0.2-0.5 s after that clock (more under load)."""
    page = open_page(query("starlings-2d", "agents.n=150"))
    page.uncheck("#record-turn")
    page.select_option("#record-format", "webm")
    page.fill("#record-seconds", str(seconds))
    page.click("#record")
    wait(page, "flocksim.lastRecording && Number.isFinite(flocksim.lastRecording.duration)", 60_000)
    duration = hook(page, "lastRecording")["duration"]
    # not shorter than asked (the bug); longer by up to a second: on the 2-core machine with
    # SwiftShader a 6 s recording gave 6.82 and 6.88 s of video in two loaded runs of the suite
    # (within 6.5 s alone), the stop waiting on a lag that load stretches
    assert seconds - 0.1 <= duration <= seconds + 1.0, duration


# ---- item 4: the undersea worlds ----------------------------------------------------------------


def test_the_reef_is_under_water_with_a_seabed_and_the_birds_keep_the_sky(open_page):
    page = open_page(query("reef", "agents.n=400"), viewport=SHOT_VIEWPORT)
    settle(page)
    rgb = canvas_pixels(page)
    assert water_share(rgb) > 0.2, water_share(rgb)
    r, g, b = (rgb[..., k].astype(float) for k in range(3))
    sand = (r > b + 25) & (g > b + 10) & (r > 90)
    lower = sand[rgb.shape[0] // 2 :]
    assert lower.mean() > 0.15, lower.mean()  # the seabed under the school
    fish = blobs(rgb)
    assert np.count_nonzero(fish >= 4) > 60, len(fish)
    save(page, "viewer-reef.png")
    page.select_option("#preset", "starlings-3d")
    wait(page, "flocksim.preset === 'starlings-3d' && flocksim.frame?.dim === 3", 120_000)
    settle(page)
    assert water_share(canvas_pixels(page)) < 0.02  # birds fly under the sky


def fitted_reef(open_page, *sets: str) -> tuple[object, np.ndarray]:
    """The reef with 3 fish (so that nearly all that differs between two pictures is the coral),
    the camera fitted to the whole box (the same view whatever the fish do), paused: the page and
    a screenshot of its canvas."""
    page = open_page(query("reef", "agents.n=3", *sets), viewport=VIEWPORT)
    settle(page, 4)
    page.click("#fit")
    page.click("#pause")
    wait(page, "flocksim.paused === true")
    page.wait_for_timeout(800)  # the paused frame drawn
    return page, canvas_pixels(page)


def boundary_share(mask: np.ndarray) -> float:
    """Share of a mask's pixels that have a 4-neighbour outside it: about 2 / r for discs of r px
    (spheres), near 1 for branches a few pixels thick."""
    inner = ndimage.binary_erosion(mask, structure=ndimage.generate_binary_structure(2, 1))
    return float((mask & ~inner).sum() / max(mask.sum(), 1))


def hue_bins(rgb: np.ndarray, mask: np.ndarray, bins: int = 12, share: float = 0.01) -> int:
    """Hues (of ``bins`` around the wheel) that hold at least ``share`` of the masked pixels that
    have a colour (saturation over 0.25)."""
    hsv = np.asarray(Image.fromarray(rgb).convert("HSV")).astype(float)
    sel = mask & (hsv[..., 1] > 0.25 * 255)
    counts = np.bincount((hsv[..., 0][sel] * bins / 256).astype(int), minlength=bins)
    return int(np.sum(counts >= share * max(sel.sum(), 1)))


def line_samples(page, rgb: np.ndarray, a: list[float], b: list[float], n: int = 40) -> float:
    """Share of ``n`` points along the screen segment between world points ``a`` and ``b`` where
    the picture is brighter (by 5 levels) than 5 px to both sides of it: a drawn line."""
    rect = page.locator("#view").bounding_box()
    pa, pb = (page.evaluate("p => flocksim.screenAt(p)", p) for p in (a, b))
    ax, ay, bx, by = pa["x"] - rect["x"], pa["y"] - rect["y"], pb["x"] - rect["x"], pb["y"] - rect["y"]
    length = max(np.hypot(bx - ax, by - ay), 1e-9)
    nx, ny = -(by - ay) / length, (bx - ax) / length
    lum = rgb.astype(float) @ [0.299, 0.587, 0.114]
    h, w = lum.shape
    hits = total = 0
    for t in np.linspace(0.1, 0.9, n):
        x, y = ax + t * (bx - ax), ay + t * (by - ay)
        pts = [(x + k * nx, y + k * ny) for k in (-5, -1, 0, 1, 5)]
        if not all(2 <= px < w - 2 and 2 <= py < h - 2 for px, py in pts):
            continue
        v = [lum[round(py), round(px)] for px, py in pts]
        total += 1
        hits += max(v[1:4]) > max(v[0], v[4]) + 5
    return hits / max(total, 1)


def test_the_reef_coral_is_branching_and_rounded_colonies_and_no_box_is_drawn(open_page):
    """Issue 39: the reef's coral was smooth spheres and a wireframe box was drawn around the tank.
    The coral is now colonies made procedurally (coral.js: staghorn, sea fans, tables, brain
    coral, tube sponges). Measured on the whole box in view, as the difference between the reef
    and the same view without its obstacles: the coral's outline (the share of its pixels on its
    edge: about 2 / radius for discs), its colours (hues holding 1 % of its pixels or more), and
    the box's top edges (a line brighter than both sides of it). The page before: see the commit."""
    page, reef = fitted_reef(open_page)
    size = hook(page, "params")["world"]["bounds"]["size"]
    x, y, z = size
    edges = [([0, y, 0], [x, y, 0]), ([0, y, z], [x, y, z]), ([0, y, 0], [0, y, z]), ([x, y, 0], [x, y, z])]
    lines = [line_samples(page, reef, a, b) for a, b in edges]
    _, bare = fitted_reef(open_page, "obstacles.circles=[]")  # the same view without the coral
    coral = np.abs(reef.astype(int) - bare.astype(int)).max(axis=2) > 24
    coral = ndimage.binary_opening(coral, iterations=1) | (coral & ~ndimage.binary_erosion(coral))
    seen = (
        f"coral {int(coral.sum())} px, edge share {boundary_share(coral):.3f}, hues {hue_bins(reef, coral)}, "
        f"box lines {lines}"
    )
    print(seen)
    save(page, "viewer-reef-fitted.png")
    assert coral.sum() > 3000, seen
    assert boundary_share(coral) > 0.25, seen  # branches and fans, not discs (spheres: 0.15)
    assert hue_bins(reef, coral) >= 6, seen
    assert max(lines) < 0.3, seen  # no box
    page.check("#outline")  # the outline is a toggle in View
    page.wait_for_timeout(800)
    shown = canvas_pixels(page)
    assert max(line_samples(page, shown, a, b) for a, b in edges) > 0.5, "the ticked outline is not drawn"


def test_flappy_boids_is_under_water(open_page):
    page = open_page(query("flappy-boids", "agents.n=60"), viewport=SHOT_VIEWPORT)
    wait(page, "flocksim.game !== null && flocksim.rocks.meshes >= 3", 120_000)
    settle(page)
    rgb = canvas_pixels(page)
    assert water_share(rgb) > 0.01, water_share(rgb)  # (mostly rock: water through the gap and beyond)
    assert "fish" in page.locator("#flappy-hud").inner_text()
    save(page, "viewer-flappy-boids-play.png")


def test_flappy_boids_flies_over_a_rock_seabed(open_page):
    """Flappy Boids' floor is rock like its walls (marching-cubes meshes from the server), not the
    page's flat sand. With the first wall 1000 units away only the seabed is in view: the lower
    part of the view is mostly rock-coloured (the page before showed sand there)."""
    page = open_page(query("flappy-boids", "agents.n=30", "game.first_wall=1000"))
    wait(page, "flocksim.game !== null && flocksim.game.chunks.length >= 3", 120_000)
    settle(page)
    rgb = canvas_pixels(page)
    lower = rgb[rgb.shape[0] * 3 // 4 :]
    save(page, "viewer-flappy-boids-seabed.png")
    assert rock_share(lower) > 0.6, rock_share(lower)


# ---- item 5: Flappy Boids as a game -------------------------------------------------------------


def crash_into_the_corner(page) -> dict:
    """Steer down and left into the rock of the first wall until the game is over; its status."""
    page.focus("#view")
    page.keyboard.down("ArrowDown")
    page.keyboard.down("ArrowLeft")  # into the rock of the first wall, in the corner
    over = wait(page, "flocksim.game?.game_over && flocksim.game", 180_000)
    page.keyboard.up("ArrowDown")
    page.keyboard.up("ArrowLeft")
    return over


def test_flappy_boids_end_screen_and_best_score_kept_per_browser(browser, open_page):
    """The best score is the player's: the first game, whose start the scripted pilot flew before
    the first key, keeps none (the page before kept the autopilot's score as the best before any
    key was pressed); after R the game is the player's from its start, and its score is kept."""
    context = browser.new_context()
    try:
        page = open_page(query("flappy-boids", "agents.n=40"), context=context)
        wait(page, "flocksim.game !== null && flocksim.rocks.meshes >= 3", 120_000)
        over = crash_into_the_corner(page)
        assert over["autopilot"] is True, over
        assert over["lost_rock"] > over["lost_behind"], over  # lost on rock, not "left behind"
        end = page.locator("#flappy-end")
        end.wait_for(state="visible", timeout=10_000)
        assert "Game over" in end.inner_text() and f"score {over['score']}" in end.inner_text()
        assert "no best" in end.inner_text(), end.inner_text()
        assert page.evaluate("localStorage.getItem('flocksim.flappy.best')") is None
        # the end screen is drawn over the view: the middle of the canvas is its dark panel
        rgb = canvas_pixels(page)
        h, w = rgb.shape[:2]
        middle = rgb[h // 2 - 10 : h // 2 + 10, w // 2 - 60 : w // 2 + 60].astype(float)
        assert np.median(middle) < 90, np.median(middle)  # (its text is light)
        page.keyboard.press("r")
        wait(page, "flocksim.game !== null && !flocksim.game.game_over && flocksim.game.distance < 5")
        end.wait_for(state="hidden", timeout=10_000)
        assert hook(page, "game")["pilot"] == "player"
        own = crash_into_the_corner(page)
        assert own["autopilot"] is False and own["score"] > 0, own
        best = page.evaluate("localStorage.getItem('flocksim.flappy.best')")
        assert int(best) == own["score"]
        # another page of the same browser shows the best score
        again = open_page(query("flappy-boids", "agents.n=40"), context=context)
        wait(again, "flocksim.game !== null")
        assert f"best {own['score']}" in again.locator("#flappy-hud").inner_text()
    finally:
        context.close()


def test_flappy_boids_hud_fits_a_narrow_view(open_page):
    """At 412 px wide the HUD (one line of 16 px text) was cut off at both ends; at 360 px wide
    (a small phone held upright) it now wraps inside the view, every item whole."""
    page = open_page(query("flappy-boids", "agents.n=20"), viewport={"width": 360, "height": 720})
    wait(page, "flocksim.game !== null && document.getElementById('flappy-hud').textContent.includes('score')")
    view = page.locator("#view").bounding_box()
    hud = page.locator("#flappy-hud").bounding_box()
    inside = lambda b: view["x"] <= b["x"] and b["x"] + b["width"] <= view["x"] + view["width"] + 0.5  # noqa: E731
    assert inside(hud) and hud["x"] >= 0 and hud["x"] + hud["width"] <= 360, (hud, view)
    scroll, client = page.evaluate("(e => [e.scrollWidth, e.clientWidth])(document.getElementById('flappy-hud'))")
    assert scroll <= client + 1, (scroll, client)  # nothing overflows the box
    text = page.locator("#flappy-hud").inner_text()
    assert "score" in text and "best" in text and "distance" in text and "fish" in text, text


def target_pixels(rgb: np.ndarray) -> int:
    """Pixels of the game's target (the green octahedron, sRGB 0x1a9850 shaded): green well above
    both red and blue, which neither the grey rock, the silver fish nor the blue-green water is."""
    r, g, b = (rgb[..., k].astype(float) for k in range(3))
    return int(np.sum((g > r + 40) & (g > b + 10)))


def test_flappy_boids_the_chase_camera_sees_the_target_past_a_wall(open_page):
    """Played by hand: right after the target flew through a gap off its centre, the chase camera
    (32 units behind, 9 above) was still in front of that wall, and the whole view was its rock.
    Here a wall with an almost closed gap stands between the camera and a slow target: the target
    must be drawn (it is drawn over the rock in the game), and so must the next wall and the water
    beyond it (the page cuts away rock nearer the camera than the target)."""
    wall, thickness = 60.0, 6.0  # far enough from the school that it is not lost on it at once
    sets = ["agents.n=60", "game.pilot=straight", "game.speed=0.5", "game.speed_max=0.5", "game.lead=52",
            "game.max_lag=200", f"game.first_wall={wall:g}", f"game.wall_thickness={thickness:g}",
            "game.gap_radius=1", "game.gap_min_radius=1"]  # fmt: skip
    page = open_page(query("flappy-boids", *sets))
    wait(page, "flocksim.game !== null && flocksim.rocks.meshes >= 2 && !flocksim.compiling", 120_000)
    page.click("#pause")  # before the fish all die on the closed wall (the target is not drawn then)
    wait(page, "flocksim.paused === true")
    page.wait_for_timeout(1000)  # the paused frame drawn
    game = hook(page, "game")
    x = game["target"][0]
    # the camera (32 units behind the target) before the wall, the target past it, fish still alive
    assert not game["game_over"] and x - 32 < wall - thickness / 2 and x > wall + thickness, game
    rgb = canvas_pixels(page)
    save(page, "viewer-flappy-boids-past-a-wall.png")
    assert rock_share(rgb) > 0.3, rock_share(rgb)  # rock is drawn (the next wall, behind the target)
    assert water_share(rgb) > 0.03, water_share(rgb)  # and the water beside it (before: 2e-5, all rock)
    assert target_pixels(rgb) > 300, target_pixels(rgb)  # about 1100 px drawn at this size


# ---- item 6: how a murmuration is shown -----------------------------------------------------------


def dark_shapes(rgb: np.ndarray) -> np.ndarray:
    """Mask of the pixels darker by 30 than the median of the 31 x 31 around them: birds against
    the sky (the world's faint light outline is not counted)."""
    lum = rgb.astype(float) @ [0.299, 0.587, 0.114]
    return lum < ndimage.median_filter(lum, size=31) - 30


def test_500_starlings_are_framed_whole_by_the_follow_camera(open_page):
    """The default follow camera sat so close to 500 starlings that the near darts overflowed the
    frame: the birds stay off the canvas's edges and the flock still spans a quarter of it."""
    page = open_page(query("starlings-3d"))
    wait(page, "flocksim.frame.time > 3", 120_000)
    for _ in range(6):  # the flock changes shape as it flies: several moments
        settle(page, 10)
        rgb = canvas_pixels(page)
        dark = dark_shapes(rgb)
        ys, xs = np.nonzero(dark)
        assert len(xs) > 500, len(xs)  # the flock is in the picture
        h, w = dark.shape
        edge = 6
        at_edge = float(np.mean((xs < edge) | (xs >= w - edge) | (ys < edge) | (ys >= h - edge)))
        assert at_edge <= 0.002, at_edge
        assert xs.max() - xs.min() > w / 4 or ys.max() - ys.min() > h / 4, (xs.min(), xs.max(), ys.min(), ys.max())


@pytest.mark.slow
@pytest.mark.skipif(not SHOTS, reason="screenshots for docs/viewer.md: set FLOCKSIM_SCREENSHOTS=docs/img")
@pytest.mark.parametrize(
    ("preset", "seconds", "name"),
    [
        ("starlings-3d", 8, "viewer-starlings-500.png"),
        ("starlings-3d-large", SHOT_LARGE_SECONDS, "viewer-starlings-100000.png"),
    ],
)
def test_murmuration_screenshots(open_page, preset, seconds, name):
    """The screenshots of docs/viewer.md, once the flock has flown ``seconds`` of simulated time
    (100 000 birds step about once a second on 2 cores: SHOT_LARGE_SECONDS takes many minutes)."""
    page = open_page(query(preset), viewport=SHOT_VIEWPORT)
    wait(page, f"flocksim.frame.time > {seconds}", FIRST_FRAME_TIMEOUT_MS + 1000 * 120 * seconds)
    settle(page, 4)
    save(page, name)


def block_darkness(rgb: np.ndarray, block: int = 8) -> np.ndarray:
    """How dark the view is, block by block, against the sky: per pixel ``(sky - lum) / sky``
    with the sky the brightest pixel of its row (the sky's gradient is vertical, birds are
    darker than it), averaged over ``block`` x ``block`` pixels: 0 sky, 1 black. Sub-pixel
    specks and anti-aliasing average out; what is left is the shade the eye reads at a distance."""
    lum = rgb.astype(float) @ [0.299, 0.587, 0.114]
    sky = np.maximum(lum.max(axis=1, keepdims=True), 1.0)
    dark = (sky - lum) / sky
    h, w = (s - s % block for s in dark.shape)
    return dark[:h, :w].reshape(h // block, block, w // block, block).mean(axis=(1, 3))


CORE_BLOCKS = 20
"""The flock's core: its darkest 20 blocks of 8 x 8 pixels (1280 pixels; a flock of 10 000 covers
several hundred blocks in the test's view)."""
FLOCK_BLOCK = 0.1
"""Blocks darker than this are the flock's for sure (the sky's own variation along a row stays
under 0.05)."""


def flock_tones(rgb: np.ndarray) -> tuple[int, float, float]:
    """The flock's blocks (block_darkness over FLOCK_BLOCK): how many, the darkness of its core
    (the mean of the darkest CORE_BLOCKS blocks in the view) and the share of the flock's blocks
    that are pale (lighter than half the core)."""
    dark = np.sort(block_darkness(rgb).ravel())[::-1]
    core = float(dark[:CORE_BLOCKS].mean())
    flock = dark[dark > FLOCK_BLOCK]
    return len(flock), core, float(np.mean(flock < core / 2)) if len(flock) else 0.0


def test_a_large_murmuration_is_dark_where_dense_and_pale_where_thin(open_page):
    """In footage a murmuration's dense parts look near black and its thin parts pale grey
    against the sky; every bird of a large flock was drawn the same faint speck, so the flock
    was an even grey at best. 10 000 starlings (fewer than 100 000, so that SwiftShader keeps up;
    over 5000, where the density shading starts), once the flock has drawn together (6 s): its
    core is dark (its darkest blocks over 0.37 of the way from the sky to black) and most of it
    is pale. The page before: core 0.240-0.250, pale share 0.39-0.46; now 0.484-0.488 and
    0.79-0.80, in three runs each (docs/viewer.md)."""
    page = open_page(query("starlings-3d", "agents.n=10000"))
    wait(page, "flocksim.frame.time > 6", FIRST_FRAME_TIMEOUT_MS)
    settle(page, 4)
    save(page, "viewer-starlings-10000.png")
    blocks, core, pale = flock_tones(canvas_pixels(page))
    print(f"flock blocks {blocks}, core darkness {core:.3f}, pale share {pale:.3f}")
    assert blocks > 300, blocks  # the flock is in the picture
    assert core > 0.37, (core, pale)
    assert pale > 0.6, (core, pale)
