"""Viewer page frame rates in a browser: Debian's chromium (SwiftShader WebGL, the CPU draws) via Playwright.

For each ``--n`` (default 10 000 and 100 000 starlings-3d birds): start ``flocksim serve --sps 0``
(a subprocess on a free loopback port, ``--max-agents`` raised to N), open the page at
``?preset=starlings-3d&set=agents.n%3DN`` in a ``--width`` x ``--height`` viewport and wait for
its first frames (the first may wait for the kernels to compile), then ``--warmup`` seconds, and
measure for ``--seconds`` seconds each:

- ``live_fps``: frames the page received and drew per second while the flock flies (the server
  steps as fast as it can; the page pulls one frame per drawn frame): what a user sees;
- ``server_steps_per_s``: the server's steps per second meanwhile, as its frames report them
  (the status bar's "Sim steps/s"; sampled every 0.5 s, mean): the server steps on beside the
  browser that draws the page (``--threads``: the server's thread count);
- ``render_fps``: with the simulation paused, the view rotated continuously by a mouse drag:
  renders per second of one still frame, the drawing cost alone (the page's own count of
  renders in the last second, ``flocksim.fps``, sampled every 0.5 s, mean);
- ``browser_cpu_ms_per_frame`` / ``browser_cpu_ms_per_render``: CPU time [ms] the browser's
  processes (chromium and its GPU process, which runs SwiftShader; every descendant of this
  script except the server) used per frame drawn in the live window and per render in the
  rotating window (renders counted by the page, ``flocksim.renderCount``, where it counts them;
  estimated from ``flocksim.fps`` on older pages). On a machine shared with other work the
  frame rates fall with the load, but CPU time per frame hardly does: it is the figure to compare
  two builds with there;
- ``pause_ms`` / ``key_ms``: while the flock flies, the time [ms] from a click on Pause (a press of
  Space on the view) to the page showing the paused state (the Pause button's text turns to
  "Resume"), ``--repeats`` times each (resumed between): median and worst. The start is this
  script's clock just before it sends the input; the end, the wall clock (``Date.now()``, the same
  machine clock) at which a MutationObserver installed on the button sees its text change. Both
  include the server's answer where the page waits for it (pages before the level of detail did;
  the page now says "Resume" and "pausing…" at once). ``input_seen_ms``: of both, the time to
  the page's first handler of the click or key (a capturing listener on the window): how long the
  input waited for the page's main thread; ``confirmed_ms``: of both, the time until the page
  follows the server's answer (``flocksim.paused``, polled every 20 ms by this script);
- ``drag_ms``: with the simulation paused, the time [ms] from a mouse move of a drag on the view to
  the animation frame after the first render that followed it (``flocksim.renderCount`` grew; the
  browser starts that frame once the rotated view is handed on to be shown), ``--repeats`` moves
  300 ms apart: median and worst.

Both read only what every version of the page exposes (``flocksim.framesDrawn``, ``flocksim.fps``,
the Pause button), so two builds can be compared: run this script for each, alternately, e.g.
with ``PYTHONPATH=/path/to/other/src`` for the other (its page built into its
``src/flocksim/viewer/static``). SwiftShader's figures say how costly the drawing is relative to
another build on the same machine, not what a GPU draws.

With ``--gpu`` chromium draws with the machine's GPU (hardware WebGL) instead of SwiftShader;
every row names the renderer that drew it (``webgl_renderer``), so a GPU row is checked, not
assumed.

Usage: python benchmarks/bench_viewer_page.py [--n 10000 --n 100000] [--seconds 10] [--threads 1] [--gpu]
Prints one JSON object per N: {n, webgl_renderer, live_fps, render_fps, first_frame_s, ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import flocksim
from flocksim.viewer.server import STATIC_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_viewer import free_port, start_server, stop_server  # the server started as bench_viewer.py does

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
GPU_ARGS = ["--no-sandbox", "--ignore-gpu-blocklist", "--enable-gpu", "--use-angle=vulkan", "--enable-features=Vulkan"]
"""``--gpu``: chromium's hardware WebGL (ANGLE on Vulkan) in place of SwiftShader; each row's
``webgl_renderer`` says what drew it, so a row taken where chromium fell back to software says so."""
WEBGL_RENDERER = """(() => {
  const gl = document.getElementById("view").getContext("webgl2");
  const info = gl && gl.getExtension("WEBGL_debug_renderer_info");
  return gl ? String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER)) : null;
})()"""
"""The renderer of the page's WebGL context (the canvas's existing context), e.g. "ANGLE (Google,
Vulkan 1.3.0 (SwiftShader Device (Subzero) ...))" on software rendering."""


