"""Hostile clients against ``flocksim serve``: what they send, what they get, the server's peak memory.

Starts ``flocksim serve`` (a subprocess on a free loopback port, ``--data-dir`` a folder holding a
small PNG and a FIFO), connects one client to compile the kernels, then for ``--seconds`` runs
``--clients`` hostile WebSocket clients at once (one more than ``--max-connections``, so the
connection cap is hit too) plus ``--half-open`` raw TCP connections. Each WebSocket client sends,
in a seeded random order, the messages of :data:`ATTACKS` as fast as the server answers (it reads
every reply, so keep-alive pongs flow), with bursts of 40 slow messages at once; when the server
closes its socket (code 1009 for a message over 64 KiB is expected) it reconnects. The raw
connections send half a request line, headers without their end, or 200 KiB of headers, a byte
now and then, and reconnect when the server closes them.

Meanwhile the server's resident memory (``psutil``, the server process) is sampled every 50 ms.
At the end the server must still answer ``GET /api/presets`` and a fresh WebSocket must get its
``params``.

Usage: python benchmarks/soak_viewer_server.py [--seconds 120] [--clients 9] [--half-open 20] [--seed 0]
[--only ATTACK ...] (only those messages, no bursts: the memory one kind of attack costs)
Prints one JSON object: messages sent, replies by type, errors answered (and of those: budget,
image and busy errors; the others by their text, numbers as ``#``, the 12 most common), socket
closes by code, half-open connections closed by the server, the
server's RSS before the attack and at its peak [MB], and whether it still serves.

``--churn``: ordinary clients coming and going instead (a long-lived server's day), in waves of
``--wave-seconds``: ``--watchers`` clients that ask for frames and ``--switchers`` that switch
presets (:data:`CHURN_PRESETS`) and settings, each staying 5 to 20 s, then leaving and coming
back; after each wave every client is gone for ``--idle-seconds``, and at its end the server's
RSS, open file descriptors and threads are sampled. Prints them per wave (and the level before
any client), to show whether what the clients left behind returns to a steady level.

``--mixed`` (with ``--churn``): the switchers also move to the 100 000-bird flock
(starlings-3d-large) and the game (flappy-boids), and half their ``set``s turn the level of
detail on or off (:data:`MIXED_PRESETS`). ``--visit-first``: before the waves, one client shows
every scene of the list once, and the levels are read after ``--idle-seconds``: what the server
keeps for having shown a scene (its compiled kernels, schema, meshes), told apart from what the
waves add. ``--settle-seconds S``: after the last wave, the levels once more S seconds later.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import websockets
from PIL import Image

from bench_viewer import free_port, stop_server, wait_listening

MAX_CONNECTIONS = 8
PRESET = ["--preset", "boids-2d", "--set", "agents.n=300"]


def _set(**changes) -> str:
    return json.dumps({"type": "set", "changes": changes})


ATTACKS: dict[str, object] = {
    # sizes that follow from parameters
    "navigation-22GB": _set(**{"navigation.enabled": True, "navigation.source": "obstacles",
                               "rules.seek.weight": 1.0, "navigation.cell_size": 0.05}),
    "navigation-at-budget": _set(**{"navigation.enabled": True, "navigation.source": "obstacles",
                                    "rules.seek.weight": 1.0, "navigation.cell_size": 0.31}),
    "flow-fields-x20": _set(**{"navigation.enabled": True, "navigation.source": "obstacles", "rules.seek.weight": 1.0,
                               "navigation.cell_size": 0.4, "agents.kinds": [{"fraction": 0.05}] * 20}),
    "pairs-all-see-all": _set(**{"agents.n": 8000, "rules.cohesion.radius": 1000.0}),
    "pairs-max-agents": _set(**{"agents.n": 200_000}),
    "knn-k-1024": _set(**{"agents.n": 200_000, "neighbors.mode": "topological", "neighbors.k": 1024}),
    "obstacle-cell-lists": _set(**{"obstacles.boxes": [{"min_corner": [0.0, 0.1 * i], "max_corner": [400.0, 250.0]}
                                                       for i in range(400)],
                                   "obstacles.circles": [{"center": [0.0, 0.0], "body_radius": 0.0,
                                                          "influence_radius": 0.01}]}),
    "big-preset": json.dumps({"type": "preset", "name": "starlings-3d-large"}),
    "agents-over-cap": _set(**{"agents.n": 50_000_000}),
    # server paths
    "image-/etc/shadow": _set(**{"navigation.enabled": True, "navigation.source": "image", "rules.seek.weight": 1.0,
                                 "navigation.image": "/etc/shadow"}),
    "image-missing": _set(**{"navigation.enabled": True, "navigation.source": "image", "rules.seek.weight": 1.0,
                             "navigation.image": "/etc/no-such-file"}),
    "image-fifo": _set(**{"navigation.enabled": True, "navigation.source": "image", "rules.seek.weight": 1.0,
                          "navigation.image": "pipe.png"}),
    "image-offered": _set(**{"navigation.enabled": True, "navigation.source": "image", "rules.seek.weight": 1.0,
                             "navigation.image": "level.png", "navigation.cell_size": 2.0}),
    # malformed
    "not-json": "{{{{",
    "bad-utf8": b"\xff\xfe\xfd",
    "deep-json": "[" * 5000 + "]" * 5000,
    "huge-int": '{"type": "set", "changes": {"agents.n": ' + "9" * 5000 + "}}",
    "nan": '{"type": "set", "changes": {"world.dt": NaN}}',
    "oversized": '{"type": "next", "pad": "' + "x" * 70_000 + '"}',
    # ordinary messages in between
    "next": json.dumps({"type": "next"}),
    "reset": json.dumps({"type": "reset"}),
    "pointer": json.dumps({"type": "pointer", "mode": "attract", "x": 10.0, "y": 10.0}),
    "turn": json.dumps({"type": "turn", "direction": "left"}),
}  # fmt: skip
SLOW = _set(**{"navigation.enabled": True, "navigation.source": "obstacles", "rules.seek.weight": 1.0,
               "navigation.cell_size": 1.0})  # fmt: skip
CHURN_PRESETS = ["boids-2d", "starlings-2d", "starlings-3d", "vicsek", "minions", "crowd"]
"""Presets the --churn switchers move between (several models, 2D and 3D; each under 600 birds)."""
MIXED_PRESETS = [*CHURN_PRESETS, "starlings-3d-large", "flappy-boids"]
"""Presets of --mixed: the churn presets, the 100 000-bird flock and the game."""
HALF_REQUESTS = [b"GET / HT", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"GET / HTTP/1.1\r\nX-Pad: " + b"a" * 200_000]


class Tally:
    """Counters shared by the clients (one event loop: no lock needed)."""

    def __init__(self) -> None:
        self.sent: Counter[str] = Counter()
        self.replies: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.other_errors: Counter[str] = Counter()  # "other" errors by their text, numbers as "#"
        self.closes: Counter[str] = Counter()
        self.connections = 0


def error_kind(message: str) -> str:
    if message.startswith("server: busy"):
        return "busy"
    if "budget" in message or "more than this server allows" in message:
        return "budget"
    if message.startswith("navigation.image"):
        return "image"
    if message.startswith("server:"):
        return "server"
    return "other"


async def hostile(url: str, rng: random.Random, deadline: float, tally: Tally, names: list[str], bursts: bool) -> None:
    while time.monotonic() < deadline:
        try:
            async with websockets.connect(url, max_size=None, max_queue=None, compression=None, open_timeout=60) as ws:
                tally.connections += 1
                while time.monotonic() < deadline:
                    burst = bursts and rng.random() < 0.05
                    batch = [("slow-burst", SLOW)] * 40 if burst else [(name := rng.choice(names), ATTACKS[name])]
                    for name, payload in batch:
                        await ws.send(payload)
                        tally.sent[name] += 1
                    await drain(ws, tally, wait=0.2 if not burst else 2.0)
        except websockets.ConnectionClosed as exc:
            tally.closes[str(exc.rcvd.code if exc.rcvd else "none")] += 1
        except (OSError, TimeoutError) as exc:
            tally.closes[type(exc).__name__] += 1
        await asyncio.sleep(0.5)  # then reconnect (a client refused by the connection cap tries again)


async def drain(ws, tally: Tally, wait: float) -> None:
    """Read every reply that arrives within ``wait`` seconds of the last one."""
    while True:
        try:
            message = await asyncio.wait_for(ws.recv(), timeout=wait)
        except TimeoutError:
            return
        if isinstance(message, bytes):
            tally.replies["frame"] += 1
            continue
        reply = json.loads(message)
        tally.replies[reply["type"]] += 1
        if reply["type"] == "error":
            kind = error_kind(reply["message"])
            tally.errors[kind] += 1
            if kind == "other":
                tally.other_errors[re.sub(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", "#", reply["message"])[:160]] += 1


async def churn_client(
    url: str, rng: random.Random, deadline: float, tally: Tally, switcher: bool, mixed: bool = False
) -> None:
    """Come and go until ``deadline``: stay 5 to 20 s asking for frames (a switcher also changes
    preset or settings about once a second), leave, come back after up to 2 s. ``mixed``: the
    presets of :data:`MIXED_PRESETS`, and half the settings the level of detail."""
    presets = MIXED_PRESETS if mixed else CHURN_PRESETS
    while time.monotonic() < deadline:
        leave = min(deadline, time.monotonic() + rng.uniform(5.0, 20.0))
        try:
            async with websockets.connect(url, max_size=None, compression=None, open_timeout=60) as ws:
                tally.connections += 1
                while time.monotonic() < leave:
                    if switcher and rng.random() < 0.3:
                        if rng.random() < 0.5:
                            name, message = "preset", json.dumps({"type": "preset", "name": rng.choice(presets)})
                        else:
                            changes = (
                                {"detail.enabled": rng.random() < 0.5}
                                if mixed and rng.random() < 0.5
                                else {"agents.n": rng.randint(50, 600)}
                            )
                            name, message = "set", json.dumps({"type": "set", "changes": changes})
                    else:
                        name, message = "next", json.dumps({"type": "next"})
                    await ws.send(message)
                    tally.sent[name] += 1
                    await drain(ws, tally, wait=0.3)
        except websockets.ConnectionClosed as exc:
            tally.closes[str(exc.rcvd.code if exc.rcvd else "none")] += 1
        except (OSError, TimeoutError) as exc:
            tally.closes[type(exc).__name__] += 1
        await asyncio.sleep(rng.uniform(0.0, 2.0))


def server_levels(pid: int) -> dict[str, float]:
    """The server's resident memory [MB], open file descriptors and threads now."""
    process = psutil.Process(pid)
    return {
        "rss_mb": round(process.memory_info().rss / 2**20, 1),
        "fds": process.num_fds(),
        "threads": process.num_threads(),
    }


