"""Browser tests of the viewer page (issue #6): Debian's chromium, driven by Playwright, against the
real server (``create_app`` under uvicorn in a thread).

Software rendering (SwiftShader) is slow, so flocks are small (150-300 agents). Every wait is on
a real condition exposed by the page's test hook ``window.flocksim`` (frames drawn, status
values, parameters, paused/replaying, last recording), never a fixed sleep, except where a
duration is itself what is measured.

Screenshots: ``test_scene_screenshots`` checks and captures starlings-2d and starlings-3d into a
temporary folder; with ``FLOCKSIM_SCREENSHOTS=docs/img`` it captures every shipped preset plus
the Expert panel and the replay bar into that folder (the images in docs/viewer.md).
"""

from __future__ import annotations

import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from flocksim.viewer import server as viewer_server

CHROMIUM = Path("/usr/bin/chromium")
STATIC_INDEX = viewer_server.STATIC_DIR / "index.html"
CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
VIEWPORT = {"width": 960, "height": 600}
"""Small: SwiftShader draws on the CPU that also steps the simulation."""
SCREENSHOT_VIEWPORT = {"width": 1280, "height": 800}
SPS = 60
"""Simulation steps per second per connection (the server's default)."""
FIRST_FRAME_TIMEOUT_MS = 600_000
"""The first frame of a kind of simulation may wait for numba to compile its kernels (minutes on
a cold cache, 2 cores); later waits are short."""
WAIT_MS = 30_000

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(
        not STATIC_INDEX.exists(), reason=f"viewer page not built ({STATIC_INDEX} missing: run ./dev.sh setup)"
    ),
]

playwright_api = pytest.importorskip("playwright.sync_api")


def query(preset: str, *sets: str) -> str:
    """The page's query string: ``?preset=NAME&set=KEY%3DVALUE...``."""
    return "?" + "&".join([f"preset={preset}", *(f"set={quote(s, safe='')}" for s in sets)])


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """The viewer server on a free loopback port, for the whole module."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # no server-side overrides: a page naming the server's preset would inherit them
    app = viewer_server.create_app(preset="starlings-2d", sps=SPS, port=port)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws_per_message_deflate=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the viewer server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One chromium for the module (SwiftShader WebGL)."""
    with playwright_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def open_page(browser, server_url) -> Iterator[Callable[..., object]]:
    """Open the viewer with a query string and wait until it draws frames. Uncaught page errors
    fail the test."""
    pages = []
    page_errors: list[str] = []

    def _open(q: str, frames: int = 3, viewport: dict[str, int] = VIEWPORT) -> object:
        page = browser.new_page(viewport=viewport)
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        pages.append(page)
        page.goto(server_url + q)
        wait(page, f"window.flocksim && flocksim.framesDrawn >= {frames}", FIRST_FRAME_TIMEOUT_MS)
        return page

    yield _open
    for page in pages:
        page.close()
    assert not page_errors, f"errors in the page: {page_errors}"


def wait(page, expression: str, timeout_ms: float = WAIT_MS) -> object:
    """Wait until a JavaScript expression is truthy and return its value."""
    return page.wait_for_function(expression, timeout=timeout_ms).json_value()


def hook(page, expression: str) -> object:
    """Evaluate an expression on the page's test hook, e.g. ``hook(page, "status")``."""
    return page.evaluate(f"flocksim.{expression}")


def frames_later(page, n: int = 3) -> None:
    """Wait until n more frames have been drawn."""
    drawn = hook(page, "framesDrawn")
    wait(page, f"flocksim.framesDrawn >= {drawn + n}")


# ---- tests ---------------------------------------------------------------------------------


