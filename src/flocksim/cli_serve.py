"""``flocksim serve``: the interactive viewer (a web page and a WebSocket on one port)."""

from __future__ import annotations

import errno
import math
import socket
import threading
import time
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from flocksim.cli_common import ENGINE_HELP

DEFAULT_PORT = 8000
MAX_SPS = 100_000.0
"""Largest --sps [steps/s]."""


def _sps(value: float) -> float:
    """--sps: a finite number in [0, MAX_SPS] (typer's range check would name the upper bound for NaN)."""
    if not (math.isfinite(value) and 0.0 <= value <= MAX_SPS):
        raise typer.BadParameter(f"must be a finite number from 0 to {MAX_SPS:g} (0 = unlimited); got {value}")
    return value


def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on; beyond 127.0.0.1/localhost/::1 anyone on the network can use it.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port of the page and the WebSocket.")] = DEFAULT_PORT,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the page in the web browser once it serves.")] = (
        False
    ),
    preset: Annotated[
        str, typer.Option(help="Scene shown first (see `flocksim presets`); the page can switch.")
    ] = "starlings-3d",
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a parameter of that scene, e.g. --set agents.n=20000 (repeatable)."),
    ] = None,
    sps: Annotated[
        float,
        typer.Option(callback=_sps, help="Most simulation steps per second per viewer, 0 to 100000 (0 = unlimited)."),
    ] = 60.0,
    max_connections: Annotated[
        int, typer.Option("--max-connections", min=1, max=10_000, help="Viewers connected at once.")
    ] = 8,
    max_agents: Annotated[
        int, typer.Option("--max-agents", min=1, max=50_000_000, help="Largest agents.n a viewer may ask for.")
    ] = 200_000,
    max_pairs: Annotated[
        int,
        typer.Option(
            "--max-pairs", min=1, max=2**40, help="Most neighbour pairs one viewer's neighbour search may hold."
        ),
    ] = 10_000_000,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Folder of PNG images viewers may name (by file name) as navigation.image; none without it.",
        ),
    ] = None,
    threads: Annotated[
        int | None, typer.Option(min=1, help="CPU threads per step (default: NUMBA_NUM_THREADS or all cores).")
    ] = None,
    engine: Annotated[str, typer.Option(help=ENGINE_HELP)] = "cpu",
) -> None:
    """Serve the interactive viewer: open the printed address in a browser.

    Example: flocksim serve --open

    On a GPU: flocksim serve --engine cuda --preset starlings-3d-large --max-agents 1000000 --set agents.n=1000000

    More birds, and a scene chosen by the address: flocksim serve --set agents.n=20000, then
    http://127.0.0.1:8000/?preset=boids-2d&set=agents.n%3D2000

    Level images for flow fields: flocksim serve --data-dir levels/ (a viewer then sets
    navigation.image = "maze.png", a file name in levels/)
    """
    import numba
    import uvicorn

    from flocksim.cli_common import err, fail, out
    from flocksim.engines import ENGINES
    from flocksim.viewer.controls import MAX_CONTROL_BYTES
    from flocksim.viewer.http import guarded_protocol
    from flocksim.viewer.memory import limit_arenas
    from flocksim.viewer.server import create_app, is_loopback
    from flocksim.viewer.warmup import warm_up_in_background

    limit_arenas()  # before any thread of the server runs: viewers that come and go leave it at a steady level

    if engine not in ENGINES:
        fail(f"--engine: unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    if engine == "cuda":
        from flocksim.kernels.cuda_runtime import cuda_problem

        problem = cuda_problem()
        if problem is not None:
            fail(problem)
        if threads is not None:
            fail("--threads: only for engine cpu")
    if threads is not None and threads > numba.config.NUMBA_NUM_THREADS:
        fail(f"--threads: must be between 1 and {numba.config.NUMBA_NUM_THREADS} (NUMBA_NUM_THREADS), got {threads}")
    try:
        app = create_app(
            preset=preset,
            overrides=overrides or [],
            sps=sps,
            max_connections=max_connections,
            max_agents=max_agents,
            threads=threads,
            host=host,
            port=port,
            engine=engine,
            max_pairs=max_pairs,
            data_dir=data_dir,
        )
    except ValueError as exc:
        fail(str(exc))
        return
    sock = _bind(host, port)
    url = f"http://{_url_host(host)}:{port}/"
    if not is_loopback(host):
        err.print(
            f"[bold red]WARNING: serving on {host}:{port}: anyone who can reach this machine can open the viewer "
            f"and run simulations on it (up to {max_connections} at once, {max_agents} agents each). "
            "Use --host 127.0.0.1 to keep it on this machine.[/]",
            highlight=False,
            soft_wrap=True,
        )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            http=guarded_protocol(),  # half-sent requests are closed after 10 s
            log_level="warning",
            access_log=False,
            ws_max_size=MAX_CONTROL_BYTES,
            ws_per_message_deflate=False,
            timeout_graceful_shutdown=5,
            server_header=False,
        )
    )
    out.print(f"flocksim viewer: {url}  (Ctrl-C stops)", markup=False, highlight=False, soft_wrap=True)
    # the first scene's kernels: compiled now (first start after an install) or loaded from the cache
    viewer = app.state.viewer
    warm_up_in_background(
        viewer.images.resolve(viewer.default_params), engine=engine, threads=threads, name=viewer.preset
    )
    if open_browser:
        threading.Thread(target=_open_when_up, args=(server, url), daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on host:port; a one-line error (exit 2) if the port is taken."""
    from flocksim.cli_common import fail

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        fail(f"--host: cannot resolve {host!r} ({exc.strerror}); allowed: an address of this machine, e.g. 127.0.0.1")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            fail(f"--port: {host}:{port} is already in use; allowed: a free port, e.g. --port {port + 1}")
        fail(f"--host: cannot listen on {host}:{port} ({exc.strerror or exc})")
    sock.set_inheritable(True)
    return sock


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _open_when_up(server, url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not server.started and not server.should_exit and time.monotonic() < deadline:
        time.sleep(0.05)
    if server.started:
        webbrowser.open(url)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