async def churn(port: int, pid: int, args: argparse.Namespace) -> dict:
    url = f"ws://127.0.0.1:{port}/ws?protocol=2"
    rng = random.Random(args.seed)
    tally = Tally()
    waves = []
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        started = time.monotonic()
        deadline = min(end, started + args.wave_seconds)
        clients = [
            churn_client(url, random.Random(rng.random()), deadline, tally, k >= args.watchers, args.mixed)
            for k in range(args.watchers + args.switchers)
        ]
        await asyncio.gather(*clients)
        await asyncio.sleep(args.idle_seconds)  # everyone gone
        waves.append({"t_s": round(time.monotonic() - started + (waves[-1]["t_s"] if waves else 0.0), 1),
                      **server_levels(pid)})  # fmt: skip
    settled = None
    if args.settle_seconds:
        await asyncio.sleep(args.settle_seconds)
        settled = {"seconds_after_the_last_client": args.idle_seconds + args.settle_seconds, **server_levels(pid)}
    return {
        "messages_sent": sum(tally.sent.values()),
        "sent_by_kind": dict(sorted(tally.sent.items())),
        "replies": dict(sorted(tally.replies.items())),
        "errors_by_kind": dict(sorted(tally.errors.items())),
        "other_errors": dict(tally.other_errors.most_common(12)),
        "socket_closes_by_code": dict(sorted(tally.closes.items())),
        "websocket_connections": tally.connections,
        "idle_after_each_wave": waves,
        "settled": settled,
    }