def test_page_loads_and_draws(open_page):
    page = open_page(query("starlings-2d", "agents.n=150"), frames=10)
    assert hook(page, "connected")
    assert hook(page, "dim") == 2
    assert hook(page, "frame")["nAgents"] == 150
    status = hook(page, "status")
    assert 0.0 <= status["polarization"] <= 1.0
    assert status["remaining"] == 150
    # the canvas shows the flock: many pixels differ from the background
    drawn = hook(page, "foregroundPixels()")
    assert drawn["foreground"] > 300, drawn
    # the status bar shows the frame's values
    assert page.locator("#status-remaining").inner_text() == "150"
    assert float(page.locator("#status-polarization").inner_text()) == pytest.approx(
        hook(page, "status")["polarization"], abs=0.2
    )
    wait(page, "Number(document.getElementById('status-fps').textContent) > 0")
    assert page.locator("#error").is_hidden()


def test_switch_2d_3d(open_page):
    page = open_page(query("starlings-2d", "agents.n=150"))
    page.click("#mode-3d")
    wait(page, "flocksim.preset === 'starlings-3d' && flocksim.frame?.dim === 3")
    frames_later(page)
    assert hook(page, "foregroundPixels()")["foreground"] > 100
    assert page.locator("#pointer-toggle").is_visible()
    page.click("#mode-2d")
    wait(page, "flocksim.preset === 'starlings-2d' && flocksim.frame?.dim === 2")
    assert page.locator("#pointer-toggle").is_hidden()


def test_switch_dimension_by_set(open_page):
    """A scene without a -2d/-3d twin switches with one `set` of world.dim and the sizes."""
    page = open_page(query("boids-2d", "agents.n=150"))
    page.click("#mode-3d")
    wait(page, "flocksim.dim === 3 && flocksim.frame?.dim === 3")
    params = hook(page, "params")
    assert params["world"]["dim"] == 3
    assert len(params["world"]["bounds"]["size"]) == 3
    assert hook(page, "preset") is None
    assert hook(page, "errors") == []


def test_basic_and_expert_changes_reach_the_server(open_page):
    page = open_page(query("starlings-2d", "agents.n=150", "turning.enabled=false"))
    assert hook(page, "status")["mean_neighbors"] == 7  # topological, k = 7
    # Expert: neighbours.k = 3 -> every bird uses 3 neighbours
    page.click("#tab-expert")
    page.click("details[data-group='neighbors'] > summary")
    k = page.locator("#expert-panel [data-key='neighbors.k']")
    k.fill("3")
    k.press("Tab")
    wait(page, "flocksim.params.neighbors.k === 3 && flocksim.status.mean_neighbors === 3")
    # leaving Expert restores the parameters it opened with
    page.click("#tab-basic")
    wait(page, "flocksim.params.neighbors.k === 7 && flocksim.status.mean_neighbors === 7")
    # Basic: metric neighbourhoods -> the neighbour count is no longer exactly 7
    page.select_option("#basic-neighbors", "metric")
    wait(page, "flocksim.params.neighbors.mode === 'metric' && flocksim.status.mean_neighbors !== 7")
    # Basic: agent count -> a refilled flock of that size
    n = page.locator("#basic-agents")
    n.fill("120")
    n.press("Tab")
    wait(page, "flocksim.frame.nAgents === 120 && flocksim.status.remaining === 120")


def test_invalid_value_shows_an_error(open_page):
    page = open_page(query("starlings-2d", "agents.n=150"))
    page.click("#tab-expert")
    page.click("details[data-group='rules.alignment'] > summary")
    weight = page.locator("#expert-panel [data-key='rules.alignment.weight']")
    weight.fill("-1")
    weight.press("Tab")
    banner = page.locator("#error")
    banner.wait_for(state="visible", timeout=WAIT_MS)
    assert "rules.alignment.weight" in banner.inner_text()
    assert hook(page, "params")["rules"]["alignment"]["weight"] == 1.0
    frames_later(page, 5)  # the simulation goes on


