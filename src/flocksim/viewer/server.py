"""The viewer's web server: the built page, two JSON endpoints and the viewer WebSocket, on one port.

:func:`create_app` returns a Starlette application (``flocksim serve`` runs it with uvicorn):

- ``GET /``: the page (``static/index.html``, built from web/ by ``./dev.sh setup``; 503 with a
  one-line hint while it is not built); ``GET /assets/...``: its bundle;
- ``GET /api/presets``: ``[{"name", "description", "model", "dim", "n", "modes", "agent", "look"}]``
  of the shipped presets;
- ``GET /api/schema``: {model name: JSON schema of that model's parameters};
- ``WS /ws?protocol=2&preset=NAME&set=KEY%3DVALUE...``: one :class:`~flocksim.viewer.session.ViewerSession`
  per connection (docs/protocol.md).

Guards: a WebSocket whose ``Origin`` header names another site is refused in the handshake
(close code 1008; no Origin header, as from non-browser clients, is allowed); at most
``max_connections`` sockets at once (one more gets an ``error`` and close code 1013); at most
``max_agents`` agents and ``max_pairs`` neighbour pairs per simulation; ``navigation.image``
only names an image of ``data_dir`` (:mod:`flocksim.viewer.images`); control messages above
65 536 bytes get an ``error`` (uvicorn, configured by ``flocksim serve``, closes with 1009 before
they reach the app). Each socket is read by its own task that never waits for a message to be
handled (:meth:`ViewerSession.submit <flocksim.viewer.session.ViewerSession.submit>`), so
keep-alive pongs are read however busy the session is.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import json
import logging
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from flocksim.config import MODEL_CLASSES, AnyParams
from flocksim.scenarios import load_preset, preset_names
from flocksim.viewer.compiling import report_compiling, scene_estimate
from flocksim.viewer.controls import MAX_CONTROL_BYTES, ControlError, error_reply
from flocksim.viewer.images import ImageLibrary
from flocksim.viewer.memory import release_free_memory
from flocksim.viewer.modes import is_modified
from flocksim.viewer.protocol import VERSION
from flocksim.viewer.scenes import scene_look
from flocksim.viewer.session import (
    DEFAULT_MAX_AGENTS,
    DEFAULT_MAX_PAIRS,
    DEFAULT_SPS,
    ViewerSession,
    params_from_query,
)
from flocksim.viewer.versions import CLOSE_PROTOCOL, QUERY_KEY, version_refusal

log = logging.getLogger("flocksim.viewer")

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Where ``npm run build`` in web/ writes the page (index.html, assets/)."""
DEFAULT_PRESET = "starlings-3d"
DEFAULT_MAX_CONNECTIONS = 8
NOT_BUILT_HINT = "flocksim viewer: the page is not built yet; run ./dev.sh setup (builds web/)\n"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Host names that reach this machine's loopback interface."""
CLOSE_POLICY = 1008
"""WebSocket close code: policy violation (a foreign Origin)."""
CLOSE_TRY_AGAIN = 1013
"""WebSocket close code: try again later (too many connections)."""
CLOSE_INTERNAL = 1011
"""WebSocket close code: the server could not start the simulation."""


def preset_list() -> list[dict[str, Any]]:
    """``[{"name", "description", "model", "dim", "n", "modes", "agent", "look"}]`` of every shipped
    preset, by name (modes, agent, look: :mod:`flocksim.viewer.scenes`)."""
    rows = []
    for name in preset_names():
        p = load_preset(name)
        look = scene_look(name)
        rows.append(
            {
                "name": name,
                "description": p.description,
                "model": p.model,
                "dim": p.world.dim,
                "n": p.agents.n,
                "modes": list(look.modes),
                "agent": look.agent,
                "look": look.look,
            }
        )
    return rows