def half_open(port: int, deadline: float, rng: random.Random, counts: Counter) -> None:
    """Keep one half-sent HTTP request open; count the times the server closes it."""
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                counts["opened"] += 1
                sock.sendall(rng.choice(HALF_REQUESTS))
                sock.settimeout(0.5)
                while time.monotonic() < deadline:
                    try:
                        if not sock.recv(4096):
                            counts["closed_by_server"] += 1
                            break
                    except TimeoutError:
                        sock.sendall(b"a")  # a byte now and then
        except OSError:
            counts["closed_by_server"] += 1


def sample_rss(pid: int, stop: threading.Event, peak: list[int], most: Counter | None = None) -> None:
    """The server's peak RSS into ``peak[0]``; with ``most``, its most threads and file descriptors."""
    process = psutil.Process(pid)
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], process.memory_info().rss)
            if most is not None:
                most["threads"] = max(most["threads"], process.num_threads())
                most["fds"] = max(most["fds"], process.num_fds())
        except psutil.Error:
            return
        time.sleep(0.05)


async def visit_every_scene(url: str, presets: list[str]) -> None:
    """One client shows each preset once: asks for it, waits for its parameters, pulls a frame."""
    async with websockets.connect(url, max_size=None, compression=None, open_timeout=60) as ws:
        for name in presets:
            await ws.send(json.dumps({"type": "preset", "name": name}))
            while True:
                reply = await asyncio.wait_for(ws.recv(), timeout=900)
                if not isinstance(reply, bytes) and json.loads(reply)["type"] in ("params", "error"):
                    break
            await ws.send(json.dumps({"type": "next"}))
            while not isinstance(await asyncio.wait_for(ws.recv(), timeout=900), bytes):
                pass


