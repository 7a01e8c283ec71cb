"""Browser test of the viewer page's level of detail (issue "Speed at the flagship scales"): with
100 000 birds in Debian's chromium without a GPU (SwiftShader draws on the CPU, about a second
for a full-detail render on 2 cores), the page must keep answering its user. It lowers its level
of detail by itself (web/src/detail.js) and says so in the status bar; a click on Pause shows the
paused state (the button turns to "Resume" at once, before the server's answer) and a drag on the
view is drawn, each within a second and a half (median of 3).
The page before the level of detail, on a loaded 2-core machine: drags drawn 2.9-5.9 s after the
last move, Pauses up to 1.7 s (the issue: 5.5 s for a Pause, 27.9 s for a drag).

Times are taken by this test's clock around the input Playwright sends (which returns once the
page has taken the event) and the page's answer read from its DOM (the Pause button's text, the
status bar's note); a drag's render from the page's count of renders, then one more animation
frame. A drag is a burst of moves, as a hand makes it: the page before the level of detail
queued a render for each, and the last move's picture waited behind all of them. The bound is
wide, so that a loaded CI machine does not fail it (the page measured 0.3-0.7 s at load 18).
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Iterator

import pytest

from conftest import CHROMIUM, free_port, serve_in_thread
from flocksim.viewer import server as viewer_server

N = 100_000
"""Birds: the flagship scale, where the page before the level of detail froze in SwiftShader."""
VIEWPORT = {"width": 960, "height": 600}
ANSWER_S = 1.5
"""Bound on the median time from an input to the page's answer [s]."""
REPEATS = 3
BURST = 10
"""Mouse moves of one drag."""
FIRST_FRAME_TIMEOUT_MS = 600_000
"""The first frame may wait for numba to compile the 3D kernels (minutes on a cold cache)."""
NOTE_TIMEOUT_MS = 60_000
"""The note must appear within this after the first frames (a few slow renders decide it)."""

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(
        not (viewer_server.STATIC_DIR / "index.html").exists(),
        reason="viewer page not built (run ./dev.sh setup)",
    ),
]

pytest.importorskip("playwright.sync_api")

PAUSE_TEXT = 'document.getElementById("pause").textContent'
NEXT_FRAME = "new Promise((done) => requestAnimationFrame(() => done(true)))"


@pytest.fixture(scope="module")
def large_flock_url() -> Iterator[str]:
    """The viewer with 100 000 starlings (one numba thread: the other core draws the page)."""
    port = free_port()
    app = viewer_server.create_app(preset="starlings-3d", max_agents=N, threads=1, port=port)
    with serve_in_thread(app, port):
        yield f"http://127.0.0.1:{port}/?preset=starlings-3d&set=agents.n%3D{N}"


def center(page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def pause_answer_s(page) -> float:
    """Click on Pause while the flock flies: seconds until the button says "Resume"."""
    start = time.perf_counter()
    page.mouse.click(*center(page, "#pause"))
    page.wait_for_function(f'{PAUSE_TEXT} === "Resume"', timeout=120_000, polling=20)
    return time.perf_counter() - start


def drag_answer_s(page, x: float, y: float) -> float:
    """A drag on the view as a hand makes it, BURST mouse moves 30 ms apart: seconds from the last
    move to a render after it, and the next animation frame."""
    for k in range(BURST - 1):
        page.mouse.move(x + 60 * math.sin(k / 3), y + 20 * math.cos(k / 3))
        page.wait_for_timeout(30)
    renders = page.evaluate("flocksim.renderCount")
    start = time.perf_counter()
    page.mouse.move(x, y)
    page.wait_for_function(f"flocksim.renderCount > {renders}", timeout=120_000, polling=20)
    page.evaluate(NEXT_FRAME)
    return time.perf_counter() - start


def test_large_flock_page_keeps_answering(browser, large_flock_url: str) -> None:
    errors: list[str] = []
    page = browser.new_page(viewport=VIEWPORT)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(large_flock_url)
        page.wait_for_function("window.flocksim && flocksim.framesDrawn >= 2", timeout=FIRST_FRAME_TIMEOUT_MS)
        # renders take about a second at full detail: the page draws a share of the birds and says so
        note = page.locator("#status-detail")
        page.wait_for_function(
            'document.getElementById("status-detail")?.textContent.includes("drawing 1 in")',
            timeout=NOTE_TIMEOUT_MS,
            polling=100,
        )
        assert note.is_visible()
        assert re.fullmatch(r"drawing 1 in \d+ birds(, .*)?: slow renderer", note.text_content())
        pauses = []
        for _ in range(REPEATS):
            drawn = page.evaluate("flocksim.framesDrawn")
            page.wait_for_function(f"flocksim.framesDrawn >= {drawn + 2}", timeout=120_000)  # flying
            pauses.append(pause_answer_s(page))
            page.mouse.click(*center(page, "#pause"))  # resume
            page.wait_for_function(f'{PAUSE_TEXT} === "Pause"', timeout=120_000)
        page.mouse.click(*center(page, "#pause"))
        page.wait_for_function("flocksim.paused === true", timeout=120_000)
        x, y = center(page, "#view")
        page.mouse.move(x, y)
        page.mouse.down()
        drags = []
        for _ in range(REPEATS):
            drags.append(drag_answer_s(page, x, y))
        page.mouse.up()
        times = f"pause {[round(t, 2) for t in pauses]} s, drag {[round(t, 2) for t in drags]} s"
        assert statistics.median(pauses) < ANSWER_S, times
        assert statistics.median(drags) < ANSWER_S, times
        assert not errors, errors
    finally:
        page.close()