def model_schemas() -> dict[str, Any]:
    """{model name: the JSON schema of its parameter class} (units, ranges, descriptions)."""
    return {name: cls.model_json_schema() for name, cls in MODEL_CLASSES.items()}


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (the hosts ``flocksim serve`` binds without a warning)."""
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def origin_allowed(origin: str | None, host_header: str | None, bind_host: str, port: int | None) -> bool:
    """Whether a WebSocket with this ``Origin`` header may connect to the server on ``bind_host``:``port``.

    Allowed: no Origin (a non-browser client); an http(s) origin on the server's port whose host
    is the bind host or a loopback name (localhost, 127.0.0.1, [::1]); or, when the server listens
    on other interfaces, the IP address the client reached it at (its Host header), which no DNS
    rebinding can fake. Everything else (another site, ``null``, another port) is refused."""
    if origin is None:
        return True
    try:
        parts = urlsplit(origin.strip())
        hostname = (parts.hostname or "").lower()
        origin_port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:  # a malformed port or brackets
        return False
    if parts.scheme not in ("http", "https") or not hostname:
        return False
    if port is not None and origin_port != port:
        return False
    if hostname in LOOPBACK_NAMES or hostname == bind_host.strip("[]").lower():
        return True
    if host_header and _is_ip(hostname):
        try:
            reached = (urlsplit(f"//{host_header.strip()}").hostname or "").lower()
        except ValueError:
            return False
        return reached == hostname
    return False


class _Assets:
    """StaticFiles for a folder that may appear after start-up (``./dev.sh setup`` builds it);
    404 while it is missing."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._files: StaticFiles | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.directory.is_dir():
            await PlainTextResponse("not found\n", status_code=404)(scope, receive, send)
            return
        if self._files is None:
            self._files = StaticFiles(directory=self.directory)
        await self._files(scope, receive, send)


