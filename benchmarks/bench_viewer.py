"""Viewer throughput: frames per second a WebSocket client gets from ``flocksim serve``, stepping included.

For each ``--n`` (default 10 000 and 100 000 starlings-3d birds): start ``flocksim serve --sps 0``
(a subprocess on a free loopback port, ``--max-agents`` raised to N), connect a Python
``websockets`` client to ``/ws?protocol=2&preset=starlings-3d&set=agents.n%3DN`` and pull frames the way the
page does (one ``next``, wait for the frame, the next ``next``), without decoding them. The
first frame waits for the kernels to compile; then ``--warmup`` seconds are pulled untimed and
``--seconds`` seconds timed. With ``--sps 0`` the server steps as fast as it can, and a frame
always shows a newer step than the one before, so frames per second = simulation steps per
second that reached the client (the issue's targets: >= 60 at 10 000, >= 30 at 100 000, <= 1 MB
per frame).

To explain the number, the same parameters are then stepped and encoded in this process (after
the server has stopped, so the two never compete for the CPU): ``step_ms`` is the median
``Simulation.step()``, ``encode_ms`` the median ``encode_frame`` (status values given, as the
server caches mean neighbours), and its phases ``status_ms`` (the polarization), ``capture_ms``
and ``pack_ms``. The server captures a frame between two steps on its worker thread and computes
the polarization and packs on another thread beside the next step, so a frame takes at least
step_ms + capture_ms, more where the packing competes with the step for the cores.
``control_reply_ms_*``: round trip of a control message the server rejects, sent
while the flock keeps stepping (how responsive the server stays). ``pause_ms_*`` /
``resume_ms_*``: ``--pauses`` times, the time from sending ``pause`` (``resume``) to the server's
``state`` message confirming it, while the client keeps pulling frames as the page does (a
``next`` sent ``--draw-ms`` after each frame arrives, the time a page takes to draw it); each
pause is sent after at least 3 frames of a running flock, at a random moment (0 to
``--draw-ms`` + 100 ms after a frame arrived: while the client draws, or after it asked for the
next frame). Median and worst. A client slower than a step (a page drawing on the CPU: about
100 ms at 100 000 birds) asks for each frame while the next step runs.

Usage: python benchmarks/bench_viewer.py [--n 10000 --n 100000] [--seconds 10] [--threads T] [--pauses K]
Prints one JSON object per N: {n, frames_per_second, bytes_per_frame_mean, bytes_per_frame_max,
step_ms, encode_ms, ...}.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import socket
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from urllib.parse import quote

import numba
import websockets

from flocksim import Simulation, __version__, apply_overrides, load_preset
from flocksim.viewer.protocol import capture_frame, decode_frame, encode_frame, pack_frame, status_values

STEP_AT = 32  # byte offset of the frame's uint64 step (docs/protocol.md, header)
NEXT = json.dumps({"type": "next"})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def overrides(n: int, sets: Sequence[str]) -> list[str]:
    """The preset's overrides: ``agents.n`` and the command's ``--set`` values, in order."""
    return [f"agents.n={n}", *sets]


def start_server(n: int, port: int, threads: int | None, sets: Sequence[str] = ()) -> subprocess.Popen:
    args = [sys.executable, "-m", "flocksim.cli", "serve", "--port", str(port), "--sps", "0",
            "--max-agents", str(max(n, 1)), "--preset", "starlings-3d"]  # fmt: skip
    for change in overrides(n, sets):
        args += ["--set", change]
    if threads is not None:
        args += ["--threads", str(threads)]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return wait_listening(server, port)


def wait_listening(server: subprocess.Popen, port: int) -> subprocess.Popen:
    """``server`` once it accepts connections on ``port``; SystemExit if it exits or takes over 120 s."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            output = server.stdout.read().strip() if server.stdout else ""
            raise SystemExit(f"flocksim serve exited with {server.returncode}: {output}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("flocksim serve did not start listening within 120 s")


def stop_server(server: subprocess.Popen) -> None:
    """Terminate ``server``; kill it if it has not exited within 30 s."""
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


async def confirmations(ws, count: int, draw_s: float) -> dict:
    """Pause and resume confirmation times [ms] (see the module's docstring), ``count`` of each."""
    rng = random.Random(1)
    frames = 0
    arrived = asyncio.Event()
    waiter: asyncio.Future | None = None

    async def ask_later() -> None:
        await asyncio.sleep(draw_s)  # the page draws the frame, then asks for the next
        await ws.send(NEXT)

    async def reader() -> None:
        nonlocal frames
        asking: asyncio.Task | None = None
        while True:
            data = await ws.recv()  # read on meanwhile: a reply is seen as it arrives
            if isinstance(data, bytes):
                frames += 1
                arrived.set()
                if asking is not None:
                    await asking
                asking = asyncio.create_task(ask_later())
                continue
            message = json.loads(data)
            if message["type"] == "state" and waiter is not None and not waiter.done():
                waiter.set_result(message["paused"])
            elif message["type"] != "compiling":
                raise SystemExit(f"unexpected message: {data[:300]}")

    async def confirm(kind: str) -> float:
        nonlocal waiter
        waiter = asyncio.get_running_loop().create_future()
        started = time.perf_counter()
        await ws.send(json.dumps({"type": kind}))
        paused = await asyncio.wait_for(waiter, timeout=120)
        if paused != (kind == "pause"):
            raise SystemExit(f"{kind}: the server confirmed paused={paused}")
        return time.perf_counter() - started

    task = asyncio.create_task(reader())
    await ws.send(NEXT)
    pauses, resumes = [], []
    try:
        for _ in range(count):
            seen = frames
            while frames < seen + 3:  # a running flock: frames captured behind steps
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), timeout=120)
            await asyncio.sleep(rng.uniform(0.0, draw_s + 0.1))
            pauses.append(await confirm("pause"))
            await asyncio.sleep(0.1)
            resumes.append(await confirm("resume"))
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return {
        "pause_ms_median": round(1e3 * statistics.median(pauses), 2),
        "pause_ms_max": round(1e3 * max(pauses), 2),
        "resume_ms_median": round(1e3 * statistics.median(resumes), 2),
        "resume_ms_max": round(1e3 * max(resumes), 2),
    }


