"""Flappy Boids frame rate in a browser: rocks on vs the same flock without rocks.

Debian's chromium (SwiftShader WebGL: the CPU draws) via Playwright, as bench_viewer_page.py.
Starts ``flocksim serve --preset flappy-boids`` (a subprocess on a free loopback port, ``--sps``
steps per second, default 60) and opens the page twice in a ``--width`` x ``--height`` viewport:

- ``rocks``: ``?preset=flappy-boids`` (the game: rock meshes, chase camera, HUD);
- ``no_rocks``: the same flock with ``game.enabled=false`` (the same birds and parameters, no
  rocks: the viewer's default 3D camera that follows the flock).

Each waits for its first frames (the first may wait for the kernels to compile), then
``--warmup`` seconds, and measures for ``--seconds`` seconds: ``live_fps`` (frames received and
drawn per second), ``render_fps`` (the page's own count of renders per second, sampled every
0.5 s, mean), ``browser_cpu_ms_per_frame`` (CPU time of the browser's processes per frame
drawn: on a busy machine the frame rates fall with the load, CPU per frame hardly does) and,
for ``rocks``, the rock meshes on the page, those drawn (in view) and their triangles, and then,
paused, ``render_ms`` / ``render_ms_without_rocks``: the wall time of one render drawn to
completion with the rock and with it hidden (``--renders`` pairs, alternately, mean): the
drawing cost of the rock alone. ``ratio`` = rocks live_fps / no_rocks live_fps; the target is
>= 0.8.

``--gpu``: hardware WebGL instead of SwiftShader (as bench_viewer_page.py); each page's row names
the renderer that drew it (``webgl_renderer``).

Usage: python benchmarks/bench_flappy_page.py [--n 150] [--seconds 10] [--set game.cell_size=3] [--gpu]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import sync_playwright

import flocksim
from flocksim.viewer.server import STATIC_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_viewer import free_port, stop_server, wait_listening  # the server handling of bench_viewer.py
from bench_viewer_page import CHROMIUM, WEBGL_RENDERER, add_browser_options, browser_args, browser_cpu_s


def start_server(port: int, sps: float) -> subprocess.Popen:
    args = [sys.executable, "-m", "flocksim.cli", "serve", "--port", str(port), "--sps", str(sps),
            "--preset", "flappy-boids"]  # fmt: skip
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return wait_listening(server, port)


def measure(browser, url: str, server_pid: int, args: argparse.Namespace) -> dict:
    page = browser.new_page(viewport={"width": args.width, "height": args.height})
    try:
        page.goto(url)
        page.wait_for_function("window.flocksim && flocksim.framesDrawn >= 3", timeout=900_000)
        page.wait_for_timeout(1000 * args.warmup)
        c0 = browser_cpu_s(server_pid)
        f0, t0 = page.evaluate("[flocksim.framesDrawn, performance.now()]")
        samples, end = [], time.monotonic() + args.seconds
        while time.monotonic() < end:
            page.wait_for_timeout(500)
            samples.append(page.evaluate("flocksim.fps"))
        f1, t1 = page.evaluate("[flocksim.framesDrawn, performance.now()]")
        frames = f1 - f0
        row = {
            "webgl_renderer": page.evaluate(WEBGL_RENDERER),
            "live_fps": round(frames / ((t1 - t0) / 1000), 2),
            "render_fps": round(sum(samples) / len(samples), 2),
            "browser_cpu_ms_per_frame": round(1e3 * (browser_cpu_s(server_pid) - c0) / max(frames, 1), 1),
        }
        rocks = page.evaluate("flocksim.game ? flocksim.rocks : null")
        if rocks is not None:
            row.update(rock_meshes=rocks["meshes"], rock_meshes_drawn=rocks["drawn"], rock_triangles=rocks["triangles"])
            page.click("#pause")  # a still scene: the same picture timed with and without the rock
            page.wait_for_function("flocksim.paused === true", timeout=60_000)
            cost = page.evaluate(f"flocksim.rockDrawCost({args.renders})")
            row.update(render_ms_without_rocks=round(cost["without_ms"], 1), render_ms=round(cost["with_ms"], 1))
        return row
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=150, help="birds")
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds of each measure")
    parser.add_argument("--warmup", type=float, default=3.0, help="untimed seconds after the first frames")
    parser.add_argument("--renders", type=int, default=20, help="timed render pairs of the still rock scene")
    parser.add_argument("--sps", type=float, default=60.0, help="the server's steps per second")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="a parameter for both pages (the page's ?set=), e.g. game.cell_size=3; repeatable",
    )
    add_browser_options(parser)
    args = parser.parse_args()
    if not (STATIC_DIR / "index.html").exists():
        raise SystemExit(f"the page is not built ({STATIC_DIR}); run ./dev.sh setup")
    port = free_port()
    sets = [f"agents.n={args.n}", *args.set]
    base = f"http://127.0.0.1:{port}/?preset=flappy-boids" + "".join(f"&set={quote(s)}" for s in sets)
    server = start_server(port, args.sps)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=browser_args(args))
            try:
                rocks = measure(browser, base, server.pid, args)
                bare = measure(browser, base + "&set=game.enabled%3Dfalse", server.pid, args)
            finally:
                browser.close()
    finally:
        stop_server(server)
    ratio = round(rocks["live_fps"] / bare["live_fps"], 3)
    row = {"n": args.n, "set": args.set, "rocks": rocks, "no_rocks": bare, "ratio": ratio}
    row.update(viewport=[args.width, args.height], sps=args.sps, cpus=os.cpu_count(), machine=platform.machine(),
               flocksim=flocksim.__version__)  # fmt: skip
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
