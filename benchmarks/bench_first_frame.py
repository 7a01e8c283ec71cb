"""The viewer's first frame on an empty kernel cache, as a new user meets it.

Starts ``flocksim serve`` (its default scene, starlings-3d, unless ``--preset``) with
``NUMBA_CACHE_DIR`` pointing at a new, empty folder, connects a WebSocket client as soon as the
server listens (the page would), asks for a frame and waits for it. Reports the seconds from
starting the server process to listening, and to the first frame (the kernels' compile, the
server's warm-up and the first step), with the server's own log lines (its compile notice and
estimate). ``--warm`` then does the same again with the cache the first run filled.

Usage: python benchmarks/bench_first_frame.py [--preset starlings-3d] [--warm] [-o result.json]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compile import machine
from bench_viewer import NEXT, free_port, stop_server, wait_listening


async def first_frame(port: int, preset: str) -> None:
    url = f"ws://127.0.0.1:{port}/ws?protocol=2&preset={preset}"
    async with websockets.connect(url, max_size=None, compression=None) as ws:
        await ws.send(NEXT)
        while True:
            data = await asyncio.wait_for(ws.recv(), timeout=900)
            if isinstance(data, bytes):
                return


def one_run(preset: str, cache: str) -> dict:
    port = free_port()
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    args = [sys.executable, "-m", "flocksim.cli", "serve", "--port", str(port), "--preset", preset]
    started = time.perf_counter()
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        wait_listening(server, port)
        listening = time.perf_counter() - started
        asyncio.run(first_frame(port, preset))
        frame = time.perf_counter() - started
    finally:
        stop_server(server)
    log = [line.strip() for line in (server.stdout.read() if server.stdout else "").splitlines() if line.strip()]
    return {"listening_s": round(listening, 2), "first_frame_s": round(frame, 2), "server_log": log[:12]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="starlings-3d", help="scene served and measured (default starlings-3d)")
    parser.add_argument("--warm", action="store_true", help="also a second run with the cache the first filled")
    parser.add_argument("-o", "--output", help="also write the JSON to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flocksim-first-frame-") as cache:
        result = {
            "benchmark": "first_frame",
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": machine(),
            "preset": args.preset,
            "cold": one_run(args.preset, cache),
        }
        if args.warm:
            result["warm"] = one_run(args.preset, cache)
    result["load_average_at_end"] = round(os.getloadavg()[0], 2)
    text = json.dumps(result, indent=1)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")


if __name__ == "__main__":
    main()