class ViewerServer:
    """The state behind :func:`create_app`: defaults, limits, the live sessions (``sessions``)."""

    def __init__(
        self,
        preset: str = DEFAULT_PRESET,
        overrides: Sequence[str] = (),
        sps: float = DEFAULT_SPS,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        max_agents: int = DEFAULT_MAX_AGENTS,
        threads: int | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        static_dir: Path | None = None,
        engine: str = "cpu",
        max_pairs: int = DEFAULT_MAX_PAIRS,
        data_dir: Path | None = None,
    ):
        if max_connections < 1:
            raise ValueError(f"max_connections: must be >= 1, got {max_connections}")
        if max_agents < 1:
            raise ValueError(f"max_agents: must be >= 1, got {max_agents}")
        if max_pairs < 1:
            raise ValueError(f"max_pairs: must be >= 1, got {max_pairs}")
        self.images = ImageLibrary(data_dir)
        self.preset = preset
        self.overrides = list(overrides)
        self.default_params: AnyParams = params_from_query(preset, self.overrides, max_agents)  # raises ControlError
        self.images.resolve(self.default_params)  # a default image must be one the server offers
        self.sps = float(sps)
        self.max_connections = int(max_connections)
        self.max_agents = int(max_agents)
        self.max_pairs = int(max_pairs)
        self.threads = threads
        self.engine = engine
        self.host = host
        self.port = port
        self.static_dir = STATIC_DIR if static_dir is None else Path(static_dir)
        self.sessions: set[ViewerSession] = set()
        self.connections = 0
        # one thread for giving memory back when connections end: the event loop's own pool kept
        # a thread for each connection that ended at the same time as others
        self._memory = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flocksim-memory")
        self.presets = preset_list()
        self.schemas = model_schemas()
        self.hello = json.dumps(
            {
                "type": "hello",
                "version": VERSION,
                "presets": self.presets,
                "schemas": self.schemas,
                "limits": {
                    "max_agents": self.max_agents,
                    "max_control_bytes": MAX_CONTROL_BYTES,
                    "max_pairs": self.max_pairs,
                },
                "images": self.images.names,
            }
        )

    # ------------------------------------------------------------------ HTTP

    async def index(self, request: Request) -> Response:
        page = self.static_dir / "index.html"
        if not page.is_file():
            return PlainTextResponse(NOT_BUILT_HINT, status_code=503)
        return FileResponse(page, headers={"Cache-Control": "no-cache"})

    async def api_presets(self, request: Request) -> Response:
        return JSONResponse(self.presets)

    async def api_schema(self, request: Request) -> Response:
        return JSONResponse(self.schemas)

    # ------------------------------------------------------------------ WebSocket

    def query_params(self, websocket: WebSocket) -> tuple[AnyParams, str | None, str | None]:
        """(parameters, preset name, error) of the socket's query: ``preset`` (default: the
        server's) and ``set`` overrides; on a bad query the server's defaults and the error."""
        query = websocket.query_params
        presets = query.getlist("preset")
        overrides = query.getlist("set")
        if not presets and not overrides:
            return self.default_params, self.preset, None
        try:
            if len(presets) > 1:
                raise ControlError(f"query: preset given {len(presets)} times; allowed: once")
            name = presets[0] if presets else self.preset
            base = self.overrides if not presets or name == self.preset else []
            return params_from_query(name, [*base, *overrides], self.max_agents), name, None
        except ControlError as exc:
            return self.default_params, self.preset, f"{exc} (the server's default {self.preset} is shown instead)"

    def hello_message(self, params: AnyParams, preset: str | None) -> str:
        """The ``hello`` message of a connection that starts on ``params`` (the preset ``preset``):
        the shared text with the scene it starts on, ``"scene": {"name", "modified"}``, so that the
        page's scene list shows that scene while its first simulation is built (kernels may compile
        for minutes on the first start)."""
        scene = {"name": preset, "modified": is_modified(params, preset)}
        return self.hello[:-1] + ', "scene": ' + json.dumps(scene) + "}"

    def _origin_ok(self, websocket: WebSocket) -> bool:
        server = websocket.scope.get("server") or (None, None)
        port = self.port if self.port is not None else server[1]
        return origin_allowed(websocket.headers.get("origin"), websocket.headers.get("host"), self.host, port)

    async def websocket(self, websocket: WebSocket) -> None:
        if not self._origin_ok(websocket):
            log.warning("viewer: refused a WebSocket from origin %r", websocket.headers.get("origin"))
            await websocket.close(code=CLOSE_POLICY)  # before accept: the handshake is refused
            return
        await websocket.accept()
        refusal = version_refusal(websocket.query_params.getlist(QUERY_KEY))
        if refusal is not None:  # it would misread every frame (flocksim.viewer.versions)
            with contextlib.suppress(Exception):
                await websocket.send_text(error_reply(refusal))
                await websocket.close(code=CLOSE_PROTOCOL)
            return
        if self.connections >= self.max_connections:
            with contextlib.suppress(Exception):
                await websocket.send_text(
                    error_reply(
                        f"server: {self.max_connections} viewers are connected, the most this server allows "
                        "(flocksim serve --max-connections); try again later"
                    )
                )
                await websocket.close(code=CLOSE_TRY_AGAIN)
            return
        self.connections += 1
        link = _Link(websocket)
        session = ViewerSession(
            link.send,
            sps=self.sps,
            max_agents=self.max_agents,
            threads=self.threads,
            engine=self.engine,
            max_pairs=self.max_pairs,
            images=self.images,
        )
        self.sessions.add(session)
        progress: asyncio.Task | None = None
        reader: asyncio.Task | None = None
        try:
            params, preset, problem = self.query_params(websocket)
            await link.send(self.hello_message(params, preset))
            progress = asyncio.create_task(
                report_compiling(link.send, fallback=_SceneEstimate(session, params, preset)),
                name="flocksim-viewer-compiling",
            )
            # read from now on, while the first simulation is built: pongs must never wait for work
            reader = asyncio.create_task(_read(websocket, link, session), name="flocksim-viewer-read")
            if not await self._start(session, link, params, preset, problem):
                return
            await reader
        except Exception as exc:  # the client went away in some other way: end quietly
            log.debug("viewer: connection ended (%s: %s)", type(exc).__name__, exc)
        finally:  # the synchronous part first: it must happen even if this task is being cancelled
            link.open = False
            for task in (progress, reader):
                if task is not None:
                    task.cancel()
            session.stop()
            self.sessions.discard(session)
            self.connections -= 1
            await session.close()
            # its pages back to the system; the last client's leaving also collects cycles (below)
            await asyncio.get_running_loop().run_in_executor(self._memory, self._release, self.connections == 0)

    def _release(self, idle: bool) -> None:
        """After a connection ended (on the server's memory thread): when it was the last one,
        collect Python's reference cycles first (numpy arrays do not count towards the cyclic
        collector's thresholds, so a large flock held by a cycle could stay for as long as the
        server is idle); then hand the pages malloc holds free back to the system."""
        if idle:
            gc.collect()
        release_free_memory()

    async def _start(
        self, session: ViewerSession, link: _Link, params: AnyParams, preset: str | None, problem: str | None
    ) -> bool:
        """Start ``session`` on the query's parameters, or on the server's defaults (with an error
        naming the limit) when those are over a budget; False when it could not start at all."""
        try:
            try:
                await session.start(params, preset)
            except ValueError as exc:  # over a budget (ControlError, BudgetError) or an image not offered
                if session.closed or params is self.default_params:
                    raise
                reason = self.images.scrub(" ".join(str(exc).split()))
                problem = f"{reason} (the server's default {self.preset} is shown instead)"
                await session.start(self.default_params, self.preset)
        except Exception as exc:
            if session.closed:  # the client left while its simulation was being built
                return False
            log.exception("viewer: could not start a simulation")
            text = self.images.scrub(f"{type(exc).__name__}: {exc}")
            await link.send(error_reply(f"server: could not start the simulation ({text})"))
            await link.close(CLOSE_INTERNAL)
            return False
        if problem:
            await session.send_error(problem)
        return True

    async def close_all(self) -> None:
        """Stop every session (server shutdown)."""
        for session in list(self.sessions):
            await session.close()


