"""HTTP connections of the viewer server: a request must arrive whole, and soon.

uvicorn times out idle keep-alive connections, but not a request that is still arriving: a client
that sends half a request line or half its headers would hold its connection (and a file
descriptor) forever. :class:`GuardedHttpProtocol` (uvicorn's httptools protocol, which
``flocksim serve`` passes as ``uvicorn.Config(http=...)``) closes a connection whose request has
not arrived whole (request line, headers, body) within ``request_timeout`` seconds of the
connection opening or of the previous response; and it answers 431 and closes when the request
line and headers exceed ``max_header_bytes``. A WebSocket, once upgraded, is left to the
WebSocket protocol (its keep-alive pings).
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("flocksim.viewer")

REQUEST_TIMEOUT = 10.0
"""Seconds a client has to send a whole request (line, headers, body)."""
MAX_HEADER_BYTES = 64 * 1024
"""Most bytes of a request line plus headers."""


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline per request and a cap on header bytes."""

    request_timeout: float = REQUEST_TIMEOUT
    max_header_bytes: int = MAX_HEADER_BYTES

    _deadline: asyncio.TimerHandle | None = None
    _header_bytes = 0

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._request_timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _request_timed_out(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.debug("viewer: closed a connection whose request did not arrive in %g s", self.request_timeout)
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._header_bytes = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._count_header_bytes(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_header_bytes(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _count_header_bytes(self, count: int) -> None:
        self._header_bytes += count
        if self._header_bytes > self.max_header_bytes and not self.transport.is_closing():
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            self.transport.close()

    def on_message_complete(self) -> None:
        if self.cycle is not None and self.cycle.response_complete:
            self._arm()  # answered before its body was in: the deadline now runs for the next request
        else:
            self._disarm()  # the whole request is in: the app answers
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same deadline

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        super().handle_websocket_upgrade()


def guarded_protocol(request_timeout: float = REQUEST_TIMEOUT, max_header_bytes: int = MAX_HEADER_BYTES) -> type:
    """A :class:`GuardedHttpProtocol` class with these limits, for ``uvicorn.Config(http=...)``."""
    if not request_timeout > 0 or not max_header_bytes > 0:
        raise ValueError(
            f"request_timeout and max_header_bytes: must be > 0, got {request_timeout}, {max_header_bytes}"
        )
    limits = {"request_timeout": float(request_timeout), "max_header_bytes": int(max_header_bytes)}
    return type("GuardedHttpProtocol", (GuardedHttpProtocol,), limits)


__all__ = ["MAX_HEADER_BYTES", "REQUEST_TIMEOUT", "GuardedHttpProtocol", "guarded_protocol"]