def test_predator_on_makes_caught_rise(open_page):
    # a faster predator with a larger catch radius that turns fast enough to reach its target
    # (at 3 x 180 units/s and the default 60 deg/s its turning circle is ~500 units across the
    # 960 x 540 screen, and it could circle a bird for a long time): a catch within seconds
    page = open_page(
        query(
            "starlings-2d", "agents.n=150", "predator.speed=3", "predator.catch_radius=40", "predator.min_remaining=0",
            "predator.max_turn_deg=720",
        )
    )  # fmt: skip
    assert hook(page, "status")["caught"] == 0
    page.check("#basic-predator")
    wait(page, "flocksim.params.predator.enabled === true")
    wait(page, "flocksim.status.caught > 0", 60_000)
    status = hook(page, "status")
    assert status["remaining"] == 150 - status["caught"]
    assert int(page.locator("#status-caught").inner_text()) >= 1


def _angle_deg(a: list[float], b: list[float]) -> float:
    """Signed angle from 2D heading a to b [deg], counter-clockwise positive."""
    return math.degrees(math.atan2(a[0] * b[1] - a[1] * b[0], a[0] * b[0] + a[1] * b[1]))


def test_turn_buttons(open_page):
    page = open_page(query("starlings-2d", "agents.n=150", "turning.enabled=false"))
    page.click("#pause")
    wait(page, "flocksim.paused === true && flocksim.settled")
    before = hook(page, "selected()")["heading"]
    step = hook(page, "frame")["step"]
    turned_from = "(h, b) => h[0] * b[0] + h[1] * b[1] < 0.5"  # cos 120 deg = -0.5
    page.click("#turn-left")
    wait(page, f"({turned_from})(flocksim.selected().heading, {before})")
    after = hook(page, "selected()")["heading"]
    assert hook(page, "frame")["step"] == step  # paused: the turn itself, no stepping
    assert _angle_deg(before, after) == pytest.approx(120.0, abs=3.0)
    page.click("#turn-right")
    wait(page, f"({turned_from})(flocksim.selected().heading, {after})")
    assert _angle_deg(after, hook(page, "selected()")["heading"]) == pytest.approx(-120.0, abs=3.0)


def test_pause_replay_and_resume(open_page):
    page = open_page(query("starlings-2d", "agents.n=150"))
    wait(page, "flocksim.replay.length >= 45")  # 1.5 s kept at 30 per second
    page.click("#pause")
    wait(page, "flocksim.paused === true && flocksim.settled")
    paused_step = hook(page, "frame")["step"]
    assert page.locator("#replay-bar").is_visible()
    assert page.locator("#replay-speed").input_value() == "0.25"
    replay = hook(page, "replay")
    assert replay["length"] <= 300
    assert replay["duration"] >= 1.4
    # timeline: the start of the buffer shows an older step
    page.eval_on_selector("#timeline", "t => { t.value = 0; t.dispatchEvent(new Event('input')); }")
    wait(page, f"flocksim.frame.step < {paused_step}")
    start_step = hook(page, "frame")["step"]
    # play at 0.25x: the replay position advances at a quarter of real time, status follows
    page.click("#replay-play")
    wait(page, "flocksim.replaying === true")
    p0, t0 = hook(page, "replay")["position"], time.monotonic()
    time.sleep(1.5)
    p1, t1 = hook(page, "replay")["position"], time.monotonic()
    rate = (p1 - p0) / (t1 - t0)
    assert 0.12 < rate < 0.32, rate
    replay_step = hook(page, "frame")["step"]
    assert start_step < replay_step < paused_step
    shown = hook(page, "status")["polarization"]
    assert float(page.locator("#status-polarization").inner_text()) == pytest.approx(shown, abs=6e-4)
    # resume continues from the paused moment (the server did not step while paused)
    page.click("#replay-resume")
    wait(page, "flocksim.paused === false")
    wait(page, f"flocksim.frame.step > {paused_step}")
    resumed_step = hook(page, "frame")["step"]
    assert resumed_step - paused_step < SPS, (paused_step, resumed_step)
    assert page.locator("#replay-bar").is_hidden()