async def _read(websocket: WebSocket, link: _Link, session: ViewerSession) -> None:
    """Hand every client message to ``session`` until the client leaves; never waits for work."""
    while link.open:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        data = message.get("text")
        if data is None:
            data = message.get("bytes")
        if data is not None:
            session.submit(data)


class _SceneEstimate:
    """(scene, estimate) of a connection's own scene, for a ``compiling`` message no notice scope
    has named (:func:`flocksim.viewer.compiling.scene_estimate`): the session's scene once it runs,
    the query's before; each worked out once."""

    def __init__(self, session: ViewerSession, params: AnyParams, preset: str | None):
        self.session = session
        self.start = (params, preset)
        self._known: tuple[AnyParams, str | None, tuple[str, str]] | None = None

    def __call__(self) -> tuple[str, str]:
        session = self.session
        params, preset = (session.params, session.origin) if session.params is not None else self.start
        known = self._known
        if known is None or known[0] is not params or known[1] != preset:
            known = self._known = (params, preset, scene_estimate(params, preset))
        return known[2]


class _Link:
    """Sends to one WebSocket; after the first failure (the client left) sends are dropped."""

    def __init__(self, websocket: WebSocket):
        self.websocket = websocket
        self.open = True

    async def send(self, message: str | bytes) -> None:
        if not self.open:
            return
        try:
            if isinstance(message, str):
                await self.websocket.send_text(message)
            else:
                await self.websocket.send_bytes(message)
        except Exception as exc:  # disconnected (uvicorn's ClientDisconnected, Starlette's RuntimeError, ...)
            log.debug("viewer: send failed (%s: %s)", type(exc).__name__, exc)
            self.open = False

    async def close(self, code: int) -> None:
        if self.open:
            self.open = False
            with contextlib.suppress(Exception):
                await self.websocket.close(code=code)


def create_app(
    preset: str = DEFAULT_PRESET,
    overrides: Sequence[str] = (),
    sps: float = DEFAULT_SPS,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    max_agents: int = DEFAULT_MAX_AGENTS,
    threads: int | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    static_dir: Path | str | None = None,
    engine: str = "cpu",
    max_pairs: int = DEFAULT_MAX_PAIRS,
    data_dir: Path | str | None = None,
) -> Starlette:
    """The viewer application. ``preset`` + ``overrides`` (dotted ``KEY=VALUE``): what a socket
    without a query shows; ``sps``: most simulation steps per second per connection (0 = as fast
    as possible); ``max_connections``: simultaneous sockets; ``max_agents``: cap on agents.n;
    ``threads``: numba threads per step; ``host``/``port``: where it is served (for the Origin
    check; ``port`` None takes the ASGI server's); ``static_dir``: the built page (default: the
    package's ``static``); ``engine``: "cpu" or "cuda" (docs/gpu.md); ``max_pairs``: neighbour
    pairs one search may hold; ``data_dir``: the folder whose PNG images clients may name as
    ``navigation.image`` (None: none). Raises ValueError (a ControlError naming the field) for
    bad defaults.
    ``app.state.viewer`` is the :class:`ViewerServer`."""
    server = ViewerServer(
        preset=preset,
        overrides=overrides,
        sps=sps,
        max_connections=max_connections,
        max_agents=max_agents,
        threads=threads,
        host=host,
        port=port,
        static_dir=Path(static_dir) if static_dir is not None else None,
        engine=engine,
        max_pairs=max_pairs,
        data_dir=Path(data_dir) if data_dir is not None else None,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await server.close_all()

    app = Starlette(
        routes=[
            Route("/", server.index, methods=["GET", "HEAD"]),
            Route("/api/presets", server.api_presets, methods=["GET"]),
            Route("/api/schema", server.api_schema, methods=["GET"]),
            WebSocketRoute("/ws", server.websocket),
            Mount("/assets", app=_Assets(server.static_dir / "assets")),
        ],
        lifespan=lifespan,
    )
    app.state.viewer = server
    return app


__all__ = ["DEFAULT_MAX_CONNECTIONS", "DEFAULT_PRESET", "ViewerServer", "create_app", "is_loopback", "origin_allowed"]
