"""Browser test of Flappy Boids (issue 19): Debian's chromium, driven by Playwright, plays the
game for a few seconds with synthetic key presses against the real server.

It checks that the player takes over the target, the score rises, the rock meshes arrive and are
drawn (pixels that differ from the view drawn without them), that R restarts, and that the same
pixel check reads nothing once the scene has no rocks. With ``FLOCKSIM_SCREENSHOTS=DIR`` it saves
its screenshot there (``viewer-flappy-boids-keys.png``; the one in docs/viewer.md comes from
tests/test_viewer_scenes.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import free_port, full_detail, launched_chromium, serve_in_thread
from flocksim.viewer import server as viewer_server
from test_viewer_browser import CHROMIUM, STATIC_INDEX, VIEWPORT, hook

FIRST_FRAME_TIMEOUT_MS = 900_000
"""The first frame may wait for numba to compile the kernels (minutes on a cold cache)."""
WAIT_MS = 60_000

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(not STATIC_INDEX.exists(), reason=f"viewer page not built ({STATIC_INDEX} missing)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def page() -> Iterator[object]:
    port = free_port()
    app = viewer_server.create_app(preset="flappy-boids", sps=60, port=port)
    errors: list[str] = []
    with serve_in_thread(app, port), launched_chromium() as browser:
        p = browser.new_page(viewport=VIEWPORT)
        p.on("pageerror", lambda e: errors.append(str(e)))
        p.goto(f"http://127.0.0.1:{port}/" + full_detail("?preset=flappy-boids&set=agents.n%3D60"))
        wait(p, "window.flocksim && flocksim.framesDrawn >= 3", FIRST_FRAME_TIMEOUT_MS)
        yield p
        p.close()
    assert not errors, f"errors in the page: {errors}"


def wait(page, expression: str, timeout_ms: float = WAIT_MS) -> object:
    return page.wait_for_function(expression, timeout=timeout_ms).json_value()


def test_play_with_keys_score_rises_rocks_drawn_restart(page, tmp_path):
    wait(page, "flocksim.game !== null && flocksim.rocks.meshes >= 3")
    assert hook(page, "rocks")["triangles"] > 1000
    start = hook(page, "game")
    assert start["pilot"] == "gaps"  # the scripted pilot flies until a key is pressed
    page.focus("#view")
    page.keyboard.down("ArrowUp")
    wait(page, "flocksim.game.pilot === 'player'")
    y0 = hook(page, "game")["target"][1]
    wait(page, f"flocksim.game.target[1] > {y0 + 3}")  # the target climbs while the key is held
    page.keyboard.up("ArrowUp")
    page.keyboard.down("d")
    z0 = hook(page, "game")["target"][2]
    wait(page, f"flocksim.game.target[2] > {z0 + 3}")  # and moves right with D
    page.keyboard.up("d")
    played = wait(page, f"flocksim.game.distance > {start['distance'] + 15} && flocksim.game")
    assert played["score"] > start["score"]
    assert played["alive"] + played["lost"] == 60
    # the rock meshes are drawn: the view differs from the view without them
    drawn = hook(page, "rockPixels()")
    assert drawn["foreground"] > 2000, drawn
    # only the rock up to two walls ahead is drawn: the farther chunks the server sent are not
    rocks = hook(page, "rocks")
    assert 1 <= rocks["drawn"] < rocks["meshes"], rocks
    cost = hook(page, "rockDrawCost(2)")  # what benchmarks/bench_flappy_page.py times
    assert cost["with_ms"] > 0 and cost["without_ms"] > 0, cost
    out = Path(os.environ.get("FLOCKSIM_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / "viewer-flappy-boids-keys.png"))
    # R restarts: a new flock at the start, the player keeps the target
    page.keyboard.press("r")
    wait(page, "flocksim.game !== null && flocksim.game.distance < 5 && flocksim.game.alive === 60")
    wait(page, "flocksim.game.pilot === 'player' && flocksim.rocks.meshes >= 3")
    # without rocks (the game switched off) the same pixel check finds nothing
    hook(page, 'send({type: "set", changes: {"game.enabled": false, "rules.seek.weight": 0}})')
    wait(page, "flocksim.game === null && flocksim.rocks.meshes === 0")
    assert hook(page, "rockPixels()")["foreground"] == 0