async def pull(n: int, port: int, warmup: float, seconds: float, pauses: int, draw_s: float, sets: list[str]) -> dict:
    query = "&".join(f"set={quote(change, safe='')}" for change in overrides(n, sets))
    url = f"ws://127.0.0.1:{port}/ws?protocol=2&preset=starlings-3d&{query}"
    async with websockets.connect(url, max_size=None, compression=None) as ws:
        for expected in ("hello", "params"):
            message = json.loads(await ws.recv())
            while message["type"] == "compiling":  # progress while the kernels compile
                message = json.loads(await ws.recv())
            if message["type"] != expected:
                raise SystemExit(f"expected {expected}, got {message}")

        async def frame() -> bytes:
            await ws.send(NEXT)
            while True:
                data = await asyncio.wait_for(ws.recv(), timeout=900)  # the first one may compile
                if isinstance(data, bytes):
                    return data
                if json.loads(data).get("type") != "compiling":
                    raise SystemExit(f"unexpected message: {data[:300]}")

        started = time.perf_counter()
        first = await frame()
        compile_s = time.perf_counter() - started
        end = time.perf_counter() + warmup
        while time.perf_counter() < end:
            await frame()
        sizes: list[int] = []
        data = first
        step0 = None
        started = time.perf_counter()
        end = started + seconds
        while time.perf_counter() < end:
            data = await frame()
            sizes.append(len(data))
            if step0 is None:
                step0 = struct.unpack_from("<Q", data, STEP_AT)[0]
        elapsed = time.perf_counter() - started
        last = decode_frame(data)
        replies = []  # responsiveness while the flock steps: round trip of a rejected message
        for k in range(20):
            t = time.perf_counter()
            await ws.send(json.dumps({"type": f"probe-{k}"}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            replies.append(time.perf_counter() - t)
            if reply["type"] != "error":
                raise SystemExit(f"expected an error reply, got {reply}")
            await asyncio.sleep(0.01)
        confirmed = await confirmations(ws, pauses, draw_s) if pauses else {}
    return {
        "frames": len(sizes),
        "seconds": round(elapsed, 3),
        "frames_per_second": round(len(sizes) / elapsed, 2),
        "steps_per_frame": round((last.step - step0) / max(len(sizes) - 1, 1), 3),
        "bytes_per_frame_mean": round(statistics.fmean(sizes)),
        "bytes_per_frame_max": max(sizes),
        "layout": last.layout,
        "server_steps_per_second": round(last.status_dict["steps_per_second"], 2),
        "first_frame_s": round(compile_s, 2),
        "control_reply_ms_median": round(1e3 * statistics.median(replies), 2),
        "control_reply_ms_max": round(1e3 * max(replies), 2),
        **confirmed,
        "draw_ms": round(1e3 * draw_s, 1),
    }


def in_process(n: int, threads: int | None, repeats: int, sets: list[str]) -> dict:
    """Median times [ms] of the same parameters in this process: ``step_ms`` (``Simulation.step``),
    ``encode_ms`` (``encode_frame`` with status values given) and its phases: ``status_ms``
    (``status_values`` with mean neighbours given: the polarization), ``capture_ms`` (copying a
    frame out, ``capture_frame``) and ``pack_ms`` (``pack_frame``)."""
    sim = Simulation(apply_overrides(load_preset("starlings-3d"), overrides(n, sets)), threads=threads)
    sim.warm_up()
    sim.step(3)
    encode_frame(sim, 0)
    times: dict[str, list[float]] = {"step": [], "encode": [], "status": [], "capture": [], "pack": []}
    status = status_values(sim, 0.0)

    def timed(name: str, fn, *args, **kwargs):
        t = time.perf_counter()
        result = fn(*args, **kwargs)
        times[name].append(time.perf_counter() - t)
        return result

    for k in range(repeats):
        timed("step", sim.step)
        timed("encode", encode_frame, sim, k, status=status)
        timed("status", status_values, sim, 0.0, mean_neighbors=7.0)
        parts = timed("capture", capture_frame, sim, k, status=status)
        timed("pack", pack_frame, parts)
    return {f"{name}_ms": round(1e3 * statistics.median(values), 2) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="birds (repeatable; default 10000 and 100000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds of pulling frames per N")
    parser.add_argument("--warmup", type=float, default=2.0, help="untimed seconds after the first frame")
    parser.add_argument("--threads", type=int, default=None, help="numba threads (default: NUMBA_NUM_THREADS)")
    parser.add_argument("--repeats", type=int, default=20, help="in-process steps timed for step_ms/encode_ms")
    parser.add_argument("--pauses", type=int, default=10, help="pause/resume confirmations timed (0: none)")
    parser.add_argument("--draw-ms", type=float, default=100.0, help="client's delay before each next while pausing")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter override after agents.n (repeatable), e.g. detail.enabled=true")  # fmt: skip
    args = parser.parse_args()
    for n in args.n or [10_000, 100_000]:
        port = free_port()
        print(f"n={n}: serving on port {port} ...", file=sys.stderr, flush=True)
        server = start_server(n, port, args.threads, args.sets)
        try:
            row = asyncio.run(pull(n, port, args.warmup, args.seconds, args.pauses, args.draw_ms / 1e3, args.sets))
        finally:
            stop_server(server)
        row = {"n": n, **row, **in_process(n, args.threads, args.repeats, args.sets)}
        row.update(
            preset="starlings-3d",
            sets=args.sets,
            threads=args.threads or numba.config.NUMBA_NUM_THREADS,
            cpus=os.cpu_count(),
            machine=platform.machine(),
            flocksim=__version__,
        )
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