def browser_args(args: argparse.Namespace) -> list[str]:
    """chromium's command line: ``--browser-arg`` values if any, else :data:`GPU_ARGS` with
    ``--gpu`` or :data:`CHROMIUM_ARGS` (SwiftShader)."""
    if args.browser_arg:
        return list(args.browser_arg)
    return GPU_ARGS if args.gpu else CHROMIUM_ARGS


def add_browser_options(parser: argparse.ArgumentParser) -> None:
    """``--gpu`` and ``--browser-arg`` (shared with bench_flappy_page.py)."""
    parser.add_argument("--gpu", action="store_true", help="hardware WebGL (GPU_ARGS) instead of SwiftShader")
    parser.add_argument(
        "--browser-arg", action="append", default=[], help="a chromium argument instead of the defaults; repeatable"
    )


# renders since the page loaded, where the page counts them (null on pages that do not)
RENDER_COUNT = "flocksim.renderCount ?? null"
# the server's steps per second, as its last frame on the page reports them (null before a frame)
SERVER_STEPS = "flocksim.status ? flocksim.status.steps_per_second : null"


TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def browser_cpu_s(server_pid: int) -> float:
    """CPU time [s] (user + system) of this process's descendants, the server's subtree excepted:
    the browser's processes (Linux /proc)."""
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)  # field 4: ppid
        times[pid] = (int(fields[11]) + int(fields[12])) * TICK_S  # fields 14, 15: utime, stime
    total, todo = 0.0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        if pid == server_pid:
            continue
        total += times.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return total


# a MutationObserver on the Pause button: the wall clock [ms] at which its text last changed
WATCH_PAUSE = """() => {
  const b = document.getElementById("pause");
  window.__benchPause = {text: b.textContent, at: null, input: null};
  const seen = () => (window.__benchPause.input = Date.now());
  window.addEventListener("click", seen, {capture: true});
  window.addEventListener("keydown", seen, {capture: true});
  new MutationObserver(() => {
    const was = window.__benchPause;
    if (b.textContent !== was.text) window.__benchPause = {text: b.textContent, at: Date.now(), input: was.input};
  }).observe(b, {childList: true, characterData: true, subtree: true});
}"""
# a capturing pointermove listener: the renders counted when the page handled the last move, and
# the wall clock [ms] of the animation frame after the first one that found a render more (the
# browser starts it once the rendered picture is handed on: the rendered view is on its way to
# the screen)
WATCH_DRAG = """() => {
  window.__benchDrag = {moved: null, drawn: null};
  const canvas = document.getElementById("view");
  canvas.addEventListener("pointermove", () => {
    const mark = {moved: Date.now(), drawn: null, count: flocksim.renderCount};
    window.__benchDrag = mark;
    const look = () => {
      if (flocksim.renderCount > mark.count) requestAnimationFrame(() => (mark.drawn = Date.now()));
      else requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  }, {capture: true});
}"""


def summary(values: list[float]) -> dict:
    """Median and worst of some latencies [ms] (null when none)."""
    if not values:
        return {"median": None, "worst": None, "runs": 0}
    return {"median": round(statistics.median(values)), "worst": round(max(values)), "runs": len(values)}


def wait_text(page, text: str, timeout_s: float = 120.0) -> float | None:
    """Wait until the Pause button says ``text``: the wall clock [ms] at which it turned so."""
    page.wait_for_function(f"window.__benchPause.text === {json.dumps(text)}", timeout=1000 * timeout_s, polling=50)
    return page.evaluate("window.__benchPause.at")


def input_latency(page, repeats: int) -> dict:
    """Click on Pause and press Space while the flock flies: the time [ms] to the paused state."""
    page.evaluate(WATCH_PAUSE)
    results: dict[str, list[float]] = {"pause_ms": [], "key_ms": [], "input_seen_ms": [], "confirmed_ms": []}
    for k in range(2 * repeats):
        kind = "pause_ms" if k % 2 == 0 else "key_ms"
        page.wait_for_function("flocksim.paused === false", timeout=120_000)
        drawn = page.evaluate("flocksim.framesDrawn")
        page.wait_for_function(f"flocksim.framesDrawn >= {drawn + 2}", timeout=120_000)  # live again
        page.wait_for_timeout(500)
        start = time.time() * 1000
        if kind == "pause_ms":
            page.mouse.click(*center_of(page, "#pause"))
        else:
            page.focus("#view")
            page.keyboard.press("Space")
        at = wait_text(page, "Resume")
        page.wait_for_function("flocksim.paused === true", timeout=120_000, polling=20)
        results["confirmed_ms"].append(time.time() * 1000 - start)
        seen = page.evaluate("window.__benchPause.input")
        if at is not None:
            results[kind].append(at - start)
        if seen is not None:
            results["input_seen_ms"].append(seen - start)
        page.click("#pause")  # resume
        wait_text(page, "Pause")
    return {key: summary(values) for key, values in results.items()}


