"""Browser tests of the page's level of detail and of large murmurations without a GPU (issue 39,
items 1 and 2), in Debian's chromium with SwiftShader: one page for the module, scenes switched.

The page lowers its level of detail by itself when renders are slow (web/src/detail.js). To make
it do so on demand, the page is slowed down from outside: an init script wraps
``requestAnimationFrame`` so that each animation frame first waits ``window.__slowMs`` times the
share of the picture the level draws (its drawing buffer's pixels over the canvas's, times the
birds drawn over the flock's), like a renderer that costs that much at full detail. The page's
render times (from a render to its fence, measured at the next animation frame) include the
wait. The tests read the page's public hook (``flocksim.detail``, ``foregroundPixels``) only, so
they run on any build of the page: ``FLOCKSIM_TEST_STATIC=DIR`` serves another one (e.g. the
page before this change, to see them fail on it).

The page before this change (its build served with FLOCKSIM_TEST_STATIC, 7 December 2026, load
average 7 to 12 on 2 vCPUs): after a forced step down starlings-2d-reference covered 58 % more of
the picture than at full detail (35 % of the resolution, blurred rims); the level did not come
back up in 20 s once the slowness was gone; after a slow spell every scene stayed at 35 % of the
resolution; 10 000 starlings drew a core 0.26-0.30 of the way from the sky to black, 100 000 a
core of 0.19 with no pale part, both with a faded edge. Each test fails there.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import CHROMIUM, free_port, serve_in_thread
from flocksim.scenarios import load_preset, preset_names
from flocksim.viewer import server as viewer_server
from test_viewer_browser import VIEWPORT, hook, query, wait
from test_viewer_scenes import FLOCK_BLOCK, block_darkness, flock_tones

pytest.importorskip("playwright.sync_api")
ndimage = pytest.importorskip("scipy.ndimage")
Image = pytest.importorskip("PIL.Image")

STATIC = Path(os.environ.get("FLOCKSIM_TEST_STATIC") or viewer_server.STATIC_DIR)
FIRST_FRAME_TIMEOUT_MS = 900_000
"""The first frame of a kind of simulation may wait for numba to compile its kernels."""

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(
        not (STATIC / "index.html").exists(), reason=f"viewer page not built ({STATIC} has no index.html)"
    ),
]

SLOW_RENDERER = """
(() => {
  window.__slowMs = 0;
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) =>
    raf((t) => {
      const ms = window.__slowMs;
      if (ms > 0 && window.flocksim && flocksim.canvas) {
        const c = flocksim.canvas;
        const pixels = (c.width * c.height) / Math.max(1, c.clientWidth * c.clientHeight * devicePixelRatio ** 2);
        const n = flocksim.frame ? flocksim.frame.nAgents : 0;
        const birds = n > 0 ? Math.min(1, flocksim.detail.drawn / n) : 1;
        const until = performance.now() + ms * Math.min(pixels, 1) * birds;
        while (performance.now() < until);
      }
      callback(t);
    });
})();
"""
"""Each animation frame waits ``__slowMs`` times the share of the picture drawn (see above)."""


@pytest.fixture(scope="module")
def page(browser) -> Iterator[object]:
    """One page for the module, on a server of its own (one simulation thread), auto detail."""
    port = free_port()
    app = viewer_server.create_app(
        preset="starlings-2d-reference", port=port, static_dir=STATIC, max_agents=200_000, threads=1
    )
    errors: list[str] = []
    with serve_in_thread(app, port):
        p = browser.new_page(viewport=VIEWPORT)
        p.add_init_script(SLOW_RENDERER)
        p.on("pageerror", lambda e: errors.append(str(e)))
        p.base_url = f"http://127.0.0.1:{port}/"
        yield p
        p.close()
    assert not errors, errors


def open_scene(page, q: str, frames: int = 3) -> None:
    """Open the page at ``q`` (auto detail), the renderer not slowed, and wait for frames."""
    page.goto(page.base_url + q)
    wait(page, f"window.flocksim && flocksim.framesDrawn >= {frames}", FIRST_FRAME_TIMEOUT_MS)


def slow(page, ms: float) -> None:
    page.evaluate(f"window.__slowMs = {ms}")


def foreground_share(page) -> float:
    """The share of the picture the flock covers (pixels that differ without it, over the drawing
    buffer's: the same at any resolution when the birds keep their size)."""
    fg = hook(page, "foregroundPixels()")
    return fg["foreground"] / (fg["width"] * fg["height"])


# ---- item 1: a level of detail that serves the picture --------------------------------------


def test_500_birds_in_2d_keep_their_pixels_after_a_forced_step_down(page):
    """starlings-2d-reference, 500 birds: a renderer slowed to 600 ms a render at full detail makes
    the page step down; the flock then covers as much of the picture as at full detail (within
    20 %; the page before: 38 foreground pixels against 11 172 in the issue, a third of the
    resolution), and the Detail menu and the status bar say the same thing, also for a level
    chosen in the menu (the page before: "1 in 16 birds" in the menu, "half resolution" in the
    status bar for 500 birds)."""
    open_scene(page, query("starlings-2d-reference"))
    slow(page, 600)
    wait(page, "flocksim.detail.scale < 1", 30_000)
    page.click("#pause")
    wait(page, "flocksim.paused === true")
    detail = hook(page, "detail")
    lowered = foreground_share(page)
    page.select_option("#detail", "0")  # full detail, fixed
    full = foreground_share(page)
    slow(page, 0)
    print(f"foreground share: {lowered:.5f} at {detail}, {full:.5f} at full detail")
    assert full > 0.002, full  # the flock is in the picture
    assert abs(lowered - full) <= 0.2 * full, (lowered, full, detail)
    summary = detail["menu"].removeprefix("auto (").removesuffix(")")
    assert detail["note"] in (f"{summary}: slow renderer", f"drawing {summary}: slow renderer"), detail
    # a level chosen in the menu: its text is what it draws of this flock, as the note says
    page.select_option("#detail", "5")
    fixed = hook(page, "detail")
    assert fixed["note"] in (f"{fixed['menu']}: chosen in View", f"drawing {fixed['menu']}: chosen in View"), fixed
    page.select_option("#detail", "auto")


def test_the_auto_level_comes_back_up_once_the_slowness_is_gone(page):
    """starlings-3d, 500 birds: slowed to 600 ms a render at full detail the page steps down; once
    the slowness is gone it is back at full detail within 10 s (the page before needed a median
    render under 40 ms, which SwiftShader does not reach: it stayed down)."""
    open_scene(page, query("starlings-3d"))
    slow(page, 600)
    wait(page, "flocksim.detail.level > 0", 30_000)
    wait(page, "flocksim.detail.scale < 1", 30_000)
    slow(page, 0)
    start = time.monotonic()
    wait(page, "flocksim.detail.level === 0", 20_000)
    back = time.monotonic() - start
    print(f"back at full detail after {back:.1f} s")
    assert back < 10, back


def full_resolution_after(page, name: str, n: int, limit_s: float = 10.0, after_s: float = 2.0) -> float | None:
    """Seconds from the scene's first frames (its own flock of ``n`` on screen) until its page
    draws at full resolution, at least ``after_s`` after them (past the first renders, which the
    page before stepped down at) and after a render since them, or None when it does not within
    ``limit_s``."""
    wait(
        page,
        f"!flocksim.compiling && flocksim.preset === {name!r} && flocksim.frame?.nAgents === {n}",
        FIRST_FRAME_TIMEOUT_MS,
    )
    start = time.monotonic()
    renders = hook(page, "renderCount")
    while time.monotonic() - start < limit_s:
        page.wait_for_timeout(200)
        if time.monotonic() - start < after_s:
            continue
        scale, count = page.evaluate("[flocksim.detail.scale, flocksim.renderCount]")
        if scale == 1 and count > renders:
            return time.monotonic() - start
    return None


def test_every_preset_at_its_default_size_draws_at_full_resolution(page):
    """Each shipped preset, opened at its default size in one page (scene after scene), draws at
    full resolution 2 to 10 s after its first frames (a flock of 100 000 may be drawn thinned, at
    full resolution), also after a slow spell in the first scene (as a busy machine makes one).
    The page before lowered the resolution at its first slow renders and kept it, into the next
    scenes."""
    open_scene(page, query("starlings-2d"))
    slow(page, 600)
    wait(page, "flocksim.detail.scale < 1", 30_000)
    slow(page, 0)
    missed = {}
    # LOD_PRESETS=a,b: only those (to compare builds quickly)
    names = os.environ.get("LOD_PRESETS", "").split(",") if os.environ.get("LOD_PRESETS") else preset_names()
    for name in names:
        n = load_preset(name).agents.n
        page.select_option("#preset", name)
        took = full_resolution_after(page, name, n)
        print(f"{name} ({n}): {took}", hook(page, "detail"))
        if took is None:
            missed[name] = hook(page, "detail")
    assert not missed, missed


# ---- item 2: murmurations that read as murmurations at 10 000 and 100 000 birds ---------------


def canvas_pixels(page) -> np.ndarray:
    """The view's canvas as on screen: (height, width, 3) uint8 RGB from a screenshot."""
    png = page.locator("#view").screenshot()
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def edge_sharpness(rgb: np.ndarray) -> float:
    """How sharp the flock's outline is: the mean change of darkness per 8-pixel block
    (block_darkness, 0 sky to 1 black) across the border of its silhouette (blocks darker than
    FLOCK_BLOCK). A fringe of faint specks fades out over many blocks (low), a bounded flock
    against the sky stops within one or two (high)."""
    dark = block_darkness(rgb)
    flock = dark > FLOCK_BLOCK
    border = flock & ~ndimage.binary_erosion(flock)
    gy, gx = np.gradient(dark)
    return float(np.hypot(gx, gy)[border].mean()) if border.any() else 0.0


@pytest.mark.parametrize(
    ("preset", "sets", "seconds", "sharp"),
    [("starlings-3d", ("agents.n=10000",), 5, 0.010), ("starlings-3d-large", (), 0.3, 0.03)],
    ids=["10000", "100000"],
)
def test_large_murmurations_have_dark_cores_pale_sheets_and_sharp_edges(page, preset, sets, seconds, sharp):
    """10 000 (after 5 s) and 100 000 starlings at the page's own level of detail (SwiftShader: below full
    detail) read as a murmuration against the dusk sky: a dark core (the darkest 20 blocks over
    0.37 of the way from the sky to black), pale thin parts (over 30 % of the flock's blocks
    lighter than half the core) and a sharp edge (edge_sharpness over ``sharp``). The page before
    drew 1 in 4 birds at 35 % of the resolution at 10 000 (core 0.26-0.30, edge 0.012) and 1 in 32 at
    100 000 (core 0.19, no pale part, edge 0.008); now core 0.43-0.60 and 0.46-0.55, edge 0.012-0.024 and
    0.048-0.080. At 10 000 the edge does not tell the two pages apart (a quiet run measured 0.0124 on the
    new page, 2026-12-07 20:35 UTC), so there the bound (0.010) only keeps a blurred silhouette out and
    the core and the pale share are what fail on the page before; at 100 000 the edge (over 0.03) does."""
    open_scene(page, query(preset, *sets), frames=2)
    wait(page, f"flocksim.frame.time > {seconds}", FIRST_FRAME_TIMEOUT_MS)
    page.wait_for_timeout(3000)  # the level of detail settles
    rgb = canvas_pixels(page)
    blocks, core, pale = flock_tones(rgb)
    edge = edge_sharpness(rgb)
    detail = hook(page, "detail")
    print(f"{preset} {sets}: flock blocks {blocks}, core {core:.3f}, pale share {pale:.3f}, edge {edge:.4f}, {detail}")
    assert blocks > 300, blocks  # the flock is in the picture
    assert core > 0.37, (core, detail)
    assert pale > 0.3, (pale, detail)
    assert edge > sharp, (edge, detail)