async def warm_up(url: str) -> None:
    async with websockets.connect(url, max_size=None, compression=None, open_timeout=60) as ws:
        await ws.send(json.dumps({"type": "next"}))
        while not isinstance(await asyncio.wait_for(ws.recv(), timeout=900), bytes):
            pass


async def still_serves(port: int) -> bool:
    url = f"ws://127.0.0.1:{port}/ws?protocol=2"
    try:
        async with websockets.connect(url, max_size=None, compression=None, open_timeout=60) as ws:
            for expected in ("hello", "params"):
                if json.loads(await asyncio.wait_for(ws.recv(), timeout=120))["type"] != expected:
                    return False
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /api/presets HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except (OSError, TimeoutError, websockets.WebSocketException):
        return False


async def attack(port: int, args: argparse.Namespace) -> dict:
    url = f"ws://127.0.0.1:{port}/ws?protocol=2"
    await warm_up(url)
    rng = random.Random(args.seed)
    tally = Tally()
    deadline = time.monotonic() + args.seconds
    raw: Counter[str] = Counter()
    threads = [threading.Thread(target=half_open, args=(port, deadline, random.Random(args.seed + k), raw), daemon=True)
               for k in range(args.half_open)]  # fmt: skip
    for thread in threads:
        thread.start()
    names = args.only or list(ATTACKS)
    clients = [
        hostile(url, random.Random(rng.random()), deadline, tally, names, not args.only) for _ in range(args.clients)
    ]
    await asyncio.gather(*clients)
    for thread in threads:
        thread.join(timeout=30)
    return {
        "messages_sent": sum(tally.sent.values()),
        "sent_by_attack": dict(sorted(tally.sent.items())),
        "replies": dict(sorted(tally.replies.items())),
        "errors_answered": sum(tally.errors.values()),
        "errors_by_kind": dict(sorted(tally.errors.items())),
        "other_errors": dict(tally.other_errors.most_common(12)),
        "socket_closes_by_code": dict(sorted(tally.closes.items())),
        "websocket_connections": tally.connections,
        "half_open_connections": raw["opened"],
        "half_open_closed_by_server": raw["closed_by_server"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--clients", type=int, default=MAX_CONNECTIONS + 1)
    parser.add_argument("--half-open", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="flocksim serve --threads")
    parser.add_argument("--only", action="append", choices=sorted(ATTACKS), help="send only this attack (repeatable)")
    parser.add_argument("--churn", action="store_true", help="ordinary clients coming and going (module docstring)")
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--switchers", type=int, default=10)
    parser.add_argument("--wave-seconds", type=float, default=120.0)
    parser.add_argument("--idle-seconds", type=float, default=15.0)
    parser.add_argument("--mixed", action="store_true", help="with --churn: also the large flock, the game, detail")
    parser.add_argument("--visit-first", action="store_true", help="with --churn: show every scene once first")
    parser.add_argument("--settle-seconds", type=float, default=0.0, help="with --churn: levels again this much later")
    args = parser.parse_args()
    connections = args.watchers + args.switchers if args.churn else MAX_CONNECTIONS
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        Image.new("L", (64, 40), 255).save(Path(folder) / "level.png")
        os.mkfifo(Path(folder) / "pipe.png")
        command = [sys.executable, "-m", "flocksim.cli", "serve", "--port", str(port), "--data-dir", folder,
                   "--max-connections", str(connections), *PRESET]  # fmt: skip
        if args.threads is not None:
            command += ["--threads", str(args.threads)]
        log = Path(folder) / "server.log"
        with open(log, "w") as output:
            server = wait_listening(subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT), port)
            try:
                asyncio.run(warm_up(f"ws://127.0.0.1:{port}/ws?protocol=2"))
                time.sleep(args.idle_seconds if args.churn else 0.0)
                before = server_levels(server.pid)
                visited = None
                if args.churn and args.visit_first:
                    presets = MIXED_PRESETS if args.mixed else CHURN_PRESETS
                    asyncio.run(visit_every_scene(f"ws://127.0.0.1:{port}/ws?protocol=2", presets))
                    time.sleep(args.idle_seconds)
                    visited = server_levels(server.pid)
                baseline = psutil.Process(server.pid).memory_info().rss
                peak = [baseline]
                most: Counter[str] = Counter()
                stop = threading.Event()
                sampler = threading.Thread(target=sample_rss, args=(server.pid, stop, peak, most), daemon=True)
                sampler.start()
                started = time.monotonic()
                result = asyncio.run(churn(port, server.pid, args) if args.churn else attack(port, args))
                elapsed = time.monotonic() - started
                stop.set()
                sampler.join()
                serving = asyncio.run(still_serves(port)) and server.poll() is None
            finally:
                stop_server(server)
        tracebacks = log.read_text().count("Traceback")
    print(json.dumps({
        "seconds": round(elapsed, 1),
        "clients": f"{args.watchers} watchers + {args.switchers} switchers" if args.churn else args.clients,
        "presets": (MIXED_PRESETS if args.mixed else CHURN_PRESETS) if args.churn else None,
        "max_connections": connections,
        "seed": args.seed,
        **result,
        "server_before": before,
        "server_after_visiting_every_scene": visited,
        "server_most_threads_and_fds": dict(most),
        "server_rss_mb_before": round(baseline / 2**20, 1),
        "server_rss_mb_peak": round(peak[0] / 2**20, 1),
        "server_tracebacks_logged": tracebacks,
        "still_serves": serving,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {round(psutil.virtual_memory().total / 2**30)} GiB",
        "python": platform.python_version(),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