@pytest.mark.parametrize("container", ["auto", "webm"])
def test_recording_two_seconds(open_page, container):
    """A 2 s recording plays for about 2 s. WebM from MediaRecorder has no duration in its header
    (the page seeks the video to read it), so it is checked on its own."""
    page = open_page(query("starlings-2d", "agents.n=150"))
    page.select_option("#record-format", container)
    page.fill("#record-seconds", "2")
    page.click("#record")
    wait(page, "flocksim.recording === true", 5_000)
    wait(page, "flocksim.lastRecording && Number.isFinite(flocksim.lastRecording.duration)", 30_000)
    rec = hook(page, "lastRecording")
    assert rec["type"] in (("video/mp4", "video/webm") if container == "auto" else ("video/webm",)), rec
    assert rec["size"] > 1000, rec
    assert rec["duration"] == pytest.approx(2.0, abs=0.5), rec
    link = page.locator("#recording-link")
    assert link.is_visible()
    assert link.get_attribute("href").startswith("blob:")
    assert link.get_attribute("download").endswith((".mp4", ".webm"))


def test_pointer_attract_moves_the_flock(open_page):
    # agents turn toward the pointer at up to 360 deg/s (default 90): the flock gets there sooner
    page = open_page(
        query("starlings-2d", "agents.n=150", "turning.enabled=false", "pointer.turn_rate_deg=360"), frames=10
    )
    c0 = hook(page, "centroid()")
    # a point in the quarter of the 960 x 540 world away from the flock
    target = [800.0 if c0[0] < 480 else 160.0, 430.0 if c0[1] < 270 else 110.0, 0.0]
    d0 = math.dist(c0[:2], target[:2])
    xy = page.evaluate("p => flocksim.screenAt(p)", target)
    page.mouse.move(xy["x"], xy["y"])
    page.mouse.down(button="left")
    wait(page, "flocksim.pointer.mode === 'attract'", 5_000)
    point = hook(page, "pointer")["point"]
    assert math.dist(point[:2], target[:2]) < 5.0  # the page sends the world point under the cursor
    start = hook(page, "frame")["time"]
    # the flock's centre comes within 40 % of its first distance to the point
    near = f"(c => Math.hypot(c[0] - {target[0]}, c[1] - {target[1]}) < {0.4 * d0})(flocksim.centroid())"
    wait(page, f"{near} || flocksim.frame.time > {start + 10.0}", 90_000)
    elapsed = hook(page, "frame")["time"] - start
    c1 = hook(page, "centroid()")
    page.mouse.up(button="left")
    wait(page, "flocksim.pointer.mode === null", 5_000)
    # seconds of simulated time: birds fly 90-180 units/s and turn toward the point at 360 deg/s
    assert math.dist(c1[:2], target[:2]) < 0.4 * d0 and elapsed < 8.0, (c0, c1, target, elapsed)


def test_scene_screenshots(open_page, tmp_path):
    """A screenshot of each scene (all presets with FLOCKSIM_SCREENSHOTS=<folder>, else two);
    each shows a drawn canvas."""
    out_env = os.environ.get("FLOCKSIM_SCREENSHOTS")
    out = Path(out_env) if out_env else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    presets = {p["name"]: p for p in viewer_server.preset_list()}
    names = sorted(presets) if out_env else ["starlings-2d", "starlings-3d"]
    for name in names:
        page = open_page(query(name), frames=5, viewport=SCREENSHOT_VIEWPORT)
        wait(page, f"flocksim.frame.time > {2.0 if out_env else 0.5}", 120_000)  # let the scene develop
        assert hook(page, "foregroundPixels()")["foreground"] > 100, name
        page.screenshot(path=str(out / f"viewer-{name}.png"))
        if out_env and name == "starlings-3d":
            page.click("#tab-expert")
            page.screenshot(path=str(out / "viewer-expert.png"))
            page.click("#tab-basic")
            page.click("#pause")
            wait(page, "flocksim.paused === true")
            page.click("#replay-play")
            wait(page, "flocksim.replay.position > 0.3")
            page.screenshot(path=str(out / "viewer-replay.png"))
        page.close()
    for name in names:
        assert (out / f"viewer-{name}.png").stat().st_size > 10_000