def center_of(page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag_latency(page, cx: float, cy: float, repeats: int) -> dict:
    """Paused: drag on the view, one move every 300 ms; the time [ms] from each move to its render."""
    page.evaluate(WATCH_DRAG)
    values = []
    page.mouse.move(cx, cy)
    page.mouse.down()
    for k in range(repeats):
        page.wait_for_timeout(300)
        start = time.time() * 1000
        page.mouse.move(cx + 40 * (k % 2 * 2 - 1), cy)
        page.wait_for_function("window.__benchDrag.drawn !== null", timeout=120_000, polling=50)
        values.append(page.evaluate("window.__benchDrag.drawn") - start)
    page.mouse.up()
    return {"drag_ms": summary(values)}


def measure(browser, n: int, port: int, server_pid: int, args: argparse.Namespace) -> dict:
    page = browser.new_page(viewport={"width": args.width, "height": args.height})
    try:
        started = time.perf_counter()
        page.goto(f"http://127.0.0.1:{port}/?preset=starlings-3d&set=agents.n%3D{n}")
        page.wait_for_function("window.flocksim && flocksim.framesDrawn >= 2", timeout=900_000)
        first = time.perf_counter() - started
        page.wait_for_timeout(1000 * args.warmup)
        c0 = browser_cpu_s(server_pid)
        f0, t0 = page.evaluate("[flocksim.framesDrawn, performance.now()]")
        steps, end = [], time.monotonic() + args.seconds
        while time.monotonic() < end:
            page.wait_for_timeout(500)
            steps.append(page.evaluate(SERVER_STEPS))
        f1, t1 = page.evaluate("[flocksim.framesDrawn, performance.now()]")
        steps = [s for s in steps if s is not None]
        live = (f1 - f0) / ((t1 - t0) / 1000)
        cpu_per_frame = 1e3 * (browser_cpu_s(server_pid) - c0) / max(f1 - f0, 1)
        latency = input_latency(page, args.repeats)
        page.click("#pause")
        page.wait_for_function("flocksim.paused === true", timeout=60_000)
        box = page.locator("#view").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        latency.update(drag_latency(page, cx, cy, args.repeats))
        page.mouse.move(cx, cy)
        page.mouse.down()
        samples, end, k = [], time.monotonic() + args.seconds, 0
        next_sample = time.monotonic() + 1.0  # the first second fills the page's window
        c0, s0 = browser_cpu_s(server_pid), next_sample
        r0 = page.evaluate(RENDER_COUNT)
        while time.monotonic() < end:
            k += 1
            page.mouse.move(cx + 120 * ((k % 40) / 20 - 1), cy + 10 * ((k % 7) - 3), steps=2)
            if time.monotonic() >= next_sample:
                samples.append(page.evaluate("flocksim.fps"))
                next_sample += 0.5
        r1 = page.evaluate(RENDER_COUNT)
        c1, s1 = browser_cpu_s(server_pid), time.monotonic()
        page.mouse.up()
        render = sum(samples) / len(samples) if samples else float("nan")
        # exact where the page counts its renders; otherwise the mean renders per second x the
        # sampled window (charged all the window's CPU time, the second before the first sample too)
        renders = r1 - r0 if r0 is not None and r1 is not None else render * (s1 - s0)
        cpu_per_render = 1e3 * (c1 - c0) / max(renders, 1)
        server_sps = round(sum(steps) / len(steps), 1) if steps else None
        renderer = page.evaluate(WEBGL_RENDERER)
        return {"webgl_renderer": renderer, "live_fps": round(live, 2), "server_steps_per_s": server_sps,
                "render_fps": round(render, 2), "first_frame_s": round(first, 1),
                "browser_cpu_ms_per_frame": round(cpu_per_frame, 1),
                "browser_cpu_ms_per_render": round(cpu_per_render, 1), **latency}  # fmt: skip
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="birds (repeatable; default 10000 and 100000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds of each measure")
    parser.add_argument("--warmup", type=float, default=3.0, help="untimed seconds after the first frames")
    parser.add_argument("--repeats", type=int, default=5, help="inputs of each latency measure")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--threads", type=int, help="the server's --threads (default: its own default)")
    add_browser_options(parser)
    args = parser.parse_args()
    if not (STATIC_DIR / "index.html").exists():
        raise SystemExit(f"the page is not built ({STATIC_DIR}); run ./dev.sh setup")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=browser_args(args))
        try:
            for n in args.n or [10_000, 100_000]:
                port = free_port()
                server = start_server(n, port, args.threads)
                try:
                    row = measure(browser, n, port, server.pid, args)
                finally:
                    stop_server(server)
                source = str(Path(flocksim.__file__).parent)
                row = {"n": n, **row, "threads": args.threads, "viewport": [args.width, args.height], "source": source}
                row.update(cpus=os.cpu_count(), machine=platform.machine(), flocksim=flocksim.__version__)
                print(json.dumps(row), flush=True)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
